// Transcript revisions end to end: a two-voice flite recording is transcribed
// by the real pipeline, then corrected through POST .../revisions, and the
// correction is read back where the documentation says it flows: the
// materialized subtitles (and the `auto` precedence), the transcript (with
// speaker display names on request), library and per-transcription search,
// undo, deletion, and another account's view.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { startServer, newAccount, curl, envelope, finished, DB } from './harness.mjs';
import { dialogue, convert, startMediaServer, parseSrt } from './media.mjs';

const psql = (sql) => execFileSync('psql', [DB, '-At', '-c', sql], { encoding: 'utf8' }).trim();
const ENV = { SCRIBE_ALLOW_PRIVATE_URLS: '1', SCRIBE_WORKER_POLL_MS: '100', SCRIBE_RATE_LIMIT_PER_MINUTE: '100000' };

let media, server, a, b, id, segments;
const api = (path, opts = {}) => curl(`${server.url}/api/v1${path}`, { key: a.key, ...opts });
const revisions = (path = '', opts = {}) => api(`/transcriptions/${id}/revisions${path}`, opts);
const save = (body) => revisions('', { method: 'POST', body });
const hits = async (q, path = '/search') => {
  const res = await api(`${path}?${new URLSearchParams({ q })}`);
  assert.equal(res.status, 200, res.body);
  return res.json.hits;
};

// The recognized segments as revision cues (what an editor starts from).
const recognizedCues = () =>
  segments.map((s) => ({ start_ms: s.start_ms, end_ms: s.end_ms, text: s.text, speaker: s.speaker ?? null }));
// The edit of every test: the first cue's text replaced, the first cue's
// speaker made SPEAKER_00 and named Alice.
const EDITED = 'Zanzibar pelicans gather here.';
function edited(base, text = EDITED) {
  const cues = recognizedCues();
  cues[0] = { ...cues[0], text, speaker: 'SPEAKER_00' };
  return { base_revision: base, cues, speaker_names: { SPEAKER_00: 'Alice' } };
}
// A word of the first recognized segment found in no other segment (what the edit removes).
let oldWord;

before(async () => {
  media = await startMediaServer();
  const mp3 = convert(dialogue([
    { voice: 'slt', text: 'Good morning everyone. Welcome to the weekly meeting about the new library.' },
    { voice: 'rms', text: 'Thank you. I would like to talk about the budget for next year.' },
  ], 'revisions'), 'revisions.mp3', ['-metadata', 'title=Revised meeting']);
  server = await startServer({ workers: true, extraEnv: ENV });
  a = newAccount({ balance: 5 });
  b = newAccount({ balance: 5 });
  const res = await api('/transcriptions', { method: 'POST', body: { source: 'external_url', url: media.url(mp3) } });
  assert.equal(res.status, 202, res.body);
  id = res.json.id;
  const done = await finished(server, a.key, id, { query: '&include=segments' });
  assert.equal(done.status, 'completed', JSON.stringify(done.error));
  segments = done.segments;
  assert.ok(segments.length >= 2, JSON.stringify(segments));
  const others = segments.slice(1).map((s) => s.text.toLowerCase()).join(' ');
  oldWord = (segments[0].text.toLowerCase().match(/[a-z]{5,}/g) ?? [])
    .filter((w) => !others.includes(w)).sort((x, y) => y.length - x.length)[0];
  assert.ok(oldWord, `no distinctive word in ${segments[0].text}`);
});
after(async () => { await server?.stop(); await media?.close(); });

