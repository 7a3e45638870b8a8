// Shared helpers for the end-to-end tests: start the real `scribe serve`
// against the test database, create accounts and keys with `scribe admin`,
// and talk HTTP with curl.
import { spawn, spawnSync, execFileSync, execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync, writeFileSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect } from 'node:net';

export const BIN = process.env.SCRIBE_BIN || new URL('../../build/scribe', import.meta.url).pathname;

// Each test file (a process of its own under node --test) gets a database of
// its own, copied from the migrated template the test command made, so files
// that share nothing can run at once on the one PostgreSQL: no worker of one
// file claims another file's jobs, no count sees another file's rows. Without
// a template (a single file run by hand) the given database is used as is.
function ownDatabase(url) {
  const template = process.env.SCRIBE_TEST_TEMPLATE_DB;
  const adminUrl = process.env.SCRIBE_TEST_ADMIN_URL;
  if (!url || !template || !adminUrl) return url;
  const name = `scribe_e2e_${process.pid}`;
  // CREATE DATABASE refuses while another one copies the same template:
  // retry for a while, the copies take well under a second.
  for (let attempt = 0; ; attempt++) {
    const run = spawnSync('psql', [adminUrl, '-q', '-v', 'ON_ERROR_STOP=1', '-c', `drop database if exists ${name}`,
      '-c', `create database ${name} owner scribe template ${template}`], { encoding: 'utf8' });
    if (run.status === 0) break;
    if (attempt >= 100) throw new Error(`could not create database ${name}: ${run.stderr}`);
    spawnSync('sleep', [String(0.1 + Math.random() * 0.2)]);
  }
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}
export const DB = ownDatabase(process.env.SCRIBE_TEST_DATABASE_URL);
if (!DB) throw new Error('SCRIBE_TEST_DATABASE_URL is not set; run scripts/test.sh');

// One object store and one scratch folder for every process of the run, as in
// a deployment where servers and workers share the store.
// For files that test what is done with a transcript rather than how it is
// recognized: the recognizer's speed-first profile, a real operator setting
// (SCRIBE_SPEECH_PROFILE=live: 4 Gaussians a codebook instead of 16, no
// frequency warp). On the four-topic recording it takes 0.63 of the default's
// CPU for 20.9% word errors against 20.2%. The files about recognition and the
// pipeline (pipeline, quickstart, transcriptions, uploads, media_url,
// heard_matching, realtime) keep the default profile, and so do the files
// that assert words the recognizer must hear: ask (under this profile "bake
// the bread in a hot oven" came out "they could read in high heaven"),
// hardening_asks_clips (whose questions must be answered), openai_compat and
// openai_stream ("seeds" came out "siege" in one run of two).
export const FAST_RECOGNIZER = { SCRIBE_SPEECH_PROFILE: 'live' };
export const OBJECTS = process.env.SCRIBE_OBJECT_STORE_DIR || mkdtempSync(join(tmpdir(), 'scribe-e2e-objects-'));
export const WORK = process.env.SCRIBE_WORK_DIR || mkdtempSync(join(tmpdir(), 'scribe-e2e-work-'));

const env = (extra = {}) =>
  ({ ...process.env, SCRIBE_DATABASE_URL: DB, SCRIBE_LOG_LEVEL: 'warn', SCRIBE_WORK_DIR: WORK, ...extra });

// Starts a server on a free port. Returns {url, metricsUrl, proc, port, stop(signal)}.
// Pipeline workers run only when asked for (workers: true): the API tests
// check holds and queued jobs, which a worker would complete under them.
// The metrics listener also takes a free loopback port (metricsUrl), unless
// the test sets its own --metrics-addr or SCRIBE_METRICS_ADDR.
export async function startServer({ args = [], extraEnv = {}, workers = false } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'scribe-e2e-'));
  const portFile = join(dir, 'port');
  const metricsPortFile = join(dir, 'metrics-port');
  const metricsArgs = args.includes('--metrics-addr') || 'SCRIBE_METRICS_ADDR' in extraEnv
    ? ['--metrics-port-file', metricsPortFile]
    : ['--metrics-addr', '127.0.0.1:0', '--metrics-port-file', metricsPortFile];
  const proc = spawn(BIN, ['serve', '--port', '0', '--port-file', portFile, ...metricsArgs, ...args], {
    env: env({ SCRIBE_OBJECT_STORE_DIR: OBJECTS, SCRIBE_WORKER_SLOTS: workers ? '1' : '0', ...extraEnv }),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
  for (let i = 0; i < 300 && !existsSync(portFile); i++) {
    if (proc.exitCode !== null) throw new Error(`scribe serve exited: ${stderr}`);
    await sleep(50);
  }
  if (!existsSync(portFile)) throw new Error(`scribe serve did not start: ${stderr}`);
  const port = Number(readFileSync(portFile, 'utf8').trim());
  const metricsPort = existsSync(metricsPortFile) ? Number(readFileSync(metricsPortFile, 'utf8').trim()) : undefined;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    metricsUrl: metricsPort === undefined ? undefined : `http://127.0.0.1:${metricsPort}`,
    proc,
    exited,
    stderr: () => stderr,
    async stop(signal = 'SIGTERM') {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      return exited;
    },
  };
}

