// Authentication through the real `scribe serve`: the spec's 401 codes, key
// lifecycle (revoke, expiry), permissions, the 20-key limit and isolation.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { startServer, newAccount, newKey, admin, curl, envelope } from './harness.mjs';

let server;
before(async () => { server = await startServer(); });
after(async () => { await server?.stop(); });

const me = (key, headers = {}) => curl(`${server.url}/api/v1/me`, { key, headers });
const alnum = (n) => {
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let s = '';
  for (let i = 0; i < n; i++) s += chars[Math.floor(Math.random() * chars.length)];
  return s;
};

test('missing Authorization header is 401 unauthenticated', async () => {
  const e = envelope(assert, await me(), 401, 'unauthenticated');
  assert.match(e.message, /Authorization/);
});

test('a non-Bearer scheme is 401 unauthenticated', async () => {
  const { key } = newAccount();
  const basic = await me(undefined, { Authorization: `Basic ${Buffer.from(`user:${key}`).toString('base64')}` });
  envelope(assert, basic, 401, 'unauthenticated');
  // Even a valid key under another scheme.
  envelope(assert, await me(undefined, { Authorization: `Token ${key}` }), 401, 'unauthenticated');
});

test('a non-key bearer token (an OAuth token with no verifier) is 401 unauthenticated', async () => {
  envelope(assert, await me('eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln'), 401, 'unauthenticated');
  envelope(assert, await me('oat_' + alnum(40)), 401, 'unauthenticated');
});

test('a malformed key is 401 invalid_api_key', async () => {
  for (const bad of ['key_live_short', `key_live_${alnum(39)}!`, `key_live_${alnum(41)}`, `key_test_${alnum(40)}`]) {
    const res = await me(bad);
    envelope(assert, res, 401, 'invalid_api_key');
  }
});

test('a well-formed unknown key is 401 invalid_api_key', async () => {
  envelope(assert, await me(`key_live_${alnum(40)}`), 401, 'invalid_api_key');
});

test('a revoked key is 401 invalid_api_key at once', async () => {
  const acct = newAccount();
  const second = newKey(acct.accountId);
  assert.equal((await me(second.key)).status, 200);
  admin('key', 'revoke', '--key', second.keyId);
  const e = envelope(assert, await me(second.key), 401, 'invalid_api_key');
  assert.match(e.message, /revoked/);
  // The account's other key is unaffected.
  assert.equal((await me(acct.key)).status, 200);
});

test('an expired key is 401 invalid_api_key', async () => {
  const acct = newAccount();
  const expiresAt = new Date(Date.now() + 2500);
  const short = newKey(acct.accountId, '--expires-at', expiresAt.toISOString());
  const before = await me(short.key);
  assert.equal(before.status, 200, before.body);
  assert.equal(Date.parse(before.json.api_key.expires_at), expiresAt.getTime());
  const wait = expiresAt.getTime() - Date.now() + 300;
  if (wait > 0) await sleep(wait);
  const e = envelope(assert, await me(short.key), 401, 'invalid_api_key');
  assert.match(e.message, /expired/);
});

test('a read-only key can read /me and is reported as read_only', async () => {
  const acct = newAccount({ permission: 'read_only' });
  const res = await me(acct.key);
  assert.equal(res.status, 200, res.body);
  assert.equal(res.json.api_key.permission, 'read_only');
  assert.deepEqual(res.json.api_key.scopes, ['read']);
  // Every GET works; POST and DELETE (403 scope_forbidden) are covered in
  // api/api_app_pgtest.cpp, since the server has no write endpoint yet.
  const pipelines = await curl(`${server.url}/api/v1/pipelines`, { key: acct.key });
  assert.equal(pipelines.status, 200);
});

test('the agent preset needs a cap and an expiry, and shows its cap on /me', async () => {
  const acct = newAccount();
  const refused = (...extra) => assert.throws(
    () => admin('key', 'create', '--account', acct.accountId, '--permission', 'agent', ...extra),
    (err) => err.status !== 0 && err.status !== null,
  );
  refused();
  refused('--monthly-cap-usd', '5');
  refused('--expires-in-days', '30');
  const agent = newKey(acct.accountId, '--permission', 'agent', '--monthly-cap-usd', '5', '--expires-in-days', '30');
  const res = await me(agent.key);
  assert.equal(res.status, 200, res.body);
  const k = res.json.api_key;
  assert.equal(k.permission, 'agent');
  assert.deepEqual(k.scopes, ['read', 'write']);
  assert.equal(k.monthly_cap_usd, 5);
  assert.equal(k.month_to_date_spend_usd, 0);
  const days = (Date.parse(k.expires_at) - Date.now()) / 86400000;
  assert.ok(days > 29.9 && days <= 30, `expires in ${days} days`);
});

test('at most 20 active keys per account', async () => {
  const acct = newAccount(); // key 1
  const keys = [acct];
  for (let i = 2; i <= 20; i++) keys.push(newKey(acct.accountId));
  assert.equal(admin('key', 'list', '--account', acct.accountId).filter((k) => !k.revoked).length, 20);
  assert.throws(() => newKey(acct.accountId), (err) => err.status === 1 && /20 active API keys/.test(String(err.stderr)));
  admin('key', 'revoke', '--key', keys[5].keyId);
  const replacement = newKey(acct.accountId);
  assert.equal((await me(replacement.key)).status, 200);
  assert.throws(() => newKey(acct.accountId), (err) => err.status === 1);
});

test('tenant isolation: each account sees only its own /me', async () => {
  const a = newAccount({ balance: 3 });
  const b = newAccount({ balance: 7 });
  const ra = await me(a.key);
  const rb = await me(b.key);
  assert.equal(ra.json.user_id, a.accountId);
  assert.equal(ra.json.email, a.email);
  assert.equal(ra.json.wallet_balance_usd, 3);
  assert.equal(ra.json.api_key.id, a.keyId);
  assert.equal(rb.json.user_id, b.accountId);
  assert.equal(rb.json.email, b.email);
  assert.equal(rb.json.wallet_balance_usd, 7);
  assert.equal(rb.json.api_key.id, b.keyId);
  assert.notEqual(a.accountId, b.accountId);
});
