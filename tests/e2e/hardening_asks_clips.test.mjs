// Asks and clips hardened (issue 37), through the real `scribe serve`:
//  - both asks honour Idempotency-Key as every POST does: the same key
//    replays the first answer (Idempotent-Replayed) and is not counted
//    again, not even on the free plan's 3 per transcript; another body under
//    the key is 400; once the saved entry is deleted (by DELETE or with the
//    transcription it is about or quotes) its replay no longer holds its text,
//    neither on the wire nor in the stored copy;
//  - DELETE of a saved entry whose transcription was deleted answers the
//    same 200 as a repeat, and another account's entry id is still 404;
//  - a clip's client_nonce is a UUID compared in its canonical (lower-case)
//    form: the upper-cased repeat is the same clip with one hold;
//  - the clip quote and POST .../clips refuse the same bad input with the
//    same code and field (one validator).
// One short flite recording, fetched by link, is transcribed once per
// account. No clip is rendered (SCRIBE_CLIP_SLOTS=0): the clips stay queued,
// which is all the nonce and validation checks need.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { startServer, newAccount, curl, envelope, finished, clipHolds, DB } from './harness.mjs';
import { dialogue, convert, startMediaServer } from './media.mjs';

const psql = (sql) => execFileSync('psql', [DB, '-At', '-c', sql], { encoding: 'utf8' }).trim();
const ENV = { SCRIBE_ALLOW_PRIVATE_URLS: '1', SCRIBE_WORKER_POLL_MS: '100', SCRIBE_RATE_LIMIT_PER_MINUTE: '100000',
  SCRIBE_WORKER_SLOTS: '2', SCRIBE_CLIP_SLOTS: '0' };
const MUSEUM_Q = 'When does the museum open?';
const TICKETS_Q = 'What do museum tickets cost for children?';

let media, server;
let freeA; // free plan: the idempotency of both asks (tA, tA2)
let freeB; // free plan: DELETE after the transcription's deletion (tB)
let stranger; // free plan: another account (tS)
let payer; // pay-as-you-go: clips (tC)
const tA = {};
const tA2 = {};
const tB = {};
const tS = {};
const tC = {};

const api = (path, opts = {}) => curl(`${server.url}/api/v1${path}`, opts);
const idem = (key) => ({ 'Idempotency-Key': key });
const ask = (who, id, body, headers = {}) =>
  api(`/transcriptions/${id}/ask`, { method: 'POST', key: who.key, body, headers });
const askLib = (who, body, headers = {}) => api('/ask', { method: 'POST', key: who.key, body, headers });
const unask = (who, id, qnaId) => api(`/transcriptions/${id}/ask/${qnaId}`, { method: 'DELETE', key: who.key });
const unaskLib = (who, qnaId) => api(`/ask/${qnaId}`, { method: 'DELETE', key: who.key });
// Counted asks of an account: QuestionAsked events on its allowance stream.
const counted = (who) =>
  Number(psql(`select count(*) from events where stream_id = 'asks-${who.accountId}' and type = 'QuestionAsked'`));
const savedRows = (who) => Number(psql(`select count(*) from asks where account_id = ${who.accountId}`));
const jsonText = (s) => JSON.stringify(s).slice(1, -1); // how a string reads inside JSON text
// The idempotent responses stored for these keys of the account's key, as one text.
const storedResponses = (who, keys) => psql(`select coalesce(string_agg(response_body, ' '), '') from idempotency_keys ` +
  `where principal = 'key:${who.keyId}' and key in (${keys.map((k) => `'${k}'`).join(',')})`);

function answered(res) {
  assert.equal(res.status, 200, res.body);
  assert.equal(res.json.no_answer, false, `no answer: ${res.body}`);
  assert.ok(res.json.answer.length > 0 && res.json.citations.length >= 1, res.body);
  return res.json;
}

// The texts a saved answer holds: the answer and its quotes.
const textsOf = (b) => [b.answer, ...b.citations.map((c) => c.quote)].filter((s) => s.length > 0);

// A replay after the entry was deleted: the first response's status and ids,
// none of its text.
function redactedReplay(res, first) {
  assert.equal(res.status, 200, res.body);
  assert.equal(res.headers['idempotent-replayed'], 'true', res.body);
  assert.equal(res.json.qna_id, first.qna_id);
  assert.equal(res.json.redacted, true, res.body);
  assert.equal(res.json.answer, '');
  assert.deepEqual(res.json.citations, []);
  for (const s of textsOf(first)) assert.ok(!res.body.includes(jsonText(s)), `the replay holds ${s}: ${res.body}`);
}

