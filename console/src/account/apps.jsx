// Connected apps: the OAuth clients this account authorized (not the console
// itself), with what they may reach and when they last got a token;
// disconnecting revokes every grant and token of the app at once.
import { useState } from 'preact/hooks';
import { api, qs } from '../api.js';
import { ConfirmButton, ErrorNote, Status, formatDate, useAsync } from '../ui.jsx';

const KINDS = { cimd: 'metadata document', dcr: 'registered client', static: 'pre-registered' };

export default function Apps() {
  const apps = useAsync(() => api('/dashboard/api/v1/connected-apps'), []);
  const [note, setNote] = useState('');
  const [error, setError] = useState(null);
  const list = apps.data?.apps || [];
  const disconnect = async (a) => {
    setError(null);
    try {
      await api(`/dashboard/api/v1/connected-apps${qs({ client_id: a.client_id })}`, { method: 'DELETE' });
      setNote(`${a.client_name || a.client_id} disconnected: its tokens no longer work.`);
      apps.reload();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <>
      <h2>Connected apps</h2>
      <p class="muted">Applications you allowed to use scribe on your behalf by signing in with scribe.</p>
      <Status>{note}</Status>
      <ErrorNote error={apps.error || error} />
      {apps.loading && !apps.data && <Status>Loading…</Status>}
      {apps.data && !list.length && <p>No apps are connected.</p>}
      <ul class="cards" aria-label="Connected apps">
        {list.map((a) => {
          const name = a.client_name || a.client_id;
          return (
            <li class="panel" key={a.client_id}>
              <h3>{name}</h3>
              <dl class="facts">
                <dt>Client</dt>
                <dd class="mono break">
                  {a.client_id} <span class="muted small">({KINDS[a.kind] || a.kind})</span>
                </dd>
                <dt>Returns to</dt>
                <dd>{a.redirect_hosts.join(', ') || '—'}</dd>
                <dt>May reach</dt>
                <dd class="break">{a.resources.join(', ') || '—'}</dd>
                <dt>Connected</dt>
                <dd>{formatDate(a.connected_at)}</dd>
                <dt>Last token</dt>
                <dd>{formatDate(a.last_token_at)}</dd>
              </dl>
              <ConfirmButton
                label={`Disconnect ${name}`}
                question={`Disconnect ${name}? Its access and refresh tokens stop working at once; it must ask you again to reconnect.`}
                confirmLabel="Disconnect"
                onConfirm={() => disconnect(a)}
              />
            </li>
          );
        })}
      </ul>
    </>
  );
}
