// Billing: the wallet (balance, what is held for work in progress, what is
// available) and the plan's limits, from GET /api/v1/me.
import { api } from '../api.js';
import { ErrorNote, Status, formatUsd, useAsync } from '../ui.jsx';

export default function Billing() {
  const me = useAsync(() => api('/api/v1/me'), []);
  const m = me.data;
  return (
    <>
      <h2>Billing</h2>
      <ErrorNote error={me.error} />
      {me.loading && <Status>Loading…</Status>}
      {m && (
        <>
          <div class="panel">
            <dl class="facts">
              <dt>Wallet balance</dt>
              <dd>{formatUsd(m.wallet_balance_usd)}</dd>
              <dt>Held</dt>
              <dd>
                {formatUsd(m.wallet_held_usd)}{' '}
                <span class="muted small">
                  ({m.open_holds} {m.open_holds === 1 ? 'job' : 'jobs'} in progress; settled when they finish)
                </span>
              </dd>
              <dt>Available</dt>
              <dd>{formatUsd(m.wallet_available_usd)}</dd>
              <dt>Plan</dt>
              <dd>{m.subscription_tier}</dd>
            </dl>
          </div>
          {m.limits && (
            <>
              <h3>Plan limits</h3>
              <dl class="facts">
                <dt>Longest file</dt>
                <dd>{m.limits.max_file_minutes} minutes</dd>
                <dt>Largest upload</dt>
                <dd>{Math.round(m.limits.max_upload_bytes / 1024 / 1024)} MiB</dd>
                <dt>Jobs at once</dt>
                <dd>{m.limits.max_concurrent_jobs ?? 'no limit'}</dd>
              </dl>
            </>
          )}
          <p class="muted">
            Deposits and plan changes are made by the operator of this scribe; see <a href="/app/support">support</a>.
          </p>
        </>
      )}
    </>
  );
}
