// Ask end to end: questions answered from real transcripts through the real
// `scribe serve` (POST /transcriptions/{id}/ask, POST /ask and the two
// DELETEs of a saved entry). One four-topic recording (flite voices, one
// subject each) is uploaded and transcribed once; a few short clips give the
// other accounts something of their own to ask about. Then: answers with
// cited moments inside the right passage, no_answer that costs nothing, the
// library ask and its filter, the allowance per plan and scope (also under
// 20 concurrent asks), redaction down to the event store, tenant isolation,
// read-only keys, not_ready, deletion and input validation.
//
// The recognizer is not perfect, so nothing here expects particular words:
// expectations come from what the server returned (segments, sections,
// titles) and from the recording we built (where each passage lies).
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startServer, newAccount, newKey, admin, curl, envelope, finished, DB } from './harness.mjs';
import { dialogue, convert, seconds, startMediaServer, MEDIA_DIR, FOUR_TOPICS, hangingMediaServer } from './media.mjs';

const psql = (sql) => execFileSync('psql', [DB, '-At', '-c', sql], { encoding: 'utf8' }).trim();
// Many requests per test: the rate limiter is not what is tested here.
const ENV = { SCRIBE_ALLOW_PRIVATE_URLS: '1', SCRIBE_WORKER_POLL_MS: '100', SCRIBE_RATE_LIMIT_PER_MINUTE: '100000',
  SCRIBE_WORKER_SLOTS: '2' };

// Four passages on clearly different subjects (the enrichment test's).
const TOPICS = FOUR_TOPICS;
// Questions per passage, each word of which (as stemmed) is in that passage
// only; the recognizer may garble a word, so the first candidate whose words
// all survive in the transcript of its passage (and nowhere else) is asked.
// Every cited moment must then lie inside the passage.
const CANDIDATES = [
  ['How long should the bread bake in the hot oven?', 'Which flour gives a dark and heavy loaf?',
    'When is the dough kneaded until smooth and elastic?', 'What does baking bread start with?'],
  ['What causes the ocean tides?', 'What do fishermen study carefully?', 'When are the tides stronger?'],
  ['Who scored the winning goal in the football match?', 'How many saves did the goalkeeper make?',
    'How many yellow cards did the referee show?'],
  ['Why are the tomato plants tied to a wooden stick?', 'What do tomato plants need?',
    'What did we plant in the garden?'],
];
let QUESTIONS; // the chosen one of each passage
const UNANSWERABLE = 'What is the price of gold in Tokyo?';
const BREAD_Q = 'How do you bake the bread in the oven?';
const MUSEUM_Q = 'When does the museum open?';
const GAP = 1.2; // seconds of silence after each passage

let media, server;
let acc; // starter: owns main and museum
let other; // starter, later enterprise: owns otherClip (bread)
let freeA; // free: quotas per transcript and per day; owns clipA (bread)
let freeB; // free: the concurrent asks; owns clipB (bread)
const main = {}; // {id, title, segments, result}
const museum = {};
const otherClip = {};
const clipA = {};
const clipB = {};
let spans; // [{start, end}] of each passage in main, seconds
const saved = {}; // entries one test makes and a later one uses

const api = (path, opts = {}) => curl(`${server.url}/api/v1${path}`, opts);
const ask = (who, id, body, opts = {}) =>
  api(`/transcriptions/${id}/ask`, { method: 'POST', key: who.key, body, ...opts });
const askLib = (who, body, opts = {}) => api('/ask', { method: 'POST', key: who.key, body, ...opts });
const unask = (who, id, qnaId) => api(`/transcriptions/${id}/ask/${qnaId}`, { method: 'DELETE', key: who.key });
const unaskLib = (who, qnaId) => api(`/ask/${qnaId}`, { method: 'DELETE', key: who.key });

async function uploadWav(key, path) {
  const size = statSync(path).size;
  const t = await api('/uploads', { method: 'POST', key,
    body: { filename: 'four-topics.wav', content_type: 'audio/wav', file_size: size } });
  assert.equal(t.status, 200, t.body);
  const up = await curl(t.json.upload_url, { method: 'PUT', headers: { 'Content-Type': 'audio/wav' },
    rawArgs: ['--data-binary', `@${path}`] });
  assert.equal(up.status, 200, up.body);
  return t.json.upload_id;
}

async function created(key, body) {
  const res = await api('/transcriptions', { method: 'POST', key, body });
  assert.equal(res.status, 202, res.body);
  return res.json.id;
}

async function completed(who, fx) {
  const done = await finished(server, who.key, fx.id, { limitSeconds: 600 });
  assert.equal(done.status, 'completed', JSON.stringify(done.error));
  const row = await api(`/transcriptions/${fx.id}`, { key: who.key });
  assert.equal(row.status, 200, row.body);
  fx.title = row.json.title;
  const r = await api(`/transcriptions/${fx.id}/result?include=segments,sections,qna&segments_limit=1000`,
    { key: who.key });
  assert.equal(r.status, 200, r.body);
  assert.equal(r.json.segments_meta.has_more, false);
  fx.segments = r.json.segments;
  fx.result = r.json;
}