async function transcribed(who, fx, url) {
  const res = await api('/transcriptions', { method: 'POST', key: who.key, body: { source: 'external_url', url } });
  assert.equal(res.status, 202, res.body);
  fx.id = res.json.id;
  const done = await finished(server, who.key, fx.id, { limitSeconds: 600 });
  assert.equal(done.status, 'completed', JSON.stringify(done.error));
  const t = await api(`/transcriptions/${fx.id}`, { key: who.key });
  fx.duration = t.json.duration_seconds;
  const w = await api(`/transcriptions/${fx.id}/words?limit=5000`, { key: who.key });
  assert.equal(w.status, 200, w.body);
  fx.words = w.json.words.filter((x) => x.text.trim() !== '');
}

before(async () => {
  media = await startMediaServer();
  const mp3 = convert(dialogue([
    { voice: 'rms', text: 'The city museum opens at nine in the morning. Tickets for the museum cost five dollars ' +
      'for children, and the dinosaur hall is on the second floor.' },
  ], 'hardening-museum'), 'hardening-museum.mp3', ['-metadata', 'title=Museum visit']);
  server = await startServer({ workers: true, extraEnv: ENV });
  freeA = newAccount({ plan: 'free', balance: 5 });
  freeB = newAccount({ plan: 'free', balance: 5 });
  stranger = newAccount({ plan: 'free', balance: 5 });
  payer = newAccount({ balance: 5 });
  await Promise.all([[freeA, tA], [freeA, tA2], [freeB, tB], [stranger, tS], [payer, tC]]
    .map(([who, fx]) => transcribed(who, fx, media.url(mp3))));
  assert.ok(tC.words.length >= 5, `only ${tC.words.length} words`);
});
after(async () => { await server?.stop(); await media?.close(); });

// --- asks and Idempotency-Key ---------------------------------------------------

test('ask about a transcription: the same Idempotency-Key replays the first answer and is not counted again, ' +
  'not even past the free plan\'s 3 per transcript; another body under the key is 400', async () => {
  const k1 = randomUUID();
  const first = await ask(freeA, tA.id, { question: MUSEUM_Q }, idem(k1));
  const b1 = answered(first);
  assert.equal(first.headers['idempotent-replayed'], undefined);
  assert.equal(b1.remaining_per_transcript, 2);
  assert.equal(counted(freeA), 1);

  // The retry: the same body (reformatted) under the same key.
  const again = await ask(freeA, tA.id, `{ "question" : ${JSON.stringify(MUSEUM_Q)} }`, idem(k1));
  assert.equal(again.status, 200, again.body);
  assert.equal(again.headers['idempotent-replayed'], 'true');
  assert.deepEqual(again.json, b1);
  assert.equal(counted(freeA), 1, 'the replay was counted');
  assert.equal(savedRows(freeA), 1, 'the replay saved a second entry');

  // Another body under the key: 400, nothing asked.
  const misuse = envelope(assert, await ask(freeA, tA.id, { question: TICKETS_Q }, idem(k1)), 400, 'invalid_request');
  assert.equal(misuse.field, 'Idempotency-Key');
  assert.equal(counted(freeA), 1);

  // Two more asks use the allowance up; the replay still answers, uncounted.
  assert.equal(answered(await ask(freeA, tA.id, { question: TICKETS_Q }, idem(randomUUID()))).remaining_per_transcript,
    1, 'a replay used one of the 3 asks per transcript');
  assert.equal(answered(await ask(freeA, tA.id, { question: MUSEUM_Q })).remaining_per_transcript, 0);
  const late = await ask(freeA, tA.id, { question: MUSEUM_Q }, idem(k1));
  assert.equal(late.status, 200, late.body);
  assert.equal(late.headers['idempotent-replayed'], 'true');
  assert.deepEqual(late.json, b1);
  const over = envelope(assert, await ask(freeA, tA.id, { question: MUSEUM_Q }, idem(randomUUID())), 429,
    'qna_quota_exceeded');
  assert.equal(over.scope, 'transcript');
  assert.equal(counted(freeA), 3);
});

test('library ask: the same Idempotency-Key replays the first answer and is not counted again; another body is 400',
  async () => {
    const before = counted(freeA);
    const k = randomUUID();
    const body = { question: MUSEUM_Q, transcription_ids: [tA.id] };
    const first = await askLib(freeA, body, idem(k));
    const b = answered(first);
    assert.equal(b.saved, true);
    const again = await askLib(freeA, body, idem(k));
    assert.equal(again.status, 200, again.body);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(again.json, b);
    assert.equal(counted(freeA), before + 1);
    const misuse = envelope(assert, await askLib(freeA, { question: TICKETS_Q, transcription_ids: [tA.id] }, idem(k)),
      400, 'invalid_request');
    assert.equal(misuse.field, 'Idempotency-Key');
    assert.equal(counted(freeA), before + 1);
  });

