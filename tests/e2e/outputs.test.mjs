// The raw exports and word timings of a real transcription: a three-voice
// flite recording is transcribed by the real pipeline once, then
// /transcript, /subtitles and /words are read back over HTTP and checked with
// independent readers (FFmpeg, webvtt-parser, srt-parser-2).
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import webvtt from 'webvtt-parser';
import SrtParser from 'srt-parser-2';
import { FAST_RECOGNIZER, startServer, newAccount, curl, envelope, finished, DB } from './harness.mjs';
import { dialogue, convert, startMediaServer } from './media.mjs';

const psql = (sql) => execFileSync('psql', [DB, '-At', '-c', sql], { encoding: 'utf8' }).trim();
// Many requests per test: the rate limiter is not what is tested here.
const ENV = { ...FAST_RECOGNIZER, SCRIBE_ALLOW_PRIVATE_URLS: '1', SCRIBE_WORKER_POLL_MS: '100', SCRIBE_RATE_LIMIT_PER_MINUTE: '100000' };
const FORMATS = { srt: 'srt', vtt: 'vtt', 'vtt-karaoke': 'vtt', json: 'json' };
// The documented preset table (api/openapi.yaml, "Raw exports").
const PRESETS = {
  youtube: { chars: 42, lines: 2, min: 1000, max: 7000, gap: 40 },
  'tiktok-shorts': { chars: 22, lines: 2, min: 600, max: 3000, gap: 40 },
  'instagram-reels': { chars: 26, lines: 2, min: 600, max: 3500, gap: 40 },
  netflix: { chars: 42, lines: 2, min: 833, max: 7000, gap: 84 },
  podcast: { chars: 50, lines: 2, min: 1000, max: 8000, gap: 40 },
  broadcast: { chars: 37, lines: 2, min: 1000, max: 6000, gap: 120 },
};

let media, server, acc, id, segments, failedId;
const hacked = [];  // rows whose read model a test changed; restored afterwards
const api = (path, opts = {}) => curl(`${server.url}/api/v1${path}`, { key: acc.key, ...opts });

before(async () => {
  media = await startMediaServer();
  const wav = dialogue([
    { voice: 'slt', text: 'Good morning everyone. Welcome to the weekly meeting about the new library.' },
    { voice: 'rms', text: 'Thank you. I would like to talk about the budget for next year.' },
    { voice: 'awb', text: 'The children of the town need more books and a bigger reading room.' },
    { voice: 'slt', text: 'That sounds good. Please tell us how much money we need.' },
    { voice: 'rms', text: 'We need about two million dollars for the building and the books.' },
  ], 'outputs');
  const mp3 = convert(wav, 'outputs.mp3', ['-metadata', 'title=Library meeting']);
  const workers = await startServer({ workers: true, extraEnv: ENV });
  try {
    acc = newAccount({ balance: 5 });
    const res = await curl(`${workers.url}/api/v1/transcriptions`, { method: 'POST', key: acc.key,
      body: { source: 'external_url', url: media.url(mp3) } });
    assert.equal(res.status, 202, res.body);
    id = res.json.id;
    // Nothing listens on port 9: the worker fails this one fast.
    const bad = await curl(`${workers.url}/api/v1/transcriptions`, { method: 'POST', key: acc.key,
      body: { source: 'external_url', url: 'http://127.0.0.1:9/x.mp3', duration_seconds: 10 } });
    assert.equal(bad.status, 202, bad.body);
    failedId = bad.json.id;
    assert.equal((await finished(workers, acc.key, id)).status, 'completed');
    assert.equal((await finished(workers, acc.key, failedId)).status, 'failed');
  } finally {
    await workers.stop();
  }
  // Without workers from here on, so a new transcription stays processing.
  server = await startServer({ extraEnv: ENV });
  const result = await api(`/transcriptions/${id}/result?include=segments`);
  segments = result.json.segments;
  assert.ok(segments.length >= 4, result.body);
});

