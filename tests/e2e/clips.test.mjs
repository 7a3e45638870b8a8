// Clips end to end (issue 21) through the real `scribe serve`: POST
// .../clips, the quote, the list, GET with `wait`, the signed file links, the
// money (a 0.05 USD hold per started minute, settled on completion, released
// on failure, on every plan), the limits, idempotency, webhooks and callbacks
// verified by an independent receiver, tenant isolation and deletion.
//
// Real speech (flite voices) is transcribed by the server's own workers; the
// renders are then opened with ffprobe and ffmpeg: codecs, frame size per
// aspect, length, and frames grabbed in the middle of a transcribed word to
// find the captions where domain/clip_captions.cpp's caption_layout puts
// them. Clips are 2-3 s long so that the renders stay cheap; the checks are
// combined so that this file asks for nine renders (two are audio cuts, one
// fails before FFmpeg runs). The limits are tested with the render workers
// paused, so that the queued clips stay queued.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  startServer, newAccount, newKey, admin, curl, envelope, finished, auditWallet, clipFinished, clipHolds, DB,
  uploadFile as upload,
} from './harness.mjs';
import {
  dialogue, convert, seconds, startMediaServer, videoWithAudio, download, probe, grabFrame, captionRegions,
  meanLuma, regionStats, sharpEdges, parseSrt,
} from './media.mjs';
import { selfSignedCertificate, startReceiver, verifySignature } from './webhook_receiver.mjs';
import SrtParser from 'srt-parser-2';

const psql = (sql) => execFileSync('psql', [DB, '-At', '-c', sql], { encoding: 'utf8' }).trim();
const count = (sql) => Number(psql(`select count(*) from events where ${sql}`));

const CHARGE = 0.05; // USD per started 60 s of clip
const FRAME = { '9:16': [1080, 1920], '1:1': [1080, 1080], '16:9': [1920, 1080] };
const CLIP_KEYS = ['aspect', 'caption_position', 'charge_usd', 'completed_at', 'created_at', 'duration_seconds',
  'end_seconds', 'error', 'file_content_type', 'file_url', 'framing', 'highlight_color', 'id', 'mp4_url',
  'mp4_url_expires_at', 'output', 'rights_affirmed', 'srt_url', 'start_seconds', 'status', 'style', 'title',
  'transcription_id', 'words_per_line'];
const DEFAULTS = { aspect: '9:16', style: 'captions', output: 'audiogram', caption_position: 'lower',
  words_per_line: 3, highlight_color: '#FFD400', framing: 'blur' };
const isoTime = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

let tls, hooks, plain, media, server, env, hookSecret;
let acc; // pay-as-you-go, 5 USD: main, vid, linkA, linkB
let sub; // starter plan, empty wallet: tiny
let lim; // pay-as-you-go: the limits (six short link transcriptions)
const main = {}; // an uploaded WAV, three sentences and 3 s of silence
const vid = {}; // an uploaded MP4 with a video track
const linkA = {}; // the same kind of MP4 as a link (external_url)
const linkB = {}; // another link, whose file disappears before its video clip
const tiny = {}; // sub's short link
const limT = []; // lim's six short links
let linkAPath, linkBPath;
const made = {}; // clips one test makes and a later one reads

const api = (path, opts = {}) => curl(`${server.url}/api/v1${path}`, opts);
const post = (path, key, body, headers = {}) => api(path, { method: 'POST', key, body, headers });
const get = (path, key) => api(path, { key });
const me = async (who) => {
  const res = await get('/me', who.key);
  assert.equal(res.status, 200, res.body);
  return res.json;
};
const clipsOf = (fx) => `/transcriptions/${fx.id}/clips`;
const createClip = (who, fx, body, headers) => post(clipsOf(fx), who.key, body, headers);
const listed = async (who, fx) => {
  const res = await get(clipsOf(fx), who.key);
  assert.equal(res.status, 200, res.body);
  return res.json.data;
};
const near = (a, b, eps = 1e-9) => Math.abs(a - b) <= eps;

const uploadFile = (key, path, contentType, filename) => upload(server, key, path, contentType, filename);

async function transcribe(who, fx, body) {
  const res = await post('/transcriptions', who.key, body);
  assert.equal(res.status, 202, res.body);
  fx.id = res.json.id;
}

async function completed(who, fx) {
  const done = await finished(server, who.key, fx.id, { limitSeconds: 600 });
  assert.equal(done.status, 'completed', JSON.stringify(done.error));
  const t = await get(`/transcriptions/${fx.id}`, who.key);
  fx.duration = t.json.duration_seconds;
  const w = await get(`/transcriptions/${fx.id}/words?limit=5000`, who.key);
  assert.equal(w.status, 200, w.body);
  assert.equal(w.json.available, true, w.body);
  fx.words = w.json.words.filter((x) => x.text.trim() !== '');
  assert.ok(fx.words.length >= 3, `transcription ${fx.id}: only ${fx.words.length} words`);
}

before(async () => {
  tls = selfSignedCertificate();
  hooks = await startReceiver({ tls });
  plain = await startReceiver();
  media = await startMediaServer();
  env = {
    SCRIBE_ALLOW_PRIVATE_URLS: '1',
    SCRIBE_OUTBOUND_CA_FILE: tls.certPath,
    SCRIBE_WEBHOOK_RETRY_DELAYS: '1,1,1,1',
    SCRIBE_WEBHOOK_POLL_MS: '100',
    SCRIBE_WORKER_POLL_MS: '100',
    SCRIBE_RATE_LIMIT_PER_MINUTE: '100000',
    SCRIBE_WORKER_SLOTS: '2',
    SCRIBE_CLIP_SLOTS: '1',
  };
  // Media: three sentences then 3 s of silence (a range without words); a
  // video of two more; a short sentence for the small accounts.
  const talk = convert(dialogue([
    { voice: 'slt', text: 'The harbour opens at six and the ferry leaves at seven every morning.' },
    { voice: 'rms', text: 'Tickets are sold on board, and children under five travel for free.' },
    { voice: 'awb', text: 'On windy days the captain waits in the harbour until the sea is calm.' },
  ], 'clips-talk'), 'clips-talk-padded.wav', ['-af', 'apad=pad_dur=3']);
  const vtalk = dialogue([
    { voice: 'awb', text: 'The red train crosses the old bridge over the river every evening.' },
    { voice: 'slt', text: 'Passengers wave at the fishermen on the bank below.' },
  ], 'clips-vtalk');
  const video = videoWithAudio(vtalk, 'clips-video.mp4');
  linkAPath = videoWithAudio(vtalk, 'clips-link-a.mp4');
  linkBPath = videoWithAudio(vtalk, 'clips-link-b.mp4');
  const short = convert(dialogue([{ voice: 'rms', text: 'Good morning, the little shop on the corner is open.' }],
    'clips-short'), 'clips-short.mp3');

  server = await startServer({ workers: true, extraEnv: env });
  acc = newAccount({ balance: 5 });
  sub = newAccount({ plan: 'starter', balance: 0 });
  lim = newAccount({ balance: 5 });
  const reg = await post('/webhooks', acc.key, { url: hooks.url('/clips'), events: ['clip.completed', 'clip.failed'] });
  assert.equal(reg.status, 201, reg.body);
  hookSecret = reg.json.signing_secret;

  const talkUpload = await uploadFile(acc.key, talk, 'audio/wav', 'talk.wav');
  await transcribe(acc, main, { source: 'upload', upload_id: talkUpload, original_filename: 'talk.wav',
    duration_seconds: seconds(talk) });
  const videoUpload = await uploadFile(acc.key, video, 'video/mp4', 'video.mp4');
  await transcribe(acc, vid, { source: 'upload', upload_id: videoUpload, original_filename: 'video.mp4',
    duration_seconds: seconds(video) });
  await transcribe(acc, linkA, { source: 'external_url', url: media.url(linkAPath) });
  await transcribe(acc, linkB, { source: 'external_url', url: media.url(linkBPath) });
  await transcribe(sub, tiny, { source: 'external_url', url: media.url(short) });
  for (let i = 0; i < 6; i++) {
    limT.push({});
    await transcribe(lim, limT[i], { source: 'external_url', url: media.url(short) });
  }
  await Promise.all([[acc, main], [acc, vid], [acc, linkA], [acc, linkB], [sub, tiny], ...limT.map((t) => [lim, t])]
    .map(([who, fx]) => completed(who, fx)));
  const last = main.words.at(-1);
  assert.ok(main.duration - last.end_ms / 1000 >= 2, `no silence after the last word (${last.end_ms} ms of ` +
    `${main.duration} s)`);
});
after(async () => {
  await server?.stop();
  await hooks?.close();
  await plain?.close();
  await media?.close();
});

