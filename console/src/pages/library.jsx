// The library (/app): the wallet and plan, adding recordings (uploads with
// tus, links; library/upload_panel.jsx), and the transcriptions newest first
// with status and stage kept live by long-polls (library/live.js).
//
// Filters live in the URL query (?status=&q=&ref=) so a filtered view can be
// bookmarked and shared. `ref` is the API's exact `client_reference` filter;
// status and text filter the pages loaded so far (the list endpoint has no
// such parameters), and "Load more" reaches further back. The URL is updated
// with history.replaceState, not navigate(): the shell remounts a page when
// its address changes, which would drop the long-polls and the form state.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, qs } from '../api.js';
import { ErrorNote, Status, formatDate, formatTime, formatUsd, useAsync, useTitle } from '../ui.jsx';
import { ACTIVE, createWatcher } from '../library/live.js';
import { UploadPanel } from '../library/upload_panel.jsx';
import { formatCharge } from '../library/start_form.jsx';

const PAGE = 50;

const STATUS_FILTERS = [
  ['', 'All (without quotes)'],
  ['active', 'In progress'],
  ['completed', 'Completed'],
  ['failed', 'Failed'],
  ['cancelled', 'Cancelled'],
  ['quoted', 'Quotes never started'],
];

const PLANS = { free: 'Pay as you go', starter: 'Starter', pro: 'Pro', business: 'Business', enterprise: 'Enterprise' };

export const titleOf = (t) => t.title || t.original_filename || t.url || `Transcription ${t.id}`;

function statusMatches(t, status) {
  if (!status) return t.status !== 'quoted';
  if (status === 'active') return ACTIVE.has(t.status);
  return t.status === status;
}

function textMatches(t, text) {
  if (!text) return true;
  const needle = text.toLowerCase();
  return [t.title, t.original_filename, t.url, t.client_reference].some((v) => v && v.toLowerCase().includes(needle));
}

function Wallet({ me, error }) {
  if (error) return <ErrorNote error={error} />;
  if (!me) return <p class="muted">Loading the wallet…</p>;
  return (
    <dl class="lib-wallet" aria-label="Wallet and plan">
      <div>
        <dt>Available</dt>
        <dd>{formatUsd(me.wallet_available_usd ?? me.wallet_balance_usd)}</dd>
      </div>
      <div>
        <dt>Held for running jobs</dt>
        <dd>{formatCharge(me.wallet_held_usd ?? 0)}</dd>
      </div>
      <div>
        <dt>Plan</dt>
        <dd>
          {PLANS[me.subscription_tier] || me.subscription_tier} <a href="/app/account/billing">Billing</a>
        </dd>
      </div>
    </dl>
  );
}

