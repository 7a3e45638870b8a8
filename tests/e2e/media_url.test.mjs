// A transcription's media for the console's player (issue 36; api/media/)
// through the real `scribe serve`: GET .../media and the signed link it
// answers, served with HTTP ranges to curl (200, 206, 416), refused when
// tampered with or expired; a browser-playable rendition of an AVI upload,
// made by the workers and opened with ffprobe; POST .../video adding the
// original video to a transcription of an audio upload (each refusal, then a
// video clip that renders from it); deletion taking the rendition and the
// added video with it. Recordings are a few seconds of flite speech.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startServer, newAccount, newKey, curl, envelope, finished, clipFinished, DB, OBJECTS, uploadFile as upload } from './harness.mjs';
import { dialogue, convert, seconds, videoWithAudio, download, probe, startMediaServer, MEDIA_DIR } from './media.mjs';

const psql = (sql) => execFileSync('psql', [DB, '-At', '-c', sql], { encoding: 'utf8' }).trim();

let server, shortLived, mediaServer, acc, other;
const wav = {}; // an uploaded WAV: played as it is; later given its video
const avi = {}; // an uploaded AVI (MPEG-4 Part 2 + MP3): needs a rendition
const link = {}; // a link to a WAV: the job keeps its audio (PCM in Matroska), which needs a rendition
let talk, talkVideo, longerVideo, aviPath;

const api = (srv, path, opts = {}) => curl(`${srv.url}/api/v1${path}`, opts);

const uploadFile = (key, path, contentType, filename) => upload(server, key, path, contentType, filename);

async function transcribe(fx, path, contentType, filename) {
  fx.path = path;
  fx.upload = await uploadFile(acc.key, path, contentType, filename);
  const res = await api(server, '/transcriptions', { method: 'POST', key: acc.key,
    body: { source: 'upload', upload_id: fx.upload, original_filename: filename, duration_seconds: seconds(path) } });
  assert.equal(res.status, 202, res.body);
  fx.id = res.json.id;
}

const mediaOf = (fx, srv = server, key = acc.key) => api(srv, `/transcriptions/${fx.id}/media`, { key });

// GET .../media until it is not 409 (a rendition in progress), honouring Retry-After.
async function playable(fx) {
  for (let i = 0; i < 300; i++) {
    const res = await mediaOf(fx);
    if (res.status !== 409) return res;
    const e = envelope(assert, res, 409, 'not_ready');
    assert.equal(e.reason, 'rendition_in_progress');
    assert.equal(res.headers['retry-after'], '2');
    await sleep(500); // shorter than Retry-After: the test waits for the worker, not the clock
  }
  throw new Error('the rendition was not ready in time');
}

// The link with one query parameter replaced.
function withParam(url, name, value) {
  const u = new URL(url);
  u.searchParams.set(name, value);
  return u.toString();
}

before(async () => {
  talk = dialogue([
    { voice: 'slt', text: 'The orchard behind the mill is full of apples in October.' },
    { voice: 'rms', text: 'We pick them early and press the juice the same afternoon.' },
  ], 'media-url-talk');
  talkVideo = videoWithAudio(talk, 'media-url-talk.mp4', { size: '320x240' });
  // Three seconds longer than the recording: not its video.
  longerVideo = videoWithAudio(convert(talk, 'media-url-longer.wav', ['-af', 'apad=pad_dur=3']),
    'media-url-longer.mp4', { size: '320x240' });
  aviPath = join(MEDIA_DIR, 'media-url-talk.avi');
  execFileSync('ffmpeg', ['-y', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc2=s=320x240:r=25', '-i', talk,
    '-map', '0:v', '-map', '1:a', '-c:v', 'mpeg4', '-c:a', 'libmp3lame', '-shortest', aviPath]);
  assert.equal(probe(aviPath).format.format_name, 'avi');

  mediaServer = await startMediaServer();
  const env = { SCRIBE_ALLOW_PRIVATE_URLS: '1', SCRIBE_WORKER_POLL_MS: '100', SCRIBE_WORKER_SLOTS: '2', SCRIBE_CLIP_SLOTS: '1',
    SCRIBE_RATE_LIMIT_PER_MINUTE: '100000' };
  server = await startServer({ workers: true, extraEnv: env });
  // The same database and objects, no workers; its links last 5 s (the expiry test).
  shortLived = await startServer({ extraEnv: { SCRIBE_CLIP_SLOTS: '0', SCRIBE_MEDIA_LINK_TTL_SECONDS: '5' } });
  acc = newAccount({ balance: 5 });
  other = newAccount({ balance: 5 });
  await transcribe(wav, talk, 'audio/wav', 'talk.wav');
  await transcribe(avi, aviPath, 'video/x-msvideo', 'talk.avi');
  const created = await api(server, '/transcriptions', { method: 'POST', key: acc.key,
    body: { source: 'external_url', url: mediaServer.url(talk) } });
  assert.equal(created.status, 202, created.body);
  link.id = created.json.id;
  for (const fx of [wav, avi, link]) {
    const done = await finished(server, acc.key, fx.id, { limitSeconds: 600 });
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
  }
});
after(async () => {
  await shortLived?.stop();
  await server?.stop();
  await mediaServer?.close();
});