// --- helpers -----------------------------------------------------------------

// A word belongs to a clip when its midpoint lies inside the range.
const wordsIn = (words, start, end) => words.filter((w) => {
  const mid = (w.start_ms + w.end_ms) / 2000;
  return mid >= start && mid <= end;
});

// A range of `length` seconds starting just before the first word at or after
// `after` s, with at least three words, and a word inside it (not the first)
// whose middle is where frames are looked at (`at`, seconds into the clip).
function pickRange(fx, { after = 0, length = 3 } = {}) {
  const first = fx.words.find((w) => w.start_ms / 1000 >= after);
  assert.ok(first, `no word after ${after} s`);
  const start = Math.max(0, Math.round((first.start_ms / 1000 - 0.1) * 100) / 100);
  const end = Math.round((start + length) * 100) / 100;
  assert.ok(end <= fx.duration, `range ${start}-${end} s is past the end (${fx.duration} s)`);
  const inside = wordsIn(fx.words, start, end);
  assert.ok(inside.length >= 3, `only ${inside.length} words in ${start}-${end} s`);
  const word = inside.slice(1).find((w) => w.end_ms / 1000 <= end - 0.2 && w.end_ms - w.start_ms >= 150) ?? inside[1];
  return { start, end, inside, word, at: (word.start_ms + word.end_ms) / 2000 - start };
}

// The Clip's fields and their types in every state; returns the clip.
// `waited`: read with ?wait=, which adds _timed_out (default: when present).
function checkClip(c, { callback = false, waited = '_timed_out' in c } = {}) {
  const keys = [...CLIP_KEYS];
  if (callback) keys.push('callback_secret');
  if (waited) keys.push('_timed_out');
  assert.deepEqual(Object.keys(c).sort(), keys.sort(), JSON.stringify(c));
  assert.ok(Number.isInteger(c.id) && c.id >= 1);
  assert.ok(['queued', 'completed', 'failed'].includes(c.status), c.status);
  assert.match(c.created_at, isoTime);
  assert.equal(typeof c.rights_affirmed, 'boolean');
  if (callback) assert.match(c.callback_secret, /^whsec_[0-9A-Za-z]+$/);
  if (waited) assert.equal(typeof c._timed_out, 'boolean');
  if (c.status === 'queued' || c.status === 'failed') {
    for (const k of ['duration_seconds', 'file_url', 'file_content_type', 'srt_url', 'mp4_url', 'mp4_url_expires_at'])
      assert.equal(c[k], null, `${k} of a ${c.status} clip`);
  }
  if (c.status === 'queued') {
    assert.equal(c.error, null);
    assert.equal(c.completed_at, null);
  }
  if (c.status === 'failed') {
    assert.equal(typeof c.error?.code, 'string', JSON.stringify(c.error));
    assert.ok(c.error.code.length > 0);
    assert.equal(typeof c.error.message, 'string');
    assert.equal(c.charge_usd, 0);
  }
  return c;
}

// Waits for the clip to be completed or failed; returns the final body.
async function awaited(who, fx, clipId) {
  const c = await clipFinished(server, who.key, fx.id, clipId);
  checkClip(c, { waited: true });
  assert.equal(c._timed_out, false);
  return c;
}

// A signed file link of clip `id`: {name, expires, signature}.
function link(url, id, name) {
  const m = new RegExp(`^${server.url.replace(/\./g, '\\.')}/clips/files/${id}/(clip\\.(?:mp4|m4a|srt))` +
    '\\?expires=(\\d+)&signature=([0-9a-f]+)$').exec(url ?? '');
  assert.ok(m, `not a signed link of clip ${id}: ${url}`);
  if (name) assert.equal(m[1], name);
  return { name: m[1], expires: Number(m[2]), signature: m[3] };
}

// A completed clip's fields: length, content type, links valid for an hour.
function checkCompleted(c, { start, end, output }) {
  checkClip(c);
  assert.equal(c.status, 'completed', JSON.stringify(c.error));
  assert.equal(c.error, null);
  assert.equal(c.charge_usd, CHARGE);
  assert.ok(Math.abs(c.duration_seconds - (end - start)) <= 0.1, `duration ${c.duration_seconds} for ${start}-${end}`);
  assert.match(c.completed_at, isoTime);
  assert.ok(Date.parse(c.completed_at) >= Date.parse(c.created_at));
  const now = Date.now() / 1000;
  if (output === 'audio') {
    assert.equal(c.file_content_type, 'audio/mp4');
    link(c.file_url, c.id, 'clip.m4a');
    assert.equal(c.mp4_url, null);
    assert.equal(c.mp4_url_expires_at, null);
  } else {
    assert.equal(c.file_content_type, 'video/mp4');
    const l = link(c.file_url, c.id, 'clip.mp4');
    assert.equal(c.mp4_url, c.file_url);
    assert.match(c.mp4_url_expires_at, isoTime);
    assert.ok(Math.abs(Date.parse(c.mp4_url_expires_at) / 1000 - l.expires) <= 1,
      `mp4_url_expires_at ${c.mp4_url_expires_at}, link expires ${l.expires}`);
  }
  for (const url of [c.file_url, c.srt_url]) {
    const l = link(url, c.id);
    assert.ok(Math.abs(l.expires - (now + 3600)) <= 120, `link expires ${l.expires - now} s from now`);
  }
  link(c.srt_url, c.id, 'clip.srt');
  return c;
}

