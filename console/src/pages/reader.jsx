// Placeholder: the helper who owns this page replaces it (console_plan.md).
import { useTitle } from '../ui.jsx';

export default function Page() {
  useTitle('Transcript');
  return (
    <section>
      <h1>Transcript</h1>
    </section>
  );
}