before(async () => {
  media = await startMediaServer();
  const wav = dialogue(TOPICS, 'ask-topics', GAP);
  spans = [];
  let t = 0;
  for (let i = 0; i < TOPICS.length; i++) {
    const d = seconds(join(MEDIA_DIR, `ask-topics-${i}.wav`));
    spans.push({ start: t, end: t + d });
    t += d + GAP;
  }
  const titled = convert(wav, 'ask-topics-titled.wav',
    ['-ar', '16000', '-ac', '1', '-metadata', 'title=Four topics to ask about']);
  const museumMp3 = convert(dialogue([
    { voice: 'rms', text: 'The city museum opens at nine in the morning. Tickets for the museum cost five dollars ' +
      'for children, and the dinosaur hall is on the second floor.' },
  ], 'ask-museum'), 'ask-museum.mp3', ['-metadata', 'title=Museum visit']);
  const breadMp3 = convert(dialogue([
    { voice: 'slt', text: 'To bake bread, knead the dough, let it rise, and bake the bread in a hot oven until the ' +
      'crust is brown.' },
  ], 'ask-bread'), 'ask-bread.mp3', ['-metadata', 'title=Bread in short']);

  server = await startServer({ workers: true, extraEnv: ENV });
  acc = newAccount({ plan: 'starter', balance: 5 });
  other = newAccount({ plan: 'starter', balance: 5 });
  freeA = newAccount({ plan: 'free', balance: 5 });
  freeB = newAccount({ plan: 'free', balance: 5 });
  const uploadId = await uploadWav(acc.key, titled);
  main.id = await created(acc.key, { source: 'upload', upload_id: uploadId, original_filename: 'four-topics.wav',
    duration_seconds: seconds(titled) });
  museum.id = await created(acc.key, { source: 'external_url', url: media.url(museumMp3) });
  otherClip.id = await created(other.key, { source: 'external_url', url: media.url(breadMp3) });
  clipA.id = await created(freeA.key, { source: 'external_url', url: media.url(breadMp3) });
  clipB.id = await created(freeB.key, { source: 'external_url', url: media.url(breadMp3) });
  await Promise.all([[acc, museum], [other, otherClip], [freeA, clipA], [freeB, clipB], [acc, main]]
    .map(([who, fx]) => completed(who, fx)));
  assert.ok(main.segments.length >= 8, `only ${main.segments.length} segments`);
  assert.ok(main.result.sections.length >= 1, 'main has no sections');
  assert.equal(main.title, 'Four topics to ask about');
  // The words each passage kept through the recognizer, as PostgreSQL stems them.
  const said = spans.map((span) => lexemes(main.segments
    .filter((g) => g.start_ms / 1000 >= span.start - 1.5 && g.start_ms / 1000 < span.end + 0.5)
    .map((g) => g.text).join(' ')));
  QUESTIONS = CANDIDATES.map((list, i) => {
    const q = list.find((c) => lexemes(c).every((l) => said[i].includes(l) &&
      said.every((other, j) => j === i || !other.includes(l))));
    assert.ok(q, `passage ${i}: no candidate question survives the recognizer: ${JSON.stringify(said[i])}`);
    return q;
  });
  assert.equal(museum.title, 'Museum visit');
});
after(async () => { await server?.stop(); await media?.close(); });

// --- helpers -----------------------------------------------------------------

const norm = (s) => s.replace(/\s+/g, ' ').trim();
const isoTime = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;
const markersOf = (answer) => [...answer.matchAll(/\[(\d+)\]/g)].map((m) => Number(m[1]));
const appLink = (id, sec) => `${server.url}/app/transcriptions/${id}?t=${Math.floor(sec + 1e-9)}`;
// Counted asks of an account: QuestionAsked events on its allowance stream.
const counted = (who) =>
  Number(psql(`select count(*) from events where stream_id = 'asks-${who.accountId}' and type = 'QuestionAsked'`));
// Every event of a stream, data and metadata, as one JSON text.
const streamText = (sid) => psql(`select data::text || ' ' || metadata::text from events where stream_id = '${sid}' ` +
  'order by version');
// A text's lexemes as the ask's retrieval stems them (to_tsvector('english')).
const lexemes = (text) => psql(`select array_to_string(tsvector_to_array(to_tsvector('english', ` +
  `$q$${text}$q$)), ' ')`).split(' ').filter(Boolean);
const jsonText = (s) => JSON.stringify(s).slice(1, -1); // how a string reads inside JSON text
const ASK_KEYS = ['answer', 'citations', 'model', 'no_answer', 'qna_id', 'remaining_per_day',
  'remaining_per_transcript'];
const LIB_KEYS = ['answer', 'citations', 'model', 'no_answer', 'qna_id', 'remaining_today', 'saved'];
const RESULT_MAX_QNA = 20; // the spec's cap of Q&A per /result call
const CITATION_KEYS = ['marker', 'quote', 'section_id', 'start_seconds', 'title', 'transcription_id', 'url'];

// The shape every answered ask shares; returns the body.
function checkAnswered(res, keys) {
  assert.equal(res.status, 200, res.body);
  const b = res.json;
  assert.deepEqual(Object.keys(b).sort(), keys, res.body);
  assert.equal(b.no_answer, false, `no answer: ${res.body}`);
  assert.ok(Number.isInteger(b.qna_id) && b.qna_id > 0, `qna_id ${b.qna_id}`);
  assert.equal(typeof b.model, 'string');
  assert.ok(b.model.length > 0);
  assert.ok(norm(b.answer).length > 0, 'empty answer');
  assert.ok(Array.isArray(b.citations) && b.citations.length >= 1, `no citations: ${res.body}`);
  // Every [N] has its citation and every citation its [N].
  const inText = [...new Set(markersOf(b.answer))].sort((x, y) => x - y);
  const cited = b.citations.map((c) => c.marker);
  assert.equal(new Set(cited).size, cited.length, `repeated markers: ${cited}`);
  assert.deepEqual(inText, [...cited].sort((x, y) => x - y), `markers in the answer ${inText}, citations ${cited}`);
  for (const c of b.citations) assert.deepEqual(Object.keys(c).sort(), CITATION_KEYS, JSON.stringify(c));
  return b;
}

