// Usage: a calendar month (UTC) of transcriptions and spending, in total,
// per API key and for the connected apps together (GET
// /dashboard/api/v1/usage), beside each key's month-to-date spend as its
// monthly cap counts it (GET /dashboard/api/v1/keys).
import { useState } from 'preact/hooks';
import { api, qs } from '../api.js';
import { ErrorNote, Status, formatUsd, useAsync } from '../ui.jsx';

const thisMonth = () => new Date().toISOString().slice(0, 7);
const monthName = (iso) => new Date(iso).toLocaleString(undefined, { month: 'long', year: 'numeric', timeZone: 'UTC' });
const minutes = (m) => `${(m || 0).toFixed(1)} min`;

export default function Usage() {
  const [month, setMonth] = useState(thisMonth());
  const usage = useAsync(() => api(`/dashboard/api/v1/usage${qs({ month })}`), [month]);
  const keys = useAsync(() => api('/dashboard/api/v1/keys'), []);
  const u = usage.data;
  const current = month === thisMonth();
  return (
    <>
      <h2>Usage</h2>
      <div class="row">
        <label for="usage-month">Month</label>
        <input id="usage-month" type="month" value={month} max={thisMonth()} onChange={(e) => e.target.value && setMonth(e.target.value)} />
      </div>
      <ErrorNote error={usage.error || keys.error} />
      {usage.loading && <Status>Loading…</Status>}
      {u && (
        <>
          <div class="panel">
            <dl class="facts">
              <dt>Charged in {monthName(u.from)}</dt>
              <dd>{formatUsd(u.charged_usd)}</dd>
              <dt>Deposited</dt>
              <dd>{formatUsd(u.deposited_usd)}</dd>
              <dt>Transcriptions</dt>
              <dd>
                {u.transcriptions.created} created, {u.transcriptions.completed} completed,{' '}
                {minutes(u.transcriptions.billed_minutes)} billed
              </dd>
              <dt>Available now</dt>
              <dd>{formatUsd(u.wallet.available_usd)}</dd>
            </dl>
          </div>
          <h3 id="usage-by-key">By key</h3>
          <div class="table-wrap" role="region" tabIndex={0} aria-labelledby="usage-by-key">
            <table aria-labelledby="usage-by-key">
              <thead>
                <tr>
                  <th scope="col">Key</th>
                  <th scope="col">Transcriptions</th>
                  <th scope="col">Billed</th>
                  <th scope="col">Charged</th>
                </tr>
              </thead>
              <tbody>
                {u.by_key.map((r) => (
                    <tr key={r.key_id}>
                      <th scope="row">{r.name ?? `key ${r.key_id}`}</th>
                      <td>
                        {r.created} ({r.completed} completed)
                      </td>
                      <td>{minutes(r.billed_minutes)}</td>
                      <td>{formatUsd(r.charged_usd)}</td>
                    </tr>
                ))}
                <tr>
                  <th scope="row">Connected apps and this console</th>
                  <td>
                    {u.apps.created} ({u.apps.completed} completed)
                  </td>
                  <td>{minutes(u.apps.billed_minutes)}</td>
                  <td>{formatUsd(u.apps.charged_usd)}</td>
                </tr>
              </tbody>
            </table>
          </div>
          {current && keys.data && (
            <>
              <h3 id="usage-spend">Month-to-date spend per key</h3>
              <p class="muted small">What each key's monthly cap counts: settled charges and money held for work in progress.</p>
              <div class="table-wrap" role="region" tabIndex={0} aria-labelledby="usage-spend">
                <table aria-labelledby="usage-spend">
                  <thead>
                    <tr>
                      <th scope="col">Key</th>
                      <th scope="col">Status</th>
                      <th scope="col">Spent</th>
                      <th scope="col">Cap</th>
                    </tr>
                  </thead>
                  <tbody>
                    {keys.data.keys.map((k) => (
                      <tr key={k.id}>
                        <th scope="row">{k.name}</th>
                        <td>{k.status}</td>
                        <td>{formatUsd(k.month_to_date_spend_usd)}</td>
                        <td>{k.monthly_cap_usd === null ? 'none' : formatUsd(k.monthly_cap_usd)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </>
          )}
        </>
      )}
    </>
  );
}
