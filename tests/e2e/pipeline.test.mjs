// The speech pipeline end to end: real media (flite voices, converted by
// ffmpeg) fetched from a loopback server, decoded by FFmpeg, recognized by
// PocketSphinx inside the real `scribe serve` workers, read back over HTTP.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { truncateSync, statSync, copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startServer, newAccount, curl, finished, auditWallet, BIN, DB } from './harness.mjs';
import { dialogue, convert, silence, seconds, startMediaServer, MEDIA_DIR } from './media.mjs';

const psql = (sql) => execFileSync('psql', [DB, '-At', '-c', sql], { encoding: 'utf8' }).trim();
const WORKER_ENV = { SCRIBE_ALLOW_PRIVATE_URLS: '1', SCRIBE_WORKER_POLL_MS: '100' };

let media, server, talk, talkSeconds;
before(async () => {
  media = await startMediaServer();
  const wav = dialogue([
    { voice: 'slt', text: 'Good morning everyone. Welcome to the weekly meeting about the new library.' },
    { voice: 'rms', text: 'Thank you. I would like to talk about the budget for next year.' },
    { voice: 'slt', text: 'That sounds good. Please tell us how much money we need.' },
    { voice: 'rms', text: 'We need about two million dollars for the building and the books.' },
  ], 'talk');
  talk = convert(wav, 'talk.mp3', ['-metadata', 'title=Library meeting']);
  talkSeconds = seconds(talk);
  server = await startServer({ workers: true, extraEnv: WORKER_ENV });
});
after(async () => { await server?.stop(); await media?.close(); });

const api = (srv, path, opts = {}) => curl(`${srv.url}/api/v1${path}`, opts);
const create = (srv, key, body) => api(srv, '/transcriptions', { method: 'POST', key, body });

function stages(id) {
  return psql(`select data->>'stage' from events where stream_id = 'transcription-${id}' ` +
    `and type = 'TranscriptionStageChanged' order by version`).split('\n').filter(Boolean);
}

test('a two-voice recording is transcribed into punctuated sentences with speakers', async () => {
  const acc = newAccount({ balance: 5 });
  const res = await create(server, acc.key, { source: 'external_url', url: media.url(talk) });
  assert.equal(res.status, 202, res.body);
  const id = res.json.id;
  const done = await finished(server, acc.key, id);
  assert.equal(done.status, 'completed', JSON.stringify(done.error));

  const t = (await api(server, `/transcriptions/${id}`, { key: acc.key })).json;
  assert.equal(t.status, 'completed');
  assert.equal(t.stage, 'completed');
  assert.equal(t.detected_language, 'en');
  assert.equal(t.title, 'Library meeting');
  assert.ok(Math.abs(t.duration_seconds - talkSeconds) < 0.3, `measured ${t.duration_seconds}, file ${talkSeconds}`);
  assert.deepEqual(stages(id), ['downloading', 'decoding', 'transcribing', 'diarizing', 'enriching']);

  const result = (await api(server, `/transcriptions/${id}/result?include=segments`, { key: acc.key })).json;
  const segs = result.segments;
  assert.ok(segs.length >= 4, `only ${segs.length} segments`);
  assert.equal(result.segments_meta.total, segs.length);
  assert.equal(segs[0].speaker, 'SPEAKER_00');
  const speakers = new Set(segs.map((s) => s.speaker));
  assert.ok(speakers.has('SPEAKER_01'), `speakers: ${[...speakers]}`);
  for (const [i, s] of segs.entries()) {
    assert.equal(s.segment_index, i);
    assert.match(s.text, /^[A-Z].*[.?]$/, `segment reads as a sentence: "${s.text}"`);
    assert.ok(s.end_ms > s.start_ms && s.start_ms >= 0 && s.end_ms <= talkSeconds * 1000 + 50);
    assert.equal(s.start_seconds, s.start_ms / 1000);
    if (i > 0) assert.ok(s.start_ms >= segs[i - 1].start_ms);
  }
  // The recognizer is not perfect; most content words must come through.
  const text = segs.map((s) => s.text.toLowerCase()).join(' ');
  const expected = ['morning', 'welcome', 'meeting', 'library', 'talk', 'budget', 'year', 'money', 'million', 'books'];
  const found = expected.filter((w) => text.includes(w));
  assert.ok(found.length >= 7, `recognized only ${found} of ${expected} in "${text}"`);

  // Charged once, for the measured duration (per second, 1 USD per hour).
  const settled = psql(`select count(*) from events where type = 'WalletHoldSettled' and data->>'hold_id' = ` +
    `(select hold_id from transcriptions where id = ${id})`);
  assert.equal(settled, '1');
  assert.ok(Math.abs(t.charge_usd - Math.ceil(talkSeconds) / 3600) < 0.0001, `charged ${t.charge_usd}`);
  const me = (await api(server, '/me', { key: acc.key })).json;
  assert.ok(Math.abs(me.wallet_balance_usd - (5 - t.charge_usd)) < 1e-6);
});

