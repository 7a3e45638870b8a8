// Account overview: who is signed in, the wallet and plan in brief, and where
// each part of the account is managed.
import { api } from '../api.js';
import { ErrorNote, Status, formatUsd, useAsync } from '../ui.jsx';

export default function Overview() {
  const me = useAsync(() => api('/api/v1/me'), []);
  const m = me.data;
  return (
    <>
      <ErrorNote error={me.error} />
      {me.loading && <Status>Loading…</Status>}
      {m && (
        <div class="panel">
          <dl class="facts">
            <dt>Signed in as</dt>
            <dd>{m.email}</dd>
            <dt>Plan</dt>
            <dd>{m.subscription_tier}</dd>
            <dt>Available balance</dt>
            <dd>{formatUsd(m.wallet_available_usd)}</dd>
          </dl>
        </div>
      )}
      <ul class="overview-links">
        <li>
          <a href="/app/account/keys">API keys</a>: create keys for your programs, with a permission, a monthly cap and an
          expiry; revoke them; a webhook per key.
        </li>
        <li>
          <a href="/app/account/apps">Connected apps</a>: the applications you signed in to with scribe; disconnect them.
        </li>
        <li>
          <a href="/app/account/usage">Usage</a>: transcriptions and spending this month, per key.
        </li>
        <li>
          <a href="/app/account/billing">Billing</a>: wallet balance, money held for work in progress, and your plan.
        </li>
      </ul>
    </>
  );
}
