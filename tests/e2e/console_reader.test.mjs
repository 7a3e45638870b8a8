// The web console's transcript reader (issue 36) in Debian's chromium against
// the real server and its workers: a two-speaker recording (flite voices) is
// uploaded and transcribed through the API with the user's key, then the
// reader is driven as a person would: the deep link's ?t= positions the
// player, playback moves the highlighted word, a word click and a keyboard
// shortcut seek (and the shortcut stays quiet while typing), a cue is edited
// and a speaker renamed and saved as a revision, the SRT downloaded with
// source=materialized and speaker names carries both, the revision is undone,
// search inside and ask seek the player to a hit and a citation, a clip is
// rendered from selected words and plays, and the transcription is deleted
// after a confirmation. axe-core and screenshots at 1280x800 and 360x740.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { startConsole } from './console_browser.mjs';
import { curl, finished } from './harness.mjs';
import { dialogue, seconds, silence, videoWithAudio } from './media.mjs';

const EDITED = 'Welcome aboard the blue ferry to the island';
const NAME = 'Captain Alice';

let c;
const excused = new Set(); // indexes in c.problems() of what a test caused on purpose
let key;
let id;
let words; // recognized words (non-empty)
let segments;
let wav; // the recording
const api = (path, opts = {}) => curl(`${c.server.url}/api/v1${path}`, { key, ...opts });

// The player's position in seconds, once it has its metadata.
const position = (page) =>
  page.evaluate(() => {
    const el = document.querySelector('audio[aria-label="Recording"], video[aria-label="Recording"]');
    return el && el.readyState >= 1 ? el.currentTime : null;
  });
async function positionNear(page, t, eps = 0.35) {
  await page.waitForFunction(
    ({ t, eps }) => {
      const el = document.querySelector('audio[aria-label="Recording"], video[aria-label="Recording"]');
      return el && el.readyState >= 1 && Math.abs(el.currentTime - t) <= eps;
    },
    { t, eps },
    { timeout: 20_000 },
  ).catch(async (e) => {
    throw new Error(`player at ${await position(page)} s, expected ${t} s: ${e.message}`);
  });
}
const readerPath = (q = '') => `/app/transcriptions/${id}${q}`;

before(async () => {
  c = await startConsole({ workers: true, launchArgs: ['--autoplay-policy=no-user-gesture-required'] });
  key = c.user.key;
  wav = dialogue(
    [
      { voice: 'slt', text: 'The harbour opens at six and the ferry leaves at seven every morning.' },
      { voice: 'rms', text: 'Tickets are sold on board, and children under five travel for free.' },
      { voice: 'slt', text: 'On windy days the captain waits in the harbour until the sea is calm.' },
    ],
    'console-reader',
  );
  const ticket = await api('/uploads', {
    method: 'POST',
    body: { filename: 'ferry.wav', content_type: 'audio/wav', file_size: statSync(wav).size },
  });
  assert.equal(ticket.status, 200, ticket.body);
  const put = await curl(ticket.json.upload_url, {
    method: 'PUT',
    headers: { 'Content-Type': 'audio/wav' },
    rawArgs: ['--data-binary', `@${wav}`],
  });
  assert.equal(put.status, 200, put.body);
  const created = await api('/transcriptions', {
    method: 'POST',
    body: { source: 'upload', upload_id: ticket.json.upload_id, original_filename: 'ferry.wav', duration_seconds: seconds(wav) },
  });
  assert.equal(created.status, 202, created.body);
  id = created.json.id;
  const done = await finished(c.server, key, id, { limitSeconds: 300, query: '&include=segments' });
  assert.equal(done.status, 'completed', JSON.stringify(done.error));
  segments = done.segments;
  const w = await api(`/transcriptions/${id}/words?limit=5000`);
  assert.equal(w.json.available, true, w.body);
  words = w.json.words.filter((x) => x.text.trim() !== '');
  assert.ok(words.length >= 10, `only ${words.length} words`);
  assert.ok(new Set(segments.map((s) => s.speaker)).size >= 2, `one speaker: ${JSON.stringify(segments)}`);
});
after(async () => {
  await c?.close();
});

