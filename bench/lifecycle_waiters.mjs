// Load helper for bench/lifecycle.sh: Node built-ins only, no npm packages.
//
//   node bench/lifecycle_waiters.mjs create --base URL --keys FILE --count N --concurrency C [--out FILE]
//       N x POST /api/v1/transcriptions (external_url http://127.0.0.1:9/a.mp3,
//       duration_seconds 60), C in flight, keys taken round-robin per request.
//       Prints one JSON line (creates/s, p50/p99/max ms, statuses, error codes);
//       --out gets "id<TAB>key" per 202.
//   node bench/lifecycle_waiters.mjs wait --base URL --ids FILE --waiters N [--timeout 45]
//       [--ready FILE] [--out FILE] [--deadline-s 150]
//       N concurrent GET /transcriptions/{id}/wait?timeout=T, spread round-robin
//       over the ids of FILE ("id<TAB>key" lines), one keep-alive Agent with
//       maxSockets N. When every request has been written, writes FILE --ready
//       ("<epoch ms>"). A 200 with _timed_out true is asked again at once (the
//       contract: "call again"). An answer is final on any other response. Ends
//       when every waiter has its final answer or at the deadline; --out gets
//       one JSON object (per-waiter answers with epoch-ms times).
//   node bench/lifecycle_waiters.mjs delete --base URL --ids FILE --concurrency C
//       DELETE /transcriptions/{id} for each id (an alternative way to wake waiters).
//   node bench/lifecycle_waiters.mjs idle --base URL --connections N --ready FILE [--hold-s 60]
//       Opens N TCP connections that send nothing (the server's per-connection
//       cost without a request), writes FILE --ready once all are connected,
//       holds them until killed or --hold-s.
//   node bench/lifecycle_waiters.mjs report --answers FILE --events FILE
//       Joins the answers with "id<TAB>epoch_ms" lines of the completion events
//       (TranscriptionFailed/Completed/Deleted recorded_at) and prints one JSON
//       line: event-to-answer p50/p99/max, and first event to last answer.
import http from "node:http";
import fs from "node:fs";
import net from "node:net";
import { performance } from "node:perf_hooks";

const nowMs = () => performance.timeOrigin + performance.now();

function parseArgs(argv) {
  const out = { _: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.startsWith("--")) out[a.slice(2)] = argv[++i];
    else out._.push(a);
  }
  return out;
}

function pct(sorted, p) {
  if (sorted.length === 0) return null;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}
const r2 = (x) => (x == null ? null : Math.round(x * 100) / 100);

function latencyStats(values) {
  const s = [...values].sort((a, b) => a - b);
  return { p50_ms: r2(pct(s, 50)), p99_ms: r2(pct(s, 99)), max_ms: r2(s[s.length - 1] ?? null) };
}

function request(agent, base, method, path, key, body, timeoutMs = 120000, onFinish = null) {
  return new Promise((resolve) => {
    const u = new URL(path, base);
    const headers = { Authorization: `Bearer ${key}` };
    if (body != null) {
      headers["Content-Type"] = "application/json";
      headers["Content-Length"] = Buffer.byteLength(body);
    }
    const req = http.request(
      { agent, host: u.hostname, port: u.port, path: u.pathname + u.search, method, headers },
      (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString("utf8"), at: nowMs() }));
        res.on("error", (e) => resolve({ status: 0, body: String(e), at: nowMs() }));
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error("client timeout")));
    req.on("error", (e) => resolve({ status: 0, body: String(e), at: nowMs() }));
    if (body != null) req.write(body);
    if (onFinish) req.on("finish", onFinish);
    req.end();
  });
}

function errorCode(res) {
  try {
    return JSON.parse(res.body)?.error?.code ?? `http_${res.status}`;
  } catch {
    return res.status === 0 ? res.body.slice(0, 80) : `http_${res.status}`;
  }
}

const readLines = (f) => fs.readFileSync(f, "utf8").split("\n").filter((l) => l.trim() !== "");

async function createMode(a) {
  const keys = readLines(a.keys);
  const count = Number(a.count), conc = Number(a.concurrency);
  const agent = new http.Agent({ keepAlive: true, maxSockets: conc });
  const body = JSON.stringify({ source: "external_url", url: "http://127.0.0.1:9/a.mp3", duration_seconds: 60 });
  const lat = [], statuses = {}, codes = {}, created = [];
  let next = 0;
  const t0 = nowMs();
  async function lane() {
    for (;;) {
      const i = next++;
      if (i >= count) return;
      const key = keys[i % keys.length];
      const start = nowMs();
      const res = await request(agent, a.base, "POST", "/api/v1/transcriptions", key, body);
      lat.push(res.at - start);
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      if (res.status === 202) created.push(`${JSON.parse(res.body).id}\t${key}`);
      else codes[errorCode(res)] = (codes[errorCode(res)] ?? 0) + 1;
    }
  }
  await Promise.all(Array.from({ length: conc }, lane));
  const secs = (nowMs() - t0) / 1000;
  agent.destroy();
  if (a.out) fs.writeFileSync(a.out, created.join("\n") + "\n");
  console.log(
    JSON.stringify({
      requests: count,
      concurrency: conc,
      keys: keys.length,
      seconds: r2(secs),
      creates_per_s: r2(created.length / secs),
      accepted_202: created.length,
      errors: count - created.length,
      ...latencyStats(lat),
      statuses,
      error_codes: codes,
    }),
  );
}

