// The Node driver of bench/realtime.sh (see its header for what is measured
// and how): streams utterances to realtime sessions of a running `scribe
// serve` at real-time pace and measures final latency, partial cadence, lag,
// the server's CPU and memory; also the word error rate of a text.
//
//   node bench/realtime_bench.mjs run   (settings in the environment, below)
//   node bench/realtime_bench.mjs wer REFERENCE_FILE HYPOTHESIS_FILE
//   node bench/realtime_bench.mjs stream-wav MANIFEST OUT.wav   (session 0's audio, for the offline run)
//
// run: RT_API (http://127.0.0.1:PORT), RT_KEY, RT_MANIFEST (tsv: wav path,
// voice, text), RT_SESSIONS (1), RT_SILENCE_MS (600), RT_UTTERANCES (all),
// RT_GAP_S (1.5), RT_FRAME_MS (50), RT_STAGGER_MS (300), RT_PID (the
// server's pid, for CPU and VmRSS), RT_LABEL, RT_HYP_OUT (session 0's finals
// as text). Prints a summary line per figure and one JSON line.
import { readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { StreamClient, pcmOf } from '../tests/e2e/realtime_client.mjs';

const RATE = 16000;

// Speech bounds of a flite utterance: the first and last 10 ms frame whose RMS
// is above -40 dBFS (flite pads with near-digital silence, so this is where
// its first word starts and its last word ends, decay included).
function speechBounds(pcm) {
  const n = pcm.length / 2, win = RATE / 100, thr = 32768 * 0.01;
  let first = -1, last = -1;
  for (let f = 0; f * win < n; f++) {
    let sum = 0, cnt = 0;
    for (let i = f * win; i < Math.min(n, (f + 1) * win); i++) { const s = pcm.readInt16LE(i * 2); sum += s * s; cnt++; }
    if (Math.sqrt(sum / cnt) > thr) { if (first < 0) first = f * win; last = Math.min(n, (f + 1) * win); }
  }
  return { start: Math.max(first, 0), end: last < 0 ? n : last };
}

export function loadManifest(path) {
  return readFileSync(path, 'utf8').trim().split('\n').map((line) => {
    const [wav, voice, text] = line.split('\t');
    const pcm = pcmOf(wav);
    return { wav, voice, text, pcm, ...speechBounds(pcm) };
  });
}

// One session's audio: lead silence, then each utterance (rotated by
// `rotate`) followed by `gapS` of silence, then 1 s more. Utterance bounds in
// samples from the stream's start.
function compose(utts, rotate, gapS) {
  const order = utts.map((_, i) => utts[(i + rotate) % utts.length]);
  const parts = [Buffer.alloc(RATE * 2)], marks = [];
  let at = RATE;
  for (const u of order) {
    marks.push({ text: u.text, voice: u.voice, start: at + u.start, end: at + u.end });
    parts.push(u.pcm);
    at += u.pcm.length / 2;
    const gap = Math.round(gapS * RATE);
    parts.push(Buffer.alloc(gap * 2));
    at += gap;
  }
  parts.push(Buffer.alloc(RATE * 2));
  return { pcm: Buffer.concat(parts), marks };
}

const norm = (s) => s.toLowerCase().replace(/[^a-z' ]+/g, ' ').split(/\s+/).filter(Boolean);
export function wer(ref, hyp) {
  const r = norm(ref), h = norm(hyp);
  let prev = Array.from({ length: h.length + 1 }, (_, j) => j);
  for (let i = 1; i <= r.length; i++) {
    const cur = [i];
    for (let j = 1; j <= h.length; j++) cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (r[i - 1] === h[j - 1] ? 0 : 1));
    prev = cur;
  }
  return { errors: prev[h.length], words: r.length, wer: r.length ? prev[h.length] / r.length : 0 };
}

const q = (xs, p) => { const s = xs.filter((x) => x !== null).sort((a, b) => a - b); return s.length ? s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)] : null; };
const f = (x, d = 0) => (x === null || x === undefined || Number.isNaN(x) ? '-' : x.toFixed(d));

function procStat(pid) {
  if (!pid) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cpu = (Number(fields[11]) + Number(fields[12])) / 100; // CLK_TCK 100 on Linux
    const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
    return { cpu, rss };
  } catch { return null; }
}