export function admin(...args) {
  const out = execFileSync(BIN, ['admin', ...args.map(String), '--json'], { env: env(), encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').pop());
}

let counter = 0;
// A fresh account with a key. Options: plan, balance (USD), permission, cap (USD), expiresInDays.
export function newAccount({ plan = 'free', balance = 10, permission = 'full', cap, expiresInDays } = {}) {
  const email = `e2e-${process.pid}-${Date.now()}-${counter++}@example.com`;
  const { account_id } = admin('account', 'create', '--email', email, '--plan', plan, '--balance-usd', balance);
  const keyArgs = ['key', 'create', '--account', account_id, '--permission', permission];
  if (cap !== undefined) keyArgs.push('--monthly-cap-usd', cap);
  if (expiresInDays !== undefined) keyArgs.push('--expires-in-days', expiresInDays);
  const { key_id, api_key } = admin(...keyArgs);
  return { accountId: account_id, email, keyId: key_id, key: api_key };
}

export function newKey(accountId, ...extra) {
  const { key_id, api_key } = admin('key', 'create', '--account', accountId, ...extra);
  return { keyId: key_id, key: api_key };
}

function parseHeaders(raw) {
  // curl -D writes every header block (e.g. after 100 Continue); keep the last.
  const blocks = raw.trim().split(/\r?\n\r?\n/);
  const lines = blocks[blocks.length - 1].split(/\r?\n/);
  const status = Number(lines[0].split(' ')[1]);
  const headers = {};
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  return { status, headers };
}

// One HTTP request with curl. Returns {status, headers (lower-case), body, json}.
export function curl(url, { method = 'GET', headers = {}, body, key, rawArgs = [] } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'scribe-curl-'));
  const headerFile = join(dir, 'h');
  const bodyFile = join(dir, 'b');
  const args = ['-sS', '-X', method, '-D', headerFile, '-o', bodyFile, '--max-time', '60'];
  if (key) args.push('-H', `Authorization: Bearer ${key}`);
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}: ${v}`);
  if (body !== undefined) {
    const input = join(dir, 'in');
    writeFileSync(input, typeof body === 'string' ? body : JSON.stringify(body));
    args.push('--data-binary', `@${input}`);
    if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) args.push('-H', 'Content-Type: application/json');
  }
  args.push(...rawArgs, url);
  return new Promise((resolve, reject) => {
    execFile('curl', args, { encoding: 'utf8' }, (err) => {
      if (err) return reject(err);
      const { status, headers: h } = parseHeaders(readFileSync(headerFile, 'utf8'));
      const text = readFileSync(bodyFile, 'utf8');
      let json;
      try { json = JSON.parse(text); } catch { json = undefined; }
      resolve({ status, headers: h, body: text, json });
    });
  });
}

// Asserts the spec's error envelope and returns error.
// Uploads a file with a presigned ticket (POST /api/v1/uploads, then the PUT
// it names) and answers its upload_id.
export async function uploadFile(srv, key, path, contentType, filename) {
  const t = await curl(`${srv.url}/api/v1/uploads`, { method: 'POST', key,
    body: { filename, content_type: contentType, file_size: statSync(path).size } });
  if (t.status !== 200) throw new Error(`POST /api/v1/uploads answered ${t.status}: ${t.body}`);
  const up = await curl(t.json.upload_url, { method: 'PUT', headers: { 'Content-Type': contentType },
    rawArgs: ['--data-binary', `@${path}`] });
  if (up.status !== 200) throw new Error(`the upload's PUT answered ${up.status}: ${up.body}`);
  return t.json.upload_id;
}

export function envelope(assert, res, status, code) {
  assert.equal(res.status, status, `expected ${status} ${code}, got ${res.status}: ${res.body}`);
  assert.ok(res.json && res.json.error, `no error envelope: ${res.body}`);
  const e = res.json.error;
  assert.equal(e.code, code);
  assert.equal(typeof e.message, 'string');
  assert.ok(e.message.length > 0);
  assert.equal(e.request_id, res.headers['x-request-id']);
  assert.match(e.doc_url, /^https?:\/\//);
  return e;
}

// One raw HTTP/1.1 exchange over a plain socket, for what curl will not send
// (absolute-form targets, oversized heads, bodies cut short): writes
// `request` (string or Buffer), half-closes our side (shutdown(SHUT_WR)) and
// reads until the server closes. Returns {status, headers, body, json}, or
// {status: 0, raw} when no response came.
export function rawHttp(port, request, { timeoutMs = 10000 } = {}) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    const socket = connect(port, '127.0.0.1', () => socket.end(request));
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error('no answer in time')));
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', reject);
    socket.on('close', () => {
      const raw = Buffer.concat(chunks).toString('latin1');
      const end = raw.indexOf('\r\n\r\n');
      if (end < 0) return resolve({ status: 0, raw });
      const lines = raw.slice(0, end).split('\r\n');
      const headers = {};
      for (const line of lines.slice(1)) {
        const i = line.indexOf(':');
        if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      const body = raw.slice(end + 4);
      let json;
      try { json = JSON.parse(body); } catch { json = undefined; }
      resolve({ status: Number(lines[0].split(' ')[1]), headers, body, json, raw });
    });
  });
}

