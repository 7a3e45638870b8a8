// POST /v1/audio/transcriptions with the official `openai` SDK against a
// server whose pipeline runs in another process (`scribe worker`): a stream
// sends the text of each piece of speech as it is recognized, before the
// transcription completes, then the final segments and text; a client that
// goes away mid-wait loses neither the transcription nor its money; fair use
// and a key's monthly cap hold on this route as on POST /api/v1/transcriptions.
// (The shared rate limiter is tested with the other limiter tests, in
// ratelimit.test.mjs, which runs alone.)
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI, { toFile } from 'openai';
import { startServer, startWorker, newAccount, curl, auditWallet, answered, finished, DB, WORK } from './harness.mjs';
import { say, dialogue, GARDEN_TALK } from './media.mjs';

const psql = (sql) => execFileSync('psql', [DB, '-At', '-c', sql], { encoding: 'utf8' }).trim();
const ENV = { SCRIBE_ALLOW_PRIVATE_URLS: '1', SCRIBE_WORKER_POLL_MS: '100' };
let server, worker;
let hello; // one sentence
let talk; // eight turns by three voices: several pieces of speech
before(async () => {
  hello = say('slt', 'Good morning. The library opens at nine and closes at five.', 'oas-hello');
  talk = dialogue([
    ...GARDEN_TALK,
    { voice: 'slt', text: 'What would you tell a listener who wants to start a garden of her own?' },
    { voice: 'rms', text: 'Start small, with herbs in a window box, and ask your neighbours for seeds.' },
  ], 'oas-talk', 0.8);
  // The HTTP server runs no pipeline: every job is done by the worker
  // process, so what a stream receives came through the database.
  server = await startServer({ extraEnv: ENV });
  worker = startWorker({ extraEnv: { ...ENV, SCRIBE_WORKER_SLOTS: '2' } });
});
after(async () => {
  await worker?.stop();
  await server?.stop();
});

const client = (key, opts = {}) => new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key, ...opts });
const wav = async (path, name) => toFile(readFileSync(path), name, { type: 'audio/wav' });
const api = (path, key, opts = {}) => curl(`${server.url}/api/v1${path}`, { key, ...opts });
const transcriptions = async (key) => (await api('/transcriptions?limit=200', key)).json.data;
const settled = (id) => Number(psql(`select count(*) from events where type = 'WalletHoldSettled' ` +
  `and data->>'hold_id' like 'transcription-${Number(id)}-%'`));
const words = (text) => text.toLowerCase().replace(/[^a-z ]/g, ' ').split(/\s+/).filter(Boolean);
const sorted = (list) => [...list].sort();
const staged = () => readdirSync(join(WORK, 'staging', 'presigned')).filter((f) => f.startsWith('upl_'));

