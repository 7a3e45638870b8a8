// Search end to end: real recordings (flite voices) transcribed by the real
// pipeline inside `scribe serve`, then searched over HTTP. The recognizer is
// not perfect, so the queries are taken from the segments it actually
// produced (read back with /result?include=segments) and every expectation is
// computed from those segments.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { FAST_RECOGNIZER, startServer, newAccount, newKey, curl, envelope, finished } from './harness.mjs';
import { dialogue, convert, startMediaServer } from './media.mjs';

const ENV = { ...FAST_RECOGNIZER, SCRIBE_ALLOW_PRIVATE_URLS: '1', SCRIBE_WORKER_POLL_MS: '100', SCRIBE_RATE_LIMIT_PER_MINUTE: '100000' };

let media, server, a, b;
const fx = {}; // name -> {id, url, segments, title}

const api = (path, key, opts = {}) => curl(`${server.url}/api/v1${path}`, { key, ...opts });
const search = (key, params) => api(`/search?${new URLSearchParams(params)}`, key);
const searchOne = (key, id, params) => api(`/transcriptions/${id}/search?${new URLSearchParams(params)}`, key);

async function transcribe(key, url) {
  const res = await api('/transcriptions', key, { method: 'POST', body: { source: 'external_url', url } });
  assert.equal(res.status, 202, res.body);
  return res.json.id;
}

before(async () => {
  media = await startMediaServer();
  const meeting = convert(dialogue([
    { voice: 'slt', text: 'Good morning everyone. Welcome to the weekly meeting about the new library.' },
    { voice: 'rms', text: 'Thank you. I would like to talk about the budget for next year.' },
  ], 'search-meeting'), 'search-meeting.mp3', ['-metadata', 'title=Budget meeting']);
  const river = convert(dialogue([
    { voice: 'awb', text: 'The river park needs a new bridge before the summer.' },
    { voice: 'slt', text: 'The mayor promised an answer about the parking and the bridge.' },
  ], 'search-river'), 'search-river.mp3');
  server = await startServer({ workers: true, extraEnv: ENV });
  a = newAccount({ balance: 5 });
  b = newAccount({ balance: 5 });
  // Oldest first: the meeting of A, then the river of A, then B's copy of the meeting.
  const jobs = [['meeting', a, meeting], ['river', a, river], ['theirs', b, meeting]];
  for (const [name, acc, path] of jobs) fx[name] = { id: await transcribe(acc.key, media.url(path)), url: media.url(path) };
  for (const [name, acc] of jobs) {
    const done = await finishedOk(acc.key, fx[name].id);
    fx[name].title = done.title;
    fx[name].segments = done.segments;
    assert.ok(done.segments.length >= 2, `${name}: ${JSON.stringify(done.segments)}`);
  }
});
after(async () => { await server?.stop(); await media?.close(); });

// What the server should answer for `q` over A's transcriptions: newest first,
// then start_ms, then segment id.
function expected(q, names = ['river', 'meeting']) {
  const out = [];
  for (const name of names) {
    const segs = fx[name].segments.filter((s) => s.text.toLowerCase().includes(q.toLowerCase()));
    segs.sort((x, y) => x.start_ms - y.start_ms || x.id - y.id);
    out.push(...segs.map((s) => ({ name, ...s })));
  }
  return out;
}

// The longest word of a transcript's segments that the other transcript lacks.
function distinctiveWord(name, other) {
  const otherText = fx[other].segments.map((s) => s.text.toLowerCase()).join(' ');
  const words = fx[name].segments.flatMap((s) => s.text.toLowerCase().match(/[a-z]{4,}/g) ?? []);
  const word = words.filter((w) => !otherText.includes(w)).sort((x, y) => y.length - x.length)[0];
  assert.ok(word, `no distinctive word in ${JSON.stringify(fx[name].segments)}`);
  return word;
}

async function finishedOk(key, id) {
  const done = await finished(server, key, id, { query: '&include=segments' });
  assert.equal(done.status, 'completed', JSON.stringify(done.error));
  return done;
}

