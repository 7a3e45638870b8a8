// The console's sign-in: a first-party OAuth 2.1 public client (client_id
// scribe-console, docs/oauth_wire_rules.md section 2) using the authorization
// code flow with PKCE S256 and the `resource` indicator (RFC 8707). It calls
// /api/v1 with the Bearer access token, never with cookies: the only cookie is
// the sign-in session under /oauth, which lets a new tab or an expired grant
// sign in again without typing the password.
//
// Tokens live in sessionStorage (per tab, survive a reload, gone with the tab);
// the access token is refreshed shortly before it expires, and refreshes are
// single-flight because refresh tokens rotate (a second use of a rotated one
// would revoke the grant: RFC 9700 4.14.2, which the server enforces).

const STORE = 'scribe.console.tokens';
const PENDING = 'scribe.console.pending';
let config;
let tokens = load();
let refreshing = null;
let timer = null;
const listeners = new Set();

function load() {
  try {
    return JSON.parse(sessionStorage.getItem(STORE)) || null;
  } catch {
    return null;
  }
}

function save(t) {
  tokens = t;
  if (t) sessionStorage.setItem(STORE, JSON.stringify(t));
  else sessionStorage.removeItem(STORE);
  schedule();
  for (const f of listeners) f(!!t);
}

// How long before expiry a token is renewed: a minute, or a fifth of a short
// lifetime (a server configured with seconds-long tokens, as tests do).
const margin = (t) => Math.min(60_000, (t.lifetime_ms || 3_600_000) / 5);

function schedule() {
  clearTimeout(timer);
  if (!tokens?.refresh_token) return;
  const wait = Math.max(1_000, tokens.expires_at - Date.now() - margin(tokens));
  timer = setTimeout(() => refresh().catch(() => {}), wait);
}

export function onSignedInChange(f) {
  listeners.add(f);
  return () => listeners.delete(f);
}

export async function loadConfig() {
  if (!config) {
    const res = await fetch('/app/config.json', { cache: 'no-cache' });
    if (!res.ok) throw new Error(`the console's configuration could not be read (HTTP ${res.status})`);
    config = await res.json();
  }
  return config;
}

export function signedIn() {
  return !!tokens;
}

const b64url = (bytes) =>
  btoa(String.fromCharCode(...new Uint8Array(bytes)))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
const random = (n) => b64url(crypto.getRandomValues(new Uint8Array(n)));

// Sends the browser to the authorization endpoint; `returnTo` is where the
// callback lands afterwards (a path under /app).
export async function signIn(returnTo = location.pathname + location.search) {
  const c = await loadConfig();
  const verifier = random(32);
  const challenge = b64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  const state = random(16);
  sessionStorage.setItem(PENDING, JSON.stringify({ verifier, state, returnTo }));
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: c.client_id,
    redirect_uri: c.redirect_uri,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state,
    resource: c.resource,
    scope: 'transcribe',
  });
  location.assign(`${c.authorization_endpoint}?${q}`);
  return new Promise(() => {}); // the page is going away
}

// The redirect back (/app/callback?code&state&iss): checks state and the
// issuer (RFC 9207: simple string comparison with the metadata's issuer),
// redeems the code, and answers the path to go to.
export async function completeSignIn(search) {
  const c = await loadConfig();
  const q = new URLSearchParams(search);
  const pending = JSON.parse(sessionStorage.getItem(PENDING) || 'null');
  sessionStorage.removeItem(PENDING);
  if (q.get('error')) throw new Error(q.get('error_description') || `sign-in refused: ${q.get('error')}`);
  if (!pending || q.get('state') !== pending.state)
    throw new Error('this sign-in answer does not belong to a sign-in started in this tab; sign in again');
  const meta = await (await fetch('/.well-known/oauth-authorization-server')).json();
  if (q.get('iss') !== meta.issuer) throw new Error('the sign-in answer names another issuer; sign in again');
  await tokenRequest({
    grant_type: 'authorization_code',
    code: q.get('code') || '',
    redirect_uri: c.redirect_uri,
    code_verifier: pending.verifier,
  });
  return pending.returnTo?.startsWith('/app') ? pending.returnTo : '/app';
}

async function tokenRequest(fields) {
  const c = await loadConfig();
  const res = await fetch(c.token_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: c.client_id, resource: c.resource, ...fields }),
  });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) {
    const err = new Error(body.error_description || body.error || `token request failed (HTTP ${res.status})`);
    err.oauth = body.error;
    throw err;
  }
  save({
    access_token: body.access_token,
    refresh_token: body.refresh_token || tokens?.refresh_token,
    expires_at: Date.now() + (body.expires_in || 3600) * 1000,
    lifetime_ms: (body.expires_in || 3600) * 1000,
  });
}

// A fresh access token; one refresh at a time for the whole tab.
export function refresh() {
  if (!tokens?.refresh_token) return Promise.reject(new Error('not signed in'));
  refreshing ??= tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token })
    .catch((e) => {
      if (e.oauth === 'invalid_grant' || e.oauth === 'invalid_client') save(null);
      throw e;
    })
    .finally(() => {
      refreshing = null;
    });
  return refreshing;
}

// The access token to send, refreshed first when it is about to expire.
export async function accessToken() {
  if (refreshing) await refreshing;
  if (tokens && tokens.expires_at - Date.now() < margin(tokens)) await refresh();
  return tokens?.access_token || null;
}

export async function signOut() {
  const c = await loadConfig();
  const t = tokens;
  save(null);
  // Revoking the refresh token ends the grant (RFC 7009; docs/oauth_wire_rules.md).
  if (t?.refresh_token)
    await fetch(c.revocation_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: c.client_id, token: t.refresh_token, token_type_hint: 'refresh_token' }),
    }).catch(() => {});
}

schedule();
