// OAuth 2.1 access tokens where they are used (issue 31, the resource side):
// the REST API, /v1 and /mcp of the real server, with tokens obtained through
// the real /oauth/authorize (sign-in and consent forms submitted as a browser
// would, oauth_helpers approve()) and /oauth/token. Audience binding on each
// surface, the 401s and their WWW-Authenticate challenges, expiry and
// revocation, what a token may do (webhooks 403, /me, one rate-limit bucket
// per user, idempotency and MCP sessions per user and app), the console's
// /dashboard/api/v1 endpoints, and connected apps revoked through the console
// and `scribe admin` ending access at once on a second server process.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { startServer, curl, envelope, newKey, BIN, DB } from './harness.mjs';
import { approve, newUser, pkce, postForm } from './oauth_helpers.mjs';

const LEGACY = '2025-11-25';
let srv; // the server most tests use
let other; // a second process on the same database, behind the same public URL (as behind one proxy)
before(async () => {
  const env = { SCRIBE_RATE_LIMIT_PER_MINUTE: '100000' };
  srv = await startServer({ extraEnv: env });
  other = await startServer({ extraEnv: { ...env, SCRIBE_PUBLIC_URL: srv.url } });
});
after(async () => {
  await srv?.stop();
  await other?.stop();
});

// ---------------------------------------------------------------------------
// Getting tokens the way apps do.

const REDIRECT = 'http://127.0.0.1:9/callback'; // a native app's loopback redirect (never fetched)

