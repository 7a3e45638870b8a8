// The OpenAI-compatible surface (/v1) driven by the official `openai` npm
// SDK against the real server and pipeline: every response format on a real
// flite recording, timestamps, diarization of three voices, streaming, the
// model list, errors as the SDK surfaces them, charging once across retries
// (Idempotency-Key, the no-key dedupe, the SDK's own retry on a timeout), and
// the transcription then in /api/v1. Plus curl: a large multipart upload
// streamed to disk without being held in memory, and a body over the limit
// refused before it is read.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync, statSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI, { toFile } from 'openai';
import { startServer, newAccount, curl, auditWallet, rawHttp, answered, DB, WORK } from './harness.mjs';
import { say, dialogue, GARDEN_TALK, MEDIA_DIR } from './media.mjs';

const psql = (sql) => execFileSync('psql', [DB, '-At', '-c', sql], { encoding: 'utf8' }).trim();
let server;
let hello; // one sentence by one voice
let three; // three voices in turn
before(async () => {
  hello = say('slt', 'Good morning. The library opens at nine and closes at five.', 'oa-hello');
  three = dialogue(GARDEN_TALK, 'oa-three', 0.6);
  server = await startServer({ workers: true, extraEnv: { SCRIBE_WORKER_POLL_MS: '100' } });
});
after(async () => { await server?.stop(); });

const client = (key, opts = {}) => new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key, ...opts });
const wav = async (path, name = 'talk.wav') => toFile(readFileSync(path), name, { type: 'audio/wav' });
const api = (path, key) => curl(`${server.url}/api/v1${path}`, { key });
const transcriptions = async (key) => (await api('/transcriptions?limit=200', key)).json.data;
const settlements = (accountId) => Number(psql(`select count(*) from events where type = 'WalletHoldSettled' ` +
  `and (data->>'account_id')::bigint = ${Number(accountId)}`));
const metric = (route, status) => answered(server, 'POST', route, status);
const words = (text) => text.toLowerCase().replace(/[^a-z ]/g, ' ').split(/\s+/).filter(Boolean);

test('every response format of one recording, charged once, and the transcription in /api/v1', async () => {
  const acc = newAccount({ balance: 5 });
  const oa = client(acc.key);
  // The first request creates the transcription and waits for it.
  const { data: verbose, response } = await oa.audio.transcriptions.create({
    file: await wav(hello, 'hello.wav'), model: 'whisper-1', response_format: 'verbose_json',
    timestamp_granularities: ['word', 'segment'],
  }).withResponse();
  const id = Number(response.headers.get('x-scribe-transcription-id'));
  assert.ok(id > 0);
  const heard = words(verbose.text);
  for (const w of ['morning', 'library', 'nine', 'five']) assert.ok(heard.includes(w), `"${w}" in "${verbose.text}"`);
  assert.equal(verbose.task, 'transcribe');
  assert.equal(verbose.language, 'english');
  assert.ok(Math.abs(verbose.duration - Number(execFileSync('soxi', ['-D', hello], { encoding: 'utf8' }))) < 0.1);
  assert.equal(verbose.usage.type, 'duration');
  assert.equal(verbose.usage.seconds, Math.max(1, Math.ceil(verbose.duration - 1e-6)));
  // Segment timestamps: in order, inside the recording, the text theirs.
  assert.ok(verbose.segments.length >= 1);
  assert.equal(verbose.segments.map((s) => s.text).join(' '), verbose.text);
  for (const [i, s] of verbose.segments.entries()) {
    assert.equal(s.id, i);
    assert.ok(s.start >= 0 && s.end > s.start && s.end <= verbose.duration + 0.05, JSON.stringify(s));
    for (const k of ['seek', 'tokens', 'temperature', 'avg_logprob', 'compression_ratio', 'no_speech_prob']) assert.ok(k in s, k);
  }
  // Word timestamps: every recognized word, increasing, inside its segment.
  assert.deepEqual(verbose.words.map((w) => w.word.toLowerCase()), heard);
  for (const [i, w] of verbose.words.entries()) {
    assert.ok(w.end > w.start, JSON.stringify(w));
    if (i > 0) assert.ok(w.start >= verbose.words[i - 1].start);
    assert.ok(verbose.segments.some((s) => w.start >= s.start - 0.001 && w.end <= s.end + 0.001), JSON.stringify(w));
  }

  // The same upload again, without a key, in each other format: answered by
  // the same transcription (the dedupe window), rendered as asked.
  const again = async (params) => oa.audio.transcriptions.create({ file: await wav(hello, 'hello.wav'), model: 'whisper-1', ...params }).withResponse();
  const json = await again({});
  assert.deepEqual(Object.keys(json.data).sort(), ['text', 'usage']);
  assert.equal(json.data.text, verbose.text);
  assert.equal(Number(json.response.headers.get('x-scribe-transcription-id')), id);
  const text = await again({ response_format: 'text' });
  assert.equal(typeof text.data, 'string');
  assert.equal(text.data, verbose.text + '\n');
  const srt = await again({ response_format: 'srt' });
  assert.match(srt.data, /^1\n\d\d:\d\d:\d\d,\d{3} --> \d\d:\d\d:\d\d,\d{3}\n/);
  assert.ok(words(srt.data.replace(/^\d+$|^.*-->.*$/gm, '')).join(' ').includes('the library'));
  const vtt = await again({ response_format: 'vtt' });
  assert.match(vtt.data, /^WEBVTT\n\n\d\d:\d\d:\d\d\.\d{3} --> /);
  assert.equal(vtt.response.headers.get('content-type').split(';')[0], 'text/vtt');
  const diarized = await again({ response_format: 'diarized_json' });
  assert.equal(diarized.data.text, verbose.text);
  assert.deepEqual([...new Set(diarized.data.segments.map((s) => s.speaker))], ['A']);
  for (const r of [json, text, srt, vtt, diarized]) assert.equal(Number(r.response.headers.get('x-scribe-transcription-id')), id);

  // One transcription, charged once, and an ordinary one in /api/v1.
  const list = await transcriptions(acc.key);
  assert.deepEqual(list.map((t) => t.id), [id]);
  assert.equal(settlements(acc.accountId), 1);
  const t = (await api(`/transcriptions/${id}`, acc.key)).json;
  assert.equal(t.status, 'completed');
  assert.equal(t.source, 'upload');
  assert.equal(t.original_filename, 'hello.wav');
  assert.equal(t.pipeline_code, 'standard');
  assert.ok(Math.abs(t.charge_usd - verbose.usage.seconds / 3600) < 0.0001, `charged ${t.charge_usd}`);
  const transcript = await api(`/transcriptions/${id}/transcript?timestamps=false&speaker_labels=false`, acc.key);
  assert.equal(transcript.body.trim(), verbose.text);
  auditWallet(acc.accountId);
});

