// The web console's Account pages (issue 36) in Debian's chromium against the
// real server: an API key created in the page (plaintext shown once, working
// with curl, its usage listed), revoked after confirmation (curl then 401); a
// key's webhook registered, a test delivery sent and received (signature
// checked by the receiver) and listed as delivered; an OAuth app connected
// through the real authorization flow, then disconnected in the page (its
// tokens refused); billing from /me; axe-core and screenshots of every tab
// at 1280x800 and 360x740; no console error or CSP violation.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startConsole } from './console_browser.mjs';
import { curl, newKey } from './harness.mjs';
import { approve, pkce, postForm } from './oauth_helpers.mjs';
import { selfSignedCertificate, startReceiver, verifySignature } from './webhook_receiver.mjs';

let c, receiver;
before(async () => {
  const tls = selfSignedCertificate();
  receiver = await startReceiver({ tls });
  c = await startConsole({
    extraEnv: {
      SCRIBE_ALLOW_PRIVATE_URLS: '1',
      SCRIBE_OUTBOUND_CA_FILE: tls.certPath,
      SCRIBE_WEBHOOK_POLL_MS: '100',
    },
  });
});
after(async () => {
  await c?.close();
  await receiver?.close();
});

const me = (key) => curl(`${c.server.url}/api/v1/me`, { key });
// What the console's pages logged: the sign-in page before them is the
// authorization server's, whose favicon.ico 404 Chromium logs (not the
// console's; reported to the lead).
const problems = () => c.problems().filter((p) => p.startsWith(`${c.server.url}/app`));
const SIZES = [
  ['', { width: 1280, height: 800 }],
  ['-360', { width: 360, height: 740 }],
];

// axe-core and a screenshot of `path` at both sizes, on one signed-in page
// (each sign-in is a password form post, and those are rate-limited).
async function checkTab(page, path, name, ready) {
  for (const [suffix, viewport] of SIZES) {
    await page.setViewportSize(viewport);
    await page.goto(`${c.server.url}${path}`);
    await ready(page);
    await c.axe(page, `${name}${suffix}`);
    await c.shot(page, `${name}${suffix}`);
    if (suffix) {
      const overflow = await page.evaluate(() => document.scrollingElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `${name} is ${overflow} px wider than 360 px`);
    }
  }
}

test('API keys: created with permission, cap and expiry, the plaintext shown once and working; usage lists it; revoked after confirmation', async () => {
  const page = await c.newPage({ path: '/app/account/keys' });
  await page.getByRole('heading', { name: 'API keys' }).waitFor();
  await page.getByLabel('Name', { exact: true }).fill('nightly batch');
  await page.getByLabel('Permission').selectOption('full');
  await page.getByLabel('Monthly cap in USD (optional)').fill('5');
  const until = new Date(Date.now() + 30 * 86400_000).toISOString().slice(0, 10);
  await page.getByLabel('Expires after (optional)').fill(until);
  await page.getByRole('button', { name: 'Create key' }).click();

  const field = page.getByLabel('New API key “nightly batch”');
  const plaintext = await field.inputValue();
  assert.ok(plaintext.length > 20, plaintext);
  await page.getByText('This key is shown only once').waitFor();
  await page.getByRole('button', { name: 'Copy' }).click();
  await page.getByText(/Copied to the clipboard|Selected: press/).waitFor();

  const res = await me(plaintext);
  assert.equal(res.status, 200, res.body);
  assert.equal(res.json.api_key.name, 'nightly batch');
  assert.equal(res.json.api_key.permission, 'full');
  assert.equal(res.json.api_key.monthly_cap_usd, 5);
  assert.equal(res.json.api_key.expires_at.slice(0, 10), until);
  const card = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: /nightly batch/ }) });
  await card.getByText('$5.00').waitFor();

  // Used once: a transcription created with it (a link; no worker runs here).
  const created = await curl(`${c.server.url}/api/v1/transcriptions`, {
    method: 'POST',
    key: plaintext,
    body: { source: 'external_url', url: 'http://127.0.0.1:9/talk.mp3', duration_seconds: 60 },
  });
  assert.ok(created.status === 201 || created.status === 202, created.body);

  // Shown once: a reload has only the prefix.
  await page.reload();
  await page.getByRole('heading', { name: /nightly batch/ }).waitFor();
  assert.equal(await page.getByLabel('New API key “nightly batch”').count(), 0);
  assert.equal(await page.getByText(plaintext).count(), 0);

  await page.goto(`${c.server.url}/app/account/usage`);
  const row = page.getByRole('row', { name: /nightly batch/ }).first();
  await row.waitFor();
  assert.match(await row.textContent(), /1 \(0 completed\)/);

  await page.goto(`${c.server.url}/app/account/keys`);
  await page.getByRole('button', { name: 'Revoke nightly batch' }).click();
  const dialog = page.getByRole('dialog', { name: 'Revoke nightly batch' });
  await dialog.getByText('cannot be undone').waitFor();
  await dialog.getByRole('button', { name: 'Revoke key' }).click();
  await page.getByRole('status').filter({ hasText: 'Key “nightly batch” revoked.' }).waitFor();
  await page.getByRole('heading', { name: /nightly batch revoked/ }).waitFor();
  const after = await me(plaintext);
  assert.equal(after.status, 401, after.body);
  assert.deepEqual(problems(), []);
});