test('the deep link seeks to ?t=; playback moves the highlighted word; a word click and the shortcuts seek, not while typing', async () => {
  const page = await c.newPage({ path: readerPath('?t=3') });
  await page.getByRole('heading', { level: 1 }).waitFor();
  await positionNear(page, 3);
  const wordAt = (ms) => page.locator(`.transcript .word[data-ms="${ms}"]`);
  await wordAt(words[0].start_ms).waitFor();

  // Play with the shortcut (k): the highlighted word moves on.
  await page.locator('h1').click();
  const highlighted = () => page.evaluate(() => Number(document.querySelector('.transcript .word[aria-current="true"]')?.dataset.ms ?? -1));
  await page.keyboard.press('k');
  await page.waitForFunction(() => !document.querySelector('audio[aria-label="Recording"]').paused);
  const firstLit = await (async () => {
    await page.waitForFunction(() => document.querySelector('.transcript .word[aria-current="true"]'));
    return highlighted();
  })();
  await page.waitForFunction((ms) => Number(document.querySelector('.transcript .word[aria-current="true"]')?.dataset.ms) > ms, firstLit, {
    timeout: 15_000,
  });
  await page.keyboard.press('k');
  await page.waitForFunction(() => document.querySelector('audio[aria-label="Recording"]').paused);

  // A word's button seeks there.
  const target = words.find((w) => w.start_ms >= 6000) || words.at(-1);
  await wordAt(target.start_ms).click();
  await positionNear(page, target.start_ms / 1000, 0.1);
  assert.equal(await highlighted(), target.start_ms);
  // j goes back 5 s; typing j in a field does not.
  await page.locator('h1').click();
  await page.keyboard.press('j');
  await positionNear(page, Math.max(0, target.start_ms / 1000 - 5), 0.1);
  const back = await position(page);
  await page.getByLabel('Words to find').fill('');
  await page.getByLabel('Words to find').press('j');
  await page.getByLabel('Words to find').press('l');
  assert.equal(await position(page), back);
  await page.getByLabel('Words to find').fill('');
  // Keyboard only: a word reached with Tab and Enter seeks.
  await wordAt(words[1].start_ms).focus();
  await page.keyboard.press('Enter');
  await positionNear(page, words[1].start_ms / 1000, 0.1);

  await c.axe(page, 'reader');
  await c.shot(page, 'reader');
  await page.close();
});

test('the player fetches a new media link a minute before the old one expires and keeps its place', async () => {
  const page = await c.newPage({ path: readerPath('?t=4') });
  // The page's clock is Playwright's from here (the tokens survive the reload).
  await page.clock.install();
  const links = [];
  page.on('response', (r) => {
    // Links of this load only (a body of the page before the reload is gone);
    // a 409 while the machine is busy is waited out and asked again.
    if (r.url().endsWith(`/transcriptions/${id}/media`) && r.status() === 200) links.push(r.json().catch(() => null));
  });
  await page.reload();
  await positionNear(page, 4);
  const loaded = (await Promise.all(links)).filter(Boolean);
  assert.ok(loaded.length >= 1, 'the player asked for a link');
  const first = loaded.at(-1);
  const before = links.length;
  const lifetime = Date.parse(first.expires_at) - Date.now();
  assert.ok(lifetime > 120_000, `the link lives ${lifetime} ms`);
  const src = await page.locator('audio[aria-label="Recording"]').getAttribute('src');
  const [renewed] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith(`/transcriptions/${id}/media`), { timeout: 10_000 }),
    page.clock.fastForward(lifetime - 50_000),
  ]);
  const next = await renewed.json();
  assert.ok(Date.parse(next.expires_at) >= Date.parse(first.expires_at));
  // The new link plays from where the old one was.
  await page.waitForFunction(
    (old) => {
      const el = document.querySelector('audio[aria-label="Recording"]');
      return el && el.getAttribute('src') !== old && el.readyState >= 1;
    },
    next.url === src ? null : src,
  );
  await positionNear(page, 4);
  assert.equal(links.length, before + 1, 'one renewal, not a stream of them');
  await page.close();
});

