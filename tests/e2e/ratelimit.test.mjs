// The request-rate limiter is shared by every `scribe serve` process on the
// database: two servers, one key, one budget.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { toFile } from 'openai';
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

test('the OpenAI-compatible routes draw on the same budget, on either server', async () => {
  const { key } = newAccount();
  const oa = (i) => new OpenAI({ baseURL: `${servers[i % 2].url}/v1`, apiKey: key, maxRetries: 0 });
  const file = () => toFile(Buffer.from('RIFF'), 'a.wav', { type: 'audio/wav' });
  for (let i = 0; i < LIMIT - 3; i++) assert.equal((await me(i, key)).status, 200);
  // Counted from the request's head, even when the body is then refused.
  await assert.rejects(oa(1).audio.transcriptions.create({ file: await file(), model: 'no-such-model' }),
    (err) => err instanceof OpenAI.BadRequestError && err.code === 'unsupported_pipeline');
  assert.ok((await oa(0).models.list()).data.length > 0);
  assert.equal((await me(1, key)).status, 200);
  // The budget is spent: both surfaces answer 429, the OpenAI one in OpenAI's shape.
  for (const i of [0, 1]) {
    await assert.rejects(oa(i).audio.transcriptions.create({ file: await file(), model: 'whisper-1' }), (err) => {
      assert.ok(err instanceof OpenAI.RateLimitError, String(err));
      assert.equal(err.code, 'rate_limited');
      assert.equal(err.type, 'rate_limit_error');
      const retry = Number(err.headers.get('retry-after'));
      assert.ok(Number.isInteger(retry) && retry >= 1 && retry <= 60, `retry-after ${retry}`);
      assert.equal(err.error.retry_after, retry);
      return true;
    });
  }
  await assert.rejects(oa(0).models.list(), OpenAI.RateLimitError);
  envelope(assert, await me(0, key), 429, 'rate_limited');
});

test('unauthenticated requests are answered 401, never 429: the limiter counts per key', async () => {
  for (let i = 0; i < LIMIT + 2; i++) envelope(assert, await me(i, undefined), 401, 'unauthenticated');
});

// Failed authentications are limited per client address, in memory, so a
// flood of bad keys cannot turn into a flood of database reads.
test('70 bad keys from one address: 20 are 401, the rest 429 with Retry-After, with 20 key lookups at most', async () => {
  const srv = await startServer();
  try {
    const lookups = async () => Number((await curl(`${srv.metricsUrl}/metrics`)).body
      .match(/^scribe_auth_key_lookups_total (\d+)$/m)[1]);
    // A key that works before the flood keeps working during it.
    const { key } = newAccount();
    assert.equal((await curl(`${srv.url}/api/v1/me`, { key })).status, 200);
    // A fresh key that never authenticated on this server before the flood.
    const { key: fresh } = newAccount();
    const before = await lookups();
    const alnum = () => Array.from({ length: 40 }, () => 'abcdefghijklmnopqrstuvwxyz0123456789'[Math.floor(Math.random() * 36)]).join('');
    const statuses = [];
    for (let i = 0; i < 70; i++) {
      const res = await curl(`${srv.url}/api/v1/me`, { key: `key_live_${alnum()}` });
      statuses.push(res.status);
      if (res.status === 401) envelope(assert, res, 401, 'invalid_api_key');
      else {
        const e = envelope(assert, res, 429, 'rate_limited');
        const retry = Number(res.headers['retry-after']);
        assert.ok(Number.isInteger(retry) && retry >= 1 && retry <= 60, `retry-after ${res.headers['retry-after']}`);
        assert.equal(e.retry_after, retry);
        assert.match(e.message, /failed authentications/);
      }
    }
    assert.deepEqual(statuses, [...Array(20).fill(401), ...Array(50).fill(429)]);
    const spent = (await lookups()) - before;
    assert.ok(spent <= 20, `${spent} key lookups for 70 bad keys`);
    // A malformed key is refused before any lookup (and before the address check: it costs nothing).
    envelope(assert, await curl(`${srv.url}/api/v1/me`, { key: 'key_live_short' }), 401, 'invalid_api_key');
    assert.equal((await lookups()) - before, spent);
    // The key known before the flood still works from this address; one it has not seen waits.
    assert.equal((await curl(`${srv.url}/api/v1/me`, { key })).status, 200);
    envelope(assert, await curl(`${srv.url}/api/v1/me`, { key: fresh }), 429, 'rate_limited');
    // Requests without credentials are not authentication attempts: still 401.
    envelope(assert, await curl(`${srv.url}/api/v1/me`), 401, 'unauthenticated');
  } finally {
    await srv.stop();
  }
});
