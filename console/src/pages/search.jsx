// Placeholder: the helper who owns this page replaces it (console_plan.md).
import { useTitle } from '../ui.jsx';

export default function Page() {
  useTitle('Search');
  return (
    <section>
      <h1>Search</h1>
    </section>
  );
}