test('a cue edited and a speaker renamed are saved as a revision; the SRT (materialized, speaker names) carries both; undo', async () => {
  const page = await c.newPage({ path: readerPath() });
  await page.getByRole('button', { name: 'Edit transcript' }).click();
  await page.getByRole('button', { name: /^Edit segment at / }).first().click();
  const dialog = page.getByRole('dialog', { name: 'Edit segment' });
  await dialog.getByLabel('Text').fill(EDITED);
  await c.axe(page, 'reader, editing a segment');
  await c.shot(page, 'reader-edit-segment');
  await dialog.getByRole('button', { name: 'Apply' }).click();
  const label = segments[0].speaker;
  const other = segments.find((s) => s.speaker && s.speaker !== label).speaker;
  await page.getByLabel(`Name for ${label}`).fill(NAME);

  // Split the second segment after its second word (the caret placed as a
  // person would), give the new part to the other speaker, then merge it
  // with the segment after it: as many cues as before, the middle ones changed.
  const editButtons = page.getByRole('button', { name: /^Edit segment at / });
  await editButtons.nth(1).click();
  const text = dialog.getByLabel('Text');
  const secondText = await text.inputValue();
  const head = secondText.split(' ').slice(0, 2).join(' ');
  await text.evaluate((el, at) => {
    el.focus();
    el.setSelectionRange(at, at);
  }, head.length);
  await dialog.getByRole('button', { name: 'Split at the cursor' }).click();
  assert.equal(await editButtons.count(), segments.length + 1);
  await editButtons.nth(2).click();
  const splitSpeaker = segments[1].speaker === label ? other : label;
  await dialog.getByLabel('Speaker').selectOption(splitSpeaker);
  await dialog.getByRole('button', { name: 'Apply' }).click();
  await editButtons.nth(2).click();
  await dialog.getByRole('button', { name: 'Merge with the next segment' }).click();
  assert.equal(await editButtons.count(), segments.length);
  await c.shot(page, 'reader-editing');
  await page.getByRole('button', { name: 'Save as revision' }).click();
  await page.getByText('Saved as revision 1.').waitFor();
  await page.locator('.seg .speaker', { hasText: NAME }).first().waitFor();

  const latest = await api(`/transcriptions/${id}/revisions/latest`);
  assert.equal(latest.status, 200, latest.body);
  assert.equal(latest.json.revision, 1);
  assert.equal(latest.json.cues[0].text, EDITED);
  assert.equal(latest.json.speaker_names[label], NAME);
  assert.equal(latest.json.cues.length, segments.length);
  const [, split, merged] = latest.json.cues;
  assert.equal(split.text, head);
  assert.equal(split.start_ms, segments[1].start_ms);
  assert.ok(split.end_ms > split.start_ms && split.end_ms < segments[1].end_ms, JSON.stringify(split));
  assert.equal(merged.start_ms, split.end_ms);
  assert.equal(merged.speaker, splitSpeaker);
  assert.equal(merged.end_ms, segments[2].end_ms);
  assert.ok(merged.text.endsWith(segments[2].text.trim()), JSON.stringify(merged));

  // The SRT through the page's download (fetched with the Bearer token).
  await page.locator('summary', { hasText: 'Downloads' }).click();
  await page.getByLabel('Subtitle format').selectOption('srt');
  await page.getByLabel('Cues').selectOption('materialized');
  await page.getByRole('group', { name: 'Subtitles' }).getByLabel('Speaker names instead of labels').check();
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download subtitles' }).click()]);
  assert.match(download.suggestedFilename(), /\.srt$/);
  const srt = readFileSync(await download.path(), 'utf8');
  assert.ok(srt.includes(EDITED.split(' ').slice(0, 3).join(' ')), srt);
  assert.ok(srt.includes(NAME), srt);
  assert.match(srt, /^1\r?\n\d\d:\d\d:\d\d,\d\d\d --> /);

  // Undo: the recognized transcript is current again.
  await page.getByRole('button', { name: 'Undo last revision' }).click();
  await page.getByRole('dialog', { name: 'Undo last revision' }).getByRole('button', { name: 'Undo revision' }).click();
  await page.getByText('Revision 1 undone.').waitFor();
  await page.getByText('Showing the recognized transcript.').waitFor();
  assert.equal(await page.locator('.seg-text', { hasText: EDITED }).count(), 0);
  const list = await api(`/transcriptions/${id}/revisions`);
  assert.equal(list.status, 200, list.body);
  assert.equal(list.json.latest, null);

  // A revision saved elsewhere while editing: the save is refused (409) and
  // says so; the person may load the other one.
  await page.getByRole('button', { name: 'Edit transcript' }).click();
  await editButtons.first().click();
  await dialog.getByLabel('Text').fill('An edit that loses the race');
  await dialog.getByRole('button', { name: 'Apply' }).click();
  const elsewhere = await api(`/transcriptions/${id}/revisions`, {
    method: 'POST',
    body: { base_revision: null, cues: segments.map(({ start_ms, end_ms, text, speaker }) => ({ start_ms, end_ms, text, speaker })), speaker_names: {} },
  });
  assert.equal(elsewhere.status, 201, elsewhere.body);
  const seen = c.problems().length;
  await page.getByRole('button', { name: 'Save as revision' }).click();
  await page.getByRole('alert').filter({ hasText: /Revision 2 was saved \(elsewhere\)/ }).waitFor();
  // The browser logs the refused POST (409) as an error: that one is expected.
  const caused = c.problems().slice(seen);
  assert.equal(caused.length, 1, caused.join('\n'));
  assert.match(caused[0], /status of 409 \(Conflict\)/);
  excused.add(seen);
  await page.getByRole('button', { name: 'Discard them and load revision 2' }).click();
  await page.getByText('Showing revision 2.').waitFor();
  // Its cues are the recognized segments: their words keep the recognizer's timing.
  await page.locator(`.transcript .word[data-ms="${words[1].start_ms}"]`).waitFor();
  assert.equal(await page.locator('.seg-text', { hasText: 'An edit that loses the race' }).count(), 0);
  assert.equal((await api(`/transcriptions/${id}/revisions/latest`, { method: 'DELETE' })).status, 200);
  await page.close();
});

