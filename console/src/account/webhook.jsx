// The webhook of one API key: register (https URL, events; the signing
// secret shown once), send a test delivery, the recent deliveries with their
// status, remove. Deliveries are read again after a test until the test's
// delivery has left the pending state (a few tries, then the Refresh button).
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.js';
import { ConfirmButton, ErrorNote, Status, formatDate, useAsync } from '../ui.jsx';
import { OnceSecret } from './secret.jsx';

const EVENTS = ['transcription.completed', 'transcription.failed', 'clip.completed', 'clip.failed'];

function Register({ keyId, onRegistered }) {
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e) => {
    e.preventDefault();
    const f = new FormData(e.target);
    const events = EVENTS.filter((ev) => f.get(ev));
    setBusy(true);
    setError(null);
    try {
      onRegistered(await api(`/dashboard/api/v1/keys/${keyId}/webhook`, { method: 'PUT', body: { url: f.get('url'), events } }));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={submit} class="webhook-form">
      <label for={`wh-url-${keyId}`}>Webhook URL (https)</label>
      <input id={`wh-url-${keyId}`} name="url" type="url" required placeholder="https://example.com/scribe-hook" />
      <fieldset>
        <legend>Events</legend>
        {EVENTS.map((ev) => (
          <div class="check" key={ev}>
            <input type="checkbox" id={`wh-${keyId}-${ev}`} name={ev} defaultChecked />
            <label for={`wh-${keyId}-${ev}`}>{ev}</label>
          </div>
        ))}
      </fieldset>
      <ErrorNote error={error} />
      <button type="submit" disabled={busy}>
        {busy ? 'Registering…' : 'Register webhook'}
      </button>
    </form>
  );
}

function Deliveries({ keyId, tick }) {
  const d = useAsync(() => api(`/dashboard/api/v1/keys/${keyId}/webhook/deliveries`), [keyId, tick]);
  const list = d.data?.deliveries || [];
  return (
    <>
      <div class="row">
        <h4 id={`wh-del-${keyId}`}>Recent deliveries</h4>
        <button type="button" class="secondary" onClick={d.reload}>
          Refresh deliveries
        </button>
      </div>
      <ErrorNote error={d.error} />
      {d.data && !list.length && <p class="muted">No deliveries yet.</p>}
      {list.length > 0 && (
        <div class="table-wrap" role="region" tabIndex={0} aria-labelledby={`wh-del-${keyId}`}>
          <table aria-labelledby={`wh-del-${keyId}`}>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Answer</th>
                <th scope="col">Queued</th>
                <th scope="col">Delivered</th>
              </tr>
            </thead>
            <tbody>
              {list.map((x) => (
                <tr key={x.id}>
                  <td>{x.event}</td>
                  <td>
                    <span class={`badge ${x.status}`}>{x.status}</span>
                  </td>
                  <td>{x.attempts}</td>
                  <td>{x.last_status_code ?? '—'}</td>
                  <td>{formatDate(x.created_at)}</td>
                  <td>{formatDate(x.delivered_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

export function KeyWebhook({ keyId, keyName, onChange }) {
  const wh = useAsync(() => api(`/dashboard/api/v1/keys/${keyId}/webhook`), [keyId]);
  const [secret, setSecret] = useState(null);
  const [error, setError] = useState(null);
  const [note, setNote] = useState('');
  const [tick, setTick] = useState(0);
  const timers = useRef([]);
  useEffect(() => () => timers.current.forEach(clearTimeout), []);
  const w = wh.data?.webhook;

  const test = async () => {
    setError(null);
    try {
      await api(`/dashboard/api/v1/keys/${keyId}/webhook/test`, { method: 'POST' });
      setNote('Test delivery queued.');
      setTick((t) => t + 1);
      // The delivery goes out at once; read the list again shortly after.
      // (the webhook too: its last success and health change with it).
      for (const ms of [1000, 3000, 8000])
        timers.current.push(
          setTimeout(() => {
            setTick((t) => t + 1);
            wh.reload();
          }, ms),
        );
    } catch (err) {
      setError(err);
    }
  };
  const remove = async () => {
    setError(null);
    try {
      await api(`/dashboard/api/v1/keys/${keyId}/webhook`, { method: 'DELETE' });
      setSecret(null);
      setNote('Webhook removed.');
      wh.reload();
      onChange?.();
    } catch (err) {
      setError(err);
    }
  };

  return (
    <section class="webhook" aria-label={`Webhook of ${keyName}`}>
      <ErrorNote error={wh.error || error} />
      <Status>{note}</Status>
      {secret && <OnceSecret label={`Signing secret of the webhook of ${keyName}`} value={secret} what="signing secret" />}
      {wh.loading && !wh.data && <Status>Loading the webhook…</Status>}
      {wh.data && !w && (
        <Register
          keyId={keyId}
          onRegistered={(b) => {
            setSecret(b.signing_secret);
            setNote('Webhook registered.');
            wh.reload();
            onChange?.();
          }}
        />
      )}
      {w && (
        <>
          <dl class="facts">
            <dt>URL</dt>
            <dd class="mono break">{w.url}</dd>
            <dt>Events</dt>
            <dd>{w.events.join(', ')}</dd>
            <dt>Health</dt>
            <dd>
              {w.disabled_at
                ? `disabled ${formatDate(w.disabled_at)} after repeated failures: register it again`
                : w.consecutive_failures
                  ? `${w.consecutive_failures} failed attempts in a row`
                  : 'healthy'}
            </dd>
            <dt>Last success</dt>
            <dd>{formatDate(w.last_success_at)}</dd>
          </dl>
          <div class="row">
            <button type="button" onClick={test}>
              Send test delivery
            </button>
            <ConfirmButton
              label="Remove webhook"
              question={`Remove the webhook of “${keyName}”? Nothing more is sent to ${w.url}.`}
              onConfirm={remove}
            />
          </div>
          <Deliveries keyId={keyId} tick={tick} />
        </>
      )}
    </section>
  );
}
