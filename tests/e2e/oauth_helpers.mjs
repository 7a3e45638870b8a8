// Helpers of the OAuth end-to-end tests (issue 31; the contract is in
// docs/oauth_wire_rules.md):
// - startCimdServer(): a loopback HTTPS server that serves Client ID Metadata
//   Documents. Its self-signed certificate is made by the openssl CLI at test
//   time (webhook_receiver.mjs's selfSignedCertificate); the server under test
//   trusts it through SCRIBE_OUTBOUND_CA_FILE and reaches loopback through the
//   test-only SCRIBE_OAUTH_CIMD_ALLOW_PRIVATE=1 (both in `.env`).
// - authorize(): what a browser does with an authorization URL, with fetch and
//   a cookie jar: GET it, fill and POST the sign-in form, POST the consent
//   form's Approve or Deny, follow the server's redirects and stop at the one
//   that leaves for the client's redirect URI (never fetched), returning its
//   code, state and iss.
// - newUser() / setPassword(): an account with a password, set with
//   `scribe admin set-password --email E` (the password on stdin).
// - startRedirectReceiver(): a loopback http server standing for a native
//   client's redirect URI (the real browser test lands on it).
// - pkce(), postForm(): for tests that speak the token endpoint themselves.
import { createServer as createHttps } from 'node:https';
import { createServer as createHttp } from 'node:http';
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { BIN, DB, newAccount } from './harness.mjs';
import { selfSignedCertificate } from './webhook_receiver.mjs';

// ---------------------------------------------------------------------------
// Users with a password.

// Sets the password of the account with this e-mail address. `costLog2`
// passes the test-only SCRIBE_PASSWORD_HASH_COST_LOG2 to the command (the
// stored hash records its own cost, so the server verifies it either way).
export function setPassword(email, password, { costLog2 } = {}) {
  const env = { ...process.env, SCRIBE_DATABASE_URL: DB, SCRIBE_LOG_LEVEL: 'warn' };
  if (costLog2 !== undefined) env.SCRIBE_PASSWORD_HASH_COST_LOG2 = String(costLog2);
  const run = spawnSync(BIN, ['admin', 'set-password', '--email', email], { env, input: `${password}\n`, encoding: 'utf8' });
  if (run.status !== 0) {
    throw new Error(`scribe admin set-password --email ${email} exited ${run.status}: ${run.stdout}${run.stderr}`);
  }
}

// A fresh account (harness newAccount: its API key too) with a password.
export function newUser(options = {}) {
  const { password = `pw-${randomBytes(12).toString('base64url')}`, costLog2, ...accountOptions } = options;
  const account = newAccount(accountOptions);
  setPassword(account.email, password, { costLog2 });
  return { ...account, password };
}

// ---------------------------------------------------------------------------
// Client ID Metadata Documents over loopback HTTPS.