after(async () => {
  for (const { tid, status } of hacked) {
    psql(`delete from segments where transcription_id = ${tid}`);
    psql(`update transcriptions set status = '${status}' where id = ${tid}`);
  }
  await server?.stop();
  await media?.close();
});

// A quoted row whose read model is then set to `status` (no API path leads to
// cancelled, or to completed without segments); restored in after().
async function hackedRow(status, { copySegments = false } = {}) {
  const q = await api('/quotes', { method: 'POST', body: { source: 'external_url', url: 'http://127.0.0.1:9/q.mp3',
    duration_seconds: 30 } });
  assert.equal(q.status, 200, q.body);
  const tid = q.json.transcription_id;
  hacked.push({ tid, status: 'quoted' });
  psql(`update transcriptions set status = '${status}' where id = ${tid}`);
  if (copySegments)
    psql(`insert into segments(id, transcription_id, segment_index, start_ms, end_ms, speaker, text) ` +
      `select nextval('segment_ids'), ${tid}, segment_index, start_ms, end_ms, speaker, text from segments ` +
      `where transcription_id = ${id}`);
  return tid;
}

const words = (text) => text.toLowerCase().replace(/[.,?!]/g, '').split(/\s+/).filter(Boolean);
const allSegmentWords = () => segments.flatMap((s) => words(s.text));

test('txt transcript: turns with timestamps and speaker labels, as a file', async () => {
  const res = await api(`/transcriptions/${id}/transcript`);
  assert.equal(res.status, 200, res.body);
  assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8');
  assert.equal(res.headers['x-service-segment-count'], String(segments.length));
  assert.equal(res.headers['content-disposition'], 'attachment; filename=library-meeting.txt');
  assert.ok(res.body.endsWith('\n') && res.body.trim().length > 0);
  const paragraphs = res.body.trimEnd().split('\n\n');
  const speakers = [];
  for (const p of paragraphs) {
    const m = p.match(/^\[(\d\d):(\d\d):(\d\d)\] (SPEAKER_\d\d|Unknown): (\S.*)$/);
    assert.ok(m, `paragraph form: ${JSON.stringify(p)}`);
    speakers.push(m[4]);
  }
  // A turn is a run of one speaker: neighbours differ, and the turns add up
  // to the segments in order.
  for (let i = 1; i < speakers.length; i++) assert.notEqual(speakers[i], speakers[i - 1]);
  assert.ok(paragraphs.length <= segments.length);
  const labelOf = (s) => s.speaker ?? 'Unknown';
  const runs = segments.filter((s, i) => i === 0 || labelOf(s) !== labelOf(segments[i - 1])).length;
  assert.equal(paragraphs.length, runs);
  assert.deepEqual(words(paragraphs.map((p) => p.replace(/^\[[^\]]*\] \S+: /, '')).join(' ')), allSegmentWords());
  const first = segments[0].start_ms / 1000;
  assert.match(paragraphs[0], new RegExp(`^\\[00:00:${String(Math.floor(first)).padStart(2, '0')}\\]`));
});

