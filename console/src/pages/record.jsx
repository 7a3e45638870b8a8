// Placeholder: the helper who owns this page replaces it (console_plan.md).
import { useTitle } from '../ui.jsx';

export default function Page() {
  useTitle('Record');
  return (
    <section>
      <h1>Record</h1>
    </section>
  );
}
