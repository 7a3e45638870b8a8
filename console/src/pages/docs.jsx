// Placeholder: the helper who owns this page replaces it (console_plan.md).
import { useTitle } from '../ui.jsx';

export default function Page() {
  useTitle('API documentation');
  return (
    <section>
      <h1>API documentation</h1>
    </section>
  );
}