test('without a revision: none listed, latest 404, materialized 404, auto generates', async () => {
  const list = await revisions();
  assert.equal(list.status, 200, list.body);
  assert.deepEqual(list.json, { revisions: [], latest: null });
  envelope(assert, await revisions('/latest'), 404, 'not_found');
  envelope(assert, await revisions('/1'), 404, 'not_found');
  envelope(assert, await revisions('/latest', { method: 'DELETE' }), 404, 'not_found');
  const mat = await api(`/transcriptions/${id}/subtitles?source=materialized`);
  assert.match(envelope(assert, mat, 404, 'not_found').message, /edited cues/);
  const auto = await api(`/transcriptions/${id}/subtitles`);
  assert.equal(auto.status, 200, auto.body);
  assert.equal(auto.headers['x-service-cue-source'], 'generated');
});

test('bad bodies are a clear 400 (413 over 1 MiB) and change nothing', async () => {
  const cues = recognizedCues();
  const cases = [
    ['{"base_revision": null, "cues": [', 'body'],
    [[1, 2], 'body'],
    [{ cues }, 'base_revision'],
    [{ base_revision: 'one', cues }, 'base_revision'],
    [{ base_revision: null, cues: 'none' }, 'cues'],
    [{ base_revision: null, cues: [] }, 'cues'],
    [{ base_revision: null, cues: [{ ...cues[0], start_ms: String(cues[0].start_ms) }] }, 'cues[0].start_ms'],
    [{ base_revision: null, cues: [{ ...cues[0], end_ms: cues[0].start_ms }] }, 'cues[0].end_ms'],
    [{ base_revision: null, cues: [{ ...cues[0], end_ms: 10 * 3600 * 1000 }] }, 'cues[0].end_ms'],
    [{ base_revision: null, cues: [cues[0], { ...cues[1], start_ms: cues[0].end_ms - 1 }] }, 'cues[1].start_ms'],
    [{ base_revision: null, cues: [cues[1], cues[0]] }, 'cues[1].start_ms'],
    [{ base_revision: null, cues: [{ ...cues[0], text: '   ' }] }, 'cues[0].text'],
    [{ base_revision: null, cues: [{ ...cues[0], text: 'x'.repeat(1001) }] }, 'cues[0].text'],
    [{ base_revision: null, cues: [{ ...cues[0], speaker: 'Somebody' }] }, 'cues[0].speaker'],
    [{ base_revision: null, cues, speaker_names: { SPEAKER_00: 'n'.repeat(65) } }, 'speaker_names.SPEAKER_00'],
    [{ base_revision: null, cues: Array.from({ length: 12001 }, (_, i) => ({ start_ms: i, end_ms: i + 1, text: 'a' })) },
      'cues'],
  ];
  for (const [body, field] of cases) {
    const res = await save(body);
    const e = envelope(assert, res, 400, 'invalid_request');
    assert.equal(e.field, field, `${JSON.stringify(body).slice(0, 200)}: ${res.body}`);
  }
  const huge = await save({ base_revision: null, cues: [{ ...cues[0], text: 'y'.repeat(1100 * 1024) }] });
  envelope(assert, huge, 413, 'invalid_request');
  assert.deepEqual((await revisions()).json, { revisions: [], latest: null });
  assert.equal(psql(`select count(*) from events where stream_id = 'revisions-${id}'`), '0');
});

