// Placeholder: the helper who owns this page replaces it (console_plan.md).
import { useTitle } from '../ui.jsx';

export default function Page() {
  useTitle('Library');
  return (
    <section>
      <h1>Library</h1>
    </section>
  );
}