// A citation of fx: at the start of a segment whose text holds the quote
// verbatim, in the section holding that moment, deep-linked to it.
function checkCitation(fx, c, { title } = {}) {
  assert.equal(c.transcription_id, fx.id, JSON.stringify(c));
  assert.ok(Number.isInteger(c.marker) && c.marker >= 1);
  assert.equal(typeof c.quote, 'string');
  assert.ok(norm(c.quote).length > 0, 'empty quote');
  const seg = fx.segments.find((s) => Math.abs(s.start_ms / 1000 - c.start_seconds) < 0.0015 &&
    s.text.includes(c.quote));
  assert.ok(seg, `quote ${JSON.stringify(c.quote)} at ${c.start_seconds} s is not verbatim text of the segment ` +
    `starting there: ${JSON.stringify(fx.segments.filter((s) => s.text.includes(c.quote.slice(0, 20))))}`);
  assert.match(c.url, /[?#]t=\d+/, c.url);
  const sections = fx.result.sections;
  // The last section starting at or before the moment (the first, for a moment before it).
  const holding = [...sections].reverse().find((s) => s.start_seconds <= c.start_seconds + 1e-6) ?? sections[0];
  if (holding) {
    assert.ok(c.start_seconds < holding.end_seconds + 1e-6 || holding === sections.at(-1),
      `no section holds ${c.start_seconds}: ${JSON.stringify(sections.map((s) => [s.start_seconds, s.end_seconds]))}`);
    assert.equal(c.section_id, holding.id, `section of ${c.start_seconds} s`);
  }
  assert.equal(c.title, title ?? holding?.title, `title of the citation at ${c.start_seconds} s`);
}

function checkQuota(res, scope) {
  const e = envelope(assert, res, 429, 'qna_quota_exceeded');
  assert.equal(e.scope, scope, res.body);
  if (scope === 'day') {
    assert.ok(Number.isInteger(e.retry_after) && e.retry_after >= 1 && e.retry_after <= 86400, res.body);
    assert.equal(res.headers['retry-after'], String(e.retry_after));
  } else {
    assert.equal(e.retry_after, undefined, `a transcript refusal never resets: ${res.body}`);
    assert.equal(res.headers['retry-after'], undefined, 'a transcript refusal never resets');
  }
  return e;
}

async function qnaOf(who, fx) {
  const r = await api(`/transcriptions/${fx.id}/result?include=qna`, { key: who.key });
  assert.equal(r.status, 200, r.body);
  return r.json.qna;
}

// --- answers -----------------------------------------------------------------

test('a question per subject: answered from that passage, every [N] cited, quotes verbatim, saved in /result',
  async (t) => {
    t.diagnostic(`questions asked: ${JSON.stringify(QUESTIONS)}`);
    const systemQna = main.result.qna;
    for (const [i, question] of QUESTIONS.entries()) {
      const before = counted(acc);
      // Surrounding blanks are trimmed.
      const res = await ask(acc, main.id, { question: `  ${question}\n ` });
      const b = checkAnswered(res, ASK_KEYS);
      assert.equal(b.remaining_per_transcript, null, 'starter: no per-transcript limit');
      assert.equal(b.remaining_per_day, 100 - before - 1, `starter: 100 a day, ${before} asked before`);
      assert.equal(counted(acc), before + 1);
      const span = spans[i];
      for (const c of b.citations) {
        checkCitation(main, c);
        assert.ok(c.start_seconds >= span.start - 1.5 && c.start_seconds <= span.end + 0.5,
          `"${question}": cited ${c.start_seconds} s, the passage is ` +
          `${span.start.toFixed(1)}..${span.end.toFixed(1)} s: ${JSON.stringify(c.quote)}`);
        // An upload links to the player.
        assert.equal(c.url, appLink(main.id, c.start_seconds));
      }
      // The entry is in /result: after the system entries, source "user"
      // (while the 20 Q&A a call returns leave room for it).
      const qna = await qnaOf(acc, main);
      assert.equal(qna.length, Math.min(RESULT_MAX_QNA, systemQna.length + i + 1), 'one user entry per answer');
      if (systemQna.length + i + 1 > RESULT_MAX_QNA) continue;
      const k = qna.findIndex((q) => q.id === b.qna_id);
      assert.ok(k >= 0, `entry ${b.qna_id} is not in /result: ${JSON.stringify(qna.map((q) => q.id))}`);
      const e = qna[k];
      assert.equal(e.source, 'user');
      assert.equal(e.question, question, 'the saved question is the trimmed one');
      assert.equal(e.answer, b.answer);
      const cited = b.citations.map((c) => ({ title: c.title, start_seconds: c.start_seconds, url: c.url }));
      assert.deepEqual(e.citations, cited);
      assert.deepEqual(e.answer_citations, cited);
      assert.match(e.asked_at, isoTime);
      const firstUser = qna.findIndex((q) => q.source === 'user');
      assert.ok(qna.slice(0, firstUser).every((q) => q.source === 'system') &&
        qna.slice(firstUser).every((q) => q.source === 'user'), 'system entries do not all come first');
      assert.deepEqual(qna.slice(0, firstUser).map((q) => q.question), systemQna.map((q) => q.question));
      // qna_source=system leaves it out.
      const sys = await api(`/transcriptions/${main.id}/result?include=qna&qna_source=system`, { key: acc.key });
      assert.ok(!sys.json.qna.some((q) => q.id === b.qna_id), 'qna_source=system lists a user entry');
      saved[`main${i}`] = b;
    }
  });

test('an unanswerable question: no_answer, nothing cited, saved or counted', async () => {
  const before = counted(acc);
  const qnaBefore = await qnaOf(acc, main);
  const first = await ask(acc, main.id, { question: UNANSWERABLE });
  assert.equal(first.status, 200, first.body);
  assert.deepEqual(Object.keys(first.json).sort(), ASK_KEYS);
  assert.equal(first.json.no_answer, true, first.body);
  assert.deepEqual(first.json.citations, []);
  assert.equal(first.json.qna_id, null);
  assert.equal(first.json.remaining_per_transcript, null);
  // What is left now, since nothing was used.
  assert.equal(first.json.remaining_per_day, 100 - before, first.body);
  const second = await ask(acc, main.id, { question: UNANSWERABLE, top_k: 100 });
  assert.equal(second.json.no_answer, true);
  assert.equal(second.json.remaining_per_day, first.json.remaining_per_day, 'a no_answer used the allowance');
  const lib = await askLib(acc, { question: UNANSWERABLE });
  assert.equal(lib.status, 200, lib.body);
  assert.deepEqual(Object.keys(lib.json).sort(), LIB_KEYS);
  assert.deepEqual([lib.json.no_answer, lib.json.saved, lib.json.qna_id, lib.json.citations], [true, false, null, []]);
  assert.equal(lib.json.remaining_today, 100 - before);
  assert.equal(counted(acc), before, 'a no_answer was counted');
  assert.deepEqual(await qnaOf(acc, main), qnaBefore, 'a no_answer was saved');
  // The next answered ask uses exactly one.
  const next = checkAnswered(await ask(acc, main.id, { question: QUESTIONS[1] }), ASK_KEYS);
  assert.equal(next.remaining_per_day, first.json.remaining_per_day - 1);
});

test('library ask: citations from the account\'s transcriptions with their titles; transcription_ids filters',
  async () => {
    const mine = new Set([main.id, museum.id]);
    const fxOf = (id) => (id === main.id ? main : museum);
    const before = counted(acc);
    const res = await askLib(acc, { question: QUESTIONS[0] });
    const b = checkAnswered(res, LIB_KEYS);
    assert.equal(b.saved, true);
    assert.equal(b.remaining_today, 100 - before - 1);
    for (const c of b.citations) {
      assert.ok(mine.has(c.transcription_id), `cites transcription ${c.transcription_id}, not the account's`);
      checkCitation(fxOf(c.transcription_id), c, { title: fxOf(c.transcription_id).title });
    }
    assert.equal(b.citations[0].transcription_id, main.id, 'the bread passage is in the four-topic recording');
    saved.library = b;
    // A library entry is in no transcription's /result.
    for (const fx of [main, museum])
      assert.ok(!(await qnaOf(acc, fx)).some((q) => q.id === b.qna_id), 'a library entry shows in /result');

    const m = checkAnswered(await askLib(acc, { question: MUSEUM_Q }), LIB_KEYS);
    assert.equal(m.citations[0].transcription_id, museum.id, JSON.stringify(m.citations));
    for (const c of m.citations) checkCitation(fxOf(c.transcription_id), c, { title: fxOf(c.transcription_id).title });

    // Only the museum: the bread question finds nothing there.
    const only = await askLib(acc, { question: QUESTIONS[0], transcription_ids: [museum.id] });
    assert.equal(only.status, 200, only.body);
    assert.ok(only.json.no_answer || only.json.citations.every((c) => c.transcription_id === museum.id), only.body);
    const both = checkAnswered(await askLib(acc, { question: QUESTIONS[2], transcription_ids: [museum.id, main.id] }),
      LIB_KEYS);
    assert.ok(both.citations.every((c) => c.transcription_id === main.id), both.body);
    // Another account's ids match nothing (its clip is about bread too), and are no 404.
    const theirs = await askLib(acc, { question: BREAD_Q, transcription_ids: [otherClip.id, clipA.id] });
    assert.equal(theirs.status, 200, theirs.body);
    assert.deepEqual([theirs.json.no_answer, theirs.json.citations, theirs.json.saved], [true, [], false], theirs.body);
    // Ids that exist nowhere neither.
    const none = await askLib(acc, { question: BREAD_Q, transcription_ids: [999999999] });
    assert.equal(none.status, 200, none.body);
    assert.equal(none.json.no_answer, true);
    // Unfiltered, the account's own bread is found, never the others'.
    const all = checkAnswered(await askLib(acc, { question: BREAD_Q }), LIB_KEYS);
    assert.ok(all.citations.every((c) => mine.has(c.transcription_id)), all.body);
  });

// --- the allowance -------------------------------------------------------------

test('free plan: 3 per transcript then 429 scope transcript; 10 a day then 429 scope day with Retry-After; ' +
  'two keys share it', async () => {
  assert.equal(counted(freeA), 0);
  const key2 = newKey(freeA.accountId);
  const a1 = checkAnswered(await ask(freeA, clipA.id, { question: BREAD_Q }), ASK_KEYS);
  assert.deepEqual([a1.remaining_per_transcript, a1.remaining_per_day], [2, 9]);
  const a2 = checkAnswered(await ask(key2, clipA.id, { question: BREAD_Q }), ASK_KEYS);
  assert.deepEqual([a2.remaining_per_transcript, a2.remaining_per_day], [1, 8], 'the second key has its own count');
  for (const c of a2.citations) checkCitation(clipA, c);
  // A no_answer at the last one left uses none of it.
  const na = await ask(freeA, clipA.id, { question: UNANSWERABLE });
  assert.equal(na.json.no_answer, true, na.body);
  assert.deepEqual([na.json.remaining_per_transcript, na.json.remaining_per_day], [1, 8], na.body);
  const a3 = checkAnswered(await ask(freeA, clipA.id, { question: BREAD_Q }), ASK_KEYS);
  assert.deepEqual([a3.remaining_per_transcript, a3.remaining_per_day], [0, 7]);
  for (const who of [freeA, key2]) {
    const e = checkQuota(await ask(who, clipA.id, { question: BREAD_Q }), 'transcript');
    if (e.limit !== undefined) assert.equal(e.limit, 3);
  }
  assert.equal(counted(freeA), 3);

  // Library asks count toward the day only.
  for (let left = 6; left >= 0; left--) {
    const who = left % 2 ? freeA : key2;
    const l = checkAnswered(await askLib(who, { question: BREAD_Q }), LIB_KEYS);
    assert.equal(l.remaining_today, left);
    assert.ok(l.citations.every((c) => c.transcription_id === clipA.id), JSON.stringify(l.citations));
  }
  assert.equal(counted(freeA), 10);
  const oldest = Date.parse(psql(`select data->>'asked_at' from events where stream_id = 'asks-${freeA.accountId}' ` +
    'order by version limit 1'));
  for (const who of [freeA, key2]) {
    const res = await askLib(who, { question: BREAD_Q });
    const e = checkQuota(res, 'day');
    if (e.limit !== undefined) assert.equal(e.limit, 10);
    // The oldest counted ask leaves the window 24 h after it was made.
    const expected = (oldest + 86400_000 - Date.now()) / 1000;
    assert.ok(Math.abs(e.retry_after - expected) <= 5,
      `retry_after ${e.retry_after}, the oldest ask leaves the window in ${expected.toFixed(1)} s`);
  }
  // The transcript scope is the one that waiting does not cure: it comes first.
  checkQuota(await ask(freeA, clipA.id, { question: BREAD_Q }), 'transcript');
  assert.equal(counted(freeA), 10, 'a refused ask was counted');
});

test('paid plans: starter 99 left after the first, per transcript unlimited; enterprise unlimited', async () => {
  assert.equal(counted(other), 0);
  const s = checkAnswered(await ask(other, otherClip.id, { question: BREAD_Q }), ASK_KEYS);
  assert.deepEqual([s.remaining_per_transcript, s.remaining_per_day], [null, 99]);
  const l = checkAnswered(await askLib(other, { question: BREAD_Q }), LIB_KEYS);
  assert.equal(l.remaining_today, 98);
  admin('plan', 'set', '--account', other.accountId, '--plan', 'pro');
  const p = checkAnswered(await ask(other, otherClip.id, { question: BREAD_Q }), ASK_KEYS);
  assert.deepEqual([p.remaining_per_transcript, p.remaining_per_day], [null, 200 - 2 - 1]);
  admin('plan', 'set', '--account', other.accountId, '--plan', 'business');
  const bz = checkAnswered(await ask(other, otherClip.id, { question: BREAD_Q }), ASK_KEYS);
  assert.deepEqual([bz.remaining_per_transcript, bz.remaining_per_day], [null, 1000 - 3 - 1]);
  admin('plan', 'set', '--account', other.accountId, '--plan', 'enterprise');
  const e = checkAnswered(await ask(other, otherClip.id, { question: BREAD_Q }), ASK_KEYS);
  assert.deepEqual([e.remaining_per_transcript, e.remaining_per_day], [null, null]);
  const el = checkAnswered(await askLib(other, { question: BREAD_Q }), LIB_KEYS);
  assert.equal(el.remaining_today, null);
  const en = await ask(other, otherClip.id, { question: UNANSWERABLE });
  assert.deepEqual([en.json.no_answer, en.json.remaining_per_transcript, en.json.remaining_per_day], [true, null, null],
    en.body);
  assert.equal(counted(other), 6);
  saved.otherEntry = e.qna_id;
  saved.otherLibEntry = el.qna_id;
});

test('20 concurrent asks with 3 left: exactly 3 answered and counted, 17 refused for the day', async () => {
  for (let left = 9; left >= 3; left--) {
    const l = checkAnswered(await askLib(freeB, { question: BREAD_Q }), LIB_KEYS);
    assert.equal(l.remaining_today, left);
  }
  assert.equal(counted(freeB), 7);
  // An account has at most two asks in flight (429 with reason
  // long_requests_in_flight, openapi "Long requests in flight"): each caller
  // retries those until it gets the allowance's own answer.
  const settle = async () => {
    for (;;) {
      const a = await askLib(freeB, { question: BREAD_Q });
      if (!(a.status === 429 && a.json?.error?.reason === 'long_requests_in_flight')) return a;
      await sleep(20 + Math.random() * 80);
    }
  };
  const answers = await Promise.all(Array.from({ length: 20 }, settle));
  const summary = answers.map((a) => `${a.status} ${a.body.slice(0, 160)}`).join('\n');
  const ok = answers.filter((a) => a.status === 200);
  assert.equal(ok.length, 3, summary);
  assert.equal(answers.filter((a) => a.status === 429).length, 17, summary);
  for (const a of ok) checkAnswered(a, LIB_KEYS);
  assert.equal(new Set(ok.map((a) => a.json.qna_id)).size, 3, 'two answers share a qna_id');
  assert.deepEqual(ok.map((a) => a.json.remaining_today).sort(), [0, 1, 2], summary);
  for (const a of answers.filter((x) => x.status === 429)) checkQuota(a, 'day');
  assert.equal(counted(freeB), 10);
  assert.equal(Number(psql(`select count(*) from asks where account_id = ${freeB.accountId}`)), 10);
  checkQuota(await ask(freeB, clipB.id, { question: BREAD_Q }), 'day');
});

// --- redaction -------------------------------------------------------------------

test('DELETE redacts an entry on both routes, down to the event store; it still counts; 403 and 404s', async () => {
  // A fresh per-transcript entry (on the museum, whose /result has room for
  // it) and a fresh library entry.
  const question = MUSEUM_Q;
  const t = checkAnswered(await ask(acc, museum.id, { question }), ASK_KEYS);
  assert.ok((await qnaOf(acc, museum)).some((q) => q.id === t.qna_id && q.source === 'user'), 'not in /result');
  const l = checkAnswered(await askLib(acc, { question: QUESTIONS[2] }), LIB_KEYS);
  const usedBefore = counted(acc);
  for (const [entry, q] of [[t, question], [l, QUESTIONS[2]]]) {
    const text = streamText(`qna-${entry.qna_id}`);
    assert.ok(text.includes(jsonText(q)) && text.includes(jsonText(entry.answer)),
      `the entry's stream does not hold its text before the redaction: ${text}`);
  }
  const allowance = streamText(`asks-${acc.accountId}`);
  for (const s of [question, t.answer, QUESTIONS[2], l.answer, ...t.citations.map((c) => c.quote)])
    assert.ok(!allowance.includes(jsonText(s)), `the allowance stream holds text: ${JSON.stringify(s)}`);

  // Wrong routes and wrong owners: 404, and nothing changes.
  envelope(assert, await unaskLib(acc, t.qna_id), 404, 'not_found');
  envelope(assert, await unask(acc, main.id, l.qna_id), 404, 'not_found');
  envelope(assert, await unask(acc, museum.id, l.qna_id), 404, 'not_found');
  envelope(assert, await unask(acc, main.id, t.qna_id), 404, 'not_found');
  envelope(assert, await unask(other, museum.id, t.qna_id), 404, 'not_found');
  envelope(assert, await unask(other, otherClip.id, t.qna_id), 404, 'not_found');
  envelope(assert, await unaskLib(other, l.qna_id), 404, 'not_found');
  envelope(assert, await unaskLib(acc, saved.otherLibEntry), 404, 'not_found');
  envelope(assert, await unask(acc, otherClip.id, saved.otherEntry), 404, 'not_found');
  envelope(assert, await unask(acc, main.id, saved.otherEntry), 404, 'not_found');
  envelope(assert, await unask(acc, main.id, 999999999999999999n), 404, 'not_found');
  envelope(assert, await unaskLib(acc, 1000000000000000), 404, 'not_found');
  assert.ok((await qnaOf(acc, museum)).some((q) => q.id === t.qna_id), 'a refused DELETE removed the entry');
  assert.equal(psql(`select count(*) from asks where id in (${t.qna_id}, ${l.qna_id})`), '2');

  // System Q&A: 403 on its transcription, 404 anywhere else or for another account.
  assert.ok(main.result.qna.length >= 1, 'main has no system Q&A');
  const sys = main.result.qna[0];
  assert.equal(sys.source, 'system');
  assert.ok(Math.floor(sys.id / 100) === main.id, `system id ${sys.id} of ${main.id}`);
  envelope(assert, await unask(acc, main.id, sys.id), 403, 'forbidden');
  envelope(assert, await unaskLib(acc, sys.id), 403, 'forbidden');
  envelope(assert, await unask(acc, museum.id, sys.id), 404, 'not_found');
  envelope(assert, await unask(other, main.id, sys.id), 404, 'not_found');
  envelope(assert, await unaskLib(other, sys.id), 404, 'not_found');
  const msys = museum.result.qna[0];
  if (msys) {
    envelope(assert, await unask(acc, museum.id, msys.id), 403, 'forbidden');
    envelope(assert, await unask(acc, main.id, msys.id), 404, 'not_found');
  }
  assert.deepEqual((await qnaOf(acc, main)).filter((q) => q.source === 'system'), main.result.qna);

  // The per-transcript entry.
  const d1 = await unask(acc, museum.id, t.qna_id);
  assert.equal(d1.status, 200, d1.body);
  assert.deepEqual(d1.json, { id: t.qna_id, redacted: true });
  assert.ok(!(await qnaOf(acc, museum)).some((q) => q.id === t.qna_id), 'the entry is still in /result');
  const wait = await api(`/transcriptions/${museum.id}/wait?timeout=1&include=qna`, { key: acc.key });
  assert.ok(!wait.json.qna.some((q) => q.id === t.qna_id), 'the entry is still in /wait');
  const again = await unask(acc, museum.id, t.qna_id);
  assert.equal(again.status, 200, again.body);
  assert.deepEqual(again.json, d1.json);
  // The library entry.
  const d2 = await unaskLib(acc, l.qna_id);
  assert.equal(d2.status, 200, d2.body);
  assert.deepEqual(d2.json, { id: l.qna_id, redacted: true });
  assert.deepEqual((await unaskLib(acc, l.qna_id)).json, d2.json);
  assert.equal(psql(`select count(*) from asks where id in (${t.qna_id}, ${l.qna_id})`), '0');
  // No text left in the event store.
  for (const [entry, q] of [[t, question], [l, QUESTIONS[2]]]) {
    const text = streamText(`qna-${entry.qna_id}`);
    assert.ok(text.length > 0, 'the entry stream is gone');
    for (const s of [q, entry.answer, ...entry.citations.map((c) => c.quote)])
      assert.ok(!text.includes(jsonText(s)), `qna-${entry.qna_id} still holds ${JSON.stringify(s)}:\n${text}`);
  }
  // Still counted.
  assert.equal(counted(acc), usedBefore);
  const na = await ask(acc, main.id, { question: UNANSWERABLE });
  assert.equal(na.json.remaining_per_day, 100 - usedBefore, 'the redaction gave an ask back');
  // Still refused from another account after the redaction.
  envelope(assert, await unask(other, museum.id, t.qna_id), 404, 'not_found');
});

test('another account can neither ask about, nor delete from, nor cite my transcriptions', async () => {
  const before = counted(other);
  envelope(assert, await ask(other, main.id, { question: QUESTIONS[0] }), 404, 'not_found');
  envelope(assert, await ask(other, museum.id, { question: MUSEUM_Q }), 404, 'not_found');
  envelope(assert, await unask(other, main.id, saved.main0.qna_id), 404, 'not_found');
  envelope(assert, await unaskLib(other, saved.library.qna_id), 404, 'not_found');
  envelope(assert, await unaskLib(other, saved.main0.qna_id), 404, 'not_found');
  // My entries are untouched.
  assert.ok((await qnaOf(acc, main)).some((q) => q.id === saved.main0.qna_id));
  assert.equal(psql(`select count(*) from asks where id = ${saved.library.qna_id}`), '1');
  // Their bread comes from their clip only; my subjects are not theirs to find.
  const lib = checkAnswered(await askLib(other, { question: BREAD_Q }), LIB_KEYS);
  assert.ok(lib.citations.every((c) => c.transcription_id === otherClip.id), lib.body);
  for (const c of lib.citations) checkCitation(otherClip, c, { title: otherClip.title });
  for (const q of [QUESTIONS[1], QUESTIONS[2], MUSEUM_Q]) {
    const r = await askLib(other, { question: q });
    assert.equal(r.status, 200, r.body);
    assert.equal(r.json.no_answer, true, `${q}: ${r.body}`);
  }
  const filtered = await askLib(other, { question: QUESTIONS[1], transcription_ids: [main.id, museum.id] });
  assert.equal(filtered.status, 200, filtered.body);
  assert.equal(filtered.json.no_answer, true, filtered.body);
  assert.equal(counted(other), before + 1);
  envelope(assert, await ask(acc, otherClip.id, { question: BREAD_Q }), 404, 'not_found');
});

test('a read-only key gets 403 scope_forbidden on both asks and both DELETEs', async () => {
  const ro = newKey(acc.accountId, '--permission', 'read_only');
  const before = counted(acc);
  envelope(assert, await ask(ro, main.id, { question: QUESTIONS[0] }), 403, 'scope_forbidden');
  envelope(assert, await askLib(ro, { question: QUESTIONS[0] }), 403, 'scope_forbidden');
  envelope(assert, await unask(ro, main.id, saved.main0.qna_id), 403, 'scope_forbidden');
  envelope(assert, await unaskLib(ro, saved.library.qna_id), 403, 'scope_forbidden');
  assert.equal(counted(acc), before);
  assert.ok((await qnaOf(ro, main)).some((q) => q.id === saved.main0.qna_id), 'a read-only DELETE removed it');
  assert.equal(psql(`select count(*) from asks where id = ${saved.library.qna_id}`), '1');
  envelope(assert, await ask({ key: undefined }, main.id, { question: QUESTIONS[0] }), 401, 'unauthenticated');
  envelope(assert, await askLib({ key: undefined }, { question: QUESTIONS[0] }), 401, 'unauthenticated');
});


test('409 not_ready for a quoted, a processing and a failed transcription; 404 for none', async () => {
  const before = counted(acc);
  const q = await api('/quotes', { method: 'POST', key: acc.key,
    body: { source: 'external_url', url: `${media.url('ask-bread.mp3')}`, duration_seconds: 10 } });
  assert.equal(q.status, 200, q.body);
  envelope(assert, await ask(acc, q.json.transcription_id, { question: BREAD_Q }), 409, 'not_ready');
  const hang = await hangingMediaServer();
  try {
    const id = await created(acc.key, { source: 'external_url', url: hang.url, duration_seconds: 10 });
    // Queued, then held in the download: processing either way.
    envelope(assert, await ask(acc, id, { question: BREAD_Q }), 409, 'not_ready');
    await Promise.race([hang.requested, sleep(120_000).then(() => { throw new Error('the worker never fetched'); })]);
    envelope(assert, await ask(acc, id, { question: BREAD_Q }), 409, 'not_ready');
    hang.release();
    const done = await finished(server, acc.key, id);
    assert.equal(done.status, 'failed', JSON.stringify(done));
    envelope(assert, await ask(acc, id, { question: BREAD_Q }), 409, 'not_ready');
    // Only the owner learns the state.
    envelope(assert, await ask(other, id, { question: BREAD_Q }), 404, 'not_found');
  } finally {
    hang.release();
    await hang.close();
  }
  envelope(assert, await ask(acc, 999999999, { question: BREAD_Q }), 404, 'not_found');
  assert.equal(counted(acc), before);
});

// --- validation ------------------------------------------------------------------

test('bad input: 400 invalid_request naming the field, nothing counted', async () => {
  const before = counted(acc);
  const bad = async (res, field, what) => {
    const e = envelope(assert, res, 400, 'invalid_request');
    assert.equal(e.field, field, `${what}: ${res.body}`);
  };
  for (const [name, send] of [['per transcript', (body, opts) => ask(acc, main.id, body, opts)],
    ['library', (body, opts) => askLib(acc, body, opts)]]) {
    await bad(await send('{"question": "bread?"', {}), 'body', `${name}: malformed JSON`);
    await bad(await send('["bread?"]', {}), 'body', `${name}: an array body`);
    await bad(await send({}), 'question', `${name}: no question`);
    await bad(await send({ question: null }), 'question', `${name}: null question`);
    await bad(await send({ question: '' }), 'question', `${name}: empty question`);
    await bad(await send({ question: ' \t\n  ' }), 'question', `${name}: blank question`);
    await bad(await send({ question: 42 }), 'question', `${name}: a number`);
    await bad(await send({ question: 'a'.repeat(501) }), 'question', `${name}: 501 characters`);
    await bad(await send({ question: 'é'.repeat(501) }), 'question', `${name}: 501 two-byte characters`);
    for (const top_k of [9, 101, 'x', 1.5, '60', -1])
      await bad(await send({ question: QUESTIONS[0], top_k }), 'top_k', `${name}: top_k ${JSON.stringify(top_k)}`);
    // At the limits: accepted (no word of these is in any transcript).
    for (const question of ['é'.repeat(500), '😀'.repeat(500), `   ${'ü'.repeat(500)}   `, 'x']) {
      const res = await send({ question, top_k: 10 });
      assert.equal(res.status, 200, `${name}: ${[...question].length} code points: ${res.body}`);
      assert.equal(res.json.no_answer, true, res.body);
    }
    const hundred = await send({ question: UNANSWERABLE, top_k: 100 });
    assert.equal(hundred.status, 200, hundred.body);
  }
  for (const transcription_ids of [String(main.id), main.id, { id: main.id },
    Array.from({ length: 51 }, (_, i) => main.id + i), [main.id, 1.5], [String(main.id)], [0], [-3], [null]])
    await bad(await askLib(acc, { question: QUESTIONS[0], transcription_ids }), 'transcription_ids',
      `transcription_ids ${JSON.stringify(transcription_ids).slice(0, 60)}`);
  // Fifty ids is the limit; an empty list or null is accepted.
  const fifty = await askLib(acc, { question: UNANSWERABLE,
    transcription_ids: Array.from({ length: 50 }, (_, i) => main.id + i) });
  assert.equal(fifty.status, 200, fifty.body);
  const nul = await askLib(acc, { question: UNANSWERABLE, transcription_ids: null });
  assert.equal(nul.status, 200, nul.body);
  assert.equal(counted(acc), before, 'a refused or unanswered ask was counted');
});

// --- deletion of the transcription ---------------------------------------------------

test('deleting the transcription removes its saved entries and redacts their text', async () => {
  const a = checkAnswered(await ask(acc, museum.id, { question: MUSEUM_Q }), ASK_KEYS);
  for (const c of a.citations) checkCitation(museum, c);
  const b = checkAnswered(await ask(acc, museum.id, { question: 'What do museum tickets cost for children?' }),
    ASK_KEYS);
  const entries = [[a, MUSEUM_Q], [b, 'What do museum tickets cost for children?']];
  assert.equal(psql(`select count(*) from asks where transcription_id = ${museum.id}`), '2');
  for (const [e, q] of entries) assert.ok(streamText(`qna-${e.qna_id}`).includes(jsonText(q)));
  // A library answer quoting the museum (checked by the next test).
  const lib0 = checkAnswered(await askLib(acc, { question: MUSEUM_Q }), LIB_KEYS);
  assert.ok(lib0.citations.some((c) => c.transcription_id === museum.id), lib0.body);
  saved.libAboutMuseum = lib0;
  // Redacted already: deleting the transcription must not trip over it.
  assert.equal((await unask(acc, museum.id, b.qna_id)).status, 200);
  const used = counted(acc);

  const del = await api(`/transcriptions/${museum.id}`, { method: 'DELETE', key: acc.key });
  assert.equal(del.status, 200, del.body);
  assert.equal(psql(`select count(*) from asks where transcription_id = ${museum.id}`), '0');
  for (const [e, q] of entries) {
    const text = streamText(`qna-${e.qna_id}`);
    assert.ok(text.length > 0, 'the stream is gone');
    for (const s of [q, e.answer, ...e.citations.map((c) => c.quote)])
      assert.ok(!text.includes(jsonText(s)), `qna-${e.qna_id} still holds ${JSON.stringify(s)}:\n${text}`);
  }
  envelope(assert, await ask(acc, museum.id, { question: MUSEUM_Q }), 404, 'not_found');
  assert.equal(counted(acc), used, 'the deletion gave asks back');
  // Entries about the other transcription are untouched.
  assert.ok((await qnaOf(acc, main)).some((q) => q.id === saved.main0.qna_id));
  // The library no longer finds the museum.
  const lib = await askLib(acc, { question: MUSEUM_Q });
  assert.equal(lib.status, 200, lib.body);
  assert.ok(lib.json.no_answer || lib.json.citations.every((c) => c.transcription_id !== museum.id), lib.body);
  // Its entries were redacted with it: their DELETE answers as a repeat does.
  for (const e of [a, b]) assert.deepEqual((await unask(acc, museum.id, e.qna_id)).json, { id: e.qna_id, redacted: true });
});

test('after the deletion no saved answer keeps text quoted from the deleted transcription', () => {
  const lib = saved.libAboutMuseum;
  assert.ok(lib, 'the deletion test did not run');
  const quotes = lib.citations.filter((c) => c.transcription_id === museum.id).map((c) => c.quote);
  assert.ok(quotes.length >= 1);
  const row = psql(`select question || ' ' || answer || ' ' || citations::text from asks where id = ${lib.qna_id}`);
  const stream = streamText(`qna-${lib.qna_id}`);
  for (const q of quotes) {
    assert.ok(!row.includes(q), `library entry ${lib.qna_id} still quotes the deleted transcription ${museum.id} ` +
      `in the asks table: ${row}`);
    assert.ok(!stream.includes(jsonText(q)), `library entry ${lib.qna_id} still quotes the deleted transcription ` +
      `${museum.id} in its event stream: ${stream}`);
  }
});