async function waitMode(a) {
  const rows = readLines(a.ids).map((l) => l.split("\t"));
  const n = Number(a.waiters), timeout = Number(a.timeout ?? 45);
  const deadline = nowMs() + Number(a["deadline-s"] ?? 150) * 1000;
  const agent = new http.Agent({ keepAlive: true, maxSockets: n, maxFreeSockets: n });
  const answers = new Array(n);
  let written = 0, finals = 0, repolls = 0, readyAt = null;
  const t0 = nowMs();
  await new Promise((allDone) => {
    const check = () => {
      if (finals === n) allDone();
    };
    const timer = setInterval(() => {
      if (nowMs() > deadline) {
        clearInterval(timer);
        allDone();
      }
    }, 250);
    const launch = (w, first) => {
      const [id, key] = rows[w % rows.length];
      const onFinish = first
        ? () => {
            written++;
            if (written === n) {
              readyAt = nowMs();
              if (a.ready) fs.writeFileSync(a.ready, `${Math.round(readyAt)}\n`);
            }
          }
        : null;
      const p = request(agent, a.base, "GET", `/api/v1/transcriptions/${id}/wait?timeout=${timeout}`, key, null,
                        (timeout + 30) * 1000, onFinish);
      p.then((res) => {
        let status = null, timedOut = false;
        try {
          const b = JSON.parse(res.body);
          status = b.status ?? null;
          timedOut = b._timed_out === true;
        } catch {}
        if (res.status === 200 && timedOut && nowMs() < deadline) {
          repolls++;
          launch(w, false);
          return;
        }
        answers[w] = { id: Number(id), http: res.status, status, timed_out: timedOut, at: r2(res.at) };
        finals++;
        check();
      });
    };
    for (let w = 0; w < n; w++) launch(w, true);
  });
  agent.destroy();
  const httpCounts = {}, statusCounts = {};
  for (const x of answers) {
    const h = x ? x.http : "none";
    httpCounts[h] = (httpCounts[h] ?? 0) + 1;
    const s = x ? String(x.status) : "none";
    statusCounts[s] = (statusCounts[s] ?? 0) + 1;
  }
  const summary = {
    waiters: n,
    transcriptions: Math.min(n, rows.length),
    send_all_ms: readyAt == null ? null : r2(readyAt - t0),
    answered: finals,
    repolls,
    http: httpCounts,
    status: statusCounts,
  };
  if (a.out) fs.writeFileSync(a.out, JSON.stringify({ summary, answers }));
  console.log(JSON.stringify(summary));
  // Sockets of a keep-alive agent can hold the loop open; all is written.
  process.exit(0);
}

async function deleteMode(a) {
  const rows = readLines(a.ids).map((l) => l.split("\t"));
  const conc = Number(a.concurrency ?? 8);
  const agent = new http.Agent({ keepAlive: true, maxSockets: conc });
  const statuses = {};
  let next = 0;
  const t0 = nowMs();
  async function lane() {
    for (;;) {
      const i = next++;
      if (i >= rows.length) return;
      const res = await request(agent, a.base, "DELETE", `/api/v1/transcriptions/${rows[i][0]}`, rows[i][1], null);
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    }
  }
  await Promise.all(Array.from({ length: conc }, lane));
  agent.destroy();
  console.log(JSON.stringify({ deletes: rows.length, seconds: r2((nowMs() - t0) / 1000), statuses }));
}

async function idleMode(a) {
  const u = new URL(a.base);
  const n = Number(a.connections);
  const sockets = [];
  let connected = 0, failed = 0;
  await new Promise((done) => {
    for (let i = 0; i < n; i++) {
      const s = net.connect({ host: u.hostname, port: Number(u.port) });
      sockets.push(s);
      s.on("connect", () => {
        if (++connected + failed === n) done();
      });
      s.on("error", () => {
        if (connected + ++failed === n) done();
      });
    }
  });
  if (a.ready) fs.writeFileSync(a.ready, `${connected}\n`);
  console.log(JSON.stringify({ connections: n, connected, failed }));
  setTimeout(() => process.exit(0), Number(a["hold-s"] ?? 60) * 1000);
}

function reportMode(a) {
  const { summary, answers } = JSON.parse(fs.readFileSync(a.answers, "utf8"));
  const events = new Map(readLines(a.events).map((l) => l.split("\t")).map(([id, ms]) => [Number(id), Number(ms)]));
  const lat = [];
  let missingEvent = 0, firstEvent = Infinity, lastEvent = -Infinity, lastAnswer = -Infinity;
  for (const ev of events.values()) {
    firstEvent = Math.min(firstEvent, ev);
    lastEvent = Math.max(lastEvent, ev);
  }
  for (const x of answers) {
    if (!x) continue;
    const ev = events.get(x.id);
    if (ev == null) {
      missingEvent++;
      continue;
    }
    lat.push(x.at - ev);
    lastAnswer = Math.max(lastAnswer, x.at);
  }
  console.log(
    JSON.stringify({
      answers_with_event: lat.length,
      answers_without_event: missingEvent,
      event_to_answer: latencyStats(lat),
      first_event_to_last_answer_s: lat.length ? r2((lastAnswer - firstEvent) / 1000) : null,
      first_to_last_event_s: events.size ? r2((lastEvent - firstEvent) / 1000) : null,
      events: events.size,
      repolls: summary.repolls,
    }),
  );
}

const a = parseArgs(process.argv.slice(2));
const mode = a._[0];
if (mode === "create") await createMode(a);
else if (mode === "wait") await waitMode(a);
else if (mode === "delete") await deleteMode(a);
else if (mode === "idle") await idleMode(a);
else if (mode === "report") reportMode(a);
else {
  console.error("usage: lifecycle_waiters.mjs create|wait|delete|idle|report ...");
  process.exit(2);
}