test('a revision is saved, served as materialized cues, and a stale base conflicts', async () => {
  const res = await save(edited(null));
  assert.equal(res.status, 201, res.body);
  assert.equal(res.json.revision, 1);
  assert.equal(res.json.base_revision, null);
  assert.equal(res.headers.location, `/api/v1/transcriptions/${id}/revisions/1`);
  assert.equal(res.json.cues[0].text, EDITED);
  assert.deepEqual(res.json.speaker_names, { SPEAKER_00: 'Alice' });
  assert.deepEqual((await revisions('/latest')).json, res.json);
  assert.deepEqual((await revisions('/1')).json, res.json);
  const list = await revisions();
  assert.equal(list.json.latest, 1);
  assert.equal(list.json.revisions[0].cue_count, segments.length);

  // Somebody else saved since the editor read the recognized transcript.
  const stale = await save(edited(null, 'Nothing of this is kept.'));
  const e = envelope(assert, stale, 409, 'invalid_request');
  assert.equal(e.reason, 'revision_conflict');
  assert.equal(e.latest_revision, 1);
  assert.equal(e.field, 'base_revision');
  assert.equal((await revisions()).json.latest, 1);

  const srt = await api(`/transcriptions/${id}/subtitles?format=srt&source=materialized`);
  assert.equal(srt.status, 200, srt.body);
  assert.equal(srt.headers['x-service-cue-source'], 'materialized');
  assert.equal(srt.headers['x-service-revision'], '1');
  assert.equal(Number(srt.headers['x-service-cue-count']), segments.length);
  const cues = parseSrt(srt.body);
  assert.equal(cues.length, segments.length);
  assert.equal(cues[0].text.replace(/\n/g, ' '), EDITED);
  // Edited cues keep their own times: only lines are broken.
  assert.equal(Math.round(cues[0].start * 1000), segments[0].start_ms, JSON.stringify(cues[0]));
  assert.equal(Math.round(cues[0].end * 1000), segments[0].end_ms, JSON.stringify(cues[0]));
  // The spec's precedence: auto with the default mode and preset serves them ...
  for (const q of ['', '?source=auto', '?mode=auto&preset=youtube']) {
    const r = await api(`/transcriptions/${id}/subtitles${q}`);
    assert.equal(r.headers['x-service-cue-source'], 'materialized', q);
    assert.ok(r.body.includes('Zanzibar'), q);
  }
  // ... anything explicit regenerates from the recognized transcript.
  for (const q of ['?source=generated', '?preset=tiktok-shorts', '?mode=sentence', '?source=auto&preset=netflix']) {
    const r = await api(`/transcriptions/${id}/subtitles${q}`);
    assert.equal(r.status, 200, `${q}: ${r.body}`);
    assert.equal(r.headers['x-service-cue-source'], 'generated', q);
    assert.ok(!r.body.includes('Zanzibar'), q);
  }
  // Materialized under another preset: that preset's line breaking, same cues.
  const tiktok = await api(`/transcriptions/${id}/subtitles?source=materialized&preset=tiktok-shorts&format=json`);
  assert.equal(tiktok.headers['x-service-cue-source'], 'materialized');
  assert.equal(tiktok.json.cues.length, segments.length);
  assert.equal(tiktok.json.cues[0].startMs, segments[0].start_ms);
  assert.equal(tiktok.json.cues[0].endMs, segments[0].end_ms);
  for (const line of tiktok.json.cues[0].text.split('\n')) assert.ok(line.length <= 22, line);
});

test('the transcript reads the revision, with display names only when asked', async () => {
  const plain = await api(`/transcriptions/${id}/transcript`);
  assert.equal(plain.status, 200, plain.body);
  assert.equal(plain.headers['x-service-revision'], '1');
  assert.ok(plain.body.includes(`SPEAKER_00: ${EDITED}`), plain.body);
  assert.ok(!plain.body.includes('Alice'), plain.body);
  const named = await api(`/transcriptions/${id}/transcript?speaker_names=true&format=md`);
  assert.ok(named.body.includes(`**Alice:** ${EDITED}`), named.body);
  assert.ok(!named.body.includes('SPEAKER_00'), named.body);
  const labelled = await api(`/transcriptions/${id}/subtitles?speaker_labels=true&speaker_names=true`);
  assert.ok(labelled.body.includes('[Alice] Zanzibar'), labelled.body);
  const unnamed = await api(`/transcriptions/${id}/subtitles?speaker_labels=true`);
  assert.ok(unnamed.body.includes('[SPEAKER_00] Zanzibar'), unnamed.body);
  envelope(assert, await api(`/transcriptions/${id}/transcript?speaker_names=maybe`), 400, 'invalid_request');
});

