// /app/callback: where the authorization server sends the browser back with
// ?code&state&iss (auth.js checks and redeems them).
import { useEffect, useState } from 'preact/hooks';
import { completeSignIn, signIn } from '../auth.js';
import { navigate } from '../router.js';
import { Status, useTitle } from '../ui.jsx';

export default function Callback({ query }) {
  useTitle('Signing in');
  const [error, setError] = useState(null);
  useEffect(() => {
    completeSignIn(location.search).then((to) => navigate(to, { replace: true }), setError);
  }, []);
  if (!error) return <Status>Signing in…</Status>;
  return (
    <section>
      <h1>Sign-in did not complete</h1>
      <p role="alert">{error.message}</p>
      <button type="button" onClick={() => signIn('/app')}>
        Sign in again
      </button>
    </section>
  );
}