export default function Library({ query }) {
  useTitle('Library');
  const [status, setStatus] = useState(query.get('status') || '');
  const [text, setText] = useState(query.get('q') || '');
  const [ref, setRef] = useState(query.get('ref') || '');
  const [refDraft, setRefDraft] = useState(ref);
  const [rows, setRows] = useState([]);
  const [cursor, setCursor] = useState(null);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState(null);
  const [announce, setAnnounce] = useState('');
  const me = useAsync(() => api('/api/v1/me'), []);
  const watcher = useRef(null);

  // Live updates: a finished row refreshes the wallet (its hold settled).
  useEffect(() => {
    const w = createWatcher({
      onUpdate: (body) => {
        const { _timed_out, included, ...t } = body;
        setRows((rs) => rs.map((r) => (r.id === t.id ? { ...r, ...t } : r)));
        if (!ACTIVE.has(t.status)) {
          setAnnounce(`${titleOf(t)}: ${t.status}`);
          me.reload();
        }
      },
    });
    watcher.current = w;
    return () => w.stop();
  }, []);

  // Keep the URL in step with the filters (see the header comment).
  useEffect(() => {
    history.replaceState(history.state, '', `/app${qs({ status, q: text, ref })}`);
  }, [status, text, ref]);

  async function load(after) {
    setLoading(true);
    setError(null);
    try {
      const page = await api(`/api/v1/transcriptions${qs({ limit: PAGE, cursor: after, client_reference: ref })}`);
      setRows((rs) => (after ? [...rs, ...page.data.filter((t) => !rs.some((r) => r.id === t.id))] : page.data));
      setCursor(page.next_cursor);
      for (const t of page.data) if (ACTIVE.has(t.status)) watcher.current.watch(t.id);
    } catch (e) {
      setError(e);
    } finally {
      setLoading(false);
    }
  }
  useEffect(() => {
    load(null);
  }, [ref]);

  const onStarted = (created, item) => {
    const row = {
      title: item.kind === 'file' ? item.name : null,
      original_filename: item.kind === 'file' ? item.name : undefined,
      created_at: new Date().toISOString(),
      charge_usd: created.retail_usd,
      ...created,
    };
    setRows((rs) => [row, ...rs.filter((r) => r.id !== row.id)]);
    watcher.current.watch(created.id);
    me.reload();
  };

  const shown = useMemo(() => rows.filter((t) => statusMatches(t, status) && textMatches(t, text)), [rows, status, text]);

  return (
    <section class="library">
      <h1>Library</h1>
      <Wallet me={me.data} error={me.error} />
      <UploadPanel onStarted={onStarted} />
      <h2 id="lib-list-h">Transcriptions</h2>
      <form class="row lib-filters" role="search" aria-label="Filter transcriptions" onSubmit={(e) => {
          e.preventDefault();
          setRef(refDraft.trim());
        }}
      >
        <div>
          <label for="lib-f-status">Status</label>
          <select id="lib-f-status" value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            {STATUS_FILTERS.map(([v, label]) => (
              <option key={v} value={v}>
                {label}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label for="lib-f-text">Title contains</label>
          <input id="lib-f-text" type="search" value={text} onInput={(e) => setText(e.currentTarget.value)} />
        </div>
        <div>
          <label for="lib-f-ref">Reference (exact)</label>
          <input
            id="lib-f-ref"
            type="search"
            value={refDraft}
            onInput={(e) => setRefDraft(e.currentTarget.value)}
            onChange={(e) => setRef(e.currentTarget.value.trim())}
          />
        </div>
        <button type="submit" class="secondary">
          Apply
        </button>
      </form>
      <Status>{announce}</Status>
      <ErrorNote error={error} />
      <ul class="lib-list" aria-labelledby="lib-list-h">
        {shown.map((t) => (
          <Row key={t.id} t={t} />
        ))}
      </ul>
      {!loading && shown.length === 0 && (
        <p class="muted">
          {status || text || ref ? 'Nothing loaded matches these filters.' : 'No transcriptions yet: add a recording above.'}
        </p>
      )}
      {loading && <p class="muted">Loading…</p>}
      {cursor && !loading && (
        <button type="button" class="secondary" onClick={() => load(cursor)}>
          Load more
        </button>
      )}
    </section>
  );
}

const STATUS_TEXT = {
  quoted: 'Quoted',
  queued: 'Queued',
  pending: 'Queued',
  processing: 'In progress',
  completed: 'Completed',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

function Row({ t }) {
  const active = ACTIVE.has(t.status);
  return (
    <li class="lib-row" data-status={t.status}>
      <a class="lib-title" href={`/app/transcriptions/${t.id}`}>
        {titleOf(t)}
      </a>
      <div class="lib-meta small">
        <span class={`lib-status lib-status-${t.status}`}>
          {STATUS_TEXT[t.status] || t.status}
          {active && t.stage ? ` · ${t.stage}` : ''}
        </span>
        {t.duration_seconds ? <span>{formatTime(t.duration_seconds)}</span> : null}
        {t.charge_usd !== undefined && <span>{formatCharge(t.charge_usd)}</span>}
        {t.client_reference && <span>ref {t.client_reference}</span>}
        <span class="muted">{formatDate(t.created_at)}</span>
      </div>
      {t.error && (
        <p class="small lib-row-error">
          {t.error.code}: {t.error.message}
        </p>
      )}
    </li>
  );
}
