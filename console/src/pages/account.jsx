// Placeholder: the helper who owns this page replaces it (console_plan.md).
import { useTitle } from '../ui.jsx';

export default function Page() {
  useTitle('Account');
  return (
    <section>
      <h1>Account</h1>
    </section>
  );
}
