// The authorization server's refusals through the real server (issue 31;
// docs/oauth_wire_rules.md): PKCE, single-use codes, redirect URI matching,
// unknown clients, resources, refresh rotation and replay, CSRF, the pages'
// headers, client metadata documents that must not be used, sign-in limits
// and no user enumeration. Plain fetch with a cookie jar (oauth_helpers.mjs)
// stands for the browser; the client libraries are exercised in
// oauth_clients.test.mjs and a real browser in oauth_browser.test.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { startServer, DB } from './harness.mjs';
import {
  newUser, startCimdServer, pkce, postForm, authorize, approve, CookieJar, parseForms, formData,
} from './oauth_helpers.mjs';

let srv; // fetches client metadata documents from loopback (test-only setting)
let strict; // the production policy: no loopback documents
let cimd;
let user;

const sql = (query) => execFileSync('psql', [DB, '-At', '-c', query], { encoding: 'utf8' }).trim();

before(async () => {
  cimd = await startCimdServer();
  [srv, strict] = await Promise.all([startServer({ extraEnv: cimd.env }), startServer()]);
  user = newUser({ costLog2: 10 });
});

after(async () => {
  await Promise.all([srv?.stop(), strict?.stop(), cimd?.close()]);
});

// A browser on another loopback address (127.0.0.x: the whole block is this
// host), so the sign-in limits per address and per email can be told apart.
function fromAddress(localAddress, url, { method = 'GET', headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers, localAddress }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

// Registrations are limited per client address (10 a minute): each comes
// from an address of its own in 127.0.3.0/24 unless one is given.
let registrations = 0;
async function register(server, body, localAddress = `127.0.3.${1 + (registrations++ % 250)}`) {
  const r = await fromAddress(localAddress, `${server.url}/oauth/register`, { method: 'POST',
    headers: { 'Content-Type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: r.status, headers: r.headers, json: JSON.parse(r.text) };
}

async function dcrClient(server, redirectUris, name = 'Test app') {
  const r = await register(server, { client_name: name, redirect_uris: redirectUris });
  assert.equal(r.status, 201, JSON.stringify(r.json));
  return r.json.client_id;
}

function authorizeUrl(server, params) {
  const u = new URL(`${server.url}/oauth/authorize`);
  for (const [k, v] of Object.entries(params)) {
    if (Array.isArray(v)) for (const item of v) u.searchParams.append(k, item);
    else if (v !== undefined) u.searchParams.set(k, v);
  }
  return u.toString();
}

// An authorization request with PKCE; returns {url, verifier}.
function request(server, clientId, redirectUri, extra = {}) {
  const p = pkce();
  const url = authorizeUrl(server, {
    response_type: 'code', client_id: clientId, redirect_uri: redirectUri, code_challenge: p.challenge,
    code_challenge_method: 'S256', state: 'st-123', ...extra,
  });
  return { url, verifier: p.verifier };
}

// A code for a fresh loopback DCR client, approved by `user`.
async function freshCode(server = srv, extra = {}) {
  const redirectUri = 'http://127.0.0.1:7001/cb';
  const clientId = await dcrClient(server, [redirectUri]);
  const { url, verifier } = request(server, clientId, redirectUri, extra);
  const { code } = await approve(url, { email: user.email, password: user.password });
  return { clientId, redirectUri, code, verifier };
}

function token(server, params) {
  return postForm(`${server.url}/oauth/token`, params);
}

async function exchange(server, c, extra = {}) {
  return token(server, { grant_type: 'authorization_code', code: c.code, client_id: c.clientId,
    redirect_uri: c.redirectUri, code_verifier: c.verifier, ...extra });
}

async function meStatus(server, accessToken, path = '/api/v1/me') {
  const res = await fetch(`${server.url}${path}`, { headers: { Authorization: `Bearer ${accessToken}` } });
  await res.arrayBuffer();
  return res.status;
}

// A page fetch with no redirect following.
async function get(url, headers = {}) {
  const res = await fetch(url, { redirect: 'manual', headers });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

test('the metadata names this issuer everywhere and only what is served', async () => {
  const md = await (await fetch(`${srv.url}/.well-known/oauth-authorization-server`)).json();
  assert.equal(md.issuer, srv.url);
  assert.equal(md.authorization_endpoint, `${srv.url}/oauth/authorize`);
  assert.equal(md.token_endpoint, `${srv.url}/oauth/token`);
  assert.equal(md.registration_endpoint, `${srv.url}/oauth/register`);
  assert.equal(md.revocation_endpoint, `${srv.url}/oauth/revoke`);
  assert.deepEqual(md.code_challenge_methods_supported, ['S256']);
  assert.deepEqual(md.response_types_supported, ['code']);
  assert.deepEqual(md.token_endpoint_auth_methods_supported, ['none']);
  assert.equal(md.client_id_metadata_document_supported, true);
  assert.equal(md.authorization_response_iss_parameter_supported, true);
  for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
    const prm = await (await fetch(`${srv.url}${path}`)).json();
    assert.deepEqual(prm.authorization_servers, [md.issuer]);
  }
});

test('registration: public clients with acceptable redirect URIs only', async () => {
  const ok = await register(srv, { client_name: 'Reg', redirect_uris: ['http://localhost:3000/cb', 'com.example.app:/cb'] });
  assert.equal(ok.status, 201);
  assert.match(ok.json.client_id, /^dcr_/);
  assert.equal(ok.json.token_endpoint_auth_method, 'none');
  assert.equal(ok.headers['cache-control'], 'no-store');
  const refusals = [
    [{ redirect_uris: ['http://app.example/cb'] }, 'invalid_redirect_uri'],
    [{ redirect_uris: ['https://app.example/cb#x'] }, 'invalid_redirect_uri'],
    [{ redirect_uris: ['https://user@app.example/cb'] }, 'invalid_redirect_uri'],
    [{ redirect_uris: ['javascript:alert(1)'] }, 'invalid_redirect_uri'],
    [{}, 'invalid_redirect_uri'],
    [{ redirect_uris: ['https://app.example/cb'], token_endpoint_auth_method: 'client_secret_basic' }, 'invalid_client_metadata'],
    [{ redirect_uris: ['https://app.example/cb'], grant_types: ['client_credentials'] }, 'invalid_client_metadata'],
  ];
  for (const [body, error] of refusals) {
    const r = await register(srv, body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(r.json.error, error, JSON.stringify(body));
  }
  const bad = await register(srv, '{');
  assert.equal(bad.status, 400);
  assert.equal(bad.json.error, 'invalid_client_metadata');
  // Ten a minute from one address; the eleventh waits.
  const statuses = [];
  for (let i = 0; i < 11; i++) {
    statuses.push((await register(srv, { redirect_uris: ['http://127.0.0.1/cb'] }, '127.0.4.1')).status);
  }
  assert.deepEqual(statuses, [...Array(10).fill(201), 429]);
  const limited = await register(srv, { redirect_uris: ['http://127.0.0.1/cb'] }, '127.0.4.1');
  assert.equal(limited.json.error, 'too_many_requests');
  assert.ok(Number(limited.headers['retry-after']) >= 1);
});

test('PKCE: a wrong or missing verifier is invalid_grant; the right one still works once', async () => {
  const c = await freshCode();
  for (const verifier of [pkce().verifier, '']) {
    const r = await exchange(srv, c, { code_verifier: verifier });
    assert.equal(r.status, 400);
    assert.equal(r.json.error, 'invalid_grant');
  }
  const missing = await token(srv, { grant_type: 'authorization_code', code: c.code, client_id: c.clientId,
    redirect_uri: c.redirectUri });
  assert.equal(missing.json.error, 'invalid_grant');
  const good = await exchange(srv, c);
  assert.equal(good.status, 200, good.text);
  assert.equal(good.headers.get('cache-control'), 'no-store');
  assert.equal(good.headers.get('pragma'), 'no-cache');
  assert.equal(good.json.token_type, 'Bearer');
  assert.match(good.json.access_token, /^sat_[A-Za-z0-9_-]{43}$/);
  assert.match(good.json.refresh_token, /^srt_[A-Za-z0-9_-]{43}$/);
});

test('plain and missing code challenges are refused back to the client with state and iss', async () => {
  const redirectUri = 'http://127.0.0.1:7002/cb';
  const clientId = await dcrClient(srv, [redirectUri]);
  const p = pkce();
  const cases = [
    { code_challenge: p.verifier, code_challenge_method: 'plain' },
    { code_challenge: p.challenge }, // no method: plain
    {}, // no challenge at all
  ];
  for (const extra of cases) {
    const url = authorizeUrl(srv, { response_type: 'code', client_id: clientId, redirect_uri: redirectUri, state: 's1', ...extra });
    const r = await get(url);
    assert.equal(r.status, 302, JSON.stringify(extra));
    const loc = new URL(r.headers.get('location'));
    assert.equal(`${loc.origin}${loc.pathname}`, redirectUri);
    assert.equal(loc.searchParams.get('error'), 'invalid_request');
    assert.equal(loc.searchParams.get('state'), 's1');
    assert.equal(loc.searchParams.get('iss'), srv.url);
    assert.equal(loc.searchParams.get('code'), null);
  }
});

test('a reused code is refused and revokes the tokens it issued', async () => {
  const c = await freshCode();
  const first = await exchange(srv, c);
  assert.equal(first.status, 200);
  assert.equal(await meStatus(srv, first.json.access_token), 200);
  const again = await exchange(srv, c);
  assert.equal(again.status, 400);
  assert.equal(again.json.error, 'invalid_grant');
  assert.equal(await meStatus(srv, first.json.access_token), 401);
  const refresh = await token(srv, { grant_type: 'refresh_token', refresh_token: first.json.refresh_token, client_id: c.clientId });
  assert.equal(refresh.json.error, 'invalid_grant');
});

test('two exchanges of one code at once: at most one gets tokens, and none of them keeps working', async () => {
  const c = await freshCode();
  const results = await Promise.all([exchange(srv, c), exchange(srv, c), exchange(srv, c)]);
  const ok = results.filter((r) => r.status === 200);
  assert.ok(ok.length <= 1, JSON.stringify(results.map((r) => r.status)));
  for (const r of results.filter((x) => x.status !== 200)) assert.equal(r.json.error, 'invalid_grant');
  for (const r of ok) assert.equal(await meStatus(srv, r.json.access_token), 401);
});

test('redirect URIs: exact except a loopback port; a mismatch is an error page, never a redirect', async () => {
  const registered = 'https://app.example/cb';
  const clientId = await dcrClient(srv, [registered, 'http://127.0.0.1/native']);
  const mismatches = [
    'https://app.example:8443/cb', // another port on https
    'https://app.example/cb/extra', // added path
    'https://app.example/cb/', // trailing slash
    'https://app.example@evil.example/cb', // userinfo trick
    'https://evil.example/cb?https://app.example/cb',
    'https://APP.EXAMPLE/cb', // case of the host
    'https://app.example/CB', // case of the path
    'HTTPS://app.example/cb', // case of the scheme
    'http://app.example/cb',
    'http://127.0.0.1:5555/native/x',
    'http://localhost:5555/native', // another loopback name
  ];
  for (const redirectUri of mismatches) {
    const r = await get(request(srv, clientId, redirectUri).url);
    assert.equal(r.status, 400, redirectUri);
    assert.equal(r.headers.get('location'), null, redirectUri);
    assert.match(r.headers.get('content-type'), /text\/html/);
    assert.match(r.text, /not registered/);
  }
  // The loopback registration accepts any port (RFC 8252 7.3); https exactly as registered.
  for (const redirectUri of ['http://127.0.0.1:5555/native', 'http://127.0.0.1/native', registered]) {
    const r = await get(request(srv, clientId, redirectUri).url);
    assert.equal(r.status, 200, redirectUri);
    assert.match(r.text, /Sign in/);
  }
  // No redirect_uri at all: also a page.
  const none = await get(authorizeUrl(srv, { response_type: 'code', client_id: clientId, code_challenge: pkce().challenge,
    code_challenge_method: 'S256' }));
  assert.equal(none.status, 400);
  assert.equal(none.headers.get('location'), null);
});

test('an unknown client gets an error page, not a redirect', async () => {
  for (const clientId of ['dcr_doesnotexist', 'nobody', '']) {
    const r = await get(request(srv, clientId, 'http://127.0.0.1:7003/cb').url);
    assert.equal(r.status, 400, clientId);
    assert.equal(r.headers.get('location'), null);
    assert.match(r.text, /client/i);
  }
  // A client deleted for being unused: its token requests are invalid_client (it registers again).
  const c = await freshCode();
  const tokens = await exchange(srv, c);
  sql(`update oauth_clients set deleted_at = now() where client_id = '${c.clientId}'`);
  const refresh = await token(srv, { grant_type: 'refresh_token', refresh_token: tokens.json.refresh_token, client_id: c.clientId });
  assert.equal(refresh.status, 401);
  assert.equal(refresh.json.error, 'invalid_client');
  const page = await get(request(srv, c.clientId, c.redirectUri).url);
  assert.equal(page.status, 400);
});

test('resources: the default, another resource refused on authorize and token, narrowing but never widening', async () => {
  const mcp = `${srv.url}/mcp`;
  // Unknown resource on authorize: back to the client with invalid_target.
  const redirectUri = 'http://127.0.0.1:7004/cb';
  const clientId = await dcrClient(srv, [redirectUri]);
  for (const resource of ['https://other.example', `${srv.url}/api/v1`, `${mcp}/`]) {
    const r = await get(request(srv, clientId, redirectUri, { resource }).url);
    assert.equal(r.status, 302, resource);
    const loc = new URL(r.headers.get('location'));
    assert.equal(loc.searchParams.get('error'), 'invalid_target', resource);
    assert.equal(loc.searchParams.get('iss'), srv.url);
  }
  // No resource: the REST API only.
  const d = await freshCode();
  const dt = await exchange(srv, d);
  assert.equal(await meStatus(srv, dt.json.access_token), 200);
  // Issued for /mcp only: a token request for the REST API widens it, refused.
  const m = await freshCode(srv, { resource: mcp });
  const widened = await exchange(srv, m, { resource: srv.url });
  assert.equal(widened.status, 400);
  assert.equal(widened.json.error, 'invalid_target');
  const other = await exchange(srv, m, { resource: 'https://other.example' });
  assert.equal(other.json.error, 'invalid_target');
  // Issued for both: the token request narrows to /mcp; refresh may name either again.
  const both = await freshCode(srv, { resource: [srv.url, mcp] });
  const narrow = await exchange(srv, both, { resource: mcp });
  assert.equal(narrow.status, 200, narrow.text);
  assert.equal(await meStatus(srv, narrow.json.access_token), 401);
  const rest = await token(srv, { grant_type: 'refresh_token', refresh_token: narrow.json.refresh_token,
    client_id: both.clientId, resource: srv.url });
  assert.equal(rest.status, 200, rest.text);
  assert.equal(await meStatus(srv, rest.json.access_token), 200);
  const wider = await token(srv, { grant_type: 'refresh_token', refresh_token: rest.json.refresh_token,
    client_id: both.clientId, resource: 'https://other.example' });
  assert.equal(wider.json.error, 'invalid_target');
});

test('refresh rotation: a retry within the grace gets a new pair, a replay after it revokes the grant', async () => {
  const c = await freshCode();
  const t0 = (await exchange(srv, c)).json;
  const refresh = (rt) => token(srv, { grant_type: 'refresh_token', refresh_token: rt, client_id: c.clientId });
  const t1 = await refresh(t0.refresh_token);
  assert.equal(t1.status, 200);
  assert.notEqual(t1.json.refresh_token, t0.refresh_token);
  // The same refresh token again at once (a client that lost the response): a fresh pair,
  // and the pair of the first rotation stops working.
  const retry = await refresh(t0.refresh_token);
  assert.equal(retry.status, 200, retry.text);
  assert.equal(await meStatus(srv, t1.json.access_token), 401);
  assert.equal((await refresh(t1.json.refresh_token)).json.error, 'invalid_grant');
  assert.equal(await meStatus(srv, retry.json.access_token), 200);
  // Another client presenting the token is refused.
  const otherClient = await dcrClient(srv, ['http://127.0.0.1:7005/cb']);
  const stolen = await token(srv, { grant_type: 'refresh_token', refresh_token: retry.json.refresh_token, client_id: otherClient });
  assert.equal(stolen.json.error, 'invalid_grant');
  // Rotate once more, then present the rotated token after the grace (moved back in the
  // database instead of waiting 10 s): the whole grant is revoked.
  const t2 = await refresh(retry.json.refresh_token);
  assert.equal(t2.status, 200);
  sql(`update oauth_tokens set rotated_at = now() - interval '1 minute' where rotated_at is not null and client_id = '${c.clientId}'`);
  const replay = await refresh(retry.json.refresh_token);
  assert.equal(replay.status, 400);
  assert.equal(replay.json.error, 'invalid_grant');
  assert.equal(await meStatus(srv, t2.json.access_token), 401);
  assert.equal((await refresh(t2.json.refresh_token)).json.error, 'invalid_grant');
});

test('revocation (RFC 7009): an access token alone, a refresh token with its grant, unknown tokens 200', async () => {
  const c = await freshCode();
  const t = (await exchange(srv, c)).json;
  const revoke = (tok, clientId = c.clientId) => postForm(`${srv.url}/oauth/revoke`, { token: tok, client_id: clientId });
  const unknown = await revoke('sat_' + 'A'.repeat(43));
  assert.equal(unknown.status, 200);
  assert.equal((await revoke('not a token')).status, 200);
  // Another client's revocation changes nothing.
  const otherClient = await dcrClient(srv, ['http://127.0.0.1:7006/cb']);
  assert.equal((await revoke(t.access_token, otherClient)).status, 200);
  assert.equal(await meStatus(srv, t.access_token), 200);
  const missingClient = await postForm(`${srv.url}/oauth/revoke`, { token: t.access_token });
  assert.equal(missingClient.status, 401);
  assert.equal((await revoke(t.access_token)).status, 200);
  assert.equal(await meStatus(srv, t.access_token), 401);
  // The refresh token still works (a new access token), until it is revoked: then the grant ends.
  const t2 = (await token(srv, { grant_type: 'refresh_token', refresh_token: t.refresh_token, client_id: c.clientId })).json;
  assert.equal(await meStatus(srv, t2.access_token), 200);
  assert.equal((await revoke(t2.refresh_token)).status, 200);
  assert.equal(await meStatus(srv, t2.access_token), 401);
});

test('token endpoint refusals: grant type, client authentication, body type', async () => {
  const c = await freshCode();
  const unsupported = await token(srv, { grant_type: 'client_credentials', client_id: c.clientId });
  assert.equal(unsupported.json.error, 'unsupported_grant_type');
  const basic = await postForm(`${srv.url}/oauth/token`, { grant_type: 'authorization_code', code: c.code,
    client_id: c.clientId, redirect_uri: c.redirectUri, code_verifier: c.verifier },
  { Authorization: `Basic ${Buffer.from(`${c.clientId}:secret`).toString('base64')}` });
  assert.equal(basic.status, 401);
  assert.equal(basic.json.error, 'invalid_client');
  const wrongRedirect = await exchange(srv, c, { redirect_uri: 'http://127.0.0.1:9/cb' });
  assert.equal(wrongRedirect.json.error, 'invalid_grant');
  const json = await fetch(`${srv.url}/oauth/token`, { method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ grant_type: 'authorization_code', code: c.code }) });
  assert.equal(json.status, 400);
  assert.equal((await json.json()).error, 'invalid_request');
  const twice = await postForm(`${srv.url}/oauth/token`, new URLSearchParams([['grant_type', 'authorization_code'],
    ['code', c.code], ['code', c.code], ['client_id', c.clientId]]));
  assert.equal(twice.json.error, 'invalid_request');
  // The code survived every refusal above.
  assert.equal((await exchange(srv, c)).status, 200);
});

test('deny sends access_denied back with state and iss; consent is remembered except for loopback-only clients', async () => {
  const jar = new CookieJar();
  const loopback = 'http://127.0.0.1:7007/cb';
  const loopbackClient = await dcrClient(srv, [loopback], 'Loopback app');
  const denied = await authorize(request(srv, loopbackClient, loopback).url,
    { email: user.email, password: user.password, decision: 'deny', jar });
  assert.equal(denied.error, 'access_denied');
  assert.equal(denied.state, 'st-123');
  assert.equal(denied.iss, srv.url);
  assert.equal(denied.code, undefined);
  // Signed in now (the jar): a loopback-only client is asked every time, with a warning.
  for (let i = 0; i < 2; i++) {
    const r = await approve(request(srv, loopbackClient, loopback).url, { jar });
    const consent = r.pages.find((p) => p.kind === 'consent');
    assert.ok(consent, `consent page shown (run ${i})`);
    assert.match(consent.text, /Loopback app/);
    assert.match(consent.text, /127\.0\.0\.1/);
    assert.match(consent.text, /Any program on this computer can claim to be it/);
    assert.match(consent.text, /full access to your transcriptions/);
    assert.match(consent.text, /spend your wallet money/);
  }
  // A client with an https redirect: asked once, then straight back with a code.
  const web = 'https://app.example/oauth/cb';
  const webClient = await dcrClient(srv, [web], 'Web app');
  const first = await approve(request(srv, webClient, web).url, { jar });
  const consent = first.pages.find((p) => p.kind === 'consent');
  assert.ok(consent);
  assert.match(consent.text, /app\.example/);
  assert.doesNotMatch(consent.text, /Any program on this computer/);
  const second = await approve(request(srv, webClient, web).url, { jar });
  assert.equal(second.pages.length, 0, 'no page the second time');
  assert.equal(second.iss, srv.url);
});

test('the built-in console client: its own redirect only, no consent page, a token the console endpoints accept', async () => {
  const callback = `${srv.url}/app/callback`;
  const wrong = await get(request(srv, 'scribe-console', 'http://127.0.0.1:7013/cb').url);
  assert.equal(wrong.status, 400);
  assert.equal(wrong.headers.get('location'), null);
  const { url, verifier } = request(srv, 'scribe-console', callback);
  const r = await approve(url, { email: user.email, password: user.password });
  assert.deepEqual(r.pages.map((p) => p.kind), ['sign-in'], 'signed in, then straight back: no consent page');
  assert.equal(`${r.redirect.origin}${r.redirect.pathname}`, callback);
  const t = await token(srv, { grant_type: 'authorization_code', code: r.code, client_id: 'scribe-console',
    redirect_uri: callback, code_verifier: verifier });
  assert.equal(t.status, 200, t.text);
  assert.equal(await meStatus(srv, t.json.access_token), 200);
  assert.equal(await meStatus(srv, t.json.access_token, '/dashboard/api/v1/usage'), 200);
});

test('CSRF: a form without its token, or without the cookie, is refused with 403', async () => {
  const redirectUri = 'http://127.0.0.1:7008/cb';
  const clientId = await dcrClient(srv, [redirectUri]);
  const { url } = request(srv, clientId, redirectUri);
  const jar = new CookieJar();
  const res = await fetch(url, { redirect: 'manual' });
  jar.store(url, res.headers);
  const html = await res.text();
  const [form] = parseForms(html, url);
  const data = formData(form, { fill: { email: user.email, password: user.password } });
  const post = (body, cookie) => fetch(`${srv.url}/oauth/sign-in`, { method: 'POST', redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...(cookie ? { Cookie: cookie } : {}) }, body });
  const withoutField = new URLSearchParams(data);
  withoutField.delete('csrf');
  const wrongField = new URLSearchParams(data);
  wrongField.set('csrf', '0'.repeat(64));
  for (const [body, cookie, what] of [[withoutField, jar.header(url), 'no field'], [wrongField, jar.header(url), 'wrong field'],
    [data, undefined, 'no cookie']]) {
    const r = await post(body, cookie);
    assert.equal(r.status, 403, what);
    assert.match(await r.text(), /did not come from this site/, what);
  }
  // The same form with both: signed in (303 back to the request).
  const ok = await post(data, jar.header(url));
  assert.equal(ok.status, 303);
  // The consent form too.
  jar.store(url, ok.headers);
  const page = await fetch(url, { headers: { Cookie: jar.header(url) } });
  const consentHtml = await page.text();
  const consentForm = parseForms(consentHtml, url).find((f) => f.action.endsWith('/oauth/consent'));
  const approveData = formData(consentForm, { submitter: consentForm.submitters.find((s) => s.value === 'approve') });
  approveData.delete('csrf');
  const refused = await fetch(`${srv.url}/oauth/consent`, { method: 'POST', redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: jar.header(url) }, body: approveData });
  assert.equal(refused.status, 403);
  assert.equal(refused.headers.get('location'), null);
});

test('the pages cannot be framed, are not cached, send no referrer and run no script', async () => {
  const redirectUri = 'http://127.0.0.1:7009/cb';
  const clientId = await dcrClient(srv, [redirectUri]);
  const signIn = await fetch(request(srv, clientId, redirectUri).url);
  const r = await approve(request(srv, clientId, redirectUri).url, { email: user.email, password: user.password });
  const consent = r.pages.find((p) => p.kind === 'consent');
  const error = await fetch(request(srv, 'dcr_unknown', redirectUri).url);
  for (const [what, headers, html] of [['sign-in', signIn.headers, await signIn.text()], ['consent', consent.headers, consent.html],
    ['error', error.headers, await error.text()]]) {
    const csp = headers.get('content-security-policy');
    assert.match(csp, /frame-ancestors 'none'/, what);
    assert.match(csp, /default-src 'none'/, what);
    assert.match(csp, /base-uri 'none'/, what);
    assert.doesNotMatch(csp, /script-src|unsafe-inline/, what);
    assert.equal(headers.get('x-frame-options'), 'DENY', what);
    assert.equal(headers.get('cache-control'), 'no-store', what);
    assert.equal(headers.get('referrer-policy'), 'no-referrer', what);
    assert.doesNotMatch(html, /<script|style=|<style/i, what);
  }
  // The consent form's redirect is allowed by form-action (browsers check it after the POST).
  assert.match(consent.headers.get('content-security-policy'), /form-action 'self' http:\/\/127\.0\.0\.1:7009/);
  const css = await fetch(`${srv.url}/oauth/static/oauth.css`);
  assert.equal(css.status, 200);
  assert.match(css.headers.get('content-type'), /text\/css/);
});

test('client metadata documents: used when valid, refused when private, redirecting or naming another client_id', async () => {
  const redirectUri = 'http://127.0.0.1:7010/cb';
  const good = cimd.client('/apps/good.json', { client_name: 'Metadata app', redirect_uris: [redirectUri] },
    { headers: { 'Cache-Control': 'max-age=600' } });
  const first = request(srv, good, redirectUri);
  const { code, pages } = await approve(first.url, { email: user.email, password: user.password });
  assert.match(pages.find((p) => p.kind === 'consent').text, /Metadata app/);
  const t = await token(srv, { grant_type: 'authorization_code', code, client_id: good, redirect_uri: redirectUri,
    code_verifier: first.verifier });
  assert.equal(t.status, 200, t.text);
  // Cached by its Cache-Control: a second authorization does not fetch it again.
  const fetches = cimd.fetchesOf('/apps/good.json').length;
  assert.equal((await get(request(srv, good, 'http://127.0.0.1:7011/cb').url)).status, 200);
  assert.equal(cimd.fetchesOf('/apps/good.json').length, fetches);
  // A redirect URI the document does not list.
  const unlisted = await get(request(srv, good, 'https://evil.example/cb').url);
  assert.equal(unlisted.status, 400);
  assert.equal(unlisted.headers.get('location'), null);

  const refusals = [
    // Another client_id inside.
    [srv, cimd.client('/apps/other-id.json', { client_id: 'https://app.example/client.json', client_name: 'X',
      redirect_uris: [redirectUri] }), /client_id must equal its URL/],
    // A redirect to a valid document: not followed.
    [srv, cimd.route('/apps/moved.json', { status: 302, headers: { Location: good }, body: '' }), /redirect/],
    // Not 200.
    [srv, cimd.route('/apps/gone.json', { status: 404, body: '{}' }), /HTTP 404/],
    // Too large.
    [srv, cimd.client('/apps/large.json', { client_name: 'L'.repeat(100), redirect_uris: [redirectUri],
      padding: 'x'.repeat(6000) }), /larger than/],
    // A client secret.
    [srv, cimd.client('/apps/secret.json', { client_name: 'S', redirect_uris: [redirectUri], client_secret: 'x' }),
      /client_secret/],
    // Loopback (private) under the production policy (a document the other server never cached).
    [strict, cimd.client('/apps/strict.json', { client_name: 'Strict', redirect_uris: [redirectUri] }), /not allowed/],
    // A private or link-local address, even with the test-only setting.
    [srv, 'https://169.254.169.254/latest/meta-data.json', /not allowed/],
  ];
  for (const [server, clientId, why] of refusals) {
    const r = await get(request(server, clientId, redirectUri).url);
    assert.equal(r.status, 400, clientId);
    assert.equal(r.headers.get('location'), null, clientId);
    assert.match(r.text, why, clientId);
  }
});

// Opens the sign-in page of `url` from `localAddress` and submits it.
async function signInFrom(localAddress, url, email, password) {
  const page = await fromAddress(localAddress, url);
  assert.equal(page.status, 200, page.text);
  const csrf = (page.headers['set-cookie'] ?? []).map((c) => c.split(';')[0]).find((c) => c.startsWith('scribe_oauth_csrf='));
  const form = parseForms(page.text, url).find((f) => f.action.endsWith('/oauth/sign-in'));
  const body = formData(form, { fill: { email, password } }).toString();
  return fromAddress(localAddress, form.action, { method: 'POST', body,
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: csrf } });
}