test('stream: true sends transcript.text.delta events, the segments, then transcript.text.done', async () => {
  const acc = newAccount({ balance: 5 });
  const oa = client(acc.key);
  const stream = await oa.audio.transcriptions.create({ file: await wav(hello, 'stream.wav'), model: 'gpt-4o-transcribe', stream: true });
  const events = [];
  for await (const e of stream) events.push(e);
  const done = events.pop();
  assert.equal(done.type, 'transcript.text.done');
  // The deltas (the draft text of each piece of speech), then the segments.
  const deltas = events.filter((e) => e.type === 'transcript.text.delta');
  const segments = events.slice(deltas.length);
  assert.ok(deltas.length >= 1);
  assert.deepEqual(events.slice(0, deltas.length), deltas);
  for (const s of segments) assert.equal(s.type, 'transcript.text.segment');
  // The same words as the final text, which is the segments' text.
  assert.deepEqual(words(deltas.map((e) => e.delta).join('')), words(done.text));
  assert.equal(segments.map((s) => s.text).join(' '), done.text);
  assert.ok(words(done.text).includes('library'), done.text);
  // The same text as the JSON answer, which is the same transcription.
  const json = await oa.audio.transcriptions.create({ file: await wav(hello, 'stream.wav'), model: 'gpt-4o-transcribe' });
  assert.equal(json.text, done.text);
  assert.equal((await transcriptions(acc.key)).length, 1);
});