// Long-polls /wait until transcription `id` completes or fails; returns the
// wait body. `query` adds parameters (e.g. '&include=segments').
export async function finished(srv, key, id, { limitSeconds = 240, query = '' } = {}) {
  const until = Date.now() + limitSeconds * 1000;
  while (Date.now() < until) {
    const res = await curl(`${srv.url}/api/v1/transcriptions/${id}/wait?timeout=20${query}`, { key });
    if (res.status !== 200) throw new Error(`/wait answered ${res.status}: ${res.body}`);
    if (!res.json._timed_out) return res.json;
  }
  throw new Error(`transcription ${id} did not finish in ${limitSeconds} s`);
}

// How many `method route` requests server `srv` answered with `status`, from
// its metrics listener (scribe_http_requests_total); 0 before the first.
export async function answered(srv, method, route, status) {
  const text = await (await fetch(`${srv.metricsUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`scribe_http_requests_total{route="${route}",method="${method}",status="${status}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

// `scribe audit wallet` for one account: throws unless the books agree.
export function auditWallet(accountId) {
  const run = spawnSync(BIN, ['audit', 'wallet', '--account', String(accountId)], { env: env(), encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`wallet audit of account ${accountId} failed:\n${run.stdout}${run.stderr}`);
}

// Starts `scribe worker` (background roles, no HTTP) against the test
// database and object store, as the leader of a process group of its own, so
// that stop('SIGKILL') can take the whole group down as a crash would.
// Returns {proc, pid, exited, stderr(), stop(signal)}.
export function startWorker({ args = [], extraEnv = {} } = {}) {
  const proc = spawn(BIN, ['worker', ...args], {
    env: env({ SCRIBE_OBJECT_STORE_DIR: OBJECTS, ...extraEnv }),
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
  return {
    proc,
    pid: proc.pid,
    exited,
    stderr: () => stderr,
    async stop(signal = 'SIGTERM') {
      if (proc.exitCode === null && proc.signalCode === null) {
        try { process.kill(-proc.pid, signal); } catch { proc.kill(signal); }
      }
      return exited;
    },
  };
}

// The ids of the live children of `pid` (from /proc), optionally only those
// whose command name is `comm` (e.g. 'ffmpeg').
export function childPids(pid, comm) {
  const out = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat;
    try { stat = readFileSync(`/proc/${entry}/stat`, 'utf8'); } catch { continue; }
    // pid (comm) state ppid ...: comm may hold spaces and parentheses.
    const close = stat.lastIndexOf(')');
    const name = stat.slice(stat.indexOf('(') + 1, close);
    const [state, ppid] = stat.slice(close + 2).split(' ');
    if (Number(ppid) !== pid || state === 'Z') continue;
    if (comm === undefined || name === comm) out.push(Number(entry));
  }
  return out;
}

// Long-polls GET /transcriptions/{tid}/clips/{clipId}?wait= until the clip is
// completed or failed; returns that body (with its `_timed_out`).
export async function clipFinished(srv, key, tid, clipId, { limitSeconds = 300 } = {}) {
  const until = Date.now() + limitSeconds * 1000;
  while (Date.now() < until) {
    const res = await curl(`${srv.url}/api/v1/transcriptions/${tid}/clips/${clipId}?wait=45`, { key });
    if (res.status !== 200) throw new Error(`GET clip ${clipId} answered ${res.status}: ${res.body}`);
    if (res.json.status !== 'queued') return res.json;
  }
  throw new Error(`clip ${clipId} did not finish in ${limitSeconds} s`);
}

// The wallet's record of a clip, from the event log: the ids of the holds
// placed for it (purpose "clip"), the micro-dollars each settlement of those
// holds charged, and how many releases they had.
export function clipHolds(accountId, clipId) {
  const q = (sql) => execFileSync('psql', [DB, '-At', '-c', sql], { encoding: 'utf8' }).trim().split('\n').filter(Boolean);
  const holds = q(`select data->>'hold_id' from events where type = 'WalletHoldPlaced' and ` +
    `(data->>'account_id')::bigint = ${Number(accountId)} and data->>'purpose' = 'clip' and ` +
    `data->>'clip_id' = '${Number(clipId)}'`);
  const ids = holds.map((h) => `'${h.replace(/'/g, "''")}'`).join(',') || "''";
  const settled = q(`select data->>'charged_micros' from events where type = 'WalletHoldSettled' and ` +
    `(data->>'account_id')::bigint = ${Number(accountId)} and data->>'hold_id' in (${ids})`).map(Number);
  const released = Number(q(`select count(*) from events where type = 'WalletHoldReleased' and ` +
    `(data->>'account_id')::bigint = ${Number(accountId)} and data->>'hold_id' in (${ids})`)[0]);
  return { holds, settled, released };
}
