// A program written against AssemblyAI's npm SDK (`assemblyai`), as its
// README and streaming docs show it, with only the base URLs and the key
// changed to point at scribe. realtime_assemblyai.test.mjs runs it as a
// child process (NODE_EXTRA_CA_CERTS must be set before Node starts) and
// reads what happened from stdout, one JSON object a line:
//   {event: 'token', token} | {event: 'token_error', message}
//   {event: 'connecting'} | {event: 'open', id, expires_at} | {event: 'turn', ...Turn}
//   {event: 'warning', ...Warning}
//   {event: 'error', message, code} | {event: 'close', code, reason}
//   {event: 'connect_failed', message, code} | {event: 'streamed', bytes}
//   {event: 'forced'} | {event: 'closing'} (close() is called now)
//   {event: 'closed', raw: [types of every frame the socket received]}
// Options (one JSON argument): apiKey, streamingBaseUrl, websocketBaseUrl,
// token (use this one instead of asking for a fresh one), useKey (no token:
// the SDK sends the API key on the socket), tokenParams, sampleRate, wav
// (16 kHz s16le mono), minTurnSilence (ms), forceEndpoint (after the audio),
// awaitFinal (wait for an end-of-turn before close()), formatTurns, silent
// (send nothing after Begin, exit at the close), tokenOnly.
import { AssemblyAI } from 'assemblyai';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

const opts = JSON.parse(process.argv[2]);
// Each line carries its time (t, ms), for a reader of a failure.
const print = (event, fields = {}) => process.stdout.write(`${JSON.stringify({ event, ...fields, t: Date.now() })}\n`);

// The data chunk of a wav file (sox writes a plain RIFF header).
function pcmOf(path) {
  const buf = readFileSync(path);
  for (let at = 12; at + 8 <= buf.length;) {
    const size = buf.readUInt32LE(at + 4);
    if (buf.toString('ascii', at, at + 4) === 'data') return buf.subarray(at + 8, at + 8 + size);
    at += 8 + size + (size % 2);
  }
  throw new Error(`${path}: no data chunk`);
}

const client = new AssemblyAI({ apiKey: opts.apiKey, streamingBaseUrl: opts.streamingBaseUrl });

let token = opts.token;
if (!token && !opts.useKey) {
  try {
    token = await client.streaming.createTemporaryToken(opts.tokenParams ?? { expires_in_seconds: 60 });
    print('token', { token });
  } catch (e) {
    print('token_error', { message: e.message });
    process.exit(0);
  }
}
if (opts.tokenOnly) process.exit(0);

const transcriber = client.streaming.transcriber({
  ...(opts.useKey ? {} : { token }),
  websocketBaseUrl: opts.websocketBaseUrl,
  sampleRate: opts.sampleRate ?? 16_000,
  speechModel: 'universal-streaming-english',
  ...(opts.minTurnSilence ? { minTurnSilence: opts.minTurnSilence } : {}),
  ...(opts.formatTurns ? { formatTurns: true } : {}),
});

let finals = 0;
let sawFinal;
const finalSeen = new Promise((resolve) => { sawFinal = resolve; });
transcriber.on('open', ({ id, expires_at }) => print('open', { id, expires_at }));
transcriber.on('turn', (turn) => {
  print('turn', turn);
  if (turn.end_of_turn) { finals++; sawFinal(); }
});
transcriber.on('warning', (warning) => print('warning', warning));
transcriber.on('error', (error) => print('error', { message: error.message, code: error.code }));
let serverClosed;
const closedByServer = new Promise((resolve) => { serverClosed = resolve; });
transcriber.on('close', (code, reason) => { print('close', { code, reason }); serverClosed(); });

print('connecting');
try {
  await transcriber.connect();
} catch (e) {
  print('connect_failed', { message: e.message, code: e.code });
  process.exit(0);
}

// Silent after Begin: the server's idle timeout ends the session, and the
// SDK reports it to the error and close listeners.
if (opts.silent) {
  await closedByServer;
  process.exit(0);
}

// A read-only tap on the SDK's socket: the SDK turns Termination into no
// event of its own, and the test checks close() waited for it.
const raw = [];
transcriber.socket.addEventListener('message', (m) => {
  try { raw.push(JSON.parse(m.data.toString()).type); } catch { raw.push('?'); }
});

// Audio in 100 ms chunks, each sent when it would have been spoken.
const pcm = pcmOf(opts.wav);
const started = Date.now();
let sent = 0;
for (let at = 0; at < pcm.length; at += 3200) {
  // A short last piece is padded with silence: both services refuse frames
  // under 50 ms (AssemblyAI: 3007), so programs send whole chunks.
  let chunk = pcm.subarray(at, Math.min(at + 3200, pcm.length));
  if (chunk.length < 3200) chunk = Buffer.concat([chunk, Buffer.alloc(3200 - chunk.length)]);
  transcriber.sendAudio(chunk.buffer.slice(chunk.byteOffset, chunk.byteOffset + chunk.length));
  sent += chunk.length;
  const wait = started + (sent / 32000) * 1000 - Date.now();
  if (wait > 0) await sleep(wait);
}
print('streamed', { bytes: sent });
if (opts.forceEndpoint) {
  transcriber.forceEndpoint();
  print('forced');
}
if (opts.awaitFinal && finals === 0) {
  await Promise.race([finalSeen, new Promise((resolve) => setTimeout(resolve, 30000).unref())]);
}
print('closing');
await transcriber.close();
print('closed', { raw });