test('stream: each piece of speech is a delta before the transcription completes, then the segments and the final text', async () => {
  const acc = newAccount({ balance: 5 });
  const oa = client(acc.key);
  const { data: stream, response } = await oa.audio.transcriptions.create({
    file: await wav(talk, 'talk.wav'), model: 'gpt-4o-transcribe-diarize', response_format: 'diarized_json', stream: true,
  }).withResponse();
  const id = Number(response.headers.get('x-scribe-transcription-id'));
  assert.ok(id > 0);
  const events = [];
  let atFirstDelta; // the transcription as /api/v1 saw it when the first delta arrived
  for await (const e of stream) {
    if (e.type === 'transcript.text.delta' && !atFirstDelta) atFirstDelta = (await api(`/transcriptions/${id}`, acc.key)).json;
    events.push(e);
  }
  // The first piece's text came while the rest was still being worked on.
  assert.equal(atFirstDelta.status, 'processing', JSON.stringify(atFirstDelta));
  assert.ok(['transcribing', 'diarizing', 'enriching'].includes(atFirstDelta.stage), atFirstDelta.stage);

  // Deltas, then segments, then one done.
  const kinds = events.map((e) => ({ 'transcript.text.delta': 'd', 'transcript.text.segment': 's', 'transcript.text.done': 'D' })[e.type]).join('');
  assert.match(kinds, /^d{3,}s+D$/, kinds);
  const deltas = events.filter((e) => e.type === 'transcript.text.delta');
  const segments = events.filter((e) => e.type === 'transcript.text.segment');
  const done = events.at(-1);
  // A delta is the text of one piece, in recording order: the first bare, each
  // later one after a space, no piece's text twice.
  assert.doesNotMatch(deltas[0].delta, /^\s/);
  for (const d of deltas.slice(1)) assert.match(d.delta, /^ \S/);
  for (const d of deltas) assert.equal(d.segment_id, undefined, 'a draft piece is not a final segment');
  const drafted = deltas.map((d) => d.delta).join('');
  for (const [a, b] of [['welcome', 'roof'], ['roof', 'school'], ['school', 'morning'], ['morning', 'rain'], ['rain', 'seeds']])
    assert.ok(drafted.toLowerCase().indexOf(a) < drafted.toLowerCase().indexOf(b), `${a} before ${b}: ${drafted}`);
  // Sentences are rebuilt once the voices are told apart: the final text has
  // the same words as the deltas, its casing and punctuation may differ.
  assert.deepEqual(sorted(words(drafted)), sorted(words(done.text)));
  assert.equal(segments.map((s) => s.text).join(' '), done.text);
  assert.deepEqual(sorted(new Set(segments.map((s) => s.speaker))), ['A', 'B', 'C']);
  segments.forEach((s, i) => {
    assert.equal(s.id, `seg_${i}`);
    assert.ok(s.end > s.start && (i === 0 || s.start >= segments[i - 1].start), JSON.stringify(s));
  });
  // The events are the transcription's: its diarized_json answer has the same segments and text.
  const json = await oa.audio.transcriptions.create({
    file: await wav(talk, 'talk.wav'), model: 'gpt-4o-transcribe-diarize', response_format: 'diarized_json',
  }).withResponse();
  assert.equal(Number(json.response.headers.get('x-scribe-transcription-id')), id);
  assert.equal(json.data.text, done.text);
  assert.deepEqual(json.data.segments, segments);
  assert.deepEqual((await transcriptions(acc.key)).map((t) => t.id), [id]);
  assert.equal(settled(id), 1);
  auditWallet(acc.accountId);
});

test('a client that goes away mid-wait loses neither the transcription nor its money: each completes, settled once', async () => {
  const acc = newAccount({ balance: 5 });
  const oa = client(acc.key, { maxRetries: 0 });
  // A stream left after its first delta.
  const { data: stream, response } = await oa.audio.transcriptions.create({
    file: await wav(talk, 'left.wav'), model: 'whisper-1', stream: true,
  }).withResponse();
  const streamed = Number(response.headers.get('x-scribe-transcription-id'));
  for await (const e of stream) if (e.type === 'transcript.text.delta') break; // ends the SDK's request
  assert.notEqual((await api(`/transcriptions/${streamed}`, acc.key)).json.status, 'completed');
  // A plain request abandoned while its transcription is processing.
  const abort = new AbortController();
  const pending = oa.audio.transcriptions.create({ file: await wav(talk, 'gone.wav'), model: 'whisper-1' }, { signal: abort.signal });
  let plain;
  for (let i = 0; i < 1200 && !plain; i++) {
    plain = (await transcriptions(acc.key)).find((t) => t.id !== streamed);
    if (!plain) await sleep(50);
  }
  assert.equal(plain?.status, 'processing', JSON.stringify(plain));
  abort.abort();
  await assert.rejects(pending, OpenAI.APIUserAbortError);

  // Both are completed, charged and settled once; no hold is left.
  let charged = 0;
  for (const id of [streamed, plain.id]) {
    assert.equal((await finished(server, acc.key, id)).status, 'completed');
    const t = (await api(`/transcriptions/${id}`, acc.key)).json;
    assert.ok(t.charge_usd > 0, JSON.stringify(t));
    charged += t.charge_usd;
    assert.equal(settled(id), 1);
  }
  const me = (await api('/me', acc.key)).json;
  assert.ok(Math.abs(me.wallet_balance_usd - (5 - charged)) < 1e-6, JSON.stringify(me));
  assert.equal(me.wallet_available_usd, me.wallet_balance_usd);
  auditWallet(acc.accountId);
  // The abandoned request asked again is answered by its transcription.
  const again = await oa.audio.transcriptions.create({ file: await wav(talk, 'gone.wav'), model: 'whisper-1' }).withResponse();
  assert.equal(Number(again.response.headers.get('x-scribe-transcription-id')), plain.id);
  assert.ok(words(again.data.text).includes('garden'), again.data.text);
  assert.equal(settled(plain.id), 1);
});