test("a key's webhook: registered with its secret shown once, a test delivery received signed and listed as delivered", async () => {
  newKey(c.user.accountId, '--name', 'hooks');
  const page = await c.newPage({ path: '/app/account/keys' });
  await page.getByRole('button', { name: 'Webhook of hooks' }).click();
  const section = page.getByRole('region', { name: 'Webhook of hooks' });
  await section.getByLabel('Webhook URL (https)').fill(receiver.url('/ok'));
  await section.getByLabel('clip.failed').uncheck();
  await section.getByRole('button', { name: 'Register webhook' }).click();
  const secret = await section.getByLabel('Signing secret of the webhook of hooks').inputValue();
  assert.match(secret, /^whsec_[0-9a-f]{64}$/);
  await section.getByText('transcription.completed, transcription.failed, clip.completed').waitFor();

  await section.getByRole('button', { name: 'Send test delivery' }).click();
  const [got] = await receiver.waitFor((r) => r.json?.event === 'webhook.test');
  assert.equal(verifySignature(secret, got.headers['x-service-signature'], got.raw), null);

  // The list is read again after a test; Refresh reads it on demand.
  const delivered = section.getByRole('row').filter({ hasText: 'webhook.test' }).filter({ hasText: 'delivered' });
  for (let i = 0; i < 30 && !(await delivered.count()); i++) {
    await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/webhook/deliveries')),
      section.getByRole('button', { name: 'Refresh deliveries' }).click(),
    ]);
  }
  await delivered.waitFor();
  await delivered.getByRole('cell', { name: '200', exact: true }).waitFor(); // the receiver's answer
  await c.axe(page, 'account-keys-webhook');
  await c.shot(page, 'account-keys-webhook');
  assert.deepEqual(problems(), []);
});

test('connected apps: an app authorized through OAuth is listed; disconnecting it in the page makes its tokens fail', async () => {
  const redirectUri = 'http://127.0.0.1:9/callback';
  const reg = await fetch(`${c.server.url}/oauth/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ client_name: 'Notes Helper', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], application_type: 'native' }),
  });
  const client = await reg.json();
  assert.equal(reg.status, 201, JSON.stringify(client));
  const { verifier, challenge } = pkce();
  const url = new URL(`${c.server.url}/oauth/authorize`);
  for (const [k, v] of Object.entries({ response_type: 'code', client_id: client.client_id, redirect_uri: redirectUri,
    code_challenge: challenge, code_challenge_method: 'S256', state: 'st', resource: c.server.url }))
    url.searchParams.set(k, v);
  const { code } = await approve(url.toString(), { email: c.user.email, password: c.user.password });
  const tok = await postForm(`${c.server.url}/oauth/token`, { grant_type: 'authorization_code', code, redirect_uri: redirectUri,
    client_id: client.client_id, code_verifier: verifier, resource: c.server.url });
  assert.equal(tok.status, 200, tok.text);
  assert.equal((await me(tok.json.access_token)).status, 200);

  const page = await c.newPage({ path: '/app/account/apps' });
  await page.getByRole('heading', { name: 'Notes Helper' }).waitFor();
  await c.axe(page, 'account-apps');
  await page.getByRole('button', { name: 'Disconnect Notes Helper' }).click();
  await page.getByRole('dialog', { name: 'Disconnect Notes Helper' }).getByRole('button', { name: 'Disconnect' }).click();
  await page.getByRole('status').filter({ hasText: 'Notes Helper disconnected' }).waitFor();
  await page.getByText('No apps are connected.').waitFor();
  assert.equal((await me(tok.json.access_token)).status, 401);
  const refreshed = await postForm(`${c.server.url}/oauth/token`, { grant_type: 'refresh_token',
    refresh_token: tok.json.refresh_token, client_id: client.client_id });
  assert.equal(refreshed.status, 400, refreshed.text);
  assert.deepEqual(problems(), []);
});

test('overview, keys, apps, usage and billing pass axe-core and are readable at 1280 and 360 px; billing shows the wallet', async () => {
  const page = await c.newPage({ path: '/app/account' });
  await checkTab(page, '/app/account', 'account-overview', (p) => p.getByText(c.user.email).waitFor());
  await checkTab(page, '/app/account/keys', 'account-keys', (p) => p.getByRole('button', { name: 'Create key' }).waitFor());
  await checkTab(page, '/app/account/apps', 'account-apps', (p) => p.getByText('No apps are connected.').waitFor());
  await checkTab(page, '/app/account/usage', 'account-usage', (p) => p.getByRole('heading', { name: 'By key' }).waitFor());
  await checkTab(page, '/app/account/billing', 'account-billing', async (p) => {
    await p.getByRole('heading', { name: 'Billing' }).waitFor();
    await p.getByText('Wallet balance').waitFor();
  });
  await page.setViewportSize(SIZES[0][1]);
  await page.getByText('Wallet balance').waitFor();
  // The first test's transcription (when it ran) waits in the queue with its charge held.
  const m = (await me(c.user.key)).json;
  const usd = (n) => `$${n.toFixed(2)}`;
  const facts = await page.locator('dl.facts').first().textContent();
  assert.ok(facts.includes(`Wallet balance${usd(m.wallet_balance_usd)}`), facts);
  assert.ok(facts.includes(`Held${usd(m.wallet_held_usd)}`), facts);
  assert.ok(facts.includes(`Available${usd(m.wallet_available_usd)}`), facts);
  assert.match(facts, /Planfree/);
  assert.equal(await page.getByRole('link', { name: 'Billing' }).getAttribute('aria-current'), 'page');
  assert.deepEqual(problems(), []);
});