test('a deleted entry leaves no text in its replay: DELETE of the entry, and deletion of the transcription it is ' +
  'about or quotes', async () => {
  // A library entry, deleted by DELETE /ask/{qnaId}.
  const k1 = randomUUID();
  const lib = answered(await askLib(freeA, { question: TICKETS_Q, transcription_ids: [tA.id] }, idem(k1)));
  assert.ok(storedResponses(freeA, [k1]).includes(jsonText(lib.answer)), 'the answer was not kept for replay');
  assert.equal((await unaskLib(freeA, lib.qna_id)).status, 200);
  redactedReplay(await askLib(freeA, { question: TICKETS_Q, transcription_ids: [tA.id] }, idem(k1)), lib);

  // An entry about tA2 and a library entry quoting it, deleted with it.
  const k2 = randomUUID();
  const k3 = randomUUID();
  const about = answered(await ask(freeA, tA2.id, { question: MUSEUM_Q }, idem(k2)));
  const quoting = answered(await askLib(freeA, { question: TICKETS_Q, transcription_ids: [tA2.id] }, idem(k3)));
  assert.ok(quoting.citations.every((c) => c.transcription_id === tA2.id));
  const used = counted(freeA);
  const del = await api(`/transcriptions/${tA2.id}`, { method: 'DELETE', key: freeA.key });
  assert.equal(del.status, 200, del.body);
  redactedReplay(await ask(freeA, tA2.id, { question: MUSEUM_Q }, idem(k2)), about);
  redactedReplay(await askLib(freeA, { question: TICKETS_Q, transcription_ids: [tA2.id] }, idem(k3)), quoting);
  assert.equal(counted(freeA), used, 'a replay after the deletion was counted');

  // Nothing of the deleted entries is kept for replay any more.
  const stored = storedResponses(freeA, [k1, k2, k3]);
  assert.ok(stored.includes('"redacted":true'), stored);
  for (const s of [...textsOf(lib), ...textsOf(about), ...textsOf(quoting)])
    assert.ok(!stored.includes(jsonText(s)), `a stored response still holds ${JSON.stringify(s)}`);
});

// --- DELETE of an entry under a deleted transcription --------------------------

test('DELETE of a saved entry after its transcription was deleted is the same 200 as a repeat; ' +
  'another account\'s entry id is still 404', async () => {
  const entry = answered(await ask(freeB, tB.id, { question: MUSEUM_Q }));
  const lib = answered(await askLib(freeB, { question: TICKETS_Q, transcription_ids: [tB.id] }));
  const theirs = answered(await ask(stranger, tS.id, { question: MUSEUM_Q }));
  const used = counted(freeB);
  for (const [who, fx] of [[freeB, tB], [stranger, tS]]) {
    const del = await api(`/transcriptions/${fx.id}`, { method: 'DELETE', key: who.key });
    assert.equal(del.status, 200, del.body);
  }
  for (let i = 0; i < 2; i++) {
    const d = await unask(freeB, tB.id, entry.qna_id);
    assert.equal(d.status, 200, d.body);
    assert.deepEqual(d.json, { id: entry.qna_id, redacted: true });
    const l = await unaskLib(freeB, lib.qna_id);
    assert.equal(l.status, 200, l.body);
    assert.deepEqual(l.json, { id: lib.qna_id, redacted: true });
  }
  assert.equal(counted(freeB), used, 'the deletion gave asks back');
  // Tenant isolation: under the other's deleted transcription, under one's own,
  // and entries that are not on the path's transcription.
  envelope(assert, await unask(stranger, tB.id, entry.qna_id), 404, 'not_found');
  envelope(assert, await unask(stranger, tS.id, entry.qna_id), 404, 'not_found');
  envelope(assert, await unask(freeB, tS.id, theirs.qna_id), 404, 'not_found');
  envelope(assert, await unask(freeB, tB.id, theirs.qna_id), 404, 'not_found');
  envelope(assert, await unask(freeB, tB.id, lib.qna_id), 404, 'not_found');
  envelope(assert, await unaskLib(stranger, lib.qna_id), 404, 'not_found');
  envelope(assert, await unaskLib(freeB, entry.qna_id), 404, 'not_found');
  envelope(assert, await unask(freeB, tB.id, 1000000000000000), 404, 'not_found');
  // No event was appended to the entry's stream by these calls.
  assert.equal(psql(`select count(*) from events where stream_id = 'qna-${entry.qna_id}' and type = 'QuestionRedacted'`),
    '0');
});

// --- clips ---------------------------------------------------------------------

const clipsOf = (fx) => `/transcriptions/${fx.id}/clips`;
const createClip = (who, fx, body, headers = {}) => api(clipsOf(fx), { method: 'POST', key: who.key, body, headers });
const quoteClip = (who, fx, qs) => api(`${clipsOf(fx)}/quote?${qs}`, { key: who.key });
// A range of 2 s holding words.
const range = () => {
  const w = tC.words[0];
  const start = Math.max(0, Math.floor(w.start_ms / 100) / 10);
  return { start, end: Math.round((start + 2) * 10) / 10 };
};