test('a WAV upload is played as it is, through a signed link served with ranges', async () => {
  const res = await mediaOf(wav);
  assert.equal(res.status, 200, res.body);
  const m = res.json;
  assert.deepEqual(Object.keys(m).sort(), ['content_type', 'duration_seconds', 'expires_at', 'kind', 'rendition', 'url']);
  assert.equal(m.content_type, 'audio/wav');
  assert.equal(m.kind, 'audio');
  assert.equal(m.rendition, 'original');
  assert.ok(Math.abs(m.duration_seconds - seconds(talk)) < 0.05, `${m.duration_seconds} vs ${seconds(talk)}`);
  assert.ok(m.url.startsWith(`${server.url}/media/files/${wav.id}/upload?expires=`), m.url);
  // About an hour (the default), from now.
  const left = Date.parse(m.expires_at) - Date.now();
  assert.ok(left > 3500_000 && left <= 3601_000, `expires in ${left} ms`);

  const original = readFileSync(talk);
  const whole = download(m.url, 'media-url-whole.wav');
  assert.equal(whole.status, 200);
  assert.equal(whole.contentType, 'audio/wav');
  assert.ok(readFileSync(whole.path).equals(original), 'the served file is the upload');

  // No key is needed: the link authorizes. One range is 206.
  const part = await curl(m.url, { headers: { Range: 'bytes=0-99' } });
  assert.equal(part.status, 206, part.body);
  assert.equal(part.headers['content-range'], `bytes 0-99/${original.length}`);
  assert.equal(part.headers['accept-ranges'], 'bytes');
  assert.equal(part.headers['content-type'], 'audio/wav');
  assert.equal(Number(part.headers['content-length']), 100);
  const suffix = execFileSync('curl', ['-sS', '-H', 'Range: bytes=-16', m.url]);
  assert.ok(suffix.equals(original.subarray(original.length - 16)), 'the suffix range is the last 16 bytes');
  const mid = execFileSync('curl', ['-sS', '-H', 'Range: bytes=1000-1999', m.url]);
  assert.ok(mid.equals(original.subarray(1000, 2000)), 'a middle range is those bytes');

  // Past the end: 416 in the envelope, with the size.
  const past = await curl(m.url, { headers: { Range: `bytes=${original.length}-` } });
  const e = envelope(assert, past, 416, 'invalid_request');
  assert.equal(e.size, original.length);
  assert.equal(past.headers['content-range'], `bytes */${original.length}`);
});

test('a tampered, foreign or incomplete link is 403 forbidden; another account sees no media', async () => {
  const { url } = (await mediaOf(wav)).json;
  const u = new URL(url);
  const sig = u.searchParams.get('signature');
  const flipped = sig.slice(0, -1) + (sig.endsWith('0') ? '1' : '0');
  const refused = [
    withParam(url, 'signature', flipped),
    withParam(url, 'expires', String(Number(u.searchParams.get('expires')) + 3600)),
    url.replace(`/media/files/${wav.id}/upload?`, `/media/files/${wav.id}/upload.playable?`),
    url.replace(`/media/files/${wav.id}/`, `/media/files/${avi.id}/`),
    url.replace(`&signature=${sig}`, ''),
    withParam(url, 'expires', 'soon'),
  ];
  for (const bad of refused) {
    const res = await curl(bad);
    const e = envelope(assert, res, 403, 'forbidden');
    assert.match(e.message, /invalid or has expired/);
  }

  envelope(assert, await mediaOf(wav, server, other.key), 404, 'not_found');
  envelope(assert, await api(server, `/transcriptions/${wav.id}/media`), 401, 'unauthenticated');
  // A read-only key may read the link.
  const ro = newKey(acc.accountId, '--permission', 'read_only');
  assert.equal((await mediaOf(wav, server, ro.key)).status, 200);
});

test('a link expires', async () => {
  const res = await mediaOf(wav, shortLived);
  assert.equal(res.status, 200, res.body);
  const { url, expires_at: expiresAt } = res.json;
  const left = Date.parse(expiresAt) - Date.now();
  assert.ok(left <= 5100, `a 5 s link expires in ${left} ms`);
  assert.equal((await curl(url, { headers: { Range: 'bytes=0-9' } })).status, 206);
  // The expiry is a whole second; the link works through it and not after.
  await sleep(Math.max(0, Date.parse(expiresAt) - Date.now()) + 1100);
  const e = envelope(assert, await curl(url), 403, 'forbidden');
  assert.match(e.message, /expired/);
});