test('md transcript: title, rule, bold labels; the two booleans are independent', async () => {
  const md = await api(`/transcriptions/${id}/transcript?format=md`);
  assert.equal(md.status, 200, md.body);
  assert.equal(md.headers['content-type'], 'text/markdown; charset=utf-8');
  assert.equal(md.headers['content-disposition'], 'attachment; filename=library-meeting.md');
  // Title, the chapter list (enrichment gives every recording with speech at least one chapter), rule, turns.
  assert.match(md.body, /^# Library meeting\n\n## Chapters\n\n(- \[\d\d:\d\d:\d\d\] \S[^\n]*\n)+\n---\n\n/, md.body.slice(0, 200));
  assert.ok(md.body.startsWith('# Library meeting\n\n## Chapters\n\n- [00:00:00] '), md.body.slice(0, 80));
  assert.match(md.body.split('---\n\n')[1], /^\[\d\d:\d\d:\d\d\] \*\*(SPEAKER_\d\d|Unknown):\*\* \S/);
  for (const format of ['txt', 'md']) {
    const bare = await api(`/transcriptions/${id}/transcript?format=${format}&speaker_labels=false&timestamps=false`);
    assert.equal(bare.status, 200, bare.body);
    assert.doesNotMatch(bare.body, /SPEAKER_|Unknown|\[\d\d:/);
    const onlyTimes = await api(`/transcriptions/${id}/transcript?format=${format}&speaker_labels=0&timestamps=1`);
    assert.match(onlyTimes.body, /\[\d\d:\d\d:\d\d\] [A-Z]/);
    assert.doesNotMatch(onlyTimes.body, /SPEAKER_/);
    const onlyLabels = await api(`/transcriptions/${id}/transcript?format=${format}&timestamps=false`);
    assert.match(onlyLabels.body, /SPEAKER_00/);
    assert.doesNotMatch(onlyLabels.body, /\[\d\d:\d\d/);
  }
});

// Parses one subtitle body with the independent readers; returns [{start, end, lines}] in ms.
function parseCues(format, body) {
  if (format === 'srt') {
    return new SrtParser().fromSrt(body).map((c) => ({ start: Math.round(c.startSeconds * 1000),
      end: Math.round(c.endSeconds * 1000), lines: c.text.split('\n') }));
  }
  if (format === 'json') {
    return JSON.parse(body).cues.map((c) => ({ start: c.startMs, end: c.endMs, lines: c.text.split('\n'), raw: c }));
  }
  const parsed = new webvtt.WebVTTParser().parse(body, 'metadata');
  assert.deepEqual(parsed.errors, [], `WebVTT errors: ${JSON.stringify(parsed.errors)}`);
  return parsed.cues.map((c) => {
    const tags = c.tree.children.filter((n) => n.type === 'timestamp').map((n) => Math.round(n.value * 1000));
    const text = c.text.replace(/<[^>]*>/g, '').replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>');
    return { start: Math.round(c.startTime * 1000), end: Math.round(c.endTime * 1000), lines: text.split('\n'), tags };
  });
}

function ffmpegReads(ext, body) {
  const dir = mkdtempSync(join(tmpdir(), 'scribe-subs-'));
  const file = join(dir, `subs.${ext}`);
  writeFileSync(file, body);
  const out = join(dir, 'subs.ass');
  const r = spawnSync('ffmpeg', ['-v', 'error', '-y', '-i', file, out], { encoding: 'utf8' });
  assert.equal(r.status, 0, `ffmpeg could not read the ${ext}: ${r.stderr}`);
  return readFileSync(out, 'utf8').split('\n').filter((l) => l.startsWith('Dialogue:')).length;
}

test('subtitles: every format under every preset is readable and keeps the preset rules', async () => {
  const allWords = (await api(`/transcriptions/${id}/words?limit=5000`)).json.words;
  for (const [preset, rule] of Object.entries(PRESETS)) {
    for (const [format, ext] of Object.entries(FORMATS)) {
      const label = `${format} ${preset}`;
      const res = await api(`/transcriptions/${id}/subtitles?format=${format}&preset=${preset}`);
      assert.equal(res.status, 200, `${label}: ${res.body}`);
      const type = { srt: 'application/x-subrip; charset=utf-8', json: 'application/json; charset=utf-8' }[format] ??
        'text/vtt; charset=utf-8';
      assert.equal(res.headers['content-type'], type, label);
      assert.equal(res.headers['x-service-cue-source'], 'generated');
      assert.equal(res.headers['x-service-cue-mode'], 'word', label);
      assert.equal(res.headers['content-disposition'], `inline; filename=library-meeting-${preset}.${ext}`);
      const cues = parseCues(format, res.body);
      assert.equal(String(cues.length), res.headers['x-service-cue-count'], label);
      assert.ok(cues.length > 0);
      if (ext !== 'json') assert.equal(ffmpegReads(ext, res.body), cues.length, `${label}: ffmpeg cue count`);
      // Every word once, in order.
      assert.deepEqual(words(cues.flatMap((c) => c.lines).join(' ')), allSegmentWords(), label);
      for (const [i, c] of cues.entries()) {
        assert.ok(c.start < c.end && c.end - c.start <= rule.max, `${label} cue ${i}: ${c.start}-${c.end}`);
        if (i > 0) assert.ok(c.start - cues[i - 1].end >= rule.gap, `${label} cue ${i}: gap`);
        assert.ok(c.lines.length >= 1 && c.lines.length <= rule.lines, `${label} cue ${i}: lines`);
        for (const line of c.lines)
          assert.ok([...line].length <= rule.chars || !line.includes(' '), `${label} cue ${i}: "${line}"`);
        if (c.tags) {
          let last = c.start;
          for (const t of c.tags) {
            assert.ok(t > last && t < c.end, `${label} cue ${i}: word tag ${t} outside ${c.start}-${c.end}`);
            last = t;
          }
          if (format === 'vtt-karaoke') assert.ok(c.tags.length > 0 || c.lines.join(' ').split(' ').length === 1);
          else assert.equal(c.tags.length, 0);
        }
        if (c.raw) {
          assert.deepEqual(Object.keys(c.raw).sort(), ['endMs', 'speaker', 'startMs', 'text', 'words'].filter(
            (k) => k !== 'speaker' || c.raw.speaker !== undefined));
          for (const w of c.raw.words)
            assert.deepEqual(Object.keys(w).sort(), ['confidence', 'endMs', 'punctuationAfter', 'speaker', 'startMs', 'text']);
        }
      }
      if (format === 'json') {
        const flat = cues.flatMap((c) => c.raw.words);
        assert.deepEqual(flat.map((w) => [w.text, w.startMs, w.endMs, w.punctuationAfter, w.speaker, w.confidence]),
          allWords.map((w) => [w.text, w.start_ms, w.end_ms, w.punctuation, w.speaker, w.confidence]));
      }
    }
  }
});

test('subtitles: sentence mode, speaker labels, the default preset and source', async () => {
  const sentence = await api(`/transcriptions/${id}/subtitles?mode=sentence&format=vtt`);
  assert.equal(sentence.status, 200, sentence.body);
  assert.equal(sentence.headers['x-service-cue-mode'], 'sentence');
  assert.equal(sentence.headers['content-disposition'], 'inline; filename=library-meeting-sentence.vtt');
  const cues = parseCues('vtt', sentence.body);
  assert.ok(cues.length >= segments.length);
  assert.deepEqual(words(cues.flatMap((c) => c.lines).join(' ')), allSegmentWords());
  // A segment that fits is one cue that starts with it.
  assert.equal(cues[0].start, segments[0].start_ms);

  const def = await api(`/transcriptions/${id}/subtitles`);
  assert.equal(def.status, 200);
  assert.equal(def.headers['content-type'], 'application/x-subrip; charset=utf-8');
  assert.equal(def.headers['content-disposition'], 'inline; filename=library-meeting-youtube.srt');
  assert.doesNotMatch(def.body, /\[SPEAKER_/);
  const generated = await api(`/transcriptions/${id}/subtitles?source=generated&mode=auto`);
  assert.equal(generated.body, def.body);

  const labelled = await api(`/transcriptions/${id}/subtitles?speaker_labels=true&format=json&preset=netflix`);
  for (const c of labelled.json.cues) {
    assert.match(c.text, /^\[(SPEAKER_\d\d|Unknown)\] /);
    assert.ok(c.text.startsWith(`[${c.speaker ?? 'Unknown'}] `));
  }
  const karaoke = await api(`/transcriptions/${id}/subtitles?format=vtt-karaoke&mode=sentence`);
  assert.equal(karaoke.status, 200);
  assert.ok(parseCues('vtt', karaoke.body).length > 0);

  const materialized = await api(`/transcriptions/${id}/subtitles?source=materialized`);
  assert.match(envelope(assert, materialized, 404, 'not_found').message, /edited cues/);
});

test('words: paged until has_more is false, consistent with the segments', async () => {
  const first = await api(`/transcriptions/${id}/words`);
  assert.equal(first.status, 200, first.body);
  const body = first.json;
  assert.deepEqual(Object.keys(body).sort(), ['available', 'count', 'granularity', 'has_more', 'id', 'language', 'limit',
    'offset', 'reason', 'status', 'words']);
  assert.equal(body.id, id);
  assert.equal(body.status, 'completed');
  assert.equal(body.granularity, 'word');
  assert.equal(body.available, true);
  assert.equal(body.reason, null);
  assert.equal(body.language, 'en');
  assert.equal(body.limit, 2000);
  assert.equal(body.words.length, body.count);
  const paged = [];
  let offset = 0;
  for (;;) {
    const page = (await api(`/transcriptions/${id}/words?offset=${offset}&limit=7`)).json;
    assert.equal(page.count, body.count);
    assert.equal(page.offset, offset);
    assert.equal(page.limit, 7);
    paged.push(...page.words);
    assert.equal(page.has_more, offset + page.words.length < page.count);
    if (!page.has_more) break;
    assert.equal(page.words.length, 7);
    offset += 7;
  }
  assert.deepEqual(paged, body.words);
  const bySegment = new Map(segments.map((s) => [s.id, s]));
  paged.forEach((w, i) => {
    assert.deepEqual(Object.keys(w).sort(), ['confidence', 'end_ms', 'punctuation', 'segment_id', 'speaker', 'start_ms', 'text',
      'word_index']);
    assert.equal(w.word_index, i);
    const seg = bySegment.get(w.segment_id);
    assert.ok(seg, `word ${i} names segment ${w.segment_id}`);
    assert.equal(w.speaker, seg.speaker);
    assert.ok(w.end_ms >= w.start_ms && w.start_ms >= seg.start_ms - 1 && w.end_ms <= seg.end_ms + 1);
    assert.ok(w.punctuation === null || ['.', ',', '?'].includes(w.punctuation));
  });
  assert.deepEqual(words(paged.map((w) => w.text + (w.punctuation ?? '')).join(' ')), allSegmentWords());
  const past = (await api(`/transcriptions/${id}/words?offset=${body.count + 10}`)).json;
  assert.deepEqual([past.words.length, past.has_more, past.count], [0, false, body.count]);
});

test('parameters are validated, naming the field', async () => {
  const cases = [
    ['transcript?format=pdf', 'format'], ['transcript?speaker_labels=yes', 'speaker_labels'],
    ['transcript?timestamps=2', 'timestamps'], ['subtitles?format=ass', 'format'], ['subtitles?preset=custom', 'preset'],
    ['subtitles?mode=line', 'mode'], ['subtitles?source=edited', 'source'], ['subtitles?speaker_labels=on', 'speaker_labels'],
    ['subtitles?format=srt&format=vtt', 'format'], ['words?limit=0', 'limit'], ['words?limit=5001', 'limit'],
    ['words?offset=-1', 'offset'], ['words?limit=ten', 'limit'],
  ];
  for (const [path, field] of cases) {
    const e = envelope(assert, await api(`/transcriptions/${id}/${path}`), 400, 'invalid_request');
    assert.equal(e.field, field, path);
  }
  assert.equal((await api(`/transcriptions/${id}/words?limit=5000`)).status, 200);
});

test('another account, or no such id, is 404 on all three', async () => {
  const other = newAccount();
  for (const path of ['transcript', 'subtitles', 'words']) {
    envelope(assert, await api(`/transcriptions/${id}/${path}`, { key: other.key }), 404, 'not_found');
    envelope(assert, await api(`/transcriptions/999999999/${path}`), 404, 'not_found');
    envelope(assert, await api(`/transcriptions/abc/${path}`), 404, 'not_found');
    assert.equal((await api(`/transcriptions/${id}/${path}`, { key: null })).status, 401);
  }
});

test('not completed: 409 not_ready with the reason and status; /words says why', async () => {
  const processing = await api('/transcriptions', { method: 'POST', body: { source: 'external_url',
    url: 'http://127.0.0.1:9/later.mp3', duration_seconds: 12 } });
  assert.equal(processing.status, 202, processing.body);
  const quote = await api('/quotes', { method: 'POST', body: { source: 'external_url', url: 'http://127.0.0.1:9/q.mp3',
    duration_seconds: 12 } });
  const cancelled = await hackedRow('cancelled');
  const cases = [
    [processing.json.id, 'transcription_processing', 'processing'],
    [failedId, 'transcription_failed', 'failed'],
    [quote.json.transcription_id, 'not_started', 'quoted'],
    [cancelled, 'transcription_cancelled', 'cancelled'],
  ];
  try {
    for (const [tid, reason, status] of cases) {
      for (const path of ['transcript', 'subtitles?format=vtt']) {
        const res = await api(`/transcriptions/${tid}/${path}`);
        const e = envelope(assert, res, 409, 'not_ready');
        assert.equal(e.reason, reason, path);
        assert.equal(e.status, status, path);
        if (reason === 'transcription_processing') {
          assert.equal(res.headers['retry-after'], '15');
          assert.equal(e.retry_after, 15);
        } else {
          assert.equal(res.headers['retry-after'], undefined, `${reason}: no Retry-After`);
        }
      }
      const w = await api(`/transcriptions/${tid}/words`);
      assert.equal(w.status, 200, w.body);
      assert.deepEqual([w.json.status, w.json.available, w.json.reason, w.json.count, w.json.words.length, w.json.has_more],
        [status, false, 'not_completed', 0, 0, false]);
    }
  } finally {
    await api(`/transcriptions/${processing.json.id}`, { method: 'DELETE' });
  }
});

test('wait attaches content only when completed: a failed one gets none, whatever include asks', async () => {
  const failed = await api(`/transcriptions/${failedId}/wait?include=sections,segments,chapters,qna`);
  assert.equal(failed.status, 200, failed.body);
  assert.equal(failed.json.status, 'failed');
  assert.deepEqual(failed.json.included, []);
  for (const name of ['sections', 'segments', 'segments_meta', 'chapters', 'qna'])
    assert.ok(!(name in failed.json), `${name} on a failed transcription: ${failed.body}`);
  const done = await api(`/transcriptions/${id}/wait?include=sections,segments`);
  assert.equal(done.status, 200, done.body);
  assert.deepEqual(done.json.included, ['sections', 'segments']);
  // Enrichment's sections cover the transcript from its first segment.
  assert.ok(done.json.sections.length >= 1, done.body);
  assert.equal(done.json.sections[0].section_index, 0);
  assert.equal(done.json.sections.reduce((n, x) => n + x.segment_count, 0), segments.length);
  assert.equal(done.json.segments.length, segments.length);
});

test('completed without segments or without words', async () => {
  const empty = await hackedRow('completed');
  const e = envelope(assert, await api(`/transcriptions/${empty}/transcript?format=md`), 409, 'not_ready');
  assert.deepEqual([e.reason, e.status], ['artifact_missing', 'completed']);
  envelope(assert, await api(`/transcriptions/${empty}/subtitles`), 404, 'not_found');
  const w = (await api(`/transcriptions/${empty}/words`)).json;
  assert.deepEqual([w.available, w.reason, w.count], [false, 'no_word_timestamps', 0]);

  const noWords = await hackedRow('completed', { copySegments: true });
  const word = await api(`/transcriptions/${noWords}/subtitles?mode=word`);
  assert.equal(envelope(assert, word, 400, 'invalid_request').field, 'mode');
  const auto = await api(`/transcriptions/${noWords}/subtitles`);
  assert.equal(auto.status, 200, auto.body);
  assert.equal(auto.headers['x-service-cue-mode'], 'sentence');
  assert.match(auto.headers['content-disposition'], new RegExp(`^inline; filename=transcription-${noWords}-sentence\\.srt$`));
  const txt = await api(`/transcriptions/${noWords}/transcript`);
  assert.equal(txt.status, 200);
  assert.equal(txt.headers['content-disposition'], `attachment; filename=transcription-${noWords}.txt`);
  const md = await api(`/transcriptions/${noWords}/transcript?format=md`);
  assert.ok(md.body.startsWith(`# Transcription ${noWords}\n`));
});
