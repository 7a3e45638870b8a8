// The web console as `scribe serve` hosts it (issue 36, api/console/): its
// pages, hashed assets and /app/config.json from a build folder
// (SCRIBE_CONSOLE_DIR; here a tiny fake build in a temp folder, so these tests
// do not depend on console/ being built), the security headers on every /app
// response, no way out of assets/, the 503 page when nothing is built, GET
// /me's links to the pages, the console's own request budget apart from API
// keys and other apps, and the dashboard's webhook test and deliveries for a key.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { setTimeout as sleep } from 'node:timers/promises';
import { startServer, curl, envelope, newKey, rawHttp } from './harness.mjs';
import { approve, consoleTokens, newUser, pkce, postForm } from './oauth_helpers.mjs';
import { selfSignedCertificate, startReceiver } from './webhook_receiver.mjs';

const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
  "media-src 'self' blob:; connect-src 'self'; worker-src 'self' blob:; frame-ancestors 'none'; base-uri 'none'; " +
  "form-action 'self'; object-src 'none'";
const PAGES = ['/app', '/app/callback', '/app/search', '/app/record', '/app/transcriptions/42', '/app/account',
  '/app/account/keys', '/app/account/apps', '/app/account/usage', '/app/account/billing', '/app/docs', '/app/support'];
const SUPPORT = 'Write to help@example.com or ask in #scribe';
const USER = { costLog2: 10 }; // fast password hashing for the sign-ins

// The fake build: index.html, assets of several types (one precompressed),
// a folder and a file of a type that is not served, and files outside
// assets/ that no asset URL may reach.
const dist = mkdtempSync(join(tmpdir(), 'scribe-console-dist-'));
const INDEX = '<!doctype html><html><head><script type="module" src="/app/assets/main-4F2KQ7ZB.js"></script>' +
  '</head><body><div id="root"></div></body></html>\n';