// Downloads the clip's file and checks what ffprobe sees: H.264 at the
// aspect's size + AAC (or AAC alone for audio), lasting the range.
function checkFile(c, { start, end, output, aspect }) {
  const got = download(c.file_url, `clip-${c.id}${output === 'audio' ? '.m4a' : '.mp4'}`);
  assert.equal(got.status, 200, `GET ${c.file_url}: ${readFileSync(got.path, 'utf8').slice(0, 300)}`);
  assert.equal(got.contentType.split(';')[0], c.file_content_type);
  const p = probe(got.path);
  assert.match(p.format.format_name, /mp4/);
  assert.ok(Math.abs(Number(p.format.duration) - (end - start)) <= 0.1, `file lasts ${p.format.duration} s`);
  const audio = p.streams.filter((s) => s.codec_type === 'audio');
  const videos = p.streams.filter((s) => s.codec_type === 'video');
  assert.equal(audio.length, 1, JSON.stringify(p.streams));
  assert.equal(audio[0].codec_name, 'aac');
  for (const s of p.streams) assert.ok(Math.abs(Number(s.duration) - (end - start)) <= 0.1, JSON.stringify(s));
  if (output === 'audio') {
    assert.equal(p.streams.length, 1, `an M4A holds the audio alone: ${JSON.stringify(p.streams)}`);
  } else {
    assert.equal(videos.length, 1, JSON.stringify(p.streams));
    assert.equal(videos[0].codec_name, 'h264');
    assert.deepEqual([videos[0].width, videos[0].height], FRAME[aspect]);
  }
  return got.path;
}