async function post(url, key, body) {
  const res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = await res.json();
  if (res.status !== 201) throw new Error(`POST ${url}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

// One session: create, connect, stream at real-time pace recording each
// frame's send time, Terminate, wait for the close; then per utterance the
// final latency, partials while speaking and the lags.
async function session(api, key, audio, { silenceMs, frameMs }) {
  const created = Date.now();
  const s = await post(`${api}/api/v1/realtime/sessions`, key, { language: 'en' });
  const url = new URL(s.websocket_url.replace(/^http/, 'ws'));
  url.protocol = 'ws:';
  url.host = new URL(api).host;
  url.searchParams.set('ticket', s.ticket);
  url.searchParams.set('end_of_turn_silence_ms', String(silenceMs));
  const c = new StreamClient(url.toString());
  await c.opened;
  const begin = await c.type('Begin', 120000).catch((e) => {
    throw new Error(`${e.message}: ${JSON.stringify(c.messages)}`);
  });
  const frameBytes = (RATE * 2 * frameMs) / 1000;
  const sentAt = [];
  const t0 = Date.now();
  for (let at = 0, k = 0; at < audio.pcm.length; at += frameBytes, k++) {
    if (!c.isOpen()) break;
    let frame = audio.pcm.subarray(at, Math.min(at + frameBytes, audio.pcm.length));
    if (frame.length < 640) frame = Buffer.concat([frame, Buffer.alloc(640 - frame.length)]);
    sentAt.push(Date.now());
    c.ws.send(frame);
    const wait = t0 + ((at + frameBytes) / (RATE * 2)) * 1000 - Date.now();
    if (wait > 0) await sleep(wait);
  }
  const streamed = Date.now();
  c.send({ type: 'Terminate' });
  const closed = await c.closed;
  // The wall time the client sent the frame holding session sample `sample`.
  const sendTime = (sample) => sentAt[Math.min(sentAt.length - 1, Math.floor(sample / ((RATE * frameMs) / 1000)))];
  const toSample = (ms) => Math.round((ms * RATE) / 1000);
  const finals = c.finals().filter((m) => m.words.length);
  const partials = c.partials().filter((m) => m.words.length);
  // A final belongs to the utterance whose speech is nearest its words' middle.
  const nearest = (ms) => {
    const smp = toSample(ms);
    let best = 0, bestD = Infinity;
    audio.marks.forEach((m, i) => { const d = smp < m.start ? m.start - smp : smp > m.end ? smp - m.end : 0; if (d < bestD) { bestD = d; best = i; } });
    return best;
  };
  const perUtt = audio.marks.map(() => ({ finals: [] }));
  for (const m of finals) perUtt[nearest((m.words[0].start + m.words[m.words.length - 1].end) / 2)].finals.push(m);
  const latencies = [], missing = [];
  let speechS = 0, partialsInSpeech = 0;
  audio.marks.forEach((mk, i) => {
    const fs = perUtt[i].finals;
    const a = sendTime(mk.start), b = sendTime(mk.end);
    speechS += (mk.end - mk.start) / RATE;
    partialsInSpeech += partials.filter((p) => p._at >= a && p._at <= b).length;
    if (!fs.length) { missing.push(i); return; }
    latencies.push(fs[fs.length - 1]._at - b);
  });
  // Lag: how long after the client sent the audio of the newest word a
  // message names that message arrived (partials: their last word's end; an
  // upper bound of how far behind real time the recognizer runs).
  const partialLags = partials.map((p) => p._at - sendTime(toSample(p.words[p.words.length - 1].end)));
  const hyp = finals.map((m) => m.transcript).join(' ');
  return {
    session_id: s.session_id, begin_ms: begin._at - created, latencies, missing, speechS, partialsInSpeech,
    partials: partials.length, finals: finals.length, partialLags, hyp, close: closed.code,
    errors: c.of('Error').map((e) => e.code), lateS: (streamed - t0) / 1000 - audio.pcm.length / (RATE * 2),
  };
}

async function run() {
  const env = process.env;
  const utts = loadManifest(env.RT_MANIFEST).slice(0, Number(env.RT_UTTERANCES || 1e9));
  const n = Number(env.RT_SESSIONS || 1), silenceMs = Number(env.RT_SILENCE_MS || 600), gapS = Number(env.RT_GAP_S || 1.5);
  const frameMs = Number(env.RT_FRAME_MS || 50), stagger = Number(env.RT_STAGGER_MS || 300), pid = Number(env.RT_PID || 0);
  const before = procStat(pid);
  let peakRss = before ? before.rss : 0;
  const sampler = setInterval(() => { const p = procStat(pid); if (p) peakRss = Math.max(peakRss, p.rss); }, 200);
  const audios = Array.from({ length: n }, (_, i) => compose(utts, (i * 3) % utts.length, gapS));
  const t0 = Date.now();
  // A session that fails (no Begin within 120 s, a refused POST) is counted
  // as failed, not fatal: its utterances count as without a final.
  const failed = [];
  const results = (await Promise.all(audios.map(async (a, i) => {
    await sleep(i * stagger);
    try { return await session(env.RT_API, env.RT_KEY, a, { silenceMs, frameMs }); } catch (e) {
      failed.push(`session ${i}: ${e.message}`);
      return { latencies: [], missing: a.marks.map((_, k) => k), speechS: a.marks.reduce((t, m) => t + (m.end - m.start) / RATE, 0),
        partialsInSpeech: 0, partials: 0, finals: 0, partialLags: [Infinity], hyp: '', close: null, errors: ['failed'], lateS: 0, begin_ms: null };
    }
  })));
  const wallS = (Date.now() - t0) / 1000;
  clearInterval(sampler);
  const after = procStat(pid);
  const audioS = audios.reduce((t, a) => t + a.pcm.length / (RATE * 2), 0);
  const lat = results.flatMap((r) => r.latencies), lags = results.flatMap((r) => r.partialLags);
  const sessP95 = results.map((r) => q(r.partialLags, 0.95));
  const speechS = results.reduce((t, r) => t + r.speechS, 0), pis = results.reduce((t, r) => t + r.partialsInSpeech, 0);
  const missing = results.reduce((t, r) => t + r.missing.length, 0), utterances = n * utts.length;
  const cpu = before && after ? after.cpu - before.cpu : null;
  const label = env.RT_LABEL || `${n} sessions`;
  const ref = audios[0].marks.map((m) => m.text).join(' ');
  const w = wer(ref, results[0].hyp);
  if (env.RT_HYP_OUT) writeFileSync(env.RT_HYP_OUT, results[0].hyp + '\n');
  console.log(`${label}: ${n} session(s), end_of_turn_silence_ms ${silenceMs}, ${utts.length} utterances each, gap ${gapS} s, ` +
    `${frameMs} ms frames, starts ${stagger} ms apart; ${f(audioS, 1)} s of audio in ${f(wallS, 1)} s`);
  console.log(`  final latency (final's arrival - send of the frame holding the utterance's speech end), ms: ` +
    `p50 ${f(q(lat, 0.5))}, p95 ${f(q(lat, 0.95))}, max ${f(q(lat, 1))} over ${lat.length} utterances; ` +
    `${missing} of ${utterances} without a final`);
  console.log(`  partials: ${f(pis / speechS, 2)} per second of speech (${pis} arrived while speech was being sent, ${f(speechS, 1)} s of speech); ` +
    `all partials ${results.reduce((t, r) => t + r.partials, 0)}, finals ${results.reduce((t, r) => t + r.finals, 0)}`);
  console.log(`  partial lag (arrival - send of its last word's end), ms: p50 ${f(q(lags, 0.5))}, p95 ${f(q(lags, 0.95))}, max ${f(q(lags, 1))}; ` +
    `worst session's p95 ${f(Math.max(...sessP95.filter((x) => x !== null)))}`);
  // Memory per session against the server's VmRSS before any session (RT_RSS_BASE,
  // no decoder loaded): decoders are pooled, so the level's own "before" already
  // holds the idle ones.
  const base = Number(env.RT_RSS_BASE || (before ? before.rss : 0));
  const worstP95 = Math.max(...sessP95.filter((x) => x !== null));
  const sustained = missing === 0 && worstP95 < 1000 && results.every((r) => r.close === 1000);
  if (cpu !== null)
    console.log(`  server: ${f(cpu, 2)} CPU s for ${f(audioS, 1)} audio s = ${f(cpu / audioS, 3)} CPU s per audio s; ` +
      `VmRSS ${f(base, 1)} MiB with no session yet, ${f(before.rss, 1)} MiB before this run, peak ${f(peakRss, 1)} MiB ` +
      `(${f((peakRss - base) / n, 1)} MiB per session over the first)`);
  console.log(`  server's CPU use over the run: ${cpu !== null ? f(cpu / wallS, 2) : '-'} cores (of ${(await import('node:os')).availableParallelism()})`);
  for (const m of failed) console.log(`  FAILED ${m.slice(0, 300)}`);
  console.log(`  sustained (every session's p95 lag < 1 s, every utterance a final, closes 1000): ${sustained ? 'yes' : 'NO'}`);
  console.log(`  session 0 finals WER ${f(w.wer * 100, 1)}% (${w.errors}/${w.words}); Begin after POST p50 ${f(q(results.map((r) => r.begin_ms), 0.5))} ms, max ${f(q(results.map((r) => r.begin_ms), 1))} ms; ` +
    `closes ${[...new Set(results.map((r) => r.close))].join(',')}; errors [${results.flatMap((r) => r.errors).join(',')}]; ` +
    `client late by max ${f(Math.max(...results.map((r) => r.lateS)), 2)} s`);
  console.log(JSON.stringify({
    bench: 'realtime', label, sessions: n, end_of_turn_silence_ms: silenceMs, utterances_per_session: utts.length, gap_s: gapS, frame_ms: frameMs,
    audio_s: audioS, wall_s: wallS, latency_ms: { p50: q(lat, 0.5), p95: q(lat, 0.95), max: q(lat, 1), n: lat.length }, missing_finals: missing,
    partials_per_speech_s: pis / speechS, partial_lag_ms: { p50: q(lags, 0.5), p95: q(lags, 0.95), max: q(lags, 1), worst_session_p95: Math.max(...sessP95.filter((x) => x !== null)) },
    cpu_s: cpu, cpu_per_audio_s: cpu !== null ? cpu / audioS : null, rss_before_mib: before?.rss ?? null, rss_peak_mib: peakRss,
    rss_base_mib: base, rss_per_session_mib: (peakRss - base) / n, sustained, wer_session0: w.wer, closes: results.map((r) => r.close), failed_sessions: failed.length,
    server_cores: cpu !== null ? cpu / wallS : null,
  }));
}

const [cmd, ...args] = process.argv.slice(2);
if (cmd === 'run') await run();
else if (cmd === 'wer') {
  // `scribe transcribe --text` lines start "[0.19-2.66] SPEAKER_00: ".
  const strip = (t) => t.replace(/^\[[^\]]*\]\s*[A-Z_0-9]+:\s*/gm, '');
  const w = wer(readFileSync(args[0], 'utf8'), strip(readFileSync(args[1], 'utf8')));
  console.log(JSON.stringify(w));
} else if (cmd === 'stream-wav') {
  // Session 0's audio as a wav (16 kHz mono s16le) and its reference text.
  const utts = loadManifest(args[0]).slice(0, Number(process.env.RT_UTTERANCES || 1e9));
  const a = compose(utts, 0, Number(process.env.RT_GAP_S || 1.5));
  const h = Buffer.alloc(44);
  h.write('RIFF', 0); h.writeUInt32LE(36 + a.pcm.length, 4); h.write('WAVEfmt ', 8); h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20); h.writeUInt16LE(1, 22); h.writeUInt32LE(RATE, 24); h.writeUInt32LE(RATE * 2, 28);
  h.writeUInt16LE(2, 32); h.writeUInt16LE(16, 34); h.write('data', 36); h.writeUInt32LE(a.pcm.length, 40);
  writeFileSync(args[1], Buffer.concat([h, a.pcm]));
  writeFileSync(args[1] + '.txt', a.marks.map((m) => m.text).join(' ') + '\n');
} else {
  console.error('usage: realtime_bench.mjs run | wer REF HYP | stream-wav MANIFEST OUT.wav');
  process.exit(2);
}
