// The web console's shell (issue 36): sign-in as the first-party OAuth
// client with PKCE, Bearer-only API calls, silent refresh, reload, sign-out
// revoking the grant, keyboard skip link, 360 px layout, every /me link a
// real page, and axe-core on the sign-in page. Real server, Debian's chromium.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startConsole } from './console_browser.mjs';
import { startServer } from './harness.mjs';

let c;
before(async () => {
  // Access tokens of 4 s: the refresh path runs within the test.
  const server = await startServer({
    extraEnv: { SCRIBE_RATE_LIMIT_PER_MINUTE: '100000', SCRIBE_OAUTH_ACCESS_TTL_SECONDS: '4' },
  });
  c = await startConsole({ server });
});
after(async () => {
  await c?.close();
  await c?.server.stop();
});

test('/app sends a visitor to the sign-in page, which passes axe-core; signing in lands on the library', async () => {
  const page = await c.newPage({ signIn: false });
  await page.locator('input[type=password]').waitFor();
  const url = new URL(page.url());
  assert.equal(url.pathname, '/oauth/authorize');
  assert.equal(url.searchParams.get('client_id'), 'scribe-console');
  assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
  assert.equal(url.searchParams.get('redirect_uri'), `${c.server.url}/app/callback`);
  assert.equal(url.searchParams.get('resource'), c.server.url);
  await c.axe(page, 'sign-in');
  await c.shot(page, 'sign-in');
  await c.signInOn(page);
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
  assert.equal(new URL(page.url()).pathname, '/app');
  assert.deepEqual(c.problems(), []);
});

test('API calls carry the Bearer token and never a cookie; the token is refreshed silently and survives a reload', async () => {
  const page = await c.newPage();
  const apiCalls = [];
  const tokenGrants = [];
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (u.pathname.startsWith('/api/') || u.pathname.startsWith('/dashboard/api/'))
      // allHeaders(): headers() leaves out cookies, which is what is checked.
      apiCalls.push(r.allHeaders().then((headers) => ({ path: u.pathname, headers })));
    if (u.pathname === '/oauth/token') tokenGrants.push(new URLSearchParams(r.postData() || '').get('grant_type'));
  });
  await page.goto(`${c.server.url}/app/account/billing`);
  await page.getByRole('heading', { level: 1 }).waitFor();
  // Past the access token's 4 s: the next page's calls still succeed.
  await page.waitForFunction(
    () => {
      const t = JSON.parse(sessionStorage.getItem('scribe.console.tokens') || 'null');
      return t && t.expires_at < Date.now();
    },
    null,
    { timeout: 15_000, polling: 250 },
  ).catch(() => {}); // the scheduled refresh may renew it first: either way no sign-in page
  await page.reload();
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
  await page.goto(`${c.server.url}/app`);
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
  assert.ok(!page.url().includes('/oauth/authorize'), page.url());
  assert.ok(apiCalls.length > 0, 'the pages called the API');
  for (const call of await Promise.all(apiCalls)) {
    assert.match(call.headers.authorization ?? '', /^Bearer /, call.path);
    assert.equal(call.headers.cookie, undefined, `${call.path} carried a cookie`);
  }
  assert.ok(tokenGrants.includes('refresh_token'), `token requests: ${tokenGrants}`);
  assert.deepEqual(c.problems(), []);
});

test('sign-out revokes the grant: its refresh token no longer works', async () => {
  const page = await c.newPage();
  const tokens = await page.evaluate(() => JSON.parse(sessionStorage.getItem('scribe.console.tokens')));
  assert.ok(tokens?.refresh_token);
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(/\/app\/support$/);
  const res = await fetch(`${c.server.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: 'scribe-console' }),
  });
  assert.equal(res.status, 400, await res.text());
  assert.equal(await page.evaluate(() => sessionStorage.getItem('scribe.console.tokens')), null);
});

test('a forged callback (unknown state) is refused with a way to sign in again, and redeems nothing', async () => {
  // A public page first (/app itself would be on its way to the sign-in page).
  const page = await c.newPage({ signIn: false, path: '/app/support' });
  await page.goto(`${c.server.url}/app/callback?code=forged&state=forged&iss=${encodeURIComponent(c.server.url)}`);
  await page.getByRole('heading', { name: 'Sign-in did not complete' }).waitFor();
  await page.getByRole('button', { name: 'Sign in again' }).waitFor();
  assert.equal(await page.evaluate(() => sessionStorage.getItem('scribe.console.tokens')), null);
});

test('every link of GET /me opens a real console page', async () => {
  const me = await (await fetch(`${c.server.url}/api/v1/me`, { headers: { authorization: `Bearer ${c.user.key}` } })).json();
  const page = await c.newPage();
  for (const [name, href] of Object.entries(me.links)) {
    assert.ok(href.startsWith(`${c.server.url}/app`), `${name}: ${href}`);
    const res = await page.goto(href);
    assert.equal(res.status(), 200, `${name}: ${href}`);
    // The console's own heading comes first; the API docs page may already
    // show Swagger UI's title, a second h1, by then.
    await page.getByRole('heading', { level: 1 }).first().waitFor();
    assert.notEqual(await page.getByRole('heading', { level: 1 }).first().textContent(), 'Page not found', href);
  }
  const missing = await page.goto(`${c.server.url}/app/no-such-page`);
  assert.equal(missing.status(), 404);
});

test('keyboard: the first Tab reaches "Skip to content", which moves focus to the page; 360 px wide has no sideways scroll', async () => {
  const page = await c.newPage({ viewport: { width: 360, height: 740 } });
  // A fresh load (after the sign-in's own navigation, focus is on the page).
  await page.reload();
  await page.getByRole('heading', { level: 1 }).waitFor();
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.textContent.trim()), 'Skip to content');
  await page.keyboard.press('Enter');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'main');
  await page.getByRole('heading', { level: 1 }).waitFor();
  const overflow = await page.evaluate(() => document.scrollingElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the library is ${overflow} px wider than 360 px`);
  await c.shot(page, 'library-360');
  // The 404 test above logs its own purposeful 404.
  assert.deepEqual(c.problems().filter((p) => !p.includes('/app/no-such-page')), []);
});
