// Placeholder: the helper who owns this page replaces it (console_plan.md).
import { useTitle } from '../ui.jsx';

export default function Page() {
  useTitle('Help and support');
  return (
    <section>
      <h1>Help and support</h1>
    </section>
  );
}