test('a substring of what was said is found, case-insensitively, with the documented hit shape', async () => {
  const word = distinctiveWord('meeting', 'river');
  const q = word.slice(1).toUpperCase(); // a substring, in another case
  const want = expected(q);
  assert.ok(want.length >= 1);
  const res = await search(a.key, { q: `  ${q} ` });
  assert.equal(res.status, 200, res.body);
  assert.equal(res.json.query, q, 'q is reported trimmed');
  assert.equal(res.json.total, want.length);
  assert.equal(res.json.offset, 0);
  assert.equal(res.json.limit, 20);
  assert.equal(res.json.has_more, false);
  assert.deepEqual(res.json.hits.map((h) => h.segment_id), want.map((s) => s.id));
  for (const [i, hit] of res.json.hits.entries()) {
    const seg = want[i];
    const t = fx[seg.name];
    assert.deepEqual(Object.keys(hit).sort(),
      ['end_ms', 'segment_id', 'speaker', 'start_ms', 'text', 'title', 'transcription_id', 'url']);
    assert.equal(hit.transcription_id, t.id);
    assert.equal(hit.title, t.title ?? null);
    assert.equal(hit.speaker, seg.speaker);
    assert.equal(hit.start_ms, seg.start_ms);
    assert.equal(hit.end_ms, seg.end_ms);
    assert.equal(hit.text, seg.text);
    // A direct media link: the source URL with a media fragment.
    assert.equal(hit.url, `${t.url}#t=${Math.floor(seg.start_ms / 1000)}`);
  }
  assert.ok(res.json.hits.some((h) => h.transcription_id === fx.meeting.id && h.title === 'Budget meeting'));
});

test('hits come newest transcription first, then by time, and page with limit and offset', async () => {
  // The most frequent two-letter substring across both of A's transcripts.
  const candidates = ['th', 'he', 'in', 'er', 'an', 're', 'on', 'at', 'en', 'nd', 'ea', 'ou', 'e ', ' t'];
  const q = candidates.map((c) => [c, expected(c).length]).sort((x, y) => y[1] - x[1])[0][0];
  const want = expected(q);
  assert.ok(want.length >= 3, `only ${want.length} segments contain "${q}"`);
  assert.ok(want.some((s) => s.name === 'river') && want.some((s) => s.name === 'meeting'));
  const seen = [];
  for (let offset = 0; offset < want.length; offset += 2) {
    const res = await search(a.key, { q, limit: 2, offset });
    assert.equal(res.status, 200, res.body);
    assert.equal(res.json.total, want.length);
    assert.equal(res.json.limit, 2);
    assert.equal(res.json.offset, offset);
    assert.equal(res.json.has_more, offset + 2 < want.length);
    seen.push(...res.json.hits.map((h) => h.segment_id));
  }
  assert.deepEqual(seen, want.map((s) => s.id));
  const past = await search(a.key, { q, offset: 1000 });
  assert.equal(past.status, 200, past.body);
  assert.deepEqual(past.json.hits, []);
  assert.equal(past.json.total, want.length);
  assert.equal(past.json.has_more, false);
});

test('transcription_ids narrows the search; ids of another account match nothing', async () => {
  const q = distinctiveWord('meeting', 'river');
  const mine = await search(a.key, { q, transcription_ids: `${fx.river.id}, ${fx.meeting.id}` });
  assert.equal(mine.json.total, expected(q).length);
  const river = await search(a.key, { q, transcription_ids: String(fx.river.id) });
  assert.equal(river.status, 200, river.body);
  assert.equal(river.json.total, 0);
  const theirs = await search(a.key, { q, transcription_ids: String(fx.theirs.id) });
  assert.equal(theirs.status, 200, theirs.body);
  assert.deepEqual([theirs.json.total, theirs.json.hits], [0, []]);
  const mixed = await search(a.key, { q, transcription_ids: `${fx.theirs.id},${fx.meeting.id},999999999` });
  assert.ok(mixed.json.hits.length > 0);
  assert.ok(mixed.json.hits.every((h) => h.transcription_id === fx.meeting.id));
});

test('an account finds only its own transcripts', async () => {
  const q = distinctiveWord('meeting', 'river'); // B's recording is the same meeting
  const mine = await search(a.key, { q });
  const theirs = await search(b.key, { q });
  assert.ok(mine.json.hits.length > 0 && theirs.json.hits.length > 0);
  assert.ok(mine.json.hits.every((h) => h.transcription_id !== fx.theirs.id));
  assert.ok(theirs.json.hits.every((h) => h.transcription_id === fx.theirs.id));
  assert.equal(theirs.json.total, expected(q, ['theirs']).length);
  // A read-only key of the same account searches too (GET).
  const ro = newKey(a.accountId, '--permission', 'read_only');
  assert.equal((await search(ro.key, { q })).json.total, mine.json.total);
});

test('%, _ and \\ are literal characters, not wildcards', async () => {
  for (const q of ['%%', '_e', 'e_', '\\e', 'o%r']) {
    const res = await search(a.key, { q });
    assert.equal(res.status, 200, res.body);
    assert.equal(res.json.total, 0, `"${q}" matched: ${res.body}`);
  }
});