test('search inside and ask: a hit and a citation seek the player', async () => {
  const page = await c.newPage({ path: readerPath() });
  const word = words.find((w) => w.text.length >= 5 && w.start_ms > 2000) || words[3];
  await page.getByLabel('Words to find').fill(word.text);
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  const hits = page.getByRole('list', { name: 'Search hits' });
  await hits.getByRole('listitem').first().waitFor();
  const hitButton = hits.getByRole('button', { name: /^Play hit at / }).first();
  const res = await api(`/transcriptions/${id}/search?q=${encodeURIComponent(word.text)}`);
  assert.equal(res.status, 200, res.body);
  await hitButton.click();
  await positionNear(page, res.json.hits[0].start_ms / 1000, 0.1);

  // Ask with words the recognizer heard (the answer cites where they are).
  const content = words.map((w) => w.text.toLowerCase()).filter((t) => t.length >= 5);
  const question = `What is said about the ${content.slice(0, 2).join(' and the ')}?`;
  await page.getByLabel('Question').fill(question);
  const [answer] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith(`/transcriptions/${id}/ask`) && r.request().method() === 'POST', { timeout: 90_000 }),
    page.getByRole('button', { name: 'Ask', exact: true }).click(),
  ]);
  const body = await answer.json();
  assert.equal(answer.status(), 200, JSON.stringify(body));
  assert.equal(body.no_answer, false, `no answer to ${question}: ${JSON.stringify(body)}`);
  assert.ok(body.citations.length >= 1, JSON.stringify(body));
  const cite = body.citations.at(-1);
  await page.locator('h1').click(); // away from any word
  await page.getByRole('list', { name: 'Citations' }).getByRole('button', { name: `Play citation ${cite.marker} from`, exact: false }).click();
  await positionNear(page, cite.start_seconds, 0.1);
  await c.axe(page, 'reader, search and answer');
  await page.close();
});