const JS = `console.log(${JSON.stringify('x'.repeat(2000))});\n`;
writeFileSync(join(dist, 'index.html'), INDEX);
writeFileSync(join(dist, 'secret.yaml'), 'outside: assets\n');
mkdirSync(join(dist, 'assets', 'sub'), { recursive: true });
writeFileSync(join(dist, 'assets', 'main-4F2KQ7ZB.js'), JS);
writeFileSync(join(dist, 'assets', 'main-4F2KQ7ZB.js.gz'), gzipSync(JS));
writeFileSync(join(dist, 'assets', 'styles-AB12CD34.css'), 'body{margin:0}\n');
writeFileSync(join(dist, 'assets', 'logo-Z9.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>\n');
writeFileSync(join(dist, 'assets', 'notes.txt'), 'not a served type\n');
writeFileSync(join(dist, 'assets', 'sub', 'deep-1.js'), 'DEEP-FILE-CONTENT\n');
const empty = mkdtempSync(join(tmpdir(), 'scribe-console-empty-'));

let srv; // the fake build, webhooks to a loopback receiver
// nothing built; API keys 3 a minute, the console 4 (one earned back every
// 20 and 15 s: far longer than the budget test takes between its requests)
let tight;
let tls, receiver;
before(async () => {
  tls = selfSignedCertificate();
  receiver = await startReceiver({ tls });
  srv = await startServer({
    extraEnv: {
      SCRIBE_CONSOLE_DIR: dist, SCRIBE_SUPPORT_TEXT: SUPPORT, SCRIBE_RATE_LIMIT_PER_MINUTE: '100000',
      SCRIBE_ALLOW_PRIVATE_URLS: '1', SCRIBE_OUTBOUND_CA_FILE: tls.certPath, SCRIBE_WEBHOOK_POLL_MS: '100',
    },
  });
  tight = await startServer({
    // It sends no webhooks: on the same database it would take srv's deliveries
    // to the loopback receiver, which it may not reach.
    extraEnv: { SCRIBE_CONSOLE_DIR: empty, SCRIBE_RATE_LIMIT_PER_MINUTE: '3', SCRIBE_CONSOLE_RATE_LIMIT_PER_MINUTE: '4',
      SCRIBE_WEBHOOK_SENDERS: '0' },
  });
});
after(async () => {
  await srv?.stop();
  await tight?.stop();
  await receiver?.close();
});

function securityHeaders(res, label) {
  assert.equal(res.headers['content-security-policy'], CSP, label);
  assert.equal(res.headers['x-frame-options'], 'DENY', label);
  assert.equal(res.headers['x-content-type-options'], 'nosniff', label);
  assert.equal(res.headers['referrer-policy'], 'no-referrer', label);
}

test('every page serves index.html, not cached, with the security headers', async () => {
  for (const page of PAGES) {
    const res = await curl(`${srv.url}${page}?t=12`);
    assert.equal(res.status, 200, `${page}: ${res.body}`);
    assert.equal(res.body, INDEX, page);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8', page);
    assert.equal(res.headers['cache-control'], 'no-cache', page);
    securityHeaders(res, page);
    assert.equal(res.headers['access-control-allow-origin'], undefined, `${page}: no CORS on the console`);
  }
  const head = await fetch(`${srv.url}/app`, { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.equal(Number(head.headers.get('content-length')), Buffer.byteLength(INDEX));
  assert.equal(head.headers.get('content-security-policy'), CSP);
  assert.equal(await head.text(), '');
});

test('assets: typed by extension, cached immutably, gzip when accepted', async () => {
  const js = await curl(`${srv.url}/app/assets/main-4F2KQ7ZB.js`);
  assert.equal(js.status, 200, js.body);
  assert.equal(js.body, JS);
  assert.equal(js.headers['content-type'], 'text/javascript; charset=utf-8');
  assert.equal(js.headers['cache-control'], 'public, max-age=31536000, immutable');
  assert.equal(js.headers['content-encoding'], undefined);
  assert.equal(js.headers.vary, 'Accept-Encoding');
  securityHeaders(js, 'asset');

  const zipped = await fetch(`${srv.url}/app/assets/main-4F2KQ7ZB.js`, { headers: { 'Accept-Encoding': 'gzip' } });
  assert.equal(zipped.status, 200);
  assert.equal(zipped.headers.get('content-encoding'), 'gzip');
  assert.ok(Number(zipped.headers.get('content-length')) < Buffer.byteLength(JS), 'the compressed file is sent');
  assert.equal(await zipped.text(), JS, 'fetch inflates it to the script');
  const refused = await curl(`${srv.url}/app/assets/main-4F2KQ7ZB.js`, { headers: { 'Accept-Encoding': 'gzip;q=0' } });
  assert.equal(refused.headers['content-encoding'], undefined);

  for (const [name, type] of [['styles-AB12CD34.css', 'text/css; charset=utf-8'], ['logo-Z9.svg', 'image/svg+xml']]) {
    const res = await curl(`${srv.url}/app/assets/${name}`);
    assert.equal(res.status, 200, `${name}: ${res.body}`);
    assert.equal(res.headers['content-type'], type);
  }
  // Not served: an unknown type, a folder, a file in a folder, the .gz itself, a missing file.
  for (const name of ['notes.txt', 'sub', 'sub/deep-1.js', 'main-4F2KQ7ZB.js.gz', 'missing-1.js']) {
    const res = await curl(`${srv.url}/app/assets/${name}`);
    envelope(assert, res, 404, 'not_found');
    securityHeaders(res, name);
  }
});

test('no asset URL reaches outside assets/', async () => {
  const targets = ['/app/assets/../secret.yaml', '/app/assets/..%2fsecret.yaml', '/app/assets/..%2Findex.html',
    '/app/assets/%2e%2e', '/app/assets/%2e%2e%2fsecret.yaml', '/app/assets/.%2e/secret.yaml',
    '/app/assets/..%5csecret.yaml', '/app/assets/%2fetc%2fpasswd', '/app/assets/..', '/app/assets/.',
    '/app/assets/..%252fsecret.yaml', '/app/assets/sub%2fdeep-1.js'];
  for (const target of targets) {
    const res = await rawHttp(srv.port, `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
    assert.ok(res.status === 404 || res.status === 400, `${target}: ${res.status} ${res.body}`);
    assert.ok(!res.body.includes('outside: assets') && !res.body.includes('root:') && !res.body.includes('DEEP-FILE-CONTENT'),
      `${target} leaked a file`);
  }
});

test('config.json names the console client and endpoints on the public URL, and the support text', async () => {
  const res = await curl(`${srv.url}/app/config.json`);
  assert.equal(res.status, 200, res.body);
  assert.match(res.headers['content-type'], /^application\/json/);
  assert.equal(res.headers['cache-control'], 'no-cache');
  securityHeaders(res, 'config.json');
  const b = srv.url;
  assert.deepEqual(res.json, { client_id: 'scribe-console', redirect_uri: `${b}/app/callback`,
    authorization_endpoint: `${b}/oauth/authorize`, token_endpoint: `${b}/oauth/token`,
    revocation_endpoint: `${b}/oauth/revoke`, resource: b, support: SUPPORT, api_base: b });
});

test('unknown /app paths are 404 and other methods 405, with the security headers', async () => {
  for (const path of ['/app/nope', '/app/account/nope', '/app/transcriptions', '/app/transcriptions/1/x',
    '/app/assets', '/app/index.html', '/app/']) {
    const res = await curl(`${srv.url}${path}`);
    envelope(assert, res, 404, 'not_found');
    securityHeaders(res, path);
  }
  const post = await curl(`${srv.url}/app`, { method: 'POST', body: {} });
  envelope(assert, post, 405, 'invalid_request');
  assert.equal(post.headers.allow, 'GET, HEAD');
  securityHeaders(post, 'POST /app');
});

test('without a build the pages answer 503 saying how to build it; config.json still answers', async () => {
  for (const page of ['/app', '/app/account/keys']) {
    const res = await curl(`${tight.url}${page}`);
    assert.equal(res.status, 503, res.body);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.match(res.body, /node build\.mjs/);
    assert.ok(res.body.includes(empty), 'the page names the folder it looked in');
    securityHeaders(res, page);
  }
  envelope(assert, await curl(`${tight.url}/app/assets/main-4F2KQ7ZB.js`), 404, 'not_found');
  const config = await curl(`${tight.url}/app/config.json`);
  assert.equal(config.status, 200);
  assert.equal(config.json.client_id, 'scribe-console');
});

test('GET /me links point at the console pages, which answer', async () => {
  const user = newUser(USER);
  const me = await curl(`${srv.url}/api/v1/me`, { key: user.key });
  assert.equal(me.status, 200, me.body);
  assert.deepEqual(me.json.links, { dashboard: `${srv.url}/app`, api_keys: `${srv.url}/app/account/keys`,
    billing: `${srv.url}/app/account/billing`, docs: `${srv.url}/app/docs`, support: `${srv.url}/app/support` });
  for (const link of Object.values(me.json.links)) assert.equal((await curl(link)).status, 200, link);
});

// Sends `n` GET /api/v1/me with `token` at once; returns the statuses, sorted.
async function meTimes(server, token, n) {
  const all = await Promise.all(Array.from({ length: n }, () =>
    fetch(`${server.url}/api/v1/me`, { headers: { Authorization: `Bearer ${token}` } })
      .then(async (r) => ({ status: r.status, body: await r.json() }))));
  return all;
}
const statuses = (answers) => answers.map((a) => a.status).sort();

test('the console has a request budget of its own: it and the API keys never spend each other\'s', async () => {
  // The console first: its 4, then refused; the account's API key still has all of its 3.
  const a = newUser(USER);
  const { access_token: consoleA } = await consoleTokens(tight.url, a);
  assert.deepEqual(statuses(await meTimes(tight, consoleA, 4)), Array(4).fill(200));
  const over = await curl(`${tight.url}/api/v1/me`, { key: consoleA });
  const e = envelope(assert, over, 429, 'rate_limited');
  assert.match(e.message, /4 requests per minute for this account's web console/);
  assert.ok(Number(over.headers['retry-after']) >= 1);
  assert.deepEqual(statuses(await meTimes(tight, a.key, 3)), Array(3).fill(200));
  assert.match(envelope(assert, await curl(`${tight.url}/api/v1/me`, { key: a.key }), 429, 'rate_limited').message,
    /3 requests per minute for this API key/);

  // The API key first: its 3, then refused; the console still has all of its 4.
  const b = newUser(USER);
  assert.deepEqual(statuses(await meTimes(tight, b.key, 3)), Array(3).fill(200));
  envelope(assert, await curl(`${tight.url}/api/v1/me`, { key: b.key }), 429, 'rate_limited');
  const { access_token: consoleB } = await consoleTokens(tight.url, b);
  assert.deepEqual(statuses(await meTimes(tight, consoleB, 4)), Array(4).fill(200));
  envelope(assert, await curl(`${tight.url}/api/v1/me`, { key: consoleB }), 429, 'rate_limited');
  // The budget is the account's console's, not the token's: a second sign-in shares it.
  const { access_token: consoleB2 } = await consoleTokens(tight.url, b);
  envelope(assert, await curl(`${tight.url}/api/v1/me`, { key: consoleB2 }), 429, 'rate_limited');

  // Another app the person connected spends the apps' bucket (3), not the console's.
  const c = newUser(USER);
  const appToken = await thirdPartyToken(tight.url, c);
  assert.deepEqual(statuses(await meTimes(tight, appToken, 3)), Array(3).fill(200));
  assert.match(envelope(assert, await curl(`${tight.url}/api/v1/me`, { key: appToken }), 429, 'rate_limited').message,
    /user's apps/);
  const { access_token: consoleC } = await consoleTokens(tight.url, c);
  assert.deepEqual(statuses(await meTimes(tight, consoleC, 4)), Array(4).fill(200));
});

// An access token of a third-party app (registered with RFC 7591, approved on
// the consent page) for `user`.
async function thirdPartyToken(base, user) {
  const redirectUri = 'http://127.0.0.1:9/callback';
  const reg = await fetch(`${base}/oauth/register`, { method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ client_name: 'an agent', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], application_type: 'native' }) });
  const { client_id: clientId } = await reg.json();
  assert.equal(reg.status, 201);
  const { verifier, challenge } = pkce();
  const url = new URL(`${base}/oauth/authorize`);
  for (const [k, v] of Object.entries({ response_type: 'code', client_id: clientId, redirect_uri: redirectUri,
    code_challenge: challenge, code_challenge_method: 'S256', state: 'x', resource: base }))
    url.searchParams.set(k, v);
  const { code } = await approve(url, { email: user.email, password: user.password });
  const res = await postForm(`${base}/oauth/token`, { grant_type: 'authorization_code', code, redirect_uri: redirectUri,
    client_id: clientId, code_verifier: verifier, resource: base });
  assert.equal(res.status, 200, res.text);
  return res.json.access_token;
}

test('dashboard: a key\'s webhook test is delivered and listed among its recent deliveries', async () => {
  const user = newUser(USER);
  const { access_token: token } = await consoleTokens(srv.url, user);
  const base = `${srv.url}/dashboard/api/v1/keys/${user.keyId}/webhook`;
  // No webhook yet: the test is 404 as on /api/v1/webhooks/test, the list empty.
  envelope(assert, await curl(`${base}/test`, { method: 'POST', key: token }), 404, 'not_found');
  assert.deepEqual((await curl(`${base}/deliveries`, { key: token })).json, { deliveries: [] });

  const reg = await curl(base, { method: 'PUT', key: token, body: { url: receiver.url('/ok') } });
  assert.equal(reg.status, 201, reg.body);
  const sent = await curl(`${base}/test`, { method: 'POST', key: token });
  assert.equal(sent.status, 202, sent.body);
  assert.equal(sent.json.enqueued, true);
  const id = sent.json.delivery_id;
  assert.ok(Number.isInteger(id));
  await receiver.waitFor((r) => r.json?.id === `evt_${id / 2}`);

  // The dispatcher records the 2xx just after the receiver answered.
  let listed;
  for (let i = 0; i < 100; i++) {
    listed = (await curl(`${base}/deliveries`, { key: token })).json.deliveries;
    if (listed[0]?.status === 'delivered') break;
    await sleep(100);
  }
  assert.equal(listed.length, 1, JSON.stringify(listed));
  const [d] = listed;
  assert.deepEqual({ ...d, created_at: undefined, delivered_at: undefined },
    { id, event: 'webhook.test', status: 'delivered', attempts: 1, last_status_code: 200, created_at: undefined,
      delivered_at: undefined });
  assert.match(d.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.match(d.delivered_at, /^\d{4}-\d\d-\d\dT/);
  assert.ok(d.delivered_at >= d.created_at);

  // Newest first: a second test comes before the first once queued.
  const again = await curl(`${base}/test`, { method: 'POST', key: token });
  assert.equal(again.status, 202, again.body);
  const second = again.json.delivery_id;
  assert.ok(second > id, `${second} after ${id}`);
  await receiver.waitFor((r) => r.json?.id === `evt_${second / 2}`);
  for (let i = 0; i < 100; i++) {
    listed = (await curl(`${base}/deliveries`, { key: token })).json.deliveries;
    if (listed.length === 2) break;
    await sleep(100);
  }
  assert.deepEqual(listed.map((x) => x.id), [second, id]);

  // Another account's key is not found; API keys may not call the dashboard.
  const stranger = newUser(USER);
  for (const [method, path] of [['POST', 'webhook/test'], ['GET', 'webhook/deliveries']])
    envelope(assert, await curl(`${srv.url}/dashboard/api/v1/keys/${stranger.keyId}/${path}`, { method, key: token }),
      404, 'not_found');
  envelope(assert, await curl(`${base}/deliveries`, { key: user.key }), 403, 'forbidden');
  envelope(assert, await curl(`${base}/test`, { method: 'POST', key: user.key }), 403, 'forbidden');
  // A second key of the account has its own (empty) list.
  const other = newKey(user.accountId);
  assert.deepEqual((await curl(`${srv.url}/dashboard/api/v1/keys/${other.keyId}/webhook/deliveries`, { key: token }))
    .json, { deliveries: [] });
});
