// The web console's Record, API docs and Support pages (issue 36) in Debian's
// chromium against the real server. Record: chromium's fake microphone plays
// a flite recording and a pause (--use-file-for-fake-audio-capture loops it), the page's
// AudioWorklet makes 16 kHz PCM for the realtime API, partials and finals
// appear, Stop ends the session, and the transcription opens in the reader;
// without the realtime grant the API's refusal and the grant command show.
// Docs renders the OpenAPI document's operations; Support shows the
// deployment's SCRIBE_SUPPORT_TEXT. axe-core and screenshots at 1280x800 and
// 360x740; no console error or CSP violation.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startConsole } from './console_browser.mjs';
import { admin, curl } from './harness.mjs';
import { dialogue } from './media.mjs';

const SUPPORT = 'Help for this scribe: write to help@scribe.example or see https://status.scribe.example for outages.';
const TEXT = 'Good morning. The library opens at nine and closes at five.';
const WORDS = /\b(good|morning|library|opens|nine|closes|five)\b/i;
let c;
before(async () => {
  // The sentence and 1.5 s of silence: each loop of the fake capture ends a turn.
  const wav = dialogue([{ voice: 'slt', text: TEXT }], 'console-record', 1.5);
  c = await startConsole({
    workers: true,
    extraEnv: { SCRIBE_SUPPORT_TEXT: SUPPORT },
    launchArgs: ['--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream', `--use-file-for-fake-audio-capture=${wav}`],
  });
});
after(async () => {
  await c?.close();
});

// What the console's pages logged: the sign-in page before them is the
// authorization server's, whose favicon.ico 404 Chromium logs (not the
// console's; reported to the lead).
const problems = () => c.problems().filter((p) => p.startsWith(`${c.server.url}/app`));
const SIZES = [
  ['', { width: 1280, height: 800 }],
  ['-360', { width: 360, height: 740 }],
];

async function noSidewaysScroll(page, name) {
  const overflow = await page.evaluate(() => document.scrollingElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `${name} is ${overflow} px wider than the window`);
}

test('Record without the realtime grant: the API refusal and the command that grants it', async () => {
  const page = await c.newPage({ path: '/app/record' });
  await page.getByRole('button', { name: 'Start recording' }).click();
  const alert = page.getByRole('alert');
  await alert.getByText('unsupported_pipeline').waitFor();
  await alert.getByText('not enabled').waitFor();
  await page.getByText(`scribe admin realtime grant --account ${c.user.accountId}`).waitFor();
  await page.getByRole('button', { name: 'Start recording' }).waitFor();
  await c.axe(page, 'record-not-granted');
  // The refusal itself is the only thing the browser logged (Chromium logs
  // every 4xx answer to fetch as a console error).
  assert.deepEqual(
    problems().map((p) => p.replace(/^http:\/\/[^/]+/, '')),
    ['/app/record: Failed to load resource: the server responded with a status of 400 (Bad Request)'],
  );
});

test('Record streams the fake microphone: partials, a final with the spoken words, stop, and the transcription opens', async () => {
  const before = problems().length;
  admin('realtime', 'grant', '--account', c.user.accountId);
  const page = await c.newPage({ path: '/app/record' });
  await page.getByRole('button', { name: 'Start recording' }).click();
  await page.getByRole('status').filter({ hasText: 'Listening' }).waitFor();
  await page.getByRole('meter', { name: 'Microphone level' }).waitFor();
  // A partial: the turn in progress, shown before its final.
  await page.waitForFunction(() => document.querySelector('.record-partial')?.textContent.trim().length > 0, null, {
    timeout: 60_000,
  });
  const log = page.getByRole('log', { name: 'Transcript' });
  const final = log.getByRole('listitem').filter({ hasText: WORDS }).first();
  await final.waitFor({ timeout: 60_000 });
  assert.match(await final.textContent(), WORDS);
  await c.axe(page, 'record-live');
  await c.shot(page, 'record');

  await page.getByRole('button', { name: 'Stop recording' }).click();
  const open = page.getByRole('link', { name: 'Open the transcription' });
  await open.waitFor({ timeout: 30_000 });
  await page.getByText(/Recorded \d+:\d\d; charged \$/).waitFor();
  const href = await open.getAttribute('href');
  const id = /^\/app\/transcriptions\/([^/]+)$/.exec(href)?.[1];
  assert.ok(id, href);
  const t = await curl(`${c.server.url}/api/v1/transcriptions/${id}`, { key: c.user.key });
  assert.equal(t.status, 200, t.body);
  assert.equal(t.json.source, 'realtime');
  await open.click();
  await page.waitForURL((u) => u.pathname === `/app/transcriptions/${id}`);
  await page.getByRole('heading', { level: 1 }).waitFor();
  assert.notEqual(await page.getByRole('heading', { level: 1 }).first().textContent(), 'Page not found');

  const small = page;
  await small.setViewportSize(SIZES[1][1]);
  await small.goto(`${c.server.url}/app/record`);
  await small.getByRole('button', { name: 'Start recording' }).waitFor();
  await c.axe(small, 'record-360');
  await c.shot(small, 'record-360');
  await noSidewaysScroll(small, 'record at 360 px');
  assert.deepEqual(problems().slice(before), []);
});