// Registers a public client (RFC 7591) on `server`; returns its client_id.
async function register(server, name) {
  const res = await fetch(`${server.url}/oauth/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ client_name: name, redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], application_type: 'native' }),
  });
  const body = await res.json();
  assert.equal(res.status, 201, JSON.stringify(body));
  return body.client_id;
}

// Authorization code + PKCE for `user` and `clientId`, bound to `resources`
// (absolute resource URIs; none: the server's default). Returns the token
// response ({access_token, refresh_token, ...}).
async function tokens(server, user, clientId, resources = [], { redirectUri = REDIRECT } = {}) {
  const { verifier, challenge } = pkce();
  const url = new URL(`${server.url}/oauth/authorize`);
  const q = url.searchParams;
  q.set('response_type', 'code');
  q.set('client_id', clientId);
  q.set('redirect_uri', redirectUri);
  q.set('code_challenge', challenge);
  q.set('code_challenge_method', 'S256');
  q.set('state', randomBytes(8).toString('hex'));
  q.set('scope', 'transcribe');
  for (const r of resources) q.append('resource', r);
  const { code } = await approve(url, { email: user.email, password: user.password });
  const form = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: clientId,
    code_verifier: verifier });
  for (const r of resources) form.append('resource', r);
  const res = await postForm(`${server.url}/oauth/token`, form);
  assert.equal(res.status, 200, res.text);
  assert.match(res.json.access_token, /^sat_/);
  return res.json;
}

// The web console's sign-in: the built-in first-party client, no consent page.
const consoleTokens = (server, user) =>
  tokens(server, user, 'scribe-console', [], { redirectUri: `${server.url}/app/callback` });

const me = (server, token) => curl(`${server.url}/api/v1/me`, { key: token });

// A 2025-11-25 initialize on /mcp; returns {status, json, session}.
async function mcpInitialize(server, token) {
  const res = await fetch(`${server.url}/mcp`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
      Authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 'oauth-resource', version: '1' } } }),
  });
  const text = await res.text();
  let json;
  try { json = JSON.parse(text); } catch { json = undefined; }
  return { status: res.status, headers: res.headers, json, text, session: res.headers.get('mcp-session-id') };
}

// tools/list in a 2025-11-25 session.
async function mcpToolsList(server, token, session) {
  const res = await fetch(`${server.url}/mcp`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
      Authorization: `Bearer ${token}`, 'MCP-Protocol-Version': LEGACY, 'Mcp-Session-Id': session },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }),
  });
  await res.text();
  return res.status;
}

// The challenge of a 401 (RFC 6750 3, RFC 9728 5.1).
function challenge(res, server, { mcp = false, invalidToken }) {
  const header = res.headers['www-authenticate'] ?? res.headers.get?.('www-authenticate');
  const prm = `${server.url}/.well-known/oauth-protected-resource${mcp ? '/mcp' : ''}`;
  assert.equal(header, `Bearer resource_metadata="${prm}"${invalidToken ? ', error="invalid_token"' : ''}`);
}

function unauthenticated(res, server, { mcp = false, message } = {}) {
  const e = envelope(assert, res, 401, 'unauthenticated');
  challenge(res, server, { mcp, invalidToken: true });
  if (message) assert.match(e.message, message);
  return e;
}

const adminJson = (...args) =>
  JSON.parse(execFileSync(BIN, ['admin', ...args, '--json'], { env: { ...process.env, SCRIBE_DATABASE_URL: DB,
    SCRIBE_LOG_LEVEL: 'warn' }, encoding: 'utf8' }).trim().split('\n').pop());

// ---------------------------------------------------------------------------

test('protected-resource metadata names each resource and the one issuer', async () => {
  for (const [path, resource] of [['/.well-known/oauth-protected-resource', srv.url],
    ['/.well-known/oauth-protected-resource/mcp', `${srv.url}/mcp`]]) {
    const res = await curl(`${srv.url}${path}`);
    assert.equal(res.status, 200, res.body);
    assert.equal(res.json.resource, resource);
    assert.deepEqual(res.json.authorization_servers, [srv.url]);
    assert.deepEqual(res.json.bearer_methods_supported, ['header']);
    assert.deepEqual(res.json.scopes_supported, ['transcribe']);
    assert.equal(typeof res.json.resource_name, 'string');
    assert.equal(res.headers['access-control-allow-origin'], '*');
    // The issuer the authorization server announces is the same string.
    const as = await curl(`${srv.url}/.well-known/oauth-authorization-server`);
    assert.equal(as.json.issuer, res.json.authorization_servers[0]);
  }
});

test('every 401 of the REST API, /v1 and /mcp points at its metadata; API-key failures stay invalid_api_key', async () => {
  const user = newUser();
  const revokedKey = newKey(user.accountId);
  adminJson('key', 'revoke', '--key', revokedKey.keyId);
  for (const [path, method, mcp] of [['/api/v1/me', 'GET', false], ['/v1/models', 'GET', false],
    ['/mcp', 'POST', true]]) {
    const url = `${srv.url}${path}`;
    // No credentials: the challenge without an error code.
    const anon = await curl(url, { method, body: method === 'POST' ? {} : undefined });
    envelope(assert, anon, 401, 'unauthenticated');
    challenge(anon, srv, { mcp, invalidToken: false });
    // A token that is not one: unauthenticated, error="invalid_token".
    const bogus = await curl(url, { method, key: `sat_${'A'.repeat(43)}`, body: method === 'POST' ? {} : undefined });
    unauthenticated(bogus, srv, { mcp, message: /not known/ });
    // API keys: their own code, the same challenge.
    for (const key of ['key_live_short', `key_live_${'Z'.repeat(40)}`, revokedKey.key]) {
      const res = await curl(url, { method, key, body: method === 'POST' ? {} : undefined });
      if (path === '/v1/models') {
        // The OpenAI-compatible routes answer OpenAI's envelope around the same code.
        assert.equal(res.status, 401, res.body);
        assert.equal(res.json.error.code, 'invalid_api_key');
      } else envelope(assert, res, 401, 'invalid_api_key');
      challenge(res, srv, { mcp, invalidToken: true });
    }
  }
});

test('a token is accepted only by the resource it was issued for; one for both by both', async () => {
  const user = newUser();
  const client = await register(srv, 'audience app');
  const rest = await tokens(srv, user, client, [srv.url]);
  const mcp = await tokens(srv, user, client, [`${srv.url}/mcp`]);
  const both = await tokens(srv, user, client, [srv.url, `${srv.url}/mcp`]);
  const byDefault = await tokens(srv, user, client); // no resource: {base}

  for (const t of [rest, byDefault, both]) {
    assert.equal((await me(srv, t.access_token)).status, 200);
    assert.equal((await curl(`${srv.url}/v1/models`, { key: t.access_token })).status, 200);
  }
  for (const t of [mcp, both]) {
    const init = await mcpInitialize(srv, t.access_token);
    assert.equal(init.status, 200, init.text);
  }
  for (const t of [rest, byDefault]) {
    const res = await mcpInitialize(srv, t.access_token);
    assert.equal(res.status, 401, res.text);
    assert.equal(res.json.error.code, 'unauthenticated');
    assert.match(res.json.error.message, /wrong audience/);
    challenge(res, srv, { mcp: true, invalidToken: true });
  }
  unauthenticated(await me(srv, mcp.access_token), srv, { message: /wrong audience/ });
  const openai = await curl(`${srv.url}/v1/models`, { key: mcp.access_token });
  assert.equal(openai.status, 401, openai.body);
  assert.equal(openai.json.error.code, 'unauthenticated');
  challenge(openai, srv, { invalidToken: true });
});

test('/me describes the OAuth principal: user and app, no api_key block', async () => {
  const user = newUser();
  const client = await register(srv, 'Shape Checker');
  const t = await tokens(srv, user, client, [srv.url]);
  const res = await me(srv, t.access_token);
  assert.equal(res.status, 200, res.body);
  assert.equal(res.json.user_id, Number(user.accountId));
  assert.equal(res.json.email, user.email);
  assert.equal('api_key' in res.json, false);
  assert.deepEqual(res.json.oauth, { client_id: client, client_name: 'Shape Checker' });
  // Twice: the second is served from the process's token cache and still reads the row.
  assert.deepEqual((await me(srv, t.access_token)).json.oauth, res.json.oauth);
  // The API key of the same account still sees its own block.
  assert.equal((await me(srv, user.key)).json.api_key.id, Number(user.keyId));
});

test('an expired access token is 401 unauthenticated; its refresh token gets a fresh one', async () => {
  const short = await startServer({ extraEnv: { SCRIBE_OAUTH_ACCESS_TTL_SECONDS: '1' } });
  try {
    const user = newUser();
    const client = await register(short, 'short-lived');
    const t = await tokens(short, user, client, [short.url]);
    // Read until the hour (here: a second) is over; no fixed sleep.
    let res = await me(short, t.access_token);
    for (const until = Date.now() + 15000; res.status === 200 && Date.now() < until;) {
      await new Promise((r) => setTimeout(r, 100));
      res = await me(short, t.access_token);
    }
    unauthenticated(res, short, { message: /expired/ });
    const refreshed = await postForm(`${short.url}/oauth/token`, { grant_type: 'refresh_token',
      refresh_token: t.refresh_token, client_id: client });
    assert.equal(refreshed.status, 200, refreshed.text);
    // Fresh, and (1 s) good for at least this request or already expired: either way never the old one.
    assert.notEqual(refreshed.json.access_token, t.access_token);
  } finally {
    await short.stop();
  }
});

test('a revoked token is refused at once on every process: the access token itself, then the grant', async () => {
  const user = newUser();
  const client = await register(srv, 'revocable');
  const a = await tokens(srv, user, client, [srv.url]);
  const b = await tokens(srv, user, client, [srv.url]);
  assert.equal((await me(srv, a.access_token)).status, 200);
  assert.equal((await me(other, a.access_token)).status, 200);
  // RFC 7009 on one process; the other refuses on its next request.
  const revoked = await postForm(`${srv.url}/oauth/revoke`, { token: a.access_token, token_type_hint: 'access_token',
    client_id: client });
  assert.equal(revoked.status, 200, revoked.text);
  unauthenticated(await me(other, a.access_token), srv, { message: /revoked/ });
  unauthenticated(await me(srv, a.access_token), srv, { message: /revoked/ });
  // Revoking a refresh token revokes its grant: its access token goes too.
  assert.equal((await me(other, b.access_token)).status, 200);
  await postForm(`${other.url}/oauth/revoke`, { token: b.refresh_token, client_id: client });
  unauthenticated(await me(srv, b.access_token), srv, { message: /revoked/ });
});

test('OAuth tokens: webhooks 403 forbidden, full access otherwise', async () => {
  const user = newUser({ permission: 'read_only' });
  const client = await register(srv, 'hooks');
  const t = await tokens(srv, user, client, [srv.url]);
  for (const [method, path, body] of [['GET', '/api/v1/webhooks'], ['POST', '/api/v1/webhooks',
    { url: 'https://hooks.example.com/x' }], ['DELETE', '/api/v1/webhooks'], ['POST', '/api/v1/webhooks/test', {}]]) {
    const res = await curl(`${srv.url}${path}`, { method, key: t.access_token, body });
    const e = envelope(assert, res, 403, 'forbidden');
    assert.match(e.message, /callback_url/);
  }
  // Full access whatever the account's keys are: a write reaches its handler
  // (400 for the empty body, never scope_forbidden).
  const write = await curl(`${srv.url}/api/v1/quotes`, { method: 'POST', key: t.access_token, body: {} });
  envelope(assert, write, 400, 'invalid_request');
  envelope(assert, await curl(`${srv.url}/api/v1/quotes`, { method: 'POST', key: user.key, body: {} }), 403,
    'scope_forbidden');
});

test('idempotency entries and MCP sessions belong to the user and the app', async () => {
  const user = newUser();
  const [c1, c2] = [await register(srv, 'app one'), await register(srv, 'app two')];
  const both = [srv.url, `${srv.url}/mcp`];
  const t1 = await tokens(srv, user, c1, both);
  const t2 = await tokens(srv, user, c2, both);
  // One Idempotency-Key: a second body from the same app is misuse, from the other app a request of its own.
  const key = `idem-${randomBytes(6).toString('hex')}`;
  const post = (t, body) => curl(`${srv.url}/api/v1/quotes`, { method: 'POST', key: t.access_token, body,
    headers: { 'Idempotency-Key': key } });
  const first = envelope(assert, await post(t1, { source: 'link' }), 400, 'invalid_request');
  assert.notEqual(first.field, 'Idempotency-Key');
  assert.equal(envelope(assert, await post(t1, { source: 'upload' }), 400, 'invalid_request').field, 'Idempotency-Key');
  assert.notEqual(envelope(assert, await post(t2, { source: 'upload' }), 400, 'invalid_request').field,
    'Idempotency-Key');
  // A session opened by app one is unknown to app two and to the user's API key.
  const init = await mcpInitialize(srv, t1.access_token);
  assert.equal(init.status, 200, init.text);
  assert.ok(init.session);
  assert.equal(await mcpToolsList(srv, t1.access_token, init.session), 200);
  assert.equal(await mcpToolsList(srv, t2.access_token, init.session), 404);
  assert.equal(await mcpToolsList(srv, user.key, init.session), 404);
});

test("all of a user's apps share one rate-limit bucket, apart from the user's API keys", async () => {
  const limited = await startServer({ extraEnv: { SCRIBE_RATE_LIMIT_PER_MINUTE: '4' } });
  try {
    const user = newUser();
    const [c1, c2] = [await register(limited, 'bucket one'), await register(limited, 'bucket two')];
    const t1 = await tokens(limited, user, c1, [limited.url]);
    const t2 = await tokens(limited, user, c2, [limited.url]);
    for (let i = 0; i < 4; i++) assert.equal((await me(limited, t1.access_token)).status, 200, `request ${i + 1}`);
    // The other app of the same person finds the bucket empty ...
    const refused = await me(limited, t2.access_token);
    const e = envelope(assert, refused, 429, 'rate_limited');
    assert.ok(e.retry_after >= 1);
    assert.match(e.message, /user/);
    // ... while the person's API key has a bucket of its own, and so has another person.
    assert.equal((await me(limited, user.key)).status, 200);
    const stranger = newUser();
    assert.equal((await me(limited, (await tokens(limited, stranger, c1, [limited.url])).access_token)).status, 200);
  } finally {
    await limited.stop();
  }
});

test('dashboard endpoints: the console only; API keys and third-party tokens get 403', async () => {
  const user = newUser();
  const app = await tokens(srv, user, await register(srv, 'not the console'), [srv.url, `${srv.url}/mcp`]);
  const console = await consoleTokens(srv, user);
  const paths = ['/dashboard/api/v1/keys', '/dashboard/api/v1/connected-apps', '/dashboard/api/v1/usage',
    `/dashboard/api/v1/keys/${user.keyId}/webhook`];
  for (const path of paths) {
    for (const token of [user.key, app.access_token]) {
      const e = envelope(assert, await curl(`${srv.url}${path}`, { key: token }), 403, 'forbidden');
      assert.match(e.message, /console/);
    }
    assert.equal((await curl(`${srv.url}${path}`, { key: console.access_token })).status, 200, path);
    const anon = await curl(`${srv.url}${path}`);
    envelope(assert, anon, 401, 'unauthenticated');
    challenge(anon, srv, { invalidToken: false });
  }
  // Writes too: an app cannot mint a key.
  envelope(assert, await curl(`${srv.url}/dashboard/api/v1/keys`, { method: 'POST', key: app.access_token,
    body: { name: 'sneaky' } }), 403, 'forbidden');
  // The console's token is for the REST API, not /mcp.
  assert.equal((await mcpInitialize(srv, console.access_token)).status, 401);
  // Its /me names the console.
  assert.equal((await me(srv, console.access_token)).json.oauth.client_id, 'scribe-console');
});

test('dashboard keys: list, create (shown once, works at once), its webhook, revoke; usage', async () => {
  const user = newUser();
  const { access_token: token } = await consoleTokens(srv, user);
  const list = await curl(`${srv.url}/dashboard/api/v1/keys`, { key: token });
  assert.equal(list.status, 200, list.body);
  assert.deepEqual(list.json.keys.map((k) => k.id), [Number(user.keyId)]);
  assert.equal(list.json.keys[0].status, 'active');
  assert.equal('key_hash' in list.json.keys[0], false);

  const created = await curl(`${srv.url}/dashboard/api/v1/keys`, { method: 'POST', key: token,
    body: { name: 'made in the console', permission: 'read_only', monthly_cap_usd: 5 } });
  assert.equal(created.status, 201, created.body);
  assert.match(created.json.api_key, /^key_live_[0-9A-Za-z]{40}$/);
  assert.equal(created.json.permission, 'read_only');
  assert.equal(created.json.monthly_cap_usd, 5);
  const mine = await me(srv, created.json.api_key);
  assert.equal(mine.json.api_key.id, created.json.id);
  assert.equal(mine.json.api_key.name, 'made in the console');
  // Shown once: the list has no plaintext.
  const again = await curl(`${srv.url}/dashboard/api/v1/keys`, { key: token });
  assert.equal(again.json.keys.length, 2);
  assert.ok(again.json.keys.every((k) => !('api_key' in k)));
  // The domain's rules, not a copy: the agent preset needs a cap and an expiry.
  const agent = await curl(`${srv.url}/dashboard/api/v1/keys`, { method: 'POST', key: token,
    body: { name: 'agent', permission: 'agent' } });
  assert.equal(envelope(assert, agent, 400, 'invalid_request').field, 'permission');

  // The key's webhook: none yet; a non-https URL is refused as on /api/v1/webhooks.
  const hook = `${srv.url}/dashboard/api/v1/keys/${created.json.id}/webhook`;
  assert.deepEqual((await curl(hook, { key: token })).json, { webhook: null });
  const bad = await curl(hook, { method: 'PUT', key: token, body: { url: 'http://hooks.example.com/x' } });
  assert.equal(envelope(assert, bad, 400, 'invalid_request').field, 'url');
  envelope(assert, await curl(hook, { method: 'DELETE', key: token }), 404, 'not_found');

  // Another account's key is not found.
  const stranger = newUser();
  for (const [method, path] of [['DELETE', `/dashboard/api/v1/keys/${stranger.keyId}`],
    ['GET', `/dashboard/api/v1/keys/${stranger.keyId}/webhook`]])
    envelope(assert, await curl(`${srv.url}${path}`, { method, key: token }), 404, 'not_found');
  assert.equal((await me(srv, stranger.key)).status, 200);

  // Revoked: refused at once.
  const revoked = await curl(`${srv.url}/dashboard/api/v1/keys/${created.json.id}`, { method: 'DELETE', key: token });
  assert.equal(revoked.status, 200, revoked.body);
  assert.equal(revoked.json.status, 'revoked');
  envelope(assert, await me(srv, created.json.api_key), 401, 'invalid_api_key');

  const usage = await curl(`${srv.url}/dashboard/api/v1/usage`, { key: token });
  assert.equal(usage.status, 200, usage.body);
  assert.match(usage.json.month, /^\d{4}-\d\d$/);
  assert.equal(usage.json.wallet.balance_usd, 10);
  assert.equal(usage.json.transcriptions.created, 0);
  envelope(assert, await curl(`${srv.url}/dashboard/api/v1/usage?month=2026-13`, { key: token }), 400,
    'invalid_request');
});

test('connected apps: listed, and revoked through the console and scribe admin, ending access on another process', async () => {
  const user = newUser();
  const [c1, c2] = [await register(srv, 'Agent One'), await register(srv, 'Agent Two')];
  const t1 = await tokens(srv, user, c1, [srv.url, `${srv.url}/mcp`]);
  const t2 = await tokens(srv, user, c2, [srv.url]);
  const { access_token: console } = await consoleTokens(srv, user);
  const apps = async () => (await curl(`${srv.url}/dashboard/api/v1/connected-apps`, { key: console })).json.apps;
  const listed = await apps();
  assert.deepEqual(listed.map((a) => [a.client_id, a.client_name]).sort(), [[c1, 'Agent One'], [c2, 'Agent Two']].sort());
  const one = listed.find((a) => a.client_id === c1);
  assert.deepEqual(one.resources.sort(), [srv.url, `${srv.url}/mcp`].sort());
  assert.deepEqual(one.redirect_hosts, ['127.0.0.1:9']);
  assert.equal(one.kind, 'dcr');
  // The same list from scribe admin.
  assert.deepEqual(adminJson('apps', 'list', '--email', user.email).map((a) => a.client_id).sort(), [c1, c2].sort());

  // Both work on the second process; the console disconnects app one on the first.
  assert.equal((await me(other, t1.access_token)).status, 200);
  assert.equal((await mcpInitialize(other, t1.access_token)).status, 200);
  const gone = await curl(`${srv.url}/dashboard/api/v1/connected-apps?client_id=${encodeURIComponent(c1)}`,
    { method: 'DELETE', key: console });
  assert.equal(gone.status, 200, gone.body);
  unauthenticated(await me(other, t1.access_token), srv, { message: /revoked/ });
  const mcpRefused = await mcpInitialize(other, t1.access_token);
  assert.equal(mcpRefused.status, 401);
  challenge(mcpRefused, srv, { mcp: true, invalidToken: true });
  // Its refresh token is dead too, and the list no longer has it.
  const refresh = await postForm(`${other.url}/oauth/token`, { grant_type: 'refresh_token',
    refresh_token: t1.refresh_token, client_id: c1 });
  assert.equal(refresh.status, 400, refresh.text);
  assert.equal(refresh.json.error, 'invalid_grant');
  assert.deepEqual((await apps()).map((a) => a.client_id), [c2]);
  envelope(assert, await curl(`${srv.url}/dashboard/api/v1/connected-apps?client_id=${encodeURIComponent(c1)}`,
    { method: 'DELETE', key: console }), 404, 'not_found');

  // App two is untouched until the operator revokes it.
  assert.equal((await me(other, t2.access_token)).status, 200);
  adminJson('apps', 'revoke', '--email', user.email, '--client', c2);
  unauthenticated(await me(other, t2.access_token), srv, { message: /revoked/ });
  assert.deepEqual(await apps(), []);
  // The console's own sign-in is no connected app and still works; so does the API key.
  assert.equal((await me(other, console)).status, 200);
  assert.equal((await me(other, user.key)).status, 200);
});