test('client_nonce: a UUID and its upper-cased repeat are the same clip with one hold, either way round', async () => {
  const { start, end } = range();
  for (const [first, repeat] of [
    (() => { const n = randomUUID(); return [n, n.toUpperCase()]; })(),
    (() => { const n = randomUUID(); return [n.toUpperCase(), n]; })(),
    (() => { const n = randomUUID(); return [n.replace(/[a-f]/g, (c) => c.toUpperCase()), n.toUpperCase()]; })(),
  ]) {
    const one = await createClip(payer, tC, { start_seconds: start, end_seconds: end, client_nonce: first });
    assert.equal(one.status, 202, one.body);
    const two = await createClip(payer, tC, { start_seconds: start, end_seconds: end, client_nonce: repeat });
    assert.equal(two.status, 202, two.body);
    assert.equal(two.json.id, one.json.id, `${repeat} after ${first} made another clip`);
    assert.equal(clipHolds(payer.accountId, one.json.id).holds.length, 1);
    assert.equal(psql(`select client_nonce from clips where id = ${one.json.id}`), first.toLowerCase(),
      'the nonce is not kept in its canonical form');
  }
  // One hold per clip made, none for the repeats.
  const clips = Number(psql(`select count(*) from clips where account_id = ${payer.accountId}`));
  assert.equal(clips, 3);
  const holds = Number(psql(`select count(*) from events where type = 'WalletHoldPlaced' and ` +
    `(data->>'account_id')::bigint = ${payer.accountId} and data->>'purpose' = 'clip'`));
  assert.equal(holds, clips);
});

test('the quote and POST .../clips refuse the same input with the same code and field', async () => {
  const { start, end } = range();
  const before = Number(psql(`select count(*) from clips where account_id = ${payer.accountId}`));
  // [the option, its value as sent, the field named]; the POST sends the
  // value as the JSON string it is, the quote as the query's text.
  const cases = [
    ['title', 'bell\u0007', 'title'],
    ['title', 'two\nlines', 'title'],
    ['title', 'tab\there', 'title'],
    ['title', 'del\u007f', 'title'],
    ['title', 'c1\u0085', 'title'],
    ['start_seconds', '0x10', 'start_seconds'],
    ['start_seconds', '0x1', 'start_seconds'],
    ['start_seconds', ` ${start}`, 'start_seconds'],
    ['start_seconds', `${start} `, 'start_seconds'],
    ['start_seconds', `+${start}`, 'start_seconds'],
    ['start_seconds', 'inf', 'start_seconds'],
    ['start_seconds', 'nan', 'start_seconds'],
    ['start_seconds', '', 'start_seconds'],
    ['end_seconds', ` ${end}`, 'end_seconds'],
    ['end_seconds', `${end}.`, 'end_seconds'],
    ['words_per_line', ' 3', 'words_per_line'],
    ['words_per_line', '0x3', 'words_per_line'],
    ['words_per_line', '2.5', 'words_per_line'],
    ['max_charge_usd', '0x1', 'max_charge_usd'],
    ['max_charge_usd', ' 1', 'max_charge_usd'],
    ['rights_affirmed', 'yes', 'rights_affirmed'],
  ];
  for (const [name, value, field] of cases) {
    const numbers = { start_seconds: start, end_seconds: end };
    const body = { ...numbers, [name]: value };
    const qs = Object.entries(body).map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
    const what = `${name}=${JSON.stringify(value)}`;
    const posted = await createClip(payer, tC, body);
    assert.equal(posted.status, 400, `POST ${what}: ${posted.body}`);
    const quoted = await quoteClip(payer, tC, qs);
    assert.equal(quoted.status, 400, `quote ${what}: ${quoted.body}`);
    const p = envelope(assert, posted, 400, 'invalid_request');
    const q = envelope(assert, quoted, 400, 'invalid_request');
    assert.equal(p.field, field, `POST ${what}: ${p.message}`);
    assert.equal(q.field, field, `quote ${what}: ${q.message}`);
  }
  // Both accept the same good input: numbers as JSON writes them.
  for (const [s, e] of [[start, end], [`${start}e0`, `${Math.round(end * 10)}E-1`]]) {
    const q = await quoteClip(payer, tC,
      `start_seconds=${s}&end_seconds=${e}&words_per_line=2.0&title=${encodeURIComponent(' Tides ')}`);
    assert.equal(q.status, 200, q.body);
  }
  assert.equal(Number(psql(`select count(*) from clips where account_id = ${payer.accountId}`)), before,
    'a refused POST made a clip');
});
