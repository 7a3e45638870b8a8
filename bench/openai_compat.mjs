// The Node helper of bench/openai_compat.sh (built-ins only): time from
// request to response for one recording by the two flows, alternating:
//   native  POST /api/v1/uploads, PUT the bytes, POST /api/v1/transcriptions,
//           long-poll GET .../wait until terminal, then GET .../transcript
//           (the text, as the OpenAI flow's answer carries it)
//   openai  POST /v1/audio/transcriptions, multipart (as the openai SDK
//           sends a File: FormData with a Content-Length), answered with the text
// Every run is a new transcription (the file name differs per run, so the
// OpenAI route's dedupe does not answer it from an earlier one).
//
// Input (environment): OC_BASE (http://127.0.0.1:PORT), OC_KEY, OC_FILE (a WAV), OC_RUNS.
// Output: one JSON line per request on stdout {"flow","run","seconds","id","status"}.
import { readFileSync } from 'node:fs';

const base = process.env.OC_BASE;
const key = process.env.OC_KEY;
const bytes = readFileSync(process.env.OC_FILE);
const runs = Number(process.env.OC_RUNS || 5);
const tag = `${process.pid}-${Date.now()}`; // a new name per process and run: never the dedupe's repeat
const auth = { Authorization: `Bearer ${key}` };
const now = () => performance.now() / 1000;

async function json(method, url, body, headers = {}) {
  const res = await fetch(url, { method, headers: { ...auth, ...headers }, body });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : {};
}

async function native(run) {
  const t0 = now();
  const name = `native-${tag}-${run}.wav`;
  const ticket = await json('POST', `${base}/api/v1/uploads`,
    JSON.stringify({ filename: name, content_type: 'audio/wav', file_size: bytes.length }), { 'Content-Type': 'application/json' });
  await json('PUT', ticket.upload_url, bytes, { 'Content-Type': 'audio/wav' });
  const created = await json('POST', `${base}/api/v1/transcriptions`,
    JSON.stringify({ source: 'upload', upload_id: ticket.upload_id, original_filename: name, duration_seconds: 60 }),
    { 'Content-Type': 'application/json' });
  let answer;
  do answer = await json('GET', `${base}/api/v1/transcriptions/${created.id}/wait?timeout=30`);
  while (answer._timed_out !== false);
  const text = await fetch(`${base}/api/v1/transcriptions/${created.id}/transcript?timestamps=false&speaker_labels=false`, { headers: auth });
  await text.text();
  return { flow: 'native', run, seconds: now() - t0, id: created.id, status: answer.status };
}

async function openai(run) {
  const t0 = now();
  const form = new FormData();
  form.append('file', new File([bytes], `openai-${tag}-${run}.wav`, { type: 'audio/wav' }));
  form.append('model', 'whisper-1');
  const res = await fetch(`${base}/v1/audio/transcriptions`, { method: 'POST', headers: auth, body: form });
  const body = await res.text();
  if (res.status !== 200) throw new Error(`POST /v1/audio/transcriptions: ${res.status} ${body}`);
  return { flow: 'openai', run, seconds: now() - t0, id: Number(res.headers.get('x-scribe-transcription-id')), status: 'completed' };
}

for (let run = 1; run <= runs; run++) {
  // Alternating which goes first, so a drift in the machine's load is shared.
  const order = run % 2 ? [native, openai] : [openai, native];
  for (const flow of order) console.log(JSON.stringify(await flow(run)));
}