test('diarized_json tells the three voices apart; a client timeout and the SDK retries charge once', async () => {
  const acc = newAccount({ balance: 5 });
  const before = await metric('/v1/audio/transcriptions', 200);
  // The SDK times out after 1.5 s and retries twice (its defaults are 10
  // minutes and 2): every try uploads the file anew with a new boundary.
  await assert.rejects(
    client(acc.key, { timeout: 1500, maxRetries: 2 }).audio.transcriptions.create({ file: await wav(three, 'radio.wav'), model: 'whisper-1' }),
    OpenAI.APIConnectionTimeoutError);
  const { data, response } = await client(acc.key).audio.transcriptions.create({
    file: await wav(three, 'radio.wav'), model: 'gpt-4o-transcribe-diarize', response_format: 'diarized_json',
  }).withResponse();
  const id = Number(response.headers.get('x-scribe-transcription-id'));
  // Four requests answered (the three timed-out tries too, once it completed:
  // their answers go to closed connections), one transcription, one charge.
  for (let i = 0; i < 50 && await metric('/v1/audio/transcriptions', 200) - before < 4; i++) await sleep(100);
  assert.equal(await metric('/v1/audio/transcriptions', 200) - before, 4);
  assert.deepEqual((await transcriptions(acc.key)).map((t) => t.id), [id]);
  assert.equal(settlements(acc.accountId), 1);

  assert.equal(data.task, 'transcribe');
  assert.ok(data.duration > 20, `duration ${data.duration}`);
  assert.ok(data.segments.length >= 6, `${data.segments.length} segments`);
  for (const s of data.segments) {
    assert.equal(s.type, 'transcript.text.segment');
    assert.match(s.id, /^seg_\d+$/);
    assert.ok(s.end > s.start);
  }
  const speakers = [...new Set(data.segments.map((s) => s.speaker))].sort();
  assert.deepEqual(speakers, ['A', 'B', 'C']);
  // The first turn is by the first voice, the second by another.
  assert.equal(data.segments[0].speaker, 'A');
  assert.notEqual(data.segments.find((s) => /roof|vegetables/i.test(s.text))?.speaker, 'A');
  auditWallet(acc.accountId);
});

test('an Idempotency-Key makes a repeat the same transcription; another body under it is refused', async () => {
  const acc = newAccount({ balance: 5 });
  const oa = client(acc.key);
  const opts = { headers: { 'Idempotency-Key': `oa-${acc.keyId}` } };
  const call = async (file, name) =>
    oa.audio.transcriptions.create({ file: await wav(file, name), model: 'whisper-1' }, opts).withResponse();
  // Two at once: one creates, the other waits for it (409 in flight, which the SDK retries) or replays.
  const [a, b] = await Promise.all([call(hello, 'idem.wav'), call(hello, 'idem.wav')]);
  const c = await call(hello, 'idem.wav');
  const id = Number(a.response.headers.get('x-scribe-transcription-id'));
  for (const r of [b, c]) {
    assert.equal(Number(r.response.headers.get('x-scribe-transcription-id')), id);
    assert.equal(r.data.text, a.data.text);
  }
  assert.deepEqual((await transcriptions(acc.key)).map((t) => t.id), [id]);
  assert.equal(settlements(acc.accountId), 1);
  await assert.rejects(call(three, 'other.wav'), (err) => {
    assert.ok(err instanceof OpenAI.BadRequestError, String(err));
    assert.equal(err.code, 'invalid_request');
    assert.equal(err.param, 'Idempotency-Key');
    return true;
  });
});