test('media the pipeline cannot use fails with a distinct code, never a stuck job', async () => {
  const acc = newAccount({ balance: 5 });
  const notMedia = media.write('notes.mp3', 'these are meeting notes, not audio\n'.repeat(200));
  const noAudio = join(MEDIA_DIR, 'video-only.mp4');
  execFileSync('ffmpeg', ['-y', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc=duration=2:size=160x120:rate=10',
    '-an', noAudio]);
  const quiet = convert(silence(4, 'quiet'), 'quiet.flac');
  const cut = join(MEDIA_DIR, 'cut.wav');
  copyFileSync(join(MEDIA_DIR, 'talk.wav'), cut);
  truncateSync(cut, Math.floor(statSync(cut).size * 0.4));
  const missing = media.write('missing.mp3', 'x');
  media.gone(missing);

  const cases = [
    [notMedia, 'media_undecodable'],
    [noAudio, 'media_no_audio'],
    [quiet, 'no_speech'],
    [cut, 'media_truncated'],
    [missing, 'source_unavailable'],
  ];
  const ids = [];
  for (const [path] of cases) {
    // duration_seconds skips the create-time probe, so the worker meets the file.
    const res = await create(server, acc.key, { source: 'external_url', url: media.url(path), duration_seconds: 10 });
    assert.equal(res.status, 202, res.body);
    ids.push(res.json.id);
  }
  for (const [i, [path, code]] of cases.entries()) {
    const done = await finished(server, acc.key, ids[i]);
    assert.equal(done.status, 'failed', `${path}: ${done.status}`);
    assert.equal(done.error?.code, code, `${path}: ${JSON.stringify(done.error)}`);
    assert.ok(done.error.message.length > 0);
  }
  // A failed attempt is charged its hold (the spec: a retry is a new paid attempt).
  auditWallet(acc.accountId);
});

test('a worker killed mid-job: another worker completes the job once and the customer is charged once', async () => {
  const acc = newAccount({ balance: 5 });
  // About a minute of speech, so the kill lands while it is being transcribed.
  const turns = [];
  const lines = ['The committee met on Tuesday to discuss the plans for the river park.',
    'Several neighbours asked questions about the parking and the new bridge.',
    'The mayor promised an answer before the end of the month.'];
  for (let i = 0; i < 6; i++) turns.push({ voice: i % 2 ? 'awb' : 'slt', text: lines[i % 3] });
  const long = convert(dialogue(turns, 'long'), 'long.mp3');
  const env = { ...WORKER_ENV, SCRIBE_WORKER_LEASE_SECONDS: '3', SCRIBE_ASR_THREADS: '1' };
  const first = await startServer({ workers: true, extraEnv: env });
  const res = await create(first, acc.key, { source: 'external_url', url: media.url(long) });
  assert.equal(res.status, 202, res.body);
  const id = res.json.id;
  const until = Date.now() + 60_000;
  while (Date.now() < until && !stages(id).includes('transcribing')) await sleep(50);
  assert.ok(stages(id).includes('transcribing'), 'the first worker never started transcribing');
  await first.stop('SIGKILL');
  assert.equal(psql(`select count(*) from job_leases where transcription_id = ${id} and expires_at > now()`), '1',
    'the killed worker held a live lease');

  const second = await startServer({ workers: true, extraEnv: env });
  try {
    const done = await finished(second, acc.key, id);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
  } finally {
    await second.stop();
  }
  const count = (type) => psql(`select count(*) from events where stream_id = 'transcription-${id}' and type = '${type}'`);
  assert.equal(count('TranscriptionCompleted'), '1');
  assert.equal(psql(`select count(*) from events where type = 'WalletHoldSettled' and data->>'hold_id' = ` +
    `(select hold_id from transcriptions where id = ${id})`), '1');
  assert.equal(psql(`select count(*) from jobs where transcription_id = ${id}`), '0');
  assert.equal(psql(`select claims from job_leases where transcription_id = ${id}`), '', 'the lease was dropped');
  auditWallet(acc.accountId);
});