test('search finds the revised text and no longer the replaced word', async () => {
  const lib = await hits('zanzibar');
  assert.equal(lib.length, 1, JSON.stringify(lib));
  assert.equal(lib[0].transcription_id, id);
  assert.equal(lib[0].text, EDITED);
  assert.equal(lib[0].start_ms, segments[0].start_ms);
  assert.equal((await hits('zanzibar', `/transcriptions/${id}/search`)).length, 1);
  assert.deepEqual(await hits(oldWord), [], `"${oldWord}" was replaced`);
  // An unedited cue is still found under its recognized segment's id.
  const kept = segments[1];
  const keptHits = await hits(kept.text.slice(0, 12), `/transcriptions/${id}/search`);
  assert.ok(keptHits.some((h) => h.segment_id === kept.id), JSON.stringify(keptHits));
});

test('undo restores the previous revision, then the recognized transcript; numbers are not reused', async () => {
  const second = await save(edited(1, 'Quetzal feathers everywhere.'));
  assert.equal(second.status, 201, second.body);
  assert.equal(second.json.revision, 2);
  assert.equal((await hits('quetzal')).length, 1);

  const undo = await revisions('/latest', { method: 'DELETE' });
  assert.equal(undo.status, 200, undo.body);
  assert.deepEqual(undo.json, { undone_revision: 2, latest: 1 });
  assert.equal((await revisions()).json.latest, 1);
  envelope(assert, await revisions('/2'), 404, 'not_found');
  assert.deepEqual(await hits('quetzal'), []);
  assert.equal((await hits('zanzibar')).length, 1);
  assert.ok((await api(`/transcriptions/${id}/subtitles`)).body.includes('Zanzibar'));

  const again = await revisions('/latest', { method: 'DELETE' });
  assert.deepEqual(again.json, { undone_revision: 1, latest: null });
  envelope(assert, await api(`/transcriptions/${id}/subtitles?source=materialized`), 404, 'not_found');
  const back = await api(`/transcriptions/${id}/transcript`);
  assert.equal(back.headers['x-service-revision'], undefined);
  assert.ok(!back.body.includes('Zanzibar'), back.body);
  assert.deepEqual(await hits('zanzibar'), []);
  assert.equal((await hits(oldWord)).length, 1);

  const third = await save(edited(null));
  assert.equal(third.status, 201, third.body);
  assert.equal(third.json.revision, 3);
});

test("another account sees none of it", async () => {
  const other = (path, opts = {}) => curl(`${server.url}/api/v1/transcriptions/${id}/revisions${path}`,
    { key: b.key, ...opts });
  envelope(assert, await other(''), 404, 'not_found');
  envelope(assert, await other('/latest'), 404, 'not_found');
  envelope(assert, await other('/3'), 404, 'not_found');
  envelope(assert, await other('', { method: 'POST', body: edited(3) }), 404, 'not_found');
  envelope(assert, await other('/latest', { method: 'DELETE' }), 404, 'not_found');
  const theirs = await curl(`${server.url}/api/v1/search?q=zanzibar`, { key: b.key });
  assert.deepEqual(theirs.json.hits, []);
  assert.equal((await revisions()).json.latest, 3);
});

test('deleting the transcription removes its revisions and their text', async () => {
  assert.equal(psql(`select count(*) from transcript_revisions where transcription_id = ${id}`), '1');
  const del = await api(`/transcriptions/${id}`, { method: 'DELETE' });
  assert.ok(del.status === 200 || del.status === 204, del.body);
  assert.equal(psql(`select count(*) from transcript_revisions where transcription_id = ${id}`), '0');
  assert.equal(psql(`select count(*) from events where stream_id = 'revisions-${id}' and data::text ilike '%zanzibar%'`),
    '0');
  assert.equal(psql(`select count(*) from events where stream_id = 'revisions-${id}'`), '5');
  envelope(assert, await revisions(), 404, 'not_found');
  assert.deepEqual(await hits('zanzibar'), []);
});