test('an AVI upload gets an H.264/AAC MP4 rendition, made by the workers, served with ranges', async () => {
  const first = await mediaOf(avi);
  const e = envelope(assert, first, 409, 'not_ready');
  assert.equal(e.reason, 'rendition_in_progress');
  assert.equal(e.retry_after, 2);
  assert.equal(first.headers['retry-after'], '2');
  const res = await playable(avi);
  assert.equal(res.status, 200, res.body);
  const m = res.json;
  assert.equal(m.rendition, 'transcoded');
  assert.equal(m.kind, 'video');
  assert.equal(m.content_type, 'video/mp4');
  assert.ok(m.url.startsWith(`${server.url}/media/files/${avi.id}/upload.playable?`), m.url);

  const got = download(m.url, 'media-url-rendition.mp4');
  assert.equal(got.status, 200);
  assert.equal(got.contentType, 'video/mp4');
  const p = probe(got.path);
  assert.match(p.format.format_name, /mp4/);
  const v = p.streams.find((s) => s.codec_type === 'video');
  const a = p.streams.find((s) => s.codec_type === 'audio');
  assert.equal(v?.codec_name, 'h264');
  assert.equal(a?.codec_name, 'aac');
  assert.equal(v.width, 320);
  assert.ok(Math.abs(Number(p.format.duration) - seconds(aviPath)) < 0.2,
    `rendition ${p.format.duration} s, source ${seconds(aviPath)} s`);
  // The index is first (+faststart): a player needs no seek to the end to start.
  const head = execFileSync('curl', ['-sS', '-H', 'Range: bytes=0-65535', m.url]);
  assert.ok(head.indexOf('moov') >= 0 && head.indexOf('moov') < head.indexOf('mdat'), 'moov before mdat');
  const size = statSync(got.path).size;
  const last = await curl(m.url, { headers: { Range: `bytes=${size - 10}-${size + 100}` } });
  assert.equal(last.status, 206);
  assert.equal(last.headers['content-range'], `bytes ${size - 10}-${size - 1}/${size}`);
  // The original AVI itself is not served under this decision.
  const orig = m.url.replace('/upload.playable?', '/upload?');
  assert.equal((await curl(orig)).status, 403); // its signature was for the rendition
});

test('a link source plays the audio its job kept, as an AAC rendition when it is PCM in Matroska', async () => {
  const res = await playable(link);
  assert.equal(res.status, 200, res.body);
  const m = res.json;
  assert.equal(m.kind, 'audio');
  assert.equal(m.rendition, 'transcoded');
  assert.equal(m.content_type, 'audio/mp4');
  assert.ok(m.url.includes(`/media/files/${link.id}/audio.playable?`), m.url);
  const got = download(m.url, 'media-url-link.m4a');
  assert.equal(got.status, 200);
  assert.equal(got.contentType, 'audio/mp4');
  const p = probe(got.path);
  assert.deepEqual(p.streams.map((s) => s.codec_name), ['aac']);
  assert.ok(Math.abs(Number(p.format.duration) - seconds(talk)) < 0.2, `${p.format.duration} vs ${seconds(talk)}`);
  // A link source takes no added video.
  const vid = await api(server, `/transcriptions/${link.id}/video`, { method: 'POST', key: acc.key,
    body: { upload_id: await uploadFile(acc.key, talkVideo, 'video/mp4', 'talk.mp4') } });
  assert.equal(envelope(assert, vid, 400, 'invalid_request').reason, 'not_an_upload');
});

