// The request-rate limiter is shared by every `scribe serve` process on the
// database: two servers, one key, one budget.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, newAccount, newKey, curl, envelope } from './harness.mjs';

const LIMIT = 10;
let servers = [];
before(async () => {
  servers = [await startServer({ args: ['--rate-limit', String(LIMIT)] }),
    await startServer({ args: ['--rate-limit', String(LIMIT)] })];
});
after(async () => { await Promise.all(servers.map((s) => s.stop())); });

const me = (i, key) => curl(`${servers[i % 2].url}/api/v1/me`, { key });

test('the limit is shared across processes: 10 of the first 12 pass, then 429 with retry-after', async () => {
  const { key } = newAccount();
  const results = [];
  for (let i = 0; i < LIMIT + 2; i++) results.push(await me(i, key));
  assert.deepEqual(results.map((r) => r.status), [...Array(LIMIT).fill(200), 429, 429]);
  for (const r of results.slice(LIMIT)) {
    const e = envelope(assert, r, 429, 'rate_limited');
    const retry = Number(r.headers['retry-after']);
    assert.ok(Number.isInteger(retry) && retry >= 1 && retry <= 60, `retry-after ${r.headers['retry-after']}`);
    assert.equal(e.retry_after, retry);
    assert.match(e.message, /10 requests per minute/);
  }
});

test('another key is unaffected, also on the same account', async () => {
  const acct = newAccount();
  for (let i = 0; i < LIMIT; i++) assert.equal((await me(i, acct.key)).status, 200);
  envelope(assert, await me(0, acct.key), 429, 'rate_limited');
  envelope(assert, await me(1, acct.key), 429, 'rate_limited');

  const sibling = newKey(acct.accountId);
  const stranger = newAccount();
  for (const key of [sibling.key, stranger.key]) {
    assert.equal((await me(0, key)).status, 200);
    assert.equal((await me(1, key)).status, 200);
  }
  // The exhausted key is still limited.
  envelope(assert, await me(0, acct.key), 429, 'rate_limited');
});

test('unauthenticated requests are answered 401, never 429: the limiter counts per key', async () => {
  for (let i = 0; i < LIMIT + 2; i++) envelope(assert, await me(i, undefined), 401, 'unauthenticated');
});
