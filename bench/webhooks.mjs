// The Node side of bench/webhooks.sh (built-ins only, plus the openssl CLI
// for the receiver's certificate). It measures webhook delivery against a
// healthy HTTPS receiver on 127.0.0.1:
//
//   drain    1,000 webhook.test events (WEBHOOK_BENCH_EVENTS) are queued while
//            no dispatcher runs (`scribe serve` with SCRIBE_WEBHOOK_SENDERS=0),
//            the outbox projection has written them all, then `scribe worker`
//            starts with WEBHOOK_BENCH_SENDERS senders and empties the queue.
//            Deliveries/s = events / (last arrival - first arrival).
//   latency  with the dispatcher running in `scribe serve`, events are appended
//            at WEBHOOK_BENCH_RATE per second for WEBHOOK_BENCH_EVENTS events;
//            for each, the time from its append (events.recorded_at) to its
//            arrival at the receiver. p50, p90, p99, max.
//
// Every event is requested with POST /api/v1/webhooks/test, so it is appended,
// projected into the outbox, claimed, signed and sent by the real code. The
// receiver checks every signature (Node's crypto).
import { spawn, execFileSync } from 'node:child_process';
import { createServer } from 'node:https';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

const BIN = process.env.SCRIBE_BIN || 'build/scribe';
const DB = process.env.WEBHOOK_BENCH_DB;
const EVENTS = Number(process.env.WEBHOOK_BENCH_EVENTS || 1000);
const SENDERS = process.env.WEBHOOK_BENCH_SENDERS || '8';
const RATE = Number(process.env.WEBHOOK_BENCH_RATE || 100);
const PARTS = (process.env.WEBHOOK_BENCH_PARTS || 'drain,latency').split(',');

const psql = (sql) => execFileSync('psql', [DB, '-At', '-c', sql], { encoding: 'utf8' }).trim();
const dir = mkdtempSync(join(tmpdir(), 'scribe-webhook-bench-'));
execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'),
  '-out', join(dir, 'cert.pem'), '-days', '2', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'],
{ stdio: 'ignore' });

const baseEnv = {
  ...process.env, SCRIBE_DATABASE_URL: DB, SCRIBE_LOG_LEVEL: 'warn', SCRIBE_WORKER_SLOTS: '0',
  SCRIBE_ALLOW_PRIVATE_URLS: '1', SCRIBE_OUTBOUND_CA_FILE: join(dir, 'cert.pem'),
};

// Every process started here is killed when this script exits, also on an error.
const children = new Set();
process.on('exit', () => { for (const c of children) c.kill('SIGKILL'); });

function start(args, env) {
  const portFile = join(dir, `port-${Date.now()}`);
  const proc = spawn(BIN, [...args, ...(args[0] === 'serve' ? ['--port', '0', '--port-file', portFile] : [])],
    { env: { ...baseEnv, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  children.add(proc);
  proc.on('exit', () => children.delete(proc));
  return { proc, portFile };
}
async function serve(env) {
  const s = start(['serve', '--rate-limit', '1000000', '--io-threads', '2'], env);
  for (let i = 0; i < 300 && !existsSync(s.portFile); i++) await sleep(50);
  s.port = Number(readFileSync(s.portFile, 'utf8'));
  return s;
}
const stop = (s) => new Promise((resolve) => { s.proc.on('exit', resolve); s.proc.kill('SIGTERM'); });

const agent = new (await import('node:http')).Agent({ keepAlive: true, maxSockets: 16 });
function post(port, path, key, body) {
  return new Promise((resolve, reject) => {
    const data = body ? JSON.stringify(body) : '';
    const req = request({ host: '127.0.0.1', port, path, method: 'POST', agent,
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Content-Length': data.length } },
    (res) => { let t = ''; res.on('data', (c) => { t += c; }); res.on('end', () => resolve({ status: res.statusCode, json: JSON.parse(t || '{}') })); });
    req.on('error', reject);
    req.end(data);
  });
}

// The receiver: arrival time per event id, signatures checked.
const arrivals = new Map();
let secret = '';
let badSignatures = 0;
const receiver = createServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) },
  (req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      const raw = Buffer.concat(chunks).toString('utf8');
      const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(req.headers['x-service-signature'] || '');
      if (!m || createHmac('sha256', secret).update(`${m[1]}.${raw}`).digest('hex') !== m[2]) badSignatures++;
      const id = JSON.parse(raw).id;
      if (!arrivals.has(id)) arrivals.set(id, at);
      res.writeHead(200);
      res.end();
    });
  });
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const hookUrl = `https://127.0.0.1:${receiver.address().port}/hook`;