test('sign-in: the same answer for an unknown email and a wrong password; attempts limited per email and per address', async () => {
  // On the second server, with addresses of their own, so no other test is limited.
  const redirectUri = 'http://127.0.0.1:7012/cb';
  const clientId = await dcrClient(strict, [redirectUri]);
  const { url } = request(strict, clientId, redirectUri);
  // What differs between two answers besides the email typed: the form's CSRF field (a cookie each).
  const strip = (text, email) => text.replaceAll(email, 'EMAIL').replace(/name="csrf" value="[0-9a-f]+"/, 'CSRF');
  const unknownEmail = `nobody-${Date.now()}@example.com`;
  const wrongPassword = await signInFrom('127.0.0.2', url, user.email, 'not the password');
  const unknown = await signInFrom('127.0.0.2', url, unknownEmail, 'not the password');
  assert.equal(wrongPassword.status, 401);
  assert.equal(unknown.status, wrongPassword.status);
  assert.equal(strip(unknown.text, unknownEmail), strip(wrongPassword.text, user.email));
  assert.match(wrongPassword.text, /email or the password is not right/);
  assert.equal(wrongPassword.headers.location, undefined);

  // Per email: 10 failures from 10 addresses, then the right password from an 11th is refused.
  const victim = newUser({ costLog2: 10 });
  for (let i = 0; i < 10; i++) {
    assert.equal((await signInFrom(`127.0.1.${i + 1}`, url, victim.email, `wrong-${i}-password`)).status, 401);
  }
  const blocked = await signInFrom('127.0.1.100', url, victim.email, victim.password);
  assert.equal(blocked.status, 429);
  assert.match(blocked.text, /Too many failed sign-ins/);
  assert.equal(blocked.headers.location, undefined);
  // That address may still sign in somebody else.
  const other = newUser({ costLog2: 10 });
  const fine = await signInFrom('127.0.1.100', url, other.email, other.password);
  assert.equal(fine.status, 303, fine.text);

  // Per address: 10 failures with any emails (known or not), then the address is refused for everyone.
  for (let i = 0; i < 10; i++) {
    assert.equal((await signInFrom('127.0.2.1', url, `nobody-${i}-${Date.now()}@example.com`, 'wrong password')).status, 401);
  }
  const third = newUser({ costLog2: 10 });
  const refused = await signInFrom('127.0.2.1', url, third.email, third.password);
  assert.equal(refused.status, 429);
  assert.equal((await signInFrom('127.0.2.2', url, third.email, third.password)).status, 303);
});