test('POST .../video refuses what is not the recording\'s video, then adds it and a video clip renders', async () => {
  const post = (body, key = acc.key) => api(server, `/transcriptions/${wav.id}/video`, { method: 'POST', key, body });
  // Before: the audio upload has no video for a clip.
  const noVideo = await api(server, `/transcriptions/${wav.id}/clips`, { method: 'POST', key: acc.key,
    body: { start_seconds: 0.5, end_seconds: 2.5, output: 'video' } });
  assert.equal(envelope(assert, noVideo, 400, 'video_unavailable').reason, 'no_source_video');
  assert.match(noVideo.json.error.message, /\/video/);

  let e = envelope(assert, await post({}), 400, 'invalid_request');
  assert.equal(e.field, 'upload_id');
  e = envelope(assert, await post({ upload_id: 'upl_doesnotexist000' }), 400, 'invalid_request');
  assert.equal(e.field, 'upload_id');
  // An upload of another account is reported like an unknown one.
  const foreign = await uploadFile(other.key, talkVideo, 'video/mp4', 'talk.mp4');
  e = envelope(assert, await post({ upload_id: foreign }), 400, 'invalid_request');
  assert.equal(e.field, 'upload_id');
  // Audio only: no video stream.
  e = envelope(assert, await post({ upload_id: wav.upload }), 400, 'invalid_request');
  assert.equal(e.reason, 'no_video_stream');
  // A video three seconds longer than the recording.
  const longer = await uploadFile(acc.key, longerVideo, 'video/mp4', 'longer.mp4');
  e = envelope(assert, await post({ upload_id: longer }), 400, 'invalid_request');
  assert.equal(e.reason, 'duration_mismatch');
  assert.equal(e.tolerance_seconds, 1);
  assert.ok(e.video_duration_seconds - e.transcription_duration_seconds > 2.5, JSON.stringify(e));
  // Not the caller's transcription.
  envelope(assert, await api(server, `/transcriptions/${wav.id}/video`, { method: 'POST', key: other.key,
    body: { upload_id: foreign } }), 404, 'not_found');
  // A read-only key may not add one.
  const ro = newKey(acc.accountId, '--permission', 'read_only');
  envelope(assert, await post({ upload_id: longer }, ro.key), 403, 'scope_forbidden');
  assert.equal(psql(`select count(*) from events where type = 'TranscriptionVideoAdded'`), '0');

  const good = await uploadFile(acc.key, talkVideo, 'video/mp4', 'talk.mp4');
  const added = await post({ upload_id: good });
  assert.equal(added.status, 200, added.body);
  assert.equal(added.json.transcription_id, wav.id);
  assert.equal(added.json.upload_id, good);
  assert.equal(added.json.video_available, true);
  assert.ok(Math.abs(added.json.video_duration_seconds - seconds(talkVideo)) < 0.05);
  const ev = JSON.parse(psql(`select data from events where type = 'TranscriptionVideoAdded'`));
  assert.equal(ev.transcription_id, wav.id);
  assert.equal(ev.upload_id, good);
  // The upload stays the caller's: it can still be transcribed on its own.
  const again = await api(server, '/quotes', { method: 'POST', key: acc.key,
    body: { source: 'upload', upload_id: good, duration_seconds: seconds(talkVideo) } });
  assert.equal(again.status, 200, again.body);

  // The player now gets the video, as it is (H.264/AAC MP4).
  const m = (await mediaOf(wav)).json;
  assert.equal(m.kind, 'video');
  assert.equal(m.rendition, 'original');
  assert.equal(m.content_type, 'video/mp4');
  assert.ok(m.url.includes(`/media/files/${wav.id}/video?`), m.url);
  const served = download(m.url, 'media-url-added.mp4');
  assert.ok(readFileSync(served.path).equals(readFileSync(talkVideo)), 'the served video is the added upload');

  // And a video clip renders from it.
  const clip = await api(server, `/transcriptions/${wav.id}/clips`, { method: 'POST', key: acc.key,
    body: { start_seconds: 0.5, end_seconds: 2.5, output: 'video', aspect: '16:9' } });
  assert.equal(clip.status, 202, clip.body);
  const done = await clipFinished(server, acc.key, wav.id, clip.json.id);
  assert.equal(done.status, 'completed', JSON.stringify(done.error));
  const file = download(done.file_url, 'media-url-clip.mp4');
  const cp = probe(file.path);
  const cv = cp.streams.find((s) => s.codec_type === 'video');
  assert.equal(cv?.codec_name, 'h264');
  assert.ok(Math.abs(Number(cp.format.duration) - 2) < 0.25, cp.format.duration);
});

test('deleting a transcription deletes its rendition and added video; its links answer 404', async () => {
  const links = [];
  for (const fx of [avi, wav]) {
    const res = await playable(fx);
    assert.equal(res.status, 200, res.body);
    links.push(res.json.url);
  }
  for (const fx of [avi, wav]) {
    assert.ok(existsSync(join(OBJECTS, 'transcripts', String(fx.id), 'media')) ||
      existsSync(join(OBJECTS, 'transcripts', String(fx.id), 'source', 'video')), `objects of ${fx.id}`);
    const del = await api(server, `/transcriptions/${fx.id}`, { method: 'DELETE', key: acc.key });
    assert.ok([200, 204].includes(del.status), del.body);
    envelope(assert, await mediaOf(fx), 404, 'not_found');
    assert.equal(existsSync(join(OBJECTS, 'transcripts', String(fx.id))), false, `objects of ${fx.id} remain`);
  }
  for (const url of links) envelope(assert, await curl(url), 404, 'not_found');
});
