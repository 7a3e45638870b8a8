// The Node helper of bench/time_to_result.sh (built-ins only). One job at a
// time, TTR_RUNS times: presigned upload (POST /uploads, PUT the bytes),
// POST /transcriptions, long-poll /wait until the job is terminal. Then reads
// each transcription's stream from the events table (psql) and splits the
// server's create-to-completed time into the pipeline stages.
//
// Input (environment): TTR_API (http://127.0.0.1:PORT/api/v1), TTR_KEY,
// TTR_FILE (a WAV), TTR_AUDIO_SECONDS, TTR_RUNS, TTR_DB_URL.
// Output: one JSON line per job on stdout ({"job":..., "client_total_s":...,
// "stages":{...}}); time_to_result.sh summarizes them.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { execFileSync } from 'node:child_process';

const api = process.env.TTR_API;
const key = process.env.TTR_KEY;
const file = process.env.TTR_FILE;
const audioSeconds = Number(process.env.TTR_AUDIO_SECONDS);
const runs = Number(process.env.TTR_RUNS || 10);
const dbUrl = process.env.TTR_DB_URL;
const bytes = readFileSync(file);
const auth = { Authorization: `Bearer ${key}` };
const now = () => performance.now() / 1000;

async function call(method, url, { json, body, headers = {} } = {}) {
  const init = { method, headers: { ...auth, ...headers } };
  if (json !== undefined) {
    init.body = JSON.stringify(json);
    init.headers['Content-Type'] = 'application/json';
  } else if (body !== undefined) {
    init.body = body;
  }
  const res = await fetch(url, init);
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : {};
}

// Server-side times from the transcription's own stream. recorded_at is the
// appending transaction's start (now()), so each stage's start is when the
// worker began recording that it entered the stage.
function stages(id) {
  const sql = `select type, coalesce(data->>'stage', ''), extract(epoch from recorded_at)
               from events where stream_id = 'transcription-${Number(id)}' order by version`;
  const out = execFileSync('psql', [dbUrl, '-Atq', '-F', '\t', '-c', sql], { encoding: 'utf8' });
  const rows = out.trim().split('\n').map((l) => l.split('\t')).map(([type, stage, at]) => ({ type, stage, at: Number(at) }));
  const created = rows.find((r) => r.type === 'TranscriptionCreated');
  const done = rows.find((r) => r.type === 'TranscriptionCompleted' || r.type === 'TranscriptionFailed');
  const marks = rows.filter((r) => r.type === 'TranscriptionStageChanged');
  const result = { server_total_s: done && created ? done.at - created.at : null, outcome: done ? done.type : null, stages: {} };
  // Until the first stage change the job waits in the queue (its stage is
  // "queued" from TranscriptionCreated on).
  if (created && marks.length) result.stages.queued = marks[0].at - created.at;
  marks.forEach((m, i) => {
    const next = i + 1 < marks.length ? marks[i + 1].at : done?.at;
    if (next !== undefined) result.stages[m.stage] = (result.stages[m.stage] || 0) + (next - m.at);
  });
  return result;
}

for (let job = 1; job <= runs; job++) {
  const t0 = now();
  const ticket = await call('POST', `${api}/uploads`, {
    json: { filename: basename(file), content_type: 'audio/wav', file_size: bytes.length },
  });
  await call('PUT', ticket.upload_url, { body: bytes, headers: { 'Content-Type': 'audio/wav' } });
  const t1 = now();
  const created = await call('POST', `${api}/transcriptions`, {
    json: { source: 'upload', upload_id: ticket.upload_id, original_filename: basename(file), duration_seconds: Math.round(audioSeconds) },
  });
  let answer;
  for (;;) {
    answer = await call('GET', `${api}/transcriptions/${created.id}/wait?timeout=30`);
    if (answer._timed_out === false) break;
  }
  const t2 = now();
  console.log(JSON.stringify({
    job, id: created.id, status: answer.status, upload_s: t1 - t0, client_total_s: t2 - t1, ...stages(created.id),
  }));
}