test('invalid parameters are 400 invalid_request naming the field', async () => {
  const cases = [
    [{}, 'q'], [{ q: '' }, 'q'], [{ q: '   ' }, 'q'], [{ q: ' a ' }, 'q'], [{ q: 'x'.repeat(201) }, 'q'],
    [{ q: 'ab', limit: 0 }, 'limit'], [{ q: 'ab', limit: 101 }, 'limit'], [{ q: 'ab', limit: 'ten' }, 'limit'],
    [{ q: 'ab', offset: 1001 }, 'offset'], [{ q: 'ab', offset: -1 }, 'offset'],
    [{ q: 'ab', transcription_ids: '' }, 'transcription_ids'],
    [{ q: 'ab', transcription_ids: 'abc' }, 'transcription_ids'],
    [{ q: 'ab', transcription_ids: '0' }, 'transcription_ids'],
    [{ q: 'ab', transcription_ids: '1,,2' }, 'transcription_ids'],
    [{ q: 'ab', transcription_ids: Array.from({ length: 51 }, (_, i) => i + 1).join(',') }, 'transcription_ids'],
  ];
  for (const [params, field] of cases) {
    const res = await search(a.key, params);
    const e = envelope(assert, res, 400, 'invalid_request');
    assert.equal(e.field, field, `${JSON.stringify(params)}: ${res.body}`);
  }
  // The limits themselves are accepted.
  const edge = await search(a.key, { q: 'x'.repeat(200), limit: 100, offset: 1000,
    transcription_ids: Array.from({ length: 50 }, (_, i) => i + 1).join(',') });
  assert.equal(edge.status, 200, edge.body);
  for (const [params, field] of [[{}, 'q'], [{ q: 'a' }, 'q'], [{ q: 'ab', limit: 101 }, 'limit'],
    [{ q: 'ab', offset: 1001 }, 'offset']]) {
    const res = await searchOne(a.key, fx.meeting.id, params);
    assert.equal(envelope(assert, res, 400, 'invalid_request').field, field);
  }
  envelope(assert, await search(undefined, { q: 'ab' }), 401, 'unauthenticated');
});

test('searching one transcription: its hits in time order; 404 when not yours or absent', async () => {
  const q = distinctiveWord('river', 'meeting');
  const want = expected(q, ['river']);
  const res = await searchOne(a.key, fx.river.id, { q: q.toUpperCase() });
  assert.equal(res.status, 200, res.body);
  assert.equal(res.json.total, want.length);
  assert.deepEqual(res.json.hits.map((h) => h.segment_id), want.map((s) => s.id));
  assert.equal(res.json.has_more, false);
  const other = await searchOne(a.key, fx.meeting.id, { q });
  assert.deepEqual([other.status, other.json.total], [200, 0]);
  envelope(assert, await searchOne(b.key, fx.river.id, { q }), 404, 'not_found');
  envelope(assert, await searchOne(a.key, fx.theirs.id, { q }), 404, 'not_found');
  envelope(assert, await searchOne(a.key, 999999999, { q }), 404, 'not_found');
  envelope(assert, await searchOne(a.key, 'abc', { q }), 404, 'not_found');
  // Not completed (a quote is never started): nothing to search yet.
  const quote = await api('/quotes', a.key, { method: 'POST',
    body: { source: 'external_url', url: fx.river.url, duration_seconds: 10 } });
  assert.equal(quote.status, 200, quote.body);
  const pending = await searchOne(a.key, quote.json.transcription_id, { q });
  assert.equal(pending.status, 200, pending.body);
  assert.deepEqual([pending.json.hits, pending.json.total, pending.json.has_more], [[], 0, false]);
});

test('a deleted transcription is no longer found', async () => {
  const q = distinctiveWord('river', 'meeting');
  assert.ok((await search(a.key, { q })).json.total > 0);
  const del = await api(`/transcriptions/${fx.river.id}`, a.key, { method: 'DELETE' });
  assert.equal(del.status, 200, del.body);
  const after = await search(a.key, { q });
  assert.equal(after.status, 200, after.body);
  assert.equal(after.json.total, 0);
  envelope(assert, await searchOne(a.key, fx.river.id, { q }), 404, 'not_found');
  // The other transcription is still there.
  assert.equal((await search(a.key, { q: distinctiveWord('meeting', 'river') })).json.total,
    expected(distinctiveWord('meeting', 'river'), ['meeting']).length);
});