test('errors as the SDK surfaces them: bad key, no money, unsupported file, read-only key', async () => {
  const rich = newAccount({ balance: 5 });
  const file = async () => wav(hello, 'e.wav');
  await assert.rejects(client('key_live_' + 'x'.repeat(40)).audio.transcriptions.create({ file: await file(), model: 'whisper-1' }), (err) => {
    assert.ok(err instanceof OpenAI.AuthenticationError, String(err));
    assert.equal(err.status, 401);
    assert.equal(err.type, 'authentication_error');
    assert.ok(['invalid_api_key', 'unauthenticated'].includes(err.code), err.code);
    assert.equal(err.error.request_id, err.requestID);
    return true;
  });
  // Money is 402, never the 429 the SDK would retry; x-should-retry says so too.
  const poor = newAccount({ balance: 0 });
  const before = await metric('/v1/audio/transcriptions', 402);
  await assert.rejects(client(poor.key).audio.transcriptions.create({ file: await file(), model: 'whisper-1' }), (err) => {
    assert.ok(err instanceof OpenAI.APIError && !(err instanceof OpenAI.RateLimitError), String(err));
    assert.equal(err.status, 402);
    assert.equal(err.code, 'insufficient_funds');
    assert.equal(err.type, 'insufficient_quota');
    assert.equal(err.headers.get('x-should-retry'), 'false');
    assert.match(err.error.doc_url, /\/docs\/errors#insufficient_funds$/);
    return true;
  });
  assert.equal(await metric('/v1/audio/transcriptions', 402) - before, 1, 'the SDK did not retry');
  assert.deepEqual(await transcriptions(poor.key), []);
  // A text file is not media: refused before anything is stored or charged.
  writeFileSync(join(MEDIA_DIR, 'notes.txt'), 'These are notes, not audio.\n');
  await assert.rejects(client(rich.key).audio.transcriptions.create({
    file: await toFile(readFileSync(join(MEDIA_DIR, 'notes.txt')), 'notes.txt', { type: 'text/plain' }), model: 'whisper-1',
  }), (err) => {
    assert.ok(err instanceof OpenAI.BadRequestError, String(err));
    assert.equal(err.param, 'file');
    assert.equal(err.type, 'invalid_request_error');
    return true;
  });
  // Bytes that call themselves audio but are not: ffprobe refuses them.
  await assert.rejects(client(rich.key).audio.transcriptions.create({
    file: await toFile(Buffer.from('RIFF nonsense, not a wave file at all'), 'fake.wav', { type: 'audio/wav' }), model: 'whisper-1',
  }), (err) => err instanceof OpenAI.BadRequestError && err.param === 'file');
  await assert.rejects(client(rich.key).audio.transcriptions.create({ file: await file(), model: 'no-such-model' }),
    (err) => err instanceof OpenAI.BadRequestError && err.code === 'unsupported_pipeline' && err.param === 'model');
  assert.deepEqual(await transcriptions(rich.key), []);
  // A read-only key may list models but not transcribe.
  const reader = newAccount({ balance: 5, permission: 'read_only' });
  await assert.rejects(client(reader.key).audio.transcriptions.create({ file: await file(), model: 'whisper-1' }), (err) => {
    assert.ok(err instanceof OpenAI.PermissionDeniedError, String(err));
    assert.equal(err.code, 'scope_forbidden');
    assert.equal(err.type, 'permission_error');
    return true;
  });
  assert.ok((await client(reader.key).models.list()).data.length > 0);
  // Nothing was left behind in staging by the refusals.
  assert.deepEqual(readdirSync(join(WORK, 'staging', 'presigned')).filter((f) => f.startsWith('upl_')), []);
});

test('models.list names the pipeline codes and the OpenAI model names clients send', async () => {
  const acc = newAccount({ balance: 1 });
  const oa = client(acc.key);
  const ids = [];
  for await (const m of oa.models.list()) {
    assert.equal(m.object, 'model');
    assert.equal(m.owned_by, 'scribe');
    assert.equal(typeof m.created, 'number');
    ids.push(m.id);
  }
  for (const id of ['standard', 'whisper-1', 'gpt-4o-transcribe', 'gpt-4o-mini-transcribe']) assert.ok(ids.includes(id), id);
  const one = await oa.models.retrieve('whisper-1');
  assert.equal(one.pipeline, 'standard');
  await assert.rejects(oa.models.retrieve('nope'), OpenAI.NotFoundError);
});

test('curl: a large multipart upload streams to disk without being held in memory', async () => {
  // A server of its own without workers: its memory is the upload path's.
  const srv = await startServer();
  const big = join(MEDIA_DIR, 'oa-big.wav');
  try {
    const acc = newAccount({ balance: 0 });
    // 7,000 s of 16 kHz 16-bit silence: 224 MB.
    execFileSync('sox', ['-n', '-r', '16000', '-c', '1', '-b', '16', big, 'trim', '0', '7000']);
    const size = statSync(big).size;
    assert.ok(size > 200e6, `${size} bytes`);
    const hwm = () => Number(readFileSync(`/proc/${srv.proc.pid}/status`, 'utf8').match(/VmHWM:\s+(\d+) kB/)[1]) * 1024;
    const before = hwm();
    const res = await curl(`${srv.url}/v1/audio/transcriptions`, {
      method: 'POST', key: acc.key, rawArgs: ['-F', `file=@${big};type=audio/wav`, '-F', 'model=whisper-1', '--max-time', '300'],
    });
    // Read whole, stored and measured (1 h 57 min): over the free plan's
    // 90 minutes per file, refused before anything is held.
    assert.equal(res.status, 400, res.body);
    assert.equal(res.json.error.param, 'file');
    assert.match(res.json.error.message, /117 minutes long/);
    const grew = hwm() - before;
    assert.ok(grew < 64 * 1024 * 1024, `peak memory grew by ${grew} bytes for a ${size}-byte upload`);
    // The refused upload left no staging file, no upload row and no stored object.
    assert.deepEqual(readdirSync(join(WORK, 'staging', 'presigned')).filter((f) => f.startsWith('upl_')), []);
    assert.equal(psql(`select count(*) from uploads where account_id = ${Number(acc.accountId)}`), '0');
    // A Content-Length over the limit is refused from the head, before any byte of the body.
    const head = await rawHttp(srv.port, `POST /v1/audio/transcriptions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${acc.key}\r\n` +
      'Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 2000000000\r\n\r\n');
    assert.equal(head.status, 413, head.raw);
    assert.equal(head.json.error.param, 'file');
    assert.equal(head.json.error.type, 'invalid_request_error');
  } finally {
    await srv.stop();
    rmSync(big, { force: true });
  }
});