function account() {
  const email = `bench-${Date.now()}-${Math.random()}@example.com`;
  const run = (...a) => JSON.parse(execFileSync(BIN, ['admin', ...a, '--json'], { env: baseEnv, encoding: 'utf8' })
    .trim().split('\n').pop());
  const { account_id } = run('account', 'create', '--email', email, '--plan', 'enterprise', '--balance-usd', '10');
  return run('key', 'create', '--account', account_id).api_key;
}

async function enqueue(port, key, n, ratePerSecond) {
  const ids = [];
  const started = Date.now();
  const inflight = new Set();
  for (let i = 0; i < n; i++) {
    if (ratePerSecond) {
      const due = started + (i * 1000) / ratePerSecond;
      if (due > Date.now()) await sleep(due - Date.now());
    }
    const p = post(port, '/api/v1/webhooks/test', key).then((r) => {
      if (r.status !== 202) throw new Error(`test enqueue answered ${r.status}`);
      ids.push(r.json.delivery_id);
      inflight.delete(p);
    });
    inflight.add(p);
    if (inflight.size >= 16) await Promise.race(inflight);
  }
  await Promise.all(inflight);
  return ids;
}

async function waitArrivals(ids, limitMs) {
  const until = Date.now() + limitMs;
  while (Date.now() < until && !ids.every((d) => arrivals.has(`evt_${d / 2}`))) await sleep(20);
  return ids.filter((d) => arrivals.has(`evt_${d / 2}`)).length;
}

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

if (PARTS.includes('drain')) {
  const api = await serve({ SCRIBE_WEBHOOK_SENDERS: '0' });
  const key = account();
  secret = (await post(api.port, '/api/v1/webhooks', key, { url: hookUrl })).json.signing_secret;
  const ids = await enqueue(api.port, key, EVENTS, 0);
  while (Number(psql(`select count(*) from webhook_deliveries where delivery_id = any(array[${ids}])`)) < ids.length)
    await sleep(50);
  const worker = start(['worker'], { SCRIBE_WEBHOOK_SENDERS: SENDERS });
  const got = await waitArrivals(ids, 300000);
  const times = ids.map((d) => arrivals.get(`evt_${d / 2}`)).filter(Boolean).sort((a, b) => a - b);
  const seconds = (times[times.length - 1] - times[0]) / 1000;
  const perSecond = (got - 1) / seconds;
  console.log(`drain: ${got}/${ids.length} delivered by ${SENDERS} senders in ${seconds.toFixed(2)} s ` +
    `(first to last arrival): ${perSecond.toFixed(0)} deliveries/s; bad signatures ${badSignatures}`);
  console.log(JSON.stringify({ bench: 'webhooks', part: 'drain', events: ids.length, delivered: got,
    senders: Number(SENDERS), seconds, deliveries_per_second: Math.round(perSecond), bad_signatures: badSignatures }));
  await stop(worker);
  await stop(api);
}

if (PARTS.includes('latency')) {
  const api = await serve({ SCRIBE_WEBHOOK_SENDERS: SENDERS });
  const key = account();
  secret = (await post(api.port, '/api/v1/webhooks', key, { url: hookUrl })).json.signing_secret;
  const ids = await enqueue(api.port, key, EVENTS, RATE);
  const got = await waitArrivals(ids, 120000);
  const appended = new Map(psql(`select position, (extract(epoch from recorded_at) * 1000)::float8 from events ` +
    `where type = 'WebhookTestRequested' and position = any(array[${ids.map((d) => d / 2)}])`).split('\n')
    .map((l) => l.split('|').map(Number)));
  const lat = ids.filter((d) => arrivals.has(`evt_${d / 2}`))
    .map((d) => arrivals.get(`evt_${d / 2}`) - appended.get(d / 2)).sort((a, b) => a - b);
  const r = { p50: pct(lat, 50), p90: pct(lat, 90), p99: pct(lat, 99), max: lat[lat.length - 1] };
  console.log(`latency: ${got}/${ids.length} delivered at ${RATE} events/s, ${SENDERS} senders; append -> arrival ` +
    `p50 ${r.p50.toFixed(1)} ms, p90 ${r.p90.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, max ${r.max.toFixed(1)} ms; ` +
    `bad signatures ${badSignatures}`);
  console.log(JSON.stringify({ bench: 'webhooks', part: 'latency', events: ids.length, delivered: got,
    rate: RATE, senders: Number(SENDERS), ...r, bad_signatures: badSignatures }));
  await stop(api);
}

agent.destroy();
receiver.close();