// Returns {base, caFile, env, client(path, metadata, {headers}), route(path,
// spec), requests, fetchesOf(path), close()}. `client` publishes a document
// whose client_id is its own URL (metadata may override any field, client_id
// included) and returns that URL. `route` serves anything else at a path:
// {status, headers, body} or a node (req, res) handler.
export async function startCimdServer() {
  const tls = selfSignedCertificate();
  const routes = new Map();
  const requests = [];
  const server = createHttps({ key: tls.key, cert: tls.cert }, (req, res) => {
    const path = new URL(req.url, 'https://cimd.invalid').pathname;
    requests.push({ path, method: req.method, headers: req.headers, at: Date.now() });
    const spec = routes.get(path);
    if (!spec) {
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      return res.end('no such document');
    }
    if (typeof spec === 'function') return spec(req, res);
    const body = typeof spec.body === 'string' ? spec.body : JSON.stringify(spec.body);
    res.writeHead(spec.status ?? 200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body),
      ...(spec.headers ?? {}) });
    res.end(body);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `https://127.0.0.1:${server.address().port}`;
  return {
    base,
    caFile: tls.certPath,
    // What startServer's extraEnv needs so the server fetches from here.
    env: { SCRIBE_OUTBOUND_CA_FILE: tls.certPath, SCRIBE_OAUTH_CIMD_ALLOW_PRIVATE: '1' },
    client(path, metadata, { headers } = {}) {
      const url = `${base}${path}`;
      routes.set(path, { body: { client_id: url, token_endpoint_auth_method: 'none', ...metadata }, headers });
      return url;
    },
    route(path, spec) {
      routes.set(path, spec);
      return `${base}${path}`;
    },
    requests,
    fetchesOf: (path) => requests.filter((r) => r.path === path),
    close() {
      server.closeAllConnections?.();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

// ---------------------------------------------------------------------------
// A loopback redirect URI (http://127.0.0.1:port/...), as a native app listens on.

// Returns {base, url(path), page(path, html), requests, next(), close()};
// next() resolves with the next request's URL (a URL object) once it arrives;
// page() serves other HTML at a path (e.g. a page that frames another), not
// recorded.
export async function startRedirectReceiver() {
  const requests = [];
  const waiting = [];
  const pages = new Map();
  const server = createHttp((req, res) => {
    const url = new URL(req.url, base);
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    if (pages.has(url.pathname)) return res.end(pages.get(url.pathname));
    requests.push(url);
    res.end('<!doctype html><title>signed in</title><p>You can close this window.</p>');
    const w = waiting.shift();
    if (w) w(url);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${server.address().port}`;
  let seen = 0;
  return {
    base,
    url: (path = '/callback') => `${base}${path}`,
    page(path, html) {
      pages.set(path, html);
      return `${base}${path}`;
    },
    requests,
    next() {
      if (requests.length > seen) return Promise.resolve(requests[seen++]);
      return new Promise((resolve) => waiting.push((u) => { seen++; resolve(u); }));
    },
    close() {
      server.closeAllConnections?.();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

// ---------------------------------------------------------------------------
// PKCE and form posts.

export function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

// POSTs application/x-www-form-urlencoded; returns {status, headers, text, json}.
export async function postForm(url, params, headers = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json', ...headers },
    body: new URLSearchParams(params),
    redirect: 'manual',
  });
  const text = await res.text();
  let json;
  try { json = JSON.parse(text); } catch { json = undefined; }
  return { status: res.status, headers: res.headers, text, json };
}

// ---------------------------------------------------------------------------
// HTML forms, read as a browser reads them (enough for the service's pages).

const NAMED = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };
export function decodeEntities(s) {
  return s.replace(/&(#[xX][0-9a-fA-F]+|#\d+|[a-zA-Z]+);/g, (m, e) => {
    if (e[0] === '#') return String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10));
    return NAMED[e.toLowerCase()] ?? m;
  });
}

function attributes(tagText) {
  const out = {};
  const inner = tagText.replace(/^<\s*[a-zA-Z0-9]+/, '').replace(/\/?>$/, '');
  const re = /([^\s"'<>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;
  let m;
  while ((m = re.exec(inner))) out[m[1].toLowerCase()] = decodeEntities(m[2] ?? m[3] ?? m[4] ?? '');
  return out;
}

// The text a person reads: tags dropped, entities decoded, spaces collapsed.
export function visibleText(html) {
  return decodeEntities(html.replace(/<(script|style)[\s\S]*?<\/\1>/gi, ' ').replace(/<[^>]*>/g, ' '))
    .replace(/\s+/g, ' ').trim();
}

// Every <form> of a page: {action, method, inputs: [{type, name, value}],
// submitters: [{name, value, text}]} (submitters: <button> and <input
// type=submit>). `action` is resolved against the page's URL.
export function parseForms(html, pageUrl) {
  const forms = [];
  const formRe = /<form\b[^>]*>([\s\S]*?)<\/form\s*>/gi;
  let f;
  while ((f = formRe.exec(html))) {
    const open = f[0].match(/^<form\b[^>]*>/i)[0];
    const a = attributes(open);
    const body = f[1];
    const inputs = [];
    const submitters = [];
    for (const tag of body.match(/<input\b[^>]*>/gi) ?? []) {
      const t = attributes(tag);
      const type = (t.type ?? 'text').toLowerCase();
      if (type === 'submit' || type === 'image') submitters.push({ name: t.name, value: t.value ?? '', text: t.value ?? '' });
      else if (type !== 'button' && type !== 'reset') inputs.push({ type, name: t.name, value: t.value ?? '', checked: 'checked' in t });
    }
    const buttonRe = /<button\b[^>]*>([\s\S]*?)<\/button\s*>/gi;
    let b;
    while ((b = buttonRe.exec(body))) {
      const t = attributes(b[0].match(/^<button\b[^>]*>/i)[0]);
      if ((t.type ?? 'submit').toLowerCase() === 'submit') submitters.push({ name: t.name, value: t.value ?? '', text: visibleText(b[1]) });
    }
    for (const tag of body.match(/<textarea\b[^>]*>[\s\S]*?<\/textarea\s*>/gi) ?? []) {
      const t = attributes(tag.match(/^<textarea\b[^>]*>/i)[0]);
      inputs.push({ type: 'textarea', name: t.name, value: decodeEntities(tag.replace(/^<textarea\b[^>]*>/i, '').replace(/<\/textarea\s*>$/i, '')) });
    }
    forms.push({
      action: new URL(a.action ?? '', pageUrl).toString(),
      method: (a.method ?? 'get').toLowerCase(),
      inputs,
      submitters,
    });
  }
  return forms;
}

// The fields a browser submits for `form` when `submitter` is clicked, with
// `fill` (name -> value) typed into the named fields.
export function formData(form, { submitter, fill = {} } = {}) {
  const out = new URLSearchParams();
  const used = new Set();
  for (const input of form.inputs) {
    if (!input.name) continue;
    if ((input.type === 'checkbox' || input.type === 'radio') && !input.checked) continue;
    const value = Object.hasOwn(fill, input.name) ? fill[input.name] : input.value;
    used.add(input.name);
    out.append(input.name, value);
  }
  for (const [name, value] of Object.entries(fill)) if (!used.has(name)) throw new Error(`the form has no field ${name}`);
  if (submitter?.name) out.append(submitter.name, submitter.value);
  return out;
}

// ---------------------------------------------------------------------------
// Cookies, kept as a browser keeps them (path, SameSite, expiry; no domains:
// every request goes to one origin).

export class CookieJar {
  #cookies = new Map(); // `${name};${path}` -> {name, value, path, sameSite, httpOnly, secure}

  store(requestUrl, headers) {
    const setCookies = headers.getSetCookie ? headers.getSetCookie() : [];
    for (const line of setCookies) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair.indexOf('=');
      if (eq <= 0) continue;
      const cookie = { name: pair.slice(0, eq).trim(), value: pair.slice(eq + 1).trim(), path: null, sameSite: 'lax',
        httpOnly: false, secure: false };
      let expired = false;
      for (const attr of attrs) {
        const [k, ...rest] = attr.split('=');
        const key = k.trim().toLowerCase();
        const v = rest.join('=').trim();
        if (key === 'path' && v.startsWith('/')) cookie.path = v;
        else if (key === 'samesite') cookie.sameSite = v.toLowerCase();
        else if (key === 'httponly') cookie.httpOnly = true;
        else if (key === 'secure') cookie.secure = true;
        else if (key === 'max-age' && Number(v) <= 0) expired = true;
        else if (key === 'expires' && Date.parse(v) <= Date.now()) expired = true;
      }
      if (cookie.path === null) { // RFC 6265 5.1.4: the request path's directory
        const p = new URL(requestUrl).pathname;
        cookie.path = p.lastIndexOf('/') > 0 ? p.slice(0, p.lastIndexOf('/')) : '/';
      }
      const id = `${cookie.name};${cookie.path}`;
      if (expired) this.#cookies.delete(id);
      else this.#cookies.set(id, cookie);
    }
  }

  // The Cookie header for a request to `url`; a cross-site navigation (the
  // client sends the person to /oauth/authorize) carries no SameSite=Strict cookie.
  header(url, { crossSite = false } = {}) {
    const path = new URL(url).pathname;
    const matches = [...this.#cookies.values()].filter((c) =>
      (path === c.path || path.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`)) &&
      !(crossSite && c.sameSite === 'strict'));
    matches.sort((a, b) => b.path.length - a.path.length);
    return matches.map((c) => `${c.name}=${c.value}`).join('; ');
  }

  get(name) {
    return [...this.#cookies.values()].find((c) => c.name === name);
  }

  all() {
    return [...this.#cookies.values()];
  }
}

// ---------------------------------------------------------------------------
// The authorization request as a browser carries it out.

function pageKind(forms) {
  if (forms.some((f) => f.inputs.some((i) => i.type === 'password'))) return 'sign-in';
  if (forms.some((f) => f.submitters.some((s) => s.name === 'decision') || f.inputs.some((i) => i.name === 'decision'))) {
    return 'consent';
  }
  return 'other';
}

// What a browser sends as Origin on a form POST from a page (Fetch, "append a
// request Origin header"): "null" under Referrer-Policy no-referrer.
function postOrigin(page) {
  const policy = (page.headers.get('referrer-policy') ?? '').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean).pop();
  return policy === 'no-referrer' ? 'null' : new URL(page.url).origin;
}

// Runs the authorization request `authorizeUrl` as a person in a browser
// would. Options:
//   email, password: typed into the sign-in form when it appears;
//   decision: 'approve' (default) or 'deny', clicked on the consent page;
//   jar: a CookieJar, to keep the browser's session across runs;
//   redirectUri: where the server is expected to send the browser back
//     (default: the request's redirect_uri). Redirects within the server's
//     origin are followed; the one to redirectUri, or to another origin, is not.
// Returns {redirect (URL or undefined), code, state, iss, error,
// errorDescription, pages: [{url, status, headers, html, text, kind, forms}],
// last (the last page when no redirect came)}.
export async function authorize(authorizeUrl, { email, password, decision = 'approve', jar = new CookieJar(), redirectUri } = {}) {
  const start = new URL(authorizeUrl);
  const origin = start.origin;
  const target = new URL(redirectUri ?? start.searchParams.get('redirect_uri') ?? 'invalid:');
  const isRedirectTarget = (u) =>
    u.origin !== origin || (u.protocol === target.protocol && u.host === target.host && u.pathname === target.pathname) ||
    (u.protocol !== 'http:' && u.protocol !== 'https:');
  const pages = [];
  let signedIn = false;
  let decided = false;
  // The next request: a navigation (GET) or a form submission (POST).
  let request = { url: start.toString(), method: 'GET', crossSite: true };
  for (let hops = 0; hops < 20; hops++) {
    const headers = { Accept: 'text/html,application/xhtml+xml', 'Sec-Fetch-Mode': 'navigate', 'Sec-Fetch-Dest': 'document',
      'Sec-Fetch-Site': request.crossSite ? 'cross-site' : 'same-origin', 'Upgrade-Insecure-Requests': '1' };
    const cookie = jar.header(request.url, { crossSite: request.crossSite });
    if (cookie) headers.Cookie = cookie;
    if (request.method === 'POST') {
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
      headers.Origin = request.origin;
      if (request.referer) headers.Referer = request.referer;
    }
    const res = await fetch(request.url, { method: request.method, headers, body: request.body, redirect: 'manual' });
    jar.store(request.url, res.headers);
    if (res.status >= 300 && res.status < 400 && res.headers.get('location')) {
      await res.body?.cancel();
      const next = new URL(res.headers.get('location'), request.url);
      if (isRedirectTarget(next)) {
        const q = next.searchParams;
        const get = (k) => q.get(k) ?? undefined;
        return { redirect: next, code: get('code'), state: get('state'), iss: get('iss'), error: get('error'),
          errorDescription: get('error_description'), pages, last: undefined, jar };
      }
      // 303 and (for POST) 302/301 turn into a GET, as browsers do; 307/308 keep the method.
      const keep = res.status === 307 || res.status === 308;
      request = keep ? { ...request, url: next.toString() } : { url: next.toString(), method: 'GET', crossSite: request.crossSite };
      continue;
    }
    const html = await res.text();
    const forms = parseForms(html, request.url);
    const page = { url: request.url, status: res.status, headers: res.headers, html, text: visibleText(html),
      kind: pageKind(forms), forms };
    pages.push(page);
    const done = () => ({ redirect: undefined, code: undefined, state: undefined, iss: undefined, error: undefined,
      errorDescription: undefined, pages, last: page, jar });
    const post = (form, data) => ({ url: form.action, method: form.method === 'post' ? 'POST' : 'GET', body: data,
      origin: postOrigin(page), referer: postOrigin(page) === 'null' ? undefined : page.url, crossSite: false });
    if (res.status !== 200) return done();
    if (page.kind === 'sign-in') {
      if (signedIn || email === undefined) return done(); // refused (the page again) or nobody to sign in
      signedIn = true;
      const form = forms.find((f) => f.inputs.some((i) => i.type === 'password'));
      const emailField = form.inputs.find((i) => i.name === 'email' || i.type === 'email');
      const passwordField = form.inputs.find((i) => i.type === 'password');
      const data = formData(form, { submitter: form.submitters[0], fill: { [emailField.name]: email, [passwordField.name]: password } });
      request = post(form, data);
      if (request.method === 'GET') throw new Error('the sign-in form would send the password in a URL (method GET)');
      continue;
    }
    if (page.kind === 'consent') {
      if (decided) return done();
      decided = true;
      const form = forms.find((f) => f.submitters.some((s) => s.name === 'decision' && s.value === decision)) ??
        forms.find((f) => f.inputs.some((i) => i.name === 'decision' && i.value === decision));
      if (!form) throw new Error(`the consent page has no "${decision}" button: ${page.text.slice(0, 500)}`);
      const submitter = form.submitters.find((s) => s.name === 'decision' && s.value === decision) ?? form.submitters[0];
      request = post(form, formData(form, { submitter }));
      continue;
    }
    return done();
  }
  throw new Error(`more than 20 redirects from ${authorizeUrl}`);
}

// authorize(), insisting that it ends with a code; throws with what the
// person saw otherwise.
export async function approve(authorizeUrl, options = {}) {
  const result = await authorize(authorizeUrl, { ...options, decision: 'approve' });
  if (!result.code) {
    const what = result.redirect
      ? `a redirect to ${result.redirect} without code`
      : `page ${result.last?.status} at ${result.last?.url}: ${result.last?.text.slice(0, 600)}`;
    throw new Error(`authorization ended without a code: ${what}`);
  }
  return result;
}

// ---------------------------------------------------------------------------
// The web console's sign-in (the built-in first-party client scribe-console,
// no consent page): authorization code + PKCE as the console's auth.js does,
// through the real sign-in form. Returns the token response
// ({access_token, refresh_token, ...}).
export async function consoleTokens(base, user) {
  const { verifier, challenge } = pkce();
  const redirectUri = `${base}/app/callback`;
  const url = new URL(`${base}/oauth/authorize`);
  for (const [k, v] of Object.entries({ response_type: 'code', client_id: 'scribe-console', redirect_uri: redirectUri,
    code_challenge: challenge, code_challenge_method: 'S256', state: randomBytes(8).toString('hex'), resource: base }))
    url.searchParams.set(k, v);
  const { code } = await approve(url, { email: user.email, password: user.password });
  const res = await postForm(`${base}/oauth/token`, { grant_type: 'authorization_code', code, redirect_uri: redirectUri,
    client_id: 'scribe-console', code_verifier: verifier, resource: base });
  if (res.status !== 200) throw new Error(`console token: ${res.status} ${res.text}`);
  return res.json;
}
