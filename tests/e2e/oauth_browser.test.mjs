// OAuth 2.1 (issue 31) in a real browser: Debian's chromium, driven headless
// by playwright-core, opens the authorization URL of a native app (loopback
// redirect), signs in, reads the consent page (the app's name, its redirect
// host, the warning that the redirect is on this computer) and approves; the
// browser lands on the app's loopback redirect with code, state and iss, and
// the code buys a token that works on /mcp. The same pages are then framed by
// a page of another origin: the browser must refuse to show them
// (frame-ancestors 'none', X-Frame-Options DENY), while a frameable page in
// the same frame slot shows. Pages must load under their own strict
// Content-Security-Policy without a single violation.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chromium } from 'playwright-core';
import { startServer } from './harness.mjs';
import { newUser, pkce, postForm, startRedirectReceiver } from './oauth_helpers.mjs';

const CHROMIUM = process.env.SCRIBE_CHROMIUM || '/usr/bin/chromium';
const APP_NAME = 'Browser Test App';

let server, receiver, browser, context, page, user, clientId;
const consoleMessages = []; // every console message of every page: CSP violations land here
const documents = []; // every document response of the main frame: {url, status, headers}

before(async () => {
  server = await startServer({ extraEnv: { SCRIBE_RATE_LIMIT_PER_MINUTE: '100000' } });
  receiver = await startRedirectReceiver();
  user = newUser();
  const reg = await fetch(`${server.url}/oauth/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ client_name: APP_NAME, redirect_uris: [receiver.url('/callback')], token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], application_type: 'native' }),
  });
  const text = await reg.text();
  assert.equal(reg.status, 201, text);
  clientId = JSON.parse(text).client_id;
  browser = await chromium.launch({ executablePath: CHROMIUM });
  context = await browser.newContext();
  context.on('console', (m) => consoleMessages.push({ type: m.type(), text: m.text(), url: m.page()?.url() }));
  page = await context.newPage();
  page.on('response', (r) => {
    if (r.request().isNavigationRequest() && r.frame() === page.mainFrame()) {
      documents.push({ url: r.url(), status: r.status(), headers: r.headers() });
    }
  });
});
after(async () => {
  await browser?.close();
  await receiver?.close();
  await server?.stop();
});

function authorizeUrl({ state, challenge, resource }) {
  const url = new URL(`${server.url}/oauth/authorize`);
  for (const [k, v] of Object.entries({ response_type: 'code', client_id: clientId, redirect_uri: receiver.url('/callback'),
    code_challenge: challenge, code_challenge_method: 'S256', state, resource })) url.searchParams.set(k, v);
  return url.toString();
}

// The headers every sign-in and consent page carries.
function assertPageHeaders(doc) {
  const csp = doc.headers['content-security-policy'] ?? '';
  assert.match(csp, /frame-ancestors 'none'/, `${doc.url}: ${csp}`);
  assert.match(csp, /default-src 'none'/, `${doc.url}: ${csp}`);
  assert.equal(doc.headers['x-frame-options']?.toUpperCase(), 'DENY', doc.url);
  assert.match(doc.headers['cache-control'] ?? '', /no-store/, doc.url);
}

// `promise`, or a failure saying why() when it has not settled after ms (a
// browser that refuses a navigation reports it only on its console).
function failAfter(promise, ms, why) {
  let timer;
  const timeout = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(why())), ms); });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const cspViolations = () => consoleMessages.filter((m) => /Content Security Policy|Refused to/i.test(m.text));

test('chromium: sign in, consent naming the app, its redirect host and the localhost warning, land on the redirect with code, state and iss', async () => {
  const { verifier, challenge } = pkce();
  const state = randomBytes(16).toString('base64url');
  const resource = `${server.url}/mcp`;
  await page.goto(authorizeUrl({ state, challenge, resource }));

  // Sign-in page.
  const signIn = page.locator('form:has(input[type=password])');
  await signIn.waitFor();
  assertPageHeaders(documents.at(-1));
  await signIn.locator('input[name=email]').fill(user.email);
  await signIn.locator('input[type=password]').fill(user.password);
  await signIn.locator('button[type=submit], input[type=submit], button:not([type])').first().click();

  // Consent page.
  const approveButton = page.locator('button[name=decision][value=approve], input[type=submit][name=decision][value=approve]');
  await approveButton.waitFor();
  assertPageHeaders(documents.at(-1));
  const text = await page.locator('body').innerText();
  assert.ok(text.includes(APP_NAME), text);
  assert.ok(text.includes('127.0.0.1'), `the redirect host is not shown: ${text}`);
  assert.match(text, /localhost|loopback|this computer|this device/i, `no warning that the redirect is on this computer: ${text}`);
  assert.equal(await page.locator('button[name=decision][value=deny], input[type=submit][name=decision][value=deny]').count(), 1);
  // The stylesheet loaded under the page's own policy (style-src 'self').
  const sheets = await page.evaluate(() => [...document.styleSheets].map((s) => s.href));
  assert.ok(sheets.some((h) => h && new URL(h).pathname === '/oauth/static/oauth.css'), JSON.stringify(sheets));

  // Approve: the browser is sent to the app's loopback redirect.
  const landed = receiver.next();
  await approveButton.click();
  const callback = await failAfter(landed, 30000,
    () => `the browser never reached the redirect (at ${page.url()}); console: ${JSON.stringify(consoleMessages)}`);
  await page.waitForURL(`${receiver.base}/**`);
  assert.equal(callback.pathname, '/callback');
  assert.equal(callback.searchParams.get('state'), state);
  assert.equal(callback.searchParams.get('iss'), server.url);
  const code = callback.searchParams.get('code');
  assert.ok(code, callback.href);
  assert.equal(callback.searchParams.get('error'), null);

  // The code is good for a token on /mcp.
  const token = await postForm(`${server.url}/oauth/token`, { grant_type: 'authorization_code', code,
    redirect_uri: receiver.url('/callback'), client_id: clientId, code_verifier: verifier, resource });
  assert.equal(token.status, 200, token.text);
  const init = await fetch(`${server.url}/mcp`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token.json.access_token}`, 'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'browser-test', version: '1' } } }),
  });
  await init.body?.cancel();
  assert.equal(init.status, 200);

  // The strict policy held without a violation on any page.
  assert.deepEqual(cspViolations(), []);
});

test('chromium: the consent page cannot be framed by another site', async () => {
  // The person is still signed in (same browser context), so the framed URL
  // is the consent page itself, as a clickjacking page would frame it.
  const { challenge } = pkce();
  const target = authorizeUrl({ state: randomBytes(16).toString('base64url'), challenge, resource: `${server.url}/mcp` });
  const framed = [];
  const onResponse = (r) => { if (r.url() === target) framed.push(r); };
  page.on('response', onResponse);
  // A page of another origin (the app's loopback server; its pages allow
  // framing) with two frames: its own page, and the consent page. (Served
  // for real on loopback: a page Playwright fulfils counts as public, and
  // Chromium's local-network checks would block the frame before any request.)
  const framer = receiver.page('/framer', `<!doctype html><title>framer</title>
    <iframe id="control" src="${receiver.url('/framed-control')}"></iframe>
    <iframe id="victim" src="${target}"></iframe>`);
  consoleMessages.length = 0;
  await page.goto(framer);
  const frameOf = async (id) => (await page.locator(`#${id}`).elementHandle()).contentFrame();
  const control = await frameOf('control');
  await control.waitForLoadState();
  assert.match(await control.locator('body').innerText(), /close this window/, 'the control frame did not render');
  await page.waitForFunction(() => document.readyState === 'complete');
  page.off('response', onResponse);

  // The server did answer with the consent page, with headers that forbid framing ...
  assert.equal(framed.length, 1, 'the framed request never reached the server');
  assert.equal(framed[0].status(), 200);
  const headers = framed[0].headers();
  assert.match(headers['content-security-policy'] ?? '', /frame-ancestors 'none'/);
  assert.equal(headers['x-frame-options']?.toUpperCase(), 'DENY');
  // ... and the browser refused to show it.
  const victim = await frameOf('victim');
  assert.ok(victim, 'no frame element');
  assert.notEqual(victim.url(), target, 'the consent page rendered inside the frame');
  assert.equal(await victim.locator('button[name=decision]').count(), 0, 'the Approve button is reachable in the frame');
  assert.ok(consoleMessages.some((m) => /frame-ancestors|X-Frame-Options/i.test(m.text)),
    `the browser reported no refused frame: ${JSON.stringify(consoleMessages)}`);
});