test('Record resumes a stream that drops: a fresh ticket, the finals after the last one seen, the same session to the end', async () => {
  const before = problems().length;
  admin('realtime', 'grant', '--account', c.user.accountId); // again when run alone
  const page = await c.newPage({ path: '/app/record' });
  // Every stream goes through the test (Playwright's WebSocket routing), so
  // the first one can be cut on both sides as a network drop would.
  const streams = [];
  await page.routeWebSocket(/\/api\/v1\/realtime\/ws/, (ws) => {
    streams.push({ ws, server: ws.connectToServer() });
  });
  await page.getByRole('button', { name: 'Start recording' }).click();
  const finals = page.getByRole('log', { name: 'Transcript' }).getByRole('listitem');
  await finals.filter({ hasText: WORDS }).first().waitFor({ timeout: 60_000 });
  const seen = await finals.count();
  assert.equal(streams.length, 1);
  streams[0].server.close({ code: 1001, reason: 'test drop' });
  streams[0].ws.close({ code: 1001, reason: 'test drop' });
  await page.getByRole('status').filter({ hasText: 'Reconnected: listening again.' }).waitFor({ timeout: 30_000 });
  assert.equal(streams.length, 2);
  const resumed = new URL(streams[1].ws.url());
  assert.equal(resumed.searchParams.get('last_turn_order'), String(seen - 1));
  assert.notEqual(resumed.searchParams.get('ticket'), new URL(streams[0].ws.url()).searchParams.get('ticket'));
  // New finals keep coming on the resumed stream, none twice.
  await page.waitForFunction((n) => document.querySelectorAll('.record-finals li').length > n, seen, { timeout: 60_000 });
  const texts = await finals.allTextContents();
  assert.ok(texts.length > seen, texts.join(' | '));
  await page.getByRole('button', { name: 'Stop recording' }).click();
  const open = page.getByRole('link', { name: 'Open the transcription' });
  await open.waitFor({ timeout: 30_000 });
  const id = /\/app\/transcriptions\/([^/]+)$/.exec(await open.getAttribute('href'))[1];
  const sessions = await curl(`${c.server.url}/api/v1/transcriptions/${id}`, { key: c.user.key });
  assert.equal(sessions.status, 200, sessions.body);
  // (A loaded machine may close a stream as overloaded, 1013, which is resumed too.)
  assert.ok(streams.length >= 2, `${streams.length} connections`);
  assert.deepEqual(problems().slice(before), []);
});

test('API docs render the OpenAPI document: operations listed, stylesheet linked, no CSP violation', async () => {
  const before = problems().length;
  const page = await c.newPage({ path: '/app/docs' });
  for (const [suffix, viewport] of SIZES) {
    await page.setViewportSize(viewport);
    await page.goto(`${c.server.url}/app/docs`);
    await page.getByRole('heading', { name: 'API docs', level: 1 }).waitFor();
    await page.locator('.opblock').first().waitFor({ timeout: 30_000 });
    const operations = await page.locator('.opblock').count();
    assert.ok(operations > 40, `${operations} operations`);
    await page.locator('.opblock-summary-path', { hasText: '/api/v1/me' }).first().waitFor();
    // swagger-ui's own stylesheet applies (a hashed file, not inline).
    const sheet = await page.evaluate(() => [...document.styleSheets].some((s) => /swagger-ui-.*\.css$/.test(s.href || '')));
    assert.ok(sheet, 'swagger-ui.css is linked');
    await c.axe(page, `docs${suffix}`);
    await c.shot(page, `docs${suffix}`);
  }
  assert.deepEqual(problems().slice(before), []);
});

test('Support shows the deployment support text, signed in or not, with links to the docs and the error reference', async () => {
  const before = problems().length;
  // Support is public: sign in on another page, then go there.
  const page = await c.newPage({ path: '/app/account' });
  for (const [suffix, viewport] of SIZES) {
    await page.setViewportSize(viewport);
    await page.goto(`${c.server.url}/app/support`);
    await page.getByRole('heading', { name: 'Help and support', level: 1 }).waitFor();
    await page.getByText('Help for this scribe').waitFor();
    assert.equal(await page.getByRole('link', { name: 'help@scribe.example' }).getAttribute('href'), 'mailto:help@scribe.example');
    assert.equal(await page.getByRole('link', { name: 'API docs' }).last().getAttribute('href'), '/app/docs');
    assert.equal(await page.getByRole('link', { name: 'Error reference' }).getAttribute('href'), '/docs/errors');
    await c.axe(page, `support${suffix}`);
    await c.shot(page, `support${suffix}`);
    await noSidewaysScroll(page, `support${suffix}`);
  }
  const out = await c.newPage({ path: '/app/support', signIn: false });
  await out.getByText('Help for this scribe').waitFor();
  const errors = await fetch(`${c.server.url}/docs/errors`);
  assert.equal(errors.status, 200);
  assert.deepEqual(problems().slice(before), []);
});