test('an OpenAI-compatible server is its own pipeline only when one is configured', async () => {
  const acc = newAccount({ balance: 5 });
  const quote = (srv, extra) => api(srv, '/quotes', { method: 'POST', key: acc.key,
    body: { source: 'external_url', url: 'http://127.0.0.1:9/a.mp3', duration_seconds: 60, ...extra } });
  // Without configuration: the embedded engine only, English only.
  const plain = (await api(server, '/pipelines', { key: acc.key })).json.pipelines;
  assert.deepEqual(plain.map((p) => p.code), ['standard']);
  assert.deepEqual(plain[0].supported_languages.map((l) => l.code), ['en']);
  assert.equal((await quote(server, { language: 'de' })).json.error.code, 'unsupported_language');
  assert.equal((await quote(server, { pipeline_code: 'openai_compatible' })).json.error.code, 'unsupported_pipeline');

  const configured = await startServer({ extraEnv: { ...WORKER_ENV, SCRIBE_OPENAI_ASR_URL: 'http://127.0.0.1:9',
    SCRIBE_OPENAI_ASR_LANGUAGES: 'en,de' } });
  try {
    const list = (await api(configured, '/pipelines', { key: acc.key })).json.pipelines;
    const external = list.find((p) => p.code === 'openai_compatible');
    assert.ok(external, JSON.stringify(list));
    assert.deepEqual(external.supported_languages.map((l) => l.code), ['en', 'de']);
    assert.equal(external.supported_languages[1].label, 'German');
    const ok = await quote(configured, { pipeline_code: 'openai_compatible', language: 'de' });
    assert.equal(ok.status, 200, ok.body);
    assert.equal((await quote(configured, { language: 'de' })).json.error.code, 'unsupported_language',
      'the standard pipeline still speaks only English');
  } finally {
    await configured.stop();
  }
});

test('an operator\'s domain language model: scribe lm mix builds it and the decoder uses it', () => {
  // A domain of ten digit words, as a unigram ARPA model. At weight 1 every
  // other word of the en-us model gets no probability, so whatever the
  // recording says, the decoder can only answer in digits.
  const digits = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'zero'];
  const arpa = join(MEDIA_DIR, 'digits.arpa');
  writeFileSync(arpa, `\\data\\\nngram 1=12\n\n\\1-grams:\n-99\t<s>\n-1.041393\t</s>\n` +
    digits.map((d) => `-1.041393\t${d}\n`).join('') + '\n\\end\\\n');
  const lm = join(MEDIA_DIR, 'digits.lm.bin');
  const mix = spawnSync(BIN, ['lm', 'mix', '--other', arpa, '--weight', '1', '--out', lm], { encoding: 'utf8' });
  assert.equal(mix.status, 0, mix.stderr);
  assert.match(mix.stderr, /at 1: \d+ words, \d+ bigrams, \d+ trigrams/);

  const transcribe = (env) => spawnSync(BIN, ['transcribe', talk, '--text'],
    { encoding: 'utf8', env: { ...process.env, ...env } });
  const words = (out) => out.split('\n').filter(Boolean)
    .flatMap((line) => line.replace(/^\[[^\]]*\] [^:]*: /, '').toLowerCase().match(/[a-z']+/g) ?? []);
  const domain = transcribe({ SCRIBE_POCKETSPHINX_LM: lm });
  assert.equal(domain.status, 0, domain.stderr);
  const heard = words(domain.stdout);
  assert.ok(heard.length > 0, domain.stdout);
  assert.deepEqual(heard.filter((w) => !digits.includes(w)), [], domain.stdout);
  const general = transcribe({});
  assert.equal(general.status, 0, general.stderr);
  assert.ok(words(general.stdout).filter((w) => !digits.includes(w)).length > 10, general.stdout);

  // Bad input is refused with a message and writes nothing.
  const bad = spawnSync(BIN, ['lm', 'mix', '--other', arpa, '--weight', '1.5', '--out', join(MEDIA_DIR, 'x.lm.bin')],
    { encoding: 'utf8' });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--weight must be a number from 0 to 1/);
  const missing = transcribe({ SCRIBE_POCKETSPHINX_LM: join(MEDIA_DIR, 'none.lm.bin') });
  assert.notEqual(missing.status, 0);
  assert.match(missing.stderr, /language model not found/);
});

test('waits that race their job\'s completion all answer 200', async () => {
  // Jobs that fail within milliseconds (nothing listens on port 9), each
  // waited on by several clients from the moment it exists: completions land
  // while waits are still reading.
  const acc = newAccount({ balance: 5 });
  const waits = [];
  // 12 creates and 36 waits stay under the key's 60 requests per minute.
  for (let i = 0; i < 12; i++) {
    const res = await create(server, acc.key, { source: 'external_url', url: `http://127.0.0.1:9/race-${i}.mp3`,
      duration_seconds: 5 });
    assert.equal(res.status, 202, res.body);
    for (let w = 0; w < 3; w++) waits.push(finished(server, acc.key, res.json.id));
  }
  for (const a of await Promise.all(waits)) assert.equal(a.status, 'failed');
});
