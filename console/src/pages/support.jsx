// Help and support: where help is for this deployment (the operator's
// SCRIBE_SUPPORT_TEXT, served in /app/config.json's `support`), and the
// references every error points into. Public: a signed-out person lands here.
import { loadConfig } from '../auth.js';
import { ErrorNote, Status, useAsync, useTitle } from '../ui.jsx';

// The setting is plain text; addresses in it become links (nothing is
// interpreted as markup).
function Linked({ text }) {
  const parts = text.split(/(https?:\/\/[^\s<>"]+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+)/g);
  return parts.map((p, i) =>
    i % 2 === 0 ? (
      p
    ) : (
      <a key={i} href={p.includes('@') && !p.startsWith('http') ? `mailto:${p}` : p} rel="noreferrer">
        {p}
      </a>
    ),
  );
}

export default function Support() {
  useTitle('Help and support');
  const cfg = useAsync(() => loadConfig(), []);
  const text = cfg.data?.support?.trim();
  return (
    <section class="support">
      <h1>Help and support</h1>
      <h2>Who helps with this scribe</h2>
      <ErrorNote error={cfg.error} />
      {cfg.loading && <Status>Loading…</Status>}
      {cfg.data &&
        (text ? (
          <div class="panel support-text">
            {text.split(/\n{2,}/).map((para, i) => (
              <p key={i}>
                <Linked text={para} />
              </p>
            ))}
          </div>
        ) : (
          <p>The operator of this scribe has not said where to ask for help. Ask the person who gave you access.</p>
        ))}
      <h2>References</h2>
      <ul>
        <li>
          <a href="/app/docs">API docs</a>: every endpoint, its parameters and answers.
        </li>
        <li>
          <a href="/docs/errors">Error reference</a>: what each error code means and what to do about it. Every error
          the API returns links to its entry.
        </li>
        <li>
          <a href="/api/v1/openapi.yaml">The OpenAPI document</a> itself, for code generators and API clients.
        </li>
      </ul>
      <h2>When you ask for help</h2>
      <p>
        Quote the request id shown under an error (it also comes back in the <code>X-Request-Id</code> header): it lets
        the operator find exactly what happened.
      </p>
    </section>
  );
}
