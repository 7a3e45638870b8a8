// API keys: create (name, permission, monthly cap, expiry; the plaintext is
// shown once), list with this month's spend, revoke after confirmation, and
// each key's webhook (webhook.jsx).
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ConfirmButton, ErrorNote, Status, formatDate, formatUsd, useAsync } from '../ui.jsx';
import { OnceSecret } from './secret.jsx';
import { KeyWebhook } from './webhook.jsx';

const PERMISSIONS = [
  ['full', 'Full: create, read and delete'],
  ['read_only', 'Read only'],
  ['agent', 'Agent: the preset cap and expiry for AI agents'],
];

function CreateKey({ onCreated }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const submit = async (e) => {
    e.preventDefault();
    const f = new FormData(e.target);
    const body = { name: f.get('name'), permission: f.get('permission') };
    if (f.get('cap')) body.monthly_cap_usd = Number(f.get('cap'));
    // A date means "through that day": the key stops at its end, UTC.
    if (f.get('expires')) body.expires_at = `${f.get('expires')}T23:59:59Z`;
    setBusy(true);
    setError(null);
    try {
      const key = await api('/dashboard/api/v1/keys', { method: 'POST', body });
      e.target.reset();
      onCreated(key);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="panel create-key" onSubmit={submit} aria-labelledby="create-key-h">
      <h3 id="create-key-h">Create a key</h3>
      <label for="key-name">Name</label>
      <input id="key-name" name="name" required maxLength={100} placeholder="e.g. nightly batch" />
      <label for="key-permission">Permission</label>
      <select id="key-permission" name="permission">
        {PERMISSIONS.map(([v, l]) => (
          <option key={v} value={v}>
            {l}
          </option>
        ))}
      </select>
      <label for="key-cap">Monthly cap in USD (optional)</label>
      <input id="key-cap" name="cap" type="number" min="0" step="0.01" inputMode="decimal" aria-describedby="key-cap-help" />
      <p id="key-cap-help" class="muted small">
        Work that would spend more than this in a calendar month is refused. Empty: no cap.
      </p>
      <label for="key-expires">Expires after (optional)</label>
      <input id="key-expires" name="expires" type="date" aria-describedby="key-expires-help" />
      <p id="key-expires-help" class="muted small">
        The key stops working at the end of this day (UTC). Empty: it does not expire.
      </p>
      <ErrorNote error={error} />
      <button type="submit" disabled={busy}>
        {busy ? 'Creating…' : 'Create key'}
      </button>
    </form>
  );
}

function KeyCard({ k, onChanged }) {
  const [open, setOpen] = useState(false);
  const [error, setError] = useState(null);
  const active = k.status === 'active';
  const revoke = async () => {
    setError(null);
    try {
      await api(`/dashboard/api/v1/keys/${k.id}`, { method: 'DELETE' });
      onChanged(`Key “${k.name}” revoked.`);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <li class="panel key-card" aria-labelledby={`key-${k.id}-h`}>
      <h3 id={`key-${k.id}-h`}>
        {k.name} <span class={`badge ${k.status}`}>{k.status}</span>
      </h3>
      <dl class="facts">
        <dt>Key</dt>
        <dd class="mono">{k.prefix}…</dd>
        <dt>Permission</dt>
        <dd>{k.permission}</dd>
        <dt>Monthly cap</dt>
        <dd>{k.monthly_cap_usd === null ? 'none' : formatUsd(k.monthly_cap_usd)}</dd>
        <dt>Spent this month</dt>
        <dd>{formatUsd(k.month_to_date_spend_usd)}</dd>
        <dt>Expires</dt>
        <dd>{k.expires_at ? formatDate(k.expires_at) : 'never'}</dd>
        <dt>Created</dt>
        <dd>{formatDate(k.created_at)}</dd>
        {k.revoked_at && (
          <>
            <dt>Revoked</dt>
            <dd>{formatDate(k.revoked_at)}</dd>
          </>
        )}
      </dl>
      <ErrorNote error={error} />
      {active && (
        <div class="row">
          <button
            type="button"
            class="secondary"
            aria-expanded={open ? 'true' : 'false'}
            aria-controls={`key-${k.id}-webhook`}
            onClick={() => setOpen(!open)}
          >
            Webhook of {k.name}
            {k.has_webhook ? ' (registered)' : ''}
          </button>
          <ConfirmButton
            label={`Revoke ${k.name}`}
            question={`Revoke the key “${k.name}” (${k.prefix}…)? Programs using it stop working at once. This cannot be undone.`}
            confirmLabel="Revoke key"
            onConfirm={revoke}
          />
        </div>
      )}
      {active && open && (
        <div id={`key-${k.id}-webhook`}>
          <KeyWebhook keyId={k.id} keyName={k.name} onChange={() => onChanged('')} />
        </div>
      )}
    </li>
  );
}

export default function Keys() {
  const keys = useAsync(() => api('/dashboard/api/v1/keys'), []);
  const [created, setCreated] = useState(null);
  const [note, setNote] = useState('');
  const list = keys.data?.keys || [];
  const shown = [...list.filter((k) => k.status === 'active'), ...list.filter((k) => k.status !== 'active')];
  return (
    <>
      <h2>API keys</h2>
      <p class="muted">
        Programs call the API with a key in <code>Authorization: Bearer …</code>. Each key has its own permission, cap,
        expiry and webhook.
      </p>
      {created && (
        <OnceSecret
          label={`New API key “${created.name}”`}
          value={created.api_key}
          what="key"
          onDone={() => setCreated(null)}
        />
      )}
      <Status>{note}</Status>
      <ErrorNote error={keys.error} />
      {keys.loading && !keys.data && <Status>Loading keys…</Status>}
      {keys.data && !list.length && <p>No keys yet.</p>}
      <ul class="cards" aria-label="Your API keys">
        {shown.map((k) => (
          <KeyCard
            key={k.id}
            k={k}
            onChanged={(msg) => {
              setNote(msg);
              keys.reload();
            }}
          />
        ))}
      </ul>
      <CreateKey
        onCreated={(k) => {
          setCreated(k);
          setNote(`Key “${k.name}” created.`);
          keys.reload();
        }}
      />
    </>
  );
}