// The SRT of srt_url: one cue per caption line, at most words_per_line words
// each, whose words in order are the transcription's words of the range, with
// times relative to the clip's start.
async function checkSrt(c, fx, { start, end, wordsPerLine }) {
  const got = download(c.srt_url, `clip-${c.id}.srt`);
  assert.equal(got.status, 200);
  assert.match(got.contentType, /^application\/x-subrip/);
  const text = readFileSync(got.path, 'utf8');
  const cues = parseSrt(text);
  // An independent reader agrees.
  const ms = (x) => Math.round(x * 1000);
  assert.deepEqual(new SrtParser().fromSrt(text).map((q) => [ms(q.startSeconds), ms(q.endSeconds), q.text]),
    cues.map((q) => [ms(q.start), ms(q.end), q.text]));
  const expected = wordsIn(fx.words, start, end);
  const bare = (s) => s.replace(/[.,!?;:…"“”]/g, ''); // punctuation may follow a word in the SRT
  const tokens = cues.flatMap((q) => q.text.split(/\s+/).filter(Boolean));
  assert.deepEqual(tokens.map(bare), expected.map((w) => bare(w.text)), 'the SRT has the words of the range');
  const length = end - start;
  let i = 0;
  for (const q of cues) {
    const n = q.text.split(/\s+/).filter(Boolean).length;
    assert.ok(n >= 1 && n <= wordsPerLine, `cue ${q.index} has ${n} words: ${q.text}`);
    const first = expected[i];
    const lastWord = expected[i + n - 1];
    const from = Math.max(0, first.start_ms / 1000 - start);
    assert.ok(Math.abs(q.start - from) <= 0.011, `cue ${q.index} starts at ${q.start}, its first word at ${from}`);
    assert.ok(q.end > q.start);
    assert.ok(q.end >= Math.min(length, lastWord.end_ms / 1000 - start) - 0.011, `cue ${q.index} ends before its last word`);
    assert.ok(q.end <= length + 0.001, `cue ${q.index} ends at ${q.end}, past the clip's ${length} s`);
    i += n;
  }
  for (let k = 1; k < cues.length; k++) assert.ok(cues[k].start >= cues[k - 1].end - 0.001, 'cues overlap');
  return cues;
}

// The caption at `at` s of the clip: white text in the caption region and
// none in a plain band of the same frame; returns the region's counts.
function captionAt(path, at, aspect, position = 'lower') {
  const frame = grabFrame(path, at);
  assert.deepEqual([frame.width, frame.height], FRAME[aspect]);
  const { caption, plain, font } = captionRegions(frame.width, frame.height, position);
  const bg = meanLuma(frame, plain);
  const cap = regionStats(frame, caption, bg);
  const off = regionStats(frame, plain, bg);
  assert.ok(cap.bright >= 800, `caption region at ${at} s: only ${cap.bright} text pixels`);
  assert.equal(off.bright, 0, 'text outside the caption region');
  // At most three lines of text, centred.
  assert.ok(cap.text.bottom - cap.text.top <= 3 * font, JSON.stringify(cap.text));
  assert.ok(Math.abs((cap.text.left + cap.text.right) / 2 - frame.width / 2) <= 40, `text not centred: ${JSON.stringify(cap.text)}`);
  return { frame, cap, off, bg };
}

async function delivery(receiver, path, clipId, event) {
  const [req] = await receiver.waitFor((r) => r.path === path && r.json?.data?.clip?.id === clipId, 1, 120000);
  assert.equal(req.method, 'POST');
  assert.equal(req.headers['content-type'], 'application/json');
  assert.equal(req.headers['user-agent'], 'service-webhook/1');
  assert.equal(req.headers['x-service-event'], event);
  assert.match(req.json.id, /^evt_\d+$/);
  assert.equal(req.json.event, event);
  assert.ok(Math.abs(req.json.created - Date.now() / 1000) < 600);
  return req;
}

// How a clip's hold ended: {settled: [micros], released: count}; exactly one hold.
function ledger(accountId, clipId) {
  const l = clipHolds(accountId, clipId);
  assert.equal(l.holds.length, 1, `clip ${clipId}: ${l.holds.length} holds placed`);
  return l;
}

// Runs fn with a server that renders nothing (no workers), the shared one
// stopped, so that clips created meanwhile stay queued; the shared server is
// started again after.
async function rendersPaused(fn) {
  await server.stop();
  server = await startServer({ args: ['--no-workers'], extraEnv: { ...env, SCRIBE_CLIP_SLOTS: '0' } });
  try {
    return await fn();
  } finally {
    await server.stop();
    server = await startServer({ workers: true, extraEnv: env });
  }
}

// --- tests -------------------------------------------------------------------

test('a 9:16 audiogram with the defaults: 202 queued and held, then rendered, settled, signed; webhook and callback',
  async () => {
    const before = await me(acc);
    const r = pickRange(main, { after: 0.3, length: 3 });
    const cbPath = `/cb-${acc.keyId}-first`;
    const res = await createClip(acc, main, { start_seconds: r.start, end_seconds: r.end,
      callback_url: plain.url(cbPath) });
    assert.equal(res.status, 202, res.body);
    const c = checkClip(res.json, { callback: true });
    assert.equal(c.transcription_id, main.id);
    assert.equal(c.status, 'queued');
    assert.equal(c.start_seconds, r.start);
    assert.equal(c.end_seconds, r.end);
    for (const [k, v] of Object.entries(DEFAULTS)) assert.equal(c[k], v, k);
    assert.equal(c.title, null);
    assert.equal(c.rights_affirmed, false);
    assert.equal(c.charge_usd, CHARGE);
    assert.ok(Math.abs(Date.parse(c.created_at) - Date.now()) < 60000, c.created_at);
    // Held at request: the balance stays, the available money drops by the charge.
    const held = await me(acc);
    assert.equal(held.wallet_balance_usd, before.wallet_balance_usd);
    assert.ok(near(held.wallet_available_usd, before.wallet_available_usd - CHARGE), JSON.stringify(held));
    assert.equal(held.open_holds, before.open_holds + 1);

    const done = checkCompleted(await awaited(acc, main, c.id), { ...r, output: 'audiogram' });
    assert.equal(done.callback_secret, undefined, 'GET never returns the callback secret');
    for (const [k, v] of Object.entries(DEFAULTS)) assert.equal(done[k], v, k);
    const after = await me(acc);
    assert.ok(near(after.wallet_balance_usd, before.wallet_balance_usd - CHARGE), JSON.stringify(after));
    assert.ok(near(after.wallet_available_usd, before.wallet_available_usd - CHARGE));
    assert.equal(after.open_holds, before.open_holds);
    const l = ledger(acc.accountId, c.id);
    assert.deepEqual([l.settled, l.released], [[50000], 0], 'settled once for 0.05 USD, never released');

    const path = checkFile(done, { ...r, output: 'audiogram', aspect: '9:16' });
    // Captions: white text on a dark translucent box, near the bottom.
    const { cap } = captionAt(path, r.at, '9:16');
    assert.ok(cap.boxBand >= 0.9, `no caption box above the text (${cap.boxBand})`);
    assert.ok(cap.text.bottom > 1920 * 0.65, `caption at y ${cap.text.bottom}, not in the lower part`);
    assert.equal(cap.red, 0);
    await checkSrt(done, main, { ...r, wordsPerLine: 3 });
    made.first = { ...done, range: r, path };

    // The registered webhook and the clip's callback: clip.completed, signed
    // with their own secrets, with a fresh mp4_url that downloads.
    const hook = await delivery(hooks, '/clips', c.id, 'clip.completed');
    assert.equal(verifySignature(hookSecret, hook.headers['x-service-signature'], hook.raw), null);
    const cb = await delivery(plain, cbPath, c.id, 'clip.completed');
    assert.equal(verifySignature(c.callback_secret, cb.headers['x-service-signature'], cb.raw), null);
    assert.notEqual(verifySignature(hookSecret, cb.headers['x-service-signature'], cb.raw), null);
    for (const d of [hook, cb]) {
      const snap = checkClip(d.json.data.clip);
      assert.equal(snap.id, c.id);
      assert.equal(snap.status, 'completed');
      assert.equal(snap.transcription_id, main.id);
      assert.equal(snap.charge_usd, CHARGE);
      assert.equal(snap.file_content_type, 'video/mp4');
      link(snap.mp4_url, c.id, 'clip.mp4');
      assert.equal(snap.callback_secret, undefined);
      const got = download(snap.mp4_url, `clip-${c.id}-hook.mp4`);
      assert.equal(got.status, 200);
      assert.equal(got.contentType, 'video/mp4');
      assert.ok(Math.abs(Number(probe(got.path).format.duration) - (r.end - r.start)) <= 0.1);
    }
    auditWallet(acc.accountId);
  });

test('file links: no key needed, fresh on every GET, 403 forbidden when tampered with or expired', async () => {
  const c = made.first;
  assert.ok(c, 'the first test made no clip');
  const one = await get(`${clipsOf(main)}/${c.id}`, acc.key);
  assert.equal(one.status, 200, one.body);
  checkCompleted(one.json, { ...c.range, output: 'audiogram' });
  assert.equal('_timed_out' in one.json, false, 'no _timed_out without wait');
  await sleep(1100);
  const two = (await get(`${clipsOf(main)}/${c.id}`, acc.key)).json;
  const a = link(one.json.file_url, c.id), b = link(two.file_url, c.id);
  assert.ok(b.expires > a.expires, 'a later GET signs links that expire later');
  assert.notEqual(b.signature, a.signature);
  assert.ok(Date.parse(two.mp4_url_expires_at) > Date.parse(one.json.mp4_url_expires_at));
  // Both links work, with no Authorization header at all.
  for (const url of [one.json.file_url, two.file_url]) {
    const got = download(url, `clip-${c.id}-again.mp4`);
    assert.equal(got.status, 200);
    assert.equal(readFileSync(got.path).equals(readFileSync(c.path)), true, 'the same file');
  }
  const srt = await curl(two.srt_url);
  assert.equal(srt.status, 200);
  assert.ok(srt.body.includes(' --> '));
  // Players seek with Range requests: one range answers 206 with its bytes.
  const size = readFileSync(c.path).length;
  const head12 = await curl(two.file_url, { headers: { Range: 'bytes=0-11' } });
  assert.equal(head12.status, 206, head12.body);
  assert.equal(head12.headers['content-range'], `bytes 0-11/${size}`);
  assert.equal(head12.headers['content-length'], '12');
  assert.equal(head12.headers['accept-ranges'], 'bytes');
  assert.equal(head12.body.slice(4, 8), 'ftyp', 'an MP4 begins with its ftyp box');
  const tail = await curl(two.file_url, { headers: { Range: 'bytes=-100' } });
  assert.equal(tail.status, 206);
  assert.equal(tail.headers['content-range'], `bytes ${size - 100}-${size - 1}/${size}`);
  const past = await curl(two.file_url, { headers: { Range: `bytes=${size}-` } });
  envelope(assert, past, 416, 'invalid_request');
  assert.equal(past.headers['content-range'], `bytes */${size}`);

  const base = `${server.url}/clips/files/${c.id}`;
  const flip = (hex) => hex.slice(0, -1) + (hex.endsWith('0') ? '1' : '0');
  const expired = Math.floor(Date.now() / 1000) - 10;
  for (const url of [
    `${base}/clip.mp4?expires=${b.expires}&signature=${flip(b.signature)}`, // tampered signature
    `${base}/clip.mp4?expires=${b.expires + 3600}&signature=${b.signature}`, // stretched expiry
    `${base}/clip.mp4?expires=${expired}&signature=${b.signature}`, // expired
    `${base}/clip.srt?expires=${b.expires}&signature=${b.signature}`, // another file's name
    `${server.url}/clips/files/${c.id + 1000000}/clip.mp4?expires=${b.expires}&signature=${b.signature}`, // another clip
    `${base}/clip.mp4?expires=${b.expires}`, // no signature
  ]) {
    const res = await curl(url);
    envelope(assert, res, 403, 'forbidden');
    assert.ok(!res.body.includes('ftyp'), 'no file content in a refusal');
  }
  // A Bearer key does not stand in for the signature.
  envelope(assert, await curl(`${base}/clip.mp4`, { key: acc.key }), 403, 'forbidden');
});

test('a 1:1 karaoke audiogram with a red highlight, a title and two words per line; a repeated client_nonce is the same clip',
  async () => {
    const before = await me(acc);
    const r = pickRange(main, { after: main.words[0].start_ms / 1000 + 4, length: 3 });
    const nonce = '5f0e2a4c-8b1d-4c7e-9a3f-0d6b2e8c1a57';
    const body = { start_seconds: r.start, end_seconds: r.end, aspect: '1:1', style: 'karaoke',
      highlight_color: '#FF0000', words_per_line: 2, title: 'Tides', client_nonce: nonce, max_charge_usd: CHARGE };
    const res = await createClip(acc, main, body);
    assert.equal(res.status, 202, res.body);
    const c = checkClip(res.json);
    assert.equal(c.aspect, '1:1');
    assert.equal(c.style, 'karaoke');
    assert.equal(c.highlight_color, '#FF0000');
    assert.equal(c.words_per_line, 2);
    assert.equal(c.title, 'Tides');
    // The same nonce again (even with another range): the first clip, no second hold.
    const again = await createClip(acc, main, { ...body, start_seconds: r.start + 0.5, end_seconds: r.end + 0.5 });
    assert.equal(again.status, 202, again.body);
    assert.equal(again.json.id, c.id);
    assert.equal(again.json.start_seconds, r.start);
    const held = await me(acc);
    assert.equal(held.open_holds, before.open_holds + 1);
    assert.ok(near(held.wallet_available_usd, before.wallet_available_usd - CHARGE));
    assert.equal((await listed(acc, main)).filter((x) => x.id === c.id).length, 1);

    const done = checkCompleted(await awaited(acc, main, c.id), { ...r, output: 'audiogram' });
    const path = checkFile(done, { ...r, output: 'audiogram', aspect: '1:1' });
    const { cap, frame, bg } = captionAt(path, r.at, '1:1');
    // The spoken word sits on an opaque red box.
    assert.ok(cap.red >= 2000, `only ${cap.red} red pixels in the caption region`);
    // The title is drawn at the top.
    const title = regionStats(frame, { x0: 0, x1: frame.width, y0: 0, y1: Math.round(frame.height * 0.15) }, bg);
    assert.ok(title.bright >= 300, `no title at the top (${title.bright} text pixels)`);
    assert.ok(Math.abs((title.text.left + title.text.right) / 2 - frame.width / 2) <= 40);
    // Three seconds later the same nonce still names this clip, now completed.
    const third = await createClip(acc, main, body);
    assert.equal(third.status, 202, third.body);
    assert.equal(third.json.id, c.id);
    assert.equal(third.json.status, 'completed');
    await checkSrt(done, main, { ...r, wordsPerLine: 2 });
    const after = await me(acc);
    assert.ok(near(after.wallet_balance_usd, before.wallet_balance_usd - CHARGE), 'charged once');
    assert.equal(after.open_holds, before.open_holds);
    const l = ledger(acc.accountId, c.id);
    assert.deepEqual([l.settled, l.released], [[50000], 0]);
    made.karaoke = done;
  });

test('a 16:9 minimal audiogram, captions at the top: text without a box; an Idempotency-Key replay returns the same response',
  async () => {
    const before = await me(acc);
    const r = pickRange(main, { after: main.words[0].start_ms / 1000 + 8, length: 2.5 });
    const body = { start_seconds: r.start, end_seconds: r.end, aspect: '16:9', style: 'minimal',
      caption_position: 'upper' };
    const headers = { 'Idempotency-Key': `clip-minimal-${acc.keyId}` };
    const res = await createClip(acc, main, body, headers);
    assert.equal(res.status, 202, res.body);
    const replay = await createClip(acc, main, body, headers);
    assert.equal(replay.status, 202, replay.body);
    assert.equal(replay.body, res.body, 'the replay is the original response');
    // The same key with another body is refused.
    envelope(assert, await createClip(acc, main, { ...body, style: 'captions' }, headers), 400, 'invalid_request');
    const held = await me(acc);
    assert.equal(held.open_holds, before.open_holds + 1, 'one hold');
    const c = checkClip(res.json);
    assert.equal((await listed(acc, main)).filter((x) => x.start_seconds === r.start && x.style === 'minimal').length, 1);

    const done = checkCompleted(await awaited(acc, main, c.id), { ...r, output: 'audiogram' });
    const path = checkFile(done, { ...r, output: 'audiogram', aspect: '16:9' });
    const { cap, frame } = captionAt(path, r.at, '16:9', 'upper');
    assert.equal(done.caption_position, 'upper');
    assert.ok(cap.boxBand <= 0.1, `a box around minimal captions (${cap.boxBand} of the band above the text is dark)`);
    assert.equal(cap.red, 0);
    assert.ok(cap.text.top < 1080 * 0.3, `caption at y ${cap.text.top}, not at the top`);
    // Nothing where lower captions would be (below the waveform, which sits
    // lower with captions at the top).
    const bottom = { ...captionRegions(1920, 1080, 'lower').caption, y0: Math.round(1080 * 0.8) };
    const below = regionStats(frame, bottom).bright;
    assert.ok(below < 50, `${below} text pixels at the bottom`);
    await checkSrt(done, main, { ...r, wordsPerLine: 3 });
    const after = await me(acc);
    assert.ok(near(after.wallet_balance_usd, before.wallet_balance_usd - CHARGE));
    made.minimal = done;
  });

test('audio output on a subscription plan: held from the wallet (402 while empty), an M4A with AAC alone, no mp4 link',
  async () => {
    const r = { start: 0, end: Math.min(2.5, Math.floor(tiny.duration * 100) / 100) };
    assert.ok(wordsIn(tiny.words, r.start, r.end).length >= 1);
    const body = { start_seconds: r.start, end_seconds: r.end, output: 'audio' };
    // Transcription is included on the starter plan; clips are not.
    assert.equal((await me(sub)).wallet_balance_usd, 0);
    const refused = envelope(assert, await createClip(sub, tiny, body), 402, 'insufficient_funds');
    assert.equal(typeof refused.message, 'string');
    assert.deepEqual(await listed(sub, tiny), []);
    admin('wallet', 'topup', '--account', sub.accountId, '--usd', CHARGE);
    const q = await get(`${clipsOf(tiny)}/quote?start_seconds=${r.start}&end_seconds=${r.end}&output=audio`, sub.key);
    assert.equal(q.status, 200, q.body);
    assert.equal(q.json.charge_usd, CHARGE, 'the same charge as on pay-as-you-go');
    const res = await createClip(sub, tiny, body);
    assert.equal(res.status, 202, res.body);
    const c = checkClip(res.json);
    assert.equal(c.output, 'audio');
    assert.equal(c.charge_usd, CHARGE);
    // The whole wallet is held (or, if the short render already finished, charged).
    assert.equal((await me(sub)).wallet_available_usd, 0);
    // Another clip does not fit.
    envelope(assert, await createClip(sub, tiny, body), 402, 'insufficient_funds');

    const done = checkCompleted(await awaited(sub, tiny, c.id), { ...r, output: 'audio' });
    checkFile(done, { ...r, output: 'audio' });
    const cues = await checkSrt(done, tiny, { ...r, wordsPerLine: 3 });
    assert.ok(cues.length >= 1);
    const after = await me(sub);
    assert.equal(after.wallet_balance_usd, 0);
    assert.equal(after.open_holds, 0);
    assert.equal(after.subscription_tier, 'starter');
    auditWallet(sub.accountId);
  });

test('video from an uploaded video: 9:16, the source sharp in the middle over a blurred copy, captions burned in',
  async () => {
    // An upload without a video track cannot be a video clip.
    const noVideo = envelope(assert, await createClip(acc, main, { start_seconds: 1, end_seconds: 3, output: 'video' }),
      400, 'video_unavailable');
    assert.equal(noVideo.reason, 'no_source_video');
    const before = await me(acc);
    const r = pickRange(vid, { after: 0.2, length: 3 });
    const res = await createClip(acc, vid, { start_seconds: r.start, end_seconds: r.end, output: 'video' });
    assert.equal(res.status, 202, res.body);
    assert.equal(res.json.output, 'video');
    assert.equal(res.json.framing, 'blur');
    const done = checkCompleted(await awaited(acc, vid, res.json.id), { ...r, output: 'video' });
    const path = checkFile(done, { ...r, output: 'video', aspect: '9:16' });
    const frame = grabFrame(path, r.at);
    // The 16:9 source fills the width in the middle third (sharp test
    // pattern); above it, its blurred copy.
    const top = { x0: 0, x1: 1080, y0: 40, y1: 400 };
    const middle = { x0: 0, x1: 1080, y0: 760, y1: 1160 };
    assert.ok(sharpEdges(frame, top) < 50, `the top is not blurred: ${sharpEdges(frame, top)} sharp edges`);
    assert.ok(sharpEdges(frame, middle) > 300, `the middle is not the sharp source: ${sharpEdges(frame, middle)}`);
    assert.ok(regionStats(frame, middle).saturated > 50000, 'the test pattern\'s colours are not there');
    const { caption } = captionRegions(1080, 1920);
    const cap = regionStats(frame, caption);
    assert.ok(cap.bright >= 800, `no caption text (${cap.bright})`);
    assert.ok(Math.abs((cap.text.left + cap.text.right) / 2 - 540) <= 40);
    const after = await me(acc);
    assert.ok(near(after.wallet_balance_usd, before.wallet_balance_usd - CHARGE));
    made.video = done;
  });

test('video of a link: rights_affirmed needed; the source is downloaded once, kept, and rendered 1:1 cropped',
  async () => {
    const r = pickRange(linkA, { after: 0.2, length: 3 });
    const body = { start_seconds: r.start, end_seconds: r.end, output: 'video', aspect: '1:1', framing: 'crop' };
    for (const extra of [{}, { rights_affirmed: false }]) {
      const e = envelope(assert, await createClip(acc, linkA, { ...body, ...extra }), 400, 'video_unavailable');
      assert.equal(e.reason, 'rights_not_affirmed');
    }
    const q = await get(`${clipsOf(linkA)}/quote?start_seconds=${r.start}&end_seconds=${r.end}&output=video` +
      '&rights_affirmed=false', acc.key);
    assert.equal(envelope(assert, q, 400, 'video_unavailable').reason, 'rights_not_affirmed');
    const res = await createClip(acc, linkA, { ...body, rights_affirmed: true });
    assert.equal(res.status, 202, res.body);
    assert.equal(res.json.rights_affirmed, true);
    assert.equal(res.json.framing, 'crop');
    const done = checkCompleted(await awaited(acc, linkA, res.json.id), { ...r, output: 'video' });
    const path = checkFile(done, { ...r, output: 'video', aspect: '1:1' });
    const frame = grabFrame(path, r.at);
    // Cropped to fill: the sharp test pattern reaches the top edge.
    const top = { x0: 0, x1: 1080, y0: 0, y1: 160 };
    assert.ok(sharpEdges(frame, top) > 150, `the top is not the cropped source: ${sharpEdges(frame, top)}`);
    assert.ok(regionStats(frame, top).saturated > 50000);
    assert.ok(regionStats(frame, captionRegions(1080, 1080).caption).bright >= 800, 'no caption text');
    assert.equal(count(`type = 'ClipAccepted' and data->>'transcription_id' = '${linkA.id}' and ` +
      `(data->>'video_download')::boolean`), 1, 'one new source-video download');

    // The source was kept: with the link gone, a second video clip still renders, 16:9.
    media.gone(linkAPath);
    const r2 = pickRange(linkA, { after: r.start + 1, length: 2 });
    const second = await createClip(acc, linkA, { start_seconds: r2.start, end_seconds: r2.end, output: 'video',
      aspect: '16:9', rights_affirmed: true });
    assert.equal(second.status, 202, second.body);
    const done2 = checkCompleted(await awaited(acc, linkA, second.json.id), { ...r2, output: 'video' });
    checkFile(done2, { ...r2, output: 'video', aspect: '16:9' });
    assert.equal(count(`type = 'ClipAccepted' and data->>'transcription_id' = '${linkA.id}' and ` +
      `(data->>'video_download')::boolean`), 1, 'no second download');
  });

test('a render that fails: clip.failed to the webhook and the callback, the hold released, nothing charged',
  async () => {
    const before = await me(acc);
    media.gone(linkBPath);
    const r = pickRange(linkB, { after: 0.2, length: 2 });
    const cbPath = `/cb-${acc.keyId}-failed`;
    const res = await createClip(acc, linkB, { start_seconds: r.start, end_seconds: r.end, output: 'video',
      rights_affirmed: true, callback_url: plain.url(cbPath) });
    assert.equal(res.status, 202, res.body);
    const c = checkClip(res.json, { callback: true });
    assert.equal(c.charge_usd, CHARGE);
    const done = await awaited(acc, linkB, c.id);
    checkClip(done);
    assert.equal(done.status, 'failed');
    assert.equal(done.charge_usd, 0);
    assert.equal(done.completed_at === null || isoTime.test(done.completed_at), true);
    const after = await me(acc);
    assert.equal(after.wallet_balance_usd, before.wallet_balance_usd, 'nothing charged');
    assert.equal(after.wallet_available_usd, before.wallet_available_usd, 'the hold is released');
    assert.equal(after.open_holds, before.open_holds);
    const l = ledger(acc.accountId, c.id);
    assert.deepEqual([l.settled, l.released], [[], 1], 'released exactly once, never settled');
    for (const [receiver, path, secret] of [[hooks, '/clips', hookSecret], [plain, cbPath, c.callback_secret]]) {
      const d = await delivery(receiver, path, c.id, 'clip.failed');
      assert.equal(verifySignature(secret, d.headers['x-service-signature'], d.raw), null);
      const snap = checkClip(d.json.data.clip);
      assert.equal(snap.status, 'failed');
      assert.equal(snap.charge_usd, 0);
      assert.deepEqual(snap.error, done.error);
      assert.equal(snap.mp4_url, null);
    }
    auditWallet(acc.accountId);
  });

test('a clip made with another key of the account is not sent to the first key\'s webhook', async () => {
  const other = newKey(acc.accountId);
  const res = await createClip(other, main, { start_seconds: 1, end_seconds: 3, output: 'audio' });
  assert.equal(res.status, 202, res.body);
  const done = checkCompleted(await awaited(other, main, res.json.id), { start: 1, end: 3, output: 'audio' });
  // The first key sees it too: clips belong to the account.
  assert.equal((await get(`${clipsOf(main)}/${done.id}`, acc.key)).status, 200);
  // Deliveries of earlier clips arrived within seconds; give this one as long.
  await sleep(3000);
  assert.equal(hooks.requests.filter((r) => r.json?.data?.clip?.id === done.id).length, 0);
});

test('validation: every bad request is 400 with its field or reason, and nothing is held or listed', async () => {
  const before = await me(acc);
  const listedBefore = (await listed(acc, main)).length;
  const ok = { start_seconds: 1, end_seconds: 3 };
  const lastEnd = main.words.at(-1).end_ms / 1000;
  const cases = [
    [{ end_seconds: 3 }, 'start_seconds'],
    [{ start_seconds: 1 }, 'end_seconds'],
    [{ start_seconds: '1', end_seconds: 3 }, 'start_seconds'],
    [{ start_seconds: 1, end_seconds: 'three' }, 'end_seconds'],
    [{ start_seconds: null, end_seconds: 3 }, 'start_seconds'],
    [{ start_seconds: -1, end_seconds: 1 }, 'start_seconds'],
    [{ start_seconds: 3, end_seconds: 1 }, 'end_seconds'],
    [{ start_seconds: 1, end_seconds: 1.5 }, 'end_seconds'],
    [{ start_seconds: 0, end_seconds: 181 }, 'end_seconds'],
    [{ start_seconds: 1, end_seconds: main.duration + 1 }, 'end_seconds'],
    [{ start_seconds: main.duration + 1, end_seconds: main.duration + 3 }, 'end_seconds'],
    [{ ...ok, aspect: '4:3' }, 'aspect'],
    [{ ...ok, aspect: 916 }, 'aspect'],
    [{ ...ok, style: 'fancy' }, 'style'],
    [{ ...ok, output: 'gif' }, 'output'],
    [{ ...ok, caption_position: 'bottom' }, 'caption_position'],
    [{ ...ok, framing: 'stretch' }, 'framing'],
    [{ ...ok, words_per_line: 0 }, 'words_per_line'],
    [{ ...ok, words_per_line: 7 }, 'words_per_line'],
    [{ ...ok, words_per_line: 2.5 }, 'words_per_line'],
    [{ ...ok, words_per_line: '3' }, 'words_per_line'],
    [{ ...ok, highlight_color: 'red' }, 'highlight_color'],
    [{ ...ok, highlight_color: '#FFF' }, 'highlight_color'],
    [{ ...ok, highlight_color: '#GG0000' }, 'highlight_color'],
    [{ ...ok, highlight_color: 'FF0000' }, 'highlight_color'],
    [{ ...ok, title: 'x'.repeat(121) }, 'title'],
    [{ ...ok, client_nonce: 'not-a-uuid' }, 'client_nonce'],
    [{ ...ok, client_nonce: '5f0e2a4c8b1d4c7e9a3f0d6b2e8c1a57' }, 'client_nonce'],
    [{ ...ok, rights_affirmed: 'yes' }, 'rights_affirmed'],
    [{ ...ok, max_charge_usd: -1 }, 'max_charge_usd'],
    [{ ...ok, callback_url: 'not a url' }, 'callback_url'],
    [{ ...ok, callback_url: 'ftp://93.184.215.14/hook' }, 'callback_url'],
  ];
  for (const [body, field] of cases) {
    const e = envelope(assert, await createClip(acc, main, body), 400, 'invalid_request');
    assert.equal(e.field, field, `${JSON.stringify(body).slice(0, 120)}: ${e.message}`);
    assert.notEqual(e.reason, 'feature_unavailable', JSON.stringify(body).slice(0, 120));
  }
  // Options that exist only where enabled.
  for (const body of [{ start_seconds: 0, end_seconds: 61 }, { start_seconds: 0, end_seconds: 180 },
    { ...ok, style: 'highlight' }, { ...ok, style: 'boxed' }, { ...ok, style: 'none' }]) {
    const e = envelope(assert, await createClip(acc, main, body), 400, 'invalid_request');
    assert.equal(e.reason, 'feature_unavailable', JSON.stringify(body));
  }
  // A range of silence.
  const silent = envelope(assert, await createClip(acc, main, { start_seconds: Math.round((lastEnd + 0.3) * 100) / 100,
    end_seconds: Math.round((lastEnd + 1.6) * 100) / 100 }), 400, 'invalid_request');
  assert.equal(silent.reason, 'no_words_in_range');
  // Malformed bodies.
  for (const raw of ['{"start_seconds": 1,', '[1, 3]', '"clip"', 'start_seconds=1&end_seconds=3'])
    envelope(assert, await createClip(acc, main, raw), 400, 'invalid_request');
  // The quote applies the same checks.
  const quote = (qs) => get(`${clipsOf(main)}/quote?${qs}`, acc.key);
  assert.equal(envelope(assert, await quote('end_seconds=3'), 400, 'invalid_request').field, 'start_seconds');
  assert.equal(envelope(assert, await quote('start_seconds=1&end_seconds=3&aspect=4:3'), 400, 'invalid_request').field,
    'aspect');
  assert.equal(envelope(assert, await quote('start_seconds=1&end_seconds=3&words_per_line=9'), 400,
    'invalid_request').field, 'words_per_line');
  assert.equal(envelope(assert, await quote('start_seconds=0&end_seconds=90'), 400, 'invalid_request').reason,
    'feature_unavailable');
  assert.equal(envelope(assert, await quote('start_seconds=1&end_seconds=3&style=boxed'), 400, 'invalid_request').reason,
    'feature_unavailable');
  assert.equal(envelope(assert, await quote(`start_seconds=${lastEnd + 0.3}&end_seconds=${lastEnd + 1.6}`), 400,
    'invalid_request').reason, 'no_words_in_range');
  // Nothing held, nothing listed.
  const after = await me(acc);
  assert.equal(after.wallet_balance_usd, before.wallet_balance_usd);
  assert.equal(after.wallet_available_usd, before.wallet_available_usd);
  assert.equal(after.open_holds, before.open_holds);
  assert.equal((await listed(acc, main)).length, listedBefore);
});

test('money: max_charge_usd below the charge is 402 before any hold; a key cap is 402 spend_cap_exceeded', async () => {
  const before = await me(acc);
  const n = (await listed(acc, main)).length;
  const ceiling = envelope(assert, await createClip(acc, main, { start_seconds: 1, end_seconds: 3, max_charge_usd: 0.04 }),
    402, 'max_charge_exceeded');
  assert.equal(ceiling.charge_usd, CHARGE);
  assert.equal(ceiling.max_charge_usd, 0.04);
  envelope(assert, await createClip(acc, main, { start_seconds: 1, end_seconds: 3, max_charge_usd: 0 }), 402,
    'max_charge_exceeded');
  const capped = newKey(acc.accountId, '--monthly-cap-usd', '0.04');
  envelope(assert, await createClip(capped, main, { start_seconds: 1, end_seconds: 3 }), 402, 'spend_cap_exceeded');
  const after = await me(acc);
  assert.equal(after.wallet_available_usd, before.wallet_available_usd);
  assert.equal(after.open_holds, before.open_holds);
  assert.equal((await listed(acc, main)).length, n);
});

test('quote: the charge with no side effect, also for a read-only key, which cannot create', async () => {
  const before = await me(acc);
  const n = (await listed(acc, main)).length;
  const ro = newKey(acc.accountId, '--permission', 'read_only');
  const title = encodeURIComponent('é'.repeat(120));
  for (const who of [acc, ro]) {
    const q = await get(`${clipsOf(main)}/quote?start_seconds=1.25&end_seconds=3.75&aspect=16:9&style=karaoke` +
      `&highlight_color=%2300FF00&words_per_line=6&caption_position=upper&framing=crop&title=${title}`, who.key);
    assert.equal(q.status, 200, q.body);
    assert.deepEqual(q.json, { transcription_id: main.id, start_seconds: 1.25, end_seconds: 3.75, clip_seconds: 2.5,
      charge_usd: CHARGE });
  }
  envelope(assert, await createClip(ro, main, { start_seconds: 1, end_seconds: 3 }), 403, 'scope_forbidden');
  // Reads work with the read-only key.
  assert.equal((await get(clipsOf(main), ro.key)).status, 200);
  const after = await me(acc);
  assert.equal(after.wallet_available_usd, before.wallet_available_usd);
  assert.equal(after.open_holds, before.open_holds);
  assert.equal((await listed(acc, main)).length, n);
});

test('list and get: newest first, wait bounds, unknown ids, 409 before completion', async () => {
  const data = await listed(acc, main);
  assert.ok(data.length >= 3);
  for (const c of data) {
    checkClip(c);
    assert.equal(c.transcription_id, main.id);
    if (c.status === 'completed') link(c.file_url, c.id);
  }
  const ids = data.map((c) => c.id);
  assert.deepEqual(ids, [...ids].sort((a, b) => b - a), 'newest first');
  for (const k of ['first', 'karaoke', 'minimal']) assert.ok(ids.includes(made[k]?.id), `${k} listed`);
  assert.deepEqual((await listed(acc, vid)).map((c) => c.id), [made.video.id]);
  // wait is 1-45.
  for (const w of ['0', '46', 'abc', '-1', '2.5']) {
    const e = envelope(assert, await get(`${clipsOf(main)}/${made.first.id}?wait=${w}`, acc.key), 400, 'invalid_request');
    assert.equal(e.field, 'wait', w);
  }
  const t0 = Date.now();
  const finishedClip = await get(`${clipsOf(main)}/${made.first.id}?wait=30`, acc.key);
  assert.equal(finishedClip.status, 200);
  assert.equal(finishedClip.json._timed_out, false);
  assert.ok(Date.now() - t0 < 5000, 'a finished clip answers at once');
  // Unknown clips, and clips asked for under another transcription.
  envelope(assert, await get(`${clipsOf(main)}/999999999`, acc.key), 404, 'not_found');
  envelope(assert, await get(`${clipsOf(main)}/abc`, acc.key), 404, 'not_found');
  envelope(assert, await get(`${clipsOf(vid)}/${made.first.id}`, acc.key), 404, 'not_found');
  envelope(assert, await get('/transcriptions/999999999/clips', acc.key), 404, 'not_found');
  envelope(assert, await createClip(acc, { id: 999999999 }, { start_seconds: 1, end_seconds: 3 }), 404, 'not_found');
  // 401 without a key.
  envelope(assert, await get(clipsOf(main)), 401, 'unauthenticated');
});

test('tenant isolation: another account gets 404 on every clip route of the first account\'s transcription', async () => {
  const c = made.first;
  assert.ok(c, 'the first test made no clip');
  for (const res of [
    await get(clipsOf(main), sub.key),
    await get(`${clipsOf(main)}/${c.id}`, sub.key),
    await get(`${clipsOf(main)}/${c.id}?wait=1`, sub.key),
    await get(`${clipsOf(main)}/quote?start_seconds=1&end_seconds=3`, sub.key),
    await createClip(sub, main, { start_seconds: 1, end_seconds: 3 }),
    // Its own transcription id with the other account's clip id.
    await get(`${clipsOf(tiny)}/${c.id}`, sub.key),
  ]) envelope(assert, res, 404, 'not_found');
  assert.equal((await me(sub)).open_holds, 0);
});

test('limits, with renders paused: 409 before completion, 10 clips in progress, 5 new source-video downloads a day',
  async () => {
    await rendersPaused(async () => {
      // A transcription still processing (nothing transcribes it here).
      const pending = await post('/transcriptions', lim.key,
        { source: 'external_url', url: 'http://127.0.0.1:9/later.mp3', duration_seconds: 30 });
      assert.equal(pending.status, 202, pending.body);
      const p = { id: pending.json.id };
      envelope(assert, await createClip(lim, p, { start_seconds: 1, end_seconds: 3 }), 409, 'not_ready');
      envelope(assert, await get(`${clipsOf(p)}/quote?start_seconds=1&end_seconds=3`, lim.key), 409, 'not_ready');

      const whole = (t) => ({ start_seconds: 0, end_seconds: Math.floor(t.duration * 100) / 100 });
      const video = (t) => ({ ...whole(t), output: 'video', rights_affirmed: true });
      const before = await me(lim);
      // Five link transcriptions start a source-video download each; the sixth is refused.
      const queued = [];
      for (let i = 0; i < 5; i++) {
        const res = await createClip(lim, limT[i], video(limT[i]));
        assert.equal(res.status, 202, `download ${i + 1}: ${res.body}`);
        assert.equal(res.json.status, 'queued');
        queued.push([limT[i], res.json.id]);
      }
      const cap = envelope(assert, await createClip(lim, limT[5], video(limT[5])), 429, 'rate_limited');
      assert.equal(cap.reason, 'source_video_daily_cap');
      // The quote says so too, and an audiogram of that transcription is fine.
      const capQuote = await get(`${clipsOf(limT[5])}/quote?start_seconds=0&end_seconds=1.5&output=video` +
        '&rights_affirmed=true', lim.key);
      assert.equal(envelope(assert, capQuote, 429, 'rate_limited').reason, 'source_video_daily_cap');
      // A second video clip of a link already being downloaded is no new download.
      const again = await createClip(lim, limT[0], { ...video(limT[0]), aspect: '1:1' });
      assert.equal(again.status, 202, again.body);
      queued.push([limT[0], again.json.id]);
      // Clips stay queued while nothing renders; a wait runs out.
      const t0 = Date.now();
      const waited = await get(`${clipsOf(limT[0])}/${again.json.id}?wait=1`, lim.key);
      assert.equal(waited.status, 200, waited.body);
      checkClip(waited.json, { waited: true });
      assert.equal(waited.json.status, 'queued');
      assert.equal(waited.json._timed_out, true);
      assert.ok(Date.now() - t0 >= 900, 'the wait ran for its second');
      // Up to 10 clips in progress per account; the 11th is refused.
      for (let i = queued.length; i < 10; i++) {
        const res = await createClip(lim, limT[5], whole(limT[5]));
        assert.equal(res.status, 202, `clip ${i + 1}: ${res.body}`);
        queued.push([limT[5], res.json.id]);
      }
      const held = await me(lim);
      assert.equal(held.open_holds, before.open_holds + 10);
      assert.ok(near(held.wallet_available_usd, before.wallet_available_usd - 10 * CHARGE));
      const full = envelope(assert, await createClip(lim, limT[5], { ...whole(limT[5]), output: 'audio' }), 429,
        'rate_limited');
      assert.equal(full.reason, 'clips_in_progress');
      assert.equal((await me(lim)).open_holds, before.open_holds + 10, 'nothing held for a refused clip');
      assert.equal((await listed(lim, limT[5])).length, 4);

      // Deleting the transcriptions removes their clips and releases the holds.
      for (const t of [...limT, p]) {
        const del = await api(`/transcriptions/${t.id}`, { method: 'DELETE', key: lim.key });
        assert.equal(del.status, 200, del.body);
      }
      for (const [t, id] of queued) {
        envelope(assert, await get(`${clipsOf(t)}/${id}`, lim.key), 404, 'not_found');
        envelope(assert, await get(clipsOf(t), lim.key), 404, 'not_found');
      }
      const after = await me(lim);
      assert.equal(after.open_holds, 0);
      assert.equal(after.wallet_balance_usd, before.wallet_balance_usd, 'nothing charged for clips never rendered');
      auditWallet(lim.accountId);
    });
  });

test('deleting a transcription removes its clips and their files', async () => {
  const c = made.video;
  const fresh = (await get(`${clipsOf(vid)}/${c.id}`, acc.key)).json;
  assert.equal(fresh.status, 'completed');
  assert.equal(download(fresh.file_url, `clip-${c.id}-before.mp4`).status, 200);
  const del = await api(`/transcriptions/${vid.id}`, { method: 'DELETE', key: acc.key });
  assert.equal(del.status, 200, del.body);
  envelope(assert, await get(`${clipsOf(vid)}/${c.id}`, acc.key), 404, 'not_found');
  envelope(assert, await get(clipsOf(vid), acc.key), 404, 'not_found');
  envelope(assert, await createClip(acc, vid, { start_seconds: 1, end_seconds: 3 }), 404, 'not_found');
  for (const url of [fresh.file_url, fresh.srt_url]) envelope(assert, await curl(url), 404, 'not_found');
  // Clips of the other transcriptions are untouched.
  const first = await get(`${clipsOf(main)}/${made.first.id}`, acc.key);
  assert.equal(first.status, 200);
  assert.equal(download(first.json.file_url, `clip-${made.first.id}-after.mp4`).status, 200);
  auditWallet(acc.accountId);
});