test('fair use: past 60 minutes of audio in 6 h the route answers 429 rate_limited, which the SDK does not retry', async () => {
  const acc = newAccount({ balance: 5 });
  const hour = await api('/transcriptions', acc.key, { method: 'POST',
    body: { source: 'external_url', url: 'http://127.0.0.1:9/talk.mp3', duration_seconds: 3600 } });
  assert.equal(hour.status, 202, hour.body);
  const before = await answered(server, 'POST', '/v1/audio/transcriptions', 429);
  await assert.rejects(client(acc.key).audio.transcriptions.create({ file: await wav(hello, 'fair.wav'), model: 'whisper-1' }), (err) => {
    assert.ok(err instanceof OpenAI.RateLimitError, String(err));
    assert.equal(err.code, 'rate_limited');
    assert.equal(err.type, 'rate_limit_error');
    assert.match(err.message, /fair use/);
    assert.ok(err.error.retry_after > 60, JSON.stringify(err.error));
    assert.equal(err.headers.get('x-should-retry'), 'false');
    return true;
  });
  assert.equal(await answered(server, 'POST', '/v1/audio/transcriptions', 429) - before, 1, 'the SDK did not retry');
  assert.deepEqual((await transcriptions(acc.key)).map((t) => t.id), [hour.json.id]);
  assert.deepEqual(staged(), []);
});

test("the key's monthly cap: what fits is transcribed, a request that would pass the cap is 402 spend_cap_exceeded", async () => {
  // hello (about 4 s) costs about 0.0012 USD, talk (about 50 s) about 0.014.
  const acc = newAccount({ balance: 5, cap: 0.005 });
  const oa = client(acc.key);
  const first = await oa.audio.transcriptions.create({ file: await wav(hello, 'cap.wav'), model: 'whisper-1' }).withResponse();
  const id = Number(first.response.headers.get('x-scribe-transcription-id'));
  const spent = (await api(`/transcriptions/${id}`, acc.key)).json.charge_usd;
  assert.ok(spent > 0 && spent < 0.005, String(spent));
  const before = await answered(server, 'POST', '/v1/audio/transcriptions', 402);
  await assert.rejects(oa.audio.transcriptions.create({ file: await wav(talk, 'cap-talk.wav'), model: 'whisper-1' }), (err) => {
    assert.ok(err instanceof OpenAI.APIError && !(err instanceof OpenAI.RateLimitError), String(err));
    assert.equal(err.status, 402);
    assert.equal(err.code, 'spend_cap_exceeded');
    assert.equal(err.type, 'insufficient_quota');
    assert.equal(err.headers.get('x-should-retry'), 'false');
    assert.equal(err.error.monthly_cap_usd, 0.005);
    assert.equal(err.error.month_to_date_spend_usd, spent);
    return true;
  });
  assert.equal(await answered(server, 'POST', '/v1/audio/transcriptions', 402) - before, 1, 'the SDK did not retry');
  assert.deepEqual((await transcriptions(acc.key)).map((t) => t.id), [id]);
  assert.equal((await api('/me', acc.key)).json.api_key.month_to_date_spend_usd, spent);
  assert.deepEqual(staged(), []);
  auditWallet(acc.accountId);
});