test('a clip rendered from the selected words plays in the page', async () => {
  const page = await c.newPage({ path: readerPath() });
  await page.locator('summary', { hasText: 'Clips' }).click();
  // Select three seconds of words (as a drag would).
  const from = words[1];
  const to = words.filter((w) => w.end_ms <= from.start_ms + 3000).at(-1);
  await page.locator(`.transcript .word[data-ms="${to.start_ms}"]`).waitFor();
  await page.evaluate(
    ({ a, b }) => {
      const r = document.createRange();
      r.setStartBefore(document.querySelector(`.transcript .word[data-ms="${a}"]`));
      r.setEndAfter(document.querySelector(`.transcript .word[data-ms="${b}"]`));
      getSelection().removeAllRanges();
      getSelection().addRange(r);
    },
    { a: from.start_ms, b: to.start_ms },
  );
  await page.getByRole('button', { name: 'Use the selected words' }).click();
  assert.equal(Number(await page.getByLabel('Clip start (seconds)').inputValue()), Math.round(from.start_ms / 10) / 100);
  assert.equal(Number(await page.getByLabel('Clip end (seconds)').inputValue()), Math.round(to.end_ms / 10) / 100);
  await page.getByText(/ s, charge \$0\.05/).waitFor();
  await page.getByRole('button', { name: 'Render clip' }).click();
  await page.getByText(/^Clip \d+ is ready\.$/).waitFor({ timeout: 300_000 });
  // preload=none (a clip's media would hold the page's load event): play loads it.
  const clip = page.locator('.clips video').first();
  await clip.evaluate((v) => v.play());
  await page.waitForFunction(() => {
    const v = document.querySelector('.clips video');
    return v.duration > 1 && v.currentTime > 0.2;
  });
  await page.close();
});

test('the original video is added in the page: one of another length is refused in the API\'s words, the right one puts a video in the player', async () => {
  const right = videoWithAudio(wav, 'console-reader-video.mp4', { size: '320x180' });
  const longer = videoWithAudio(silence(seconds(wav) + 20, 'console-reader-longer'), 'console-reader-longer.mp4', { size: '320x180' });
  const page = await c.newPage({ path: readerPath() });
  await page.locator('audio[aria-label="Recording"]').waitFor({ state: 'attached' });
  await page.getByText('Original video').click();
  const seen = c.problems().length;
  await page.getByLabel('Video file').setInputFiles(longer);
  await page.getByRole('button', { name: 'Add video' }).click();
  await page.getByRole('alert').filter({ hasText: /invalid_request/ }).waitFor();
  // The browser logs the refused POST (400): that one is expected.
  const caused = c.problems().slice(seen);
  assert.equal(caused.length, 1, caused.join('\n'));
  assert.match(caused[0], /status of 400/);
  excused.add(seen);
  let media = await api(`/transcriptions/${id}/media`);
  assert.equal(media.json.kind, 'audio', media.body);

  await page.getByLabel('Video file').setInputFiles(right);
  await page.getByRole('button', { name: 'Add video' }).click();
  await page.getByText(/^Added console-reader-video\.mp4/).waitFor();
  // The player asks for the media again and gets the video.
  await page.locator('video[aria-label="Recording"]').waitFor({ state: 'attached', timeout: 60_000 });
  media = await api(`/transcriptions/${id}/media`);
  assert.equal(media.json.kind, 'video', media.body);
  await c.axe(page, 'reader with the original video');
  await page.close();
});

test('at 360x740 the reader passes axe-core; delete asks first, then the transcription is gone', async () => {
  const page = await c.newPage({ path: readerPath(), viewport: { width: 360, height: 740 } });
  await page.locator('.transcript .word').first().waitFor();
  await c.axe(page, 'reader at 360 px');
  await c.shot(page, 'reader-360');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow} px at 360 px`);

  await page.getByRole('button', { name: 'Delete transcription' }).click();
  const confirm = page.getByRole('dialog', { name: 'Delete transcription' });
  await confirm.getByRole('button', { name: 'Cancel' }).click();
  assert.equal((await api(`/transcriptions/${id}`)).status, 200);
  await page.getByRole('button', { name: 'Delete transcription' }).click();
  await confirm.getByRole('button', { name: 'Delete for good' }).click();
  await page.waitForURL((u) => u.pathname === '/app');
  assert.equal((await api(`/transcriptions/${id}`)).status, 404);
  await page.close();
  // The console's pages logged nothing unexpected (the server's sign-in
  // page, which is not the console's, logs its favicon.ico 404).
  assert.deepEqual(c.problems().filter((p, i) => !excused.has(i) && p.startsWith(`${c.server.url}/app`)), []);
});
