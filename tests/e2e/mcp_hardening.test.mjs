// Hardening of the MCP endpoint and of the long requests (issue 37), through
// the real `scribe serve`:
// - one account holding every kind of wait open (MCP getClip with wait,
//   MCP waitForTranscription, REST /wait and GET clip with wait), many more
//   of them than the server has request threads, does not delay another
//   account's requests: they are answered while every wait is still held;
// - asks and regenerations run on a request thread, so an account may have
//   at most 2 of them in flight; the excess is 429 rate_limited;
// - /mcp admits a fixed list of origins: this server's own under each
//   loopback name, its public URL, and origins the operator configured;
// - both protocol revisions declare exactly the capabilities served.
//
// The first server transcribes account A's recording (one pipeline worker);
// the tests then run on a server with no worker of either kind, so a new
// transcription and a clip stay queued and their waits run to their end.
// Ordering is shown by events, never by time: the server's gauge of held
// long-polls, and PostgreSQL's list of requests waiting on a table lock the
// test holds.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { startServer, newAccount, curl, finished, DB, BIN } from './harness.mjs';
import { dialogue, seconds, startMediaServer } from './media.mjs';

const MODERN = '2026-07-28';
const META = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'e2e-hardening', version: '1.0.0' },
};
// No clip worker ever runs here, so a clip stays queued.
const ENV = { SCRIBE_ALLOW_PRIVATE_URLS: '1', SCRIBE_WORKER_POLL_MS: '100', SCRIBE_RATE_LIMIT_PER_MINUTE: '100000',
  SCRIBE_CLIP_SLOTS: '0' };
// The server's request threads (SCRIBE_DB_POOL's default).
const REQUEST_THREADS = 8;
// Asks and regenerations one account may have in flight (domain/limits.h).
const LONG_REQUESTS = 2;

let media, server, a, b, wav, duration;
let tid; // A's completed transcription

// ---------------------------------------------------------------------------
// HTTP: one connection per request (no agent), so that many requests are in
// flight at once.

function request(url, { method = 'GET', key, headers = {}, body } = {}) {
  const data = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  const h = { ...headers };
  if (key) h.Authorization = `Bearer ${key}`;
  if (data !== undefined) {
    if (!Object.keys(h).some((k) => k.toLowerCase() === 'content-type')) h['Content-Type'] = 'application/json';
    h['Content-Length'] = Buffer.byteLength(data);
  }
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers: h, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { text += c; });
      res.on('error', reject);
      res.on('end', () => {
        let json;
        try { json = JSON.parse(text); } catch { json = undefined; }
        resolve({ status: res.statusCode, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    if (data !== undefined) req.write(data);
    req.end();
  });
}

const api = (path, opts) => request(`${server.url}/api/v1${path}`, opts);

// A 2026-07-28 request (stateless: each one describes itself).
let rpcId = 1;
function mcp(key, method, params = {}, { headers = {}, url = server.url } = {}) {
  const body = { jsonrpc: '2.0', id: rpcId++, method, params: { ...params, _meta: { ...META, ...(params._meta || {}) } } };
  const h = { Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': MODERN, 'Mcp-Method': method };
  if (method === 'tools/call' || method === 'prompts/get') h['Mcp-Name'] = params.name;
  if (method === 'resources/read') h['Mcp-Name'] = params.uri;
  return request(`${url}/mcp`, { method: 'POST', key, headers: { ...h, ...headers }, body });
}
const callTool = (key, name, args) => mcp(key, 'tools/call', { name, arguments: args });

// A tool's result, asserting the JSON-RPC envelope around it.
function toolResult(res) {
  assert.equal(res.status, 200, res.text);
  assert.ok(res.json?.result, res.text);
  return res.json.result;
}

// A request whose settling is observed without awaiting it.
function track(promise) {
  const t = { settled: false, value: undefined, error: undefined };
  t.promise = promise.then((v) => { t.settled = true; t.value = v; return v; },
    (e) => { t.settled = true; t.error = e; return undefined; });
  return t;
}

// The long-polls the server holds right now (its metrics listener).
async function heldLongPolls() {
  const res = await request(`${server.metricsUrl}/metrics`);
  const m = /^scribe_long_polls_waiting (\d+)$/m.exec(res.text);
  return m ? Number(m[1]) : -1;
}

// Resolves with 'held' once the server holds `n` long-polls, or with 'ended'
// as soon as one of `waits` ends (a server that serves waits on its request
// threads holds a few and ends those before it reads the others).
async function untilHeld(n, waits) {
  let polling = true;
  const ended = Promise.race(waits.map((w) => w.promise.then(() => 'ended')));
  const held = (async () => {
    while (polling) {
      if ((await heldLongPolls()) >= n) return 'held';
      await sleep(20);
    }
    return 'ended';
  })();
  const first = await Promise.race([held, ended]);
  polling = false;
  await held;
  return first;
}

// ---------------------------------------------------------------------------
// PostgreSQL: a session holding tables locked, so that the requests reading
// them stay in flight until the test lets them go.

const psql = (sql) => execFileSync('psql', [DB, '-At', '-c', sql], { encoding: 'utf8' }).trim();

async function lockTables(tables) {
  const proc = spawn('psql', [DB, '-At', '-v', 'ON_ERROR_STOP=1'], { stdio: ['pipe', 'pipe', 'pipe'] });
  const exited = new Promise((resolve) => proc.on('exit', resolve));
  let out = '';
  await new Promise((resolve, reject) => {
    proc.stdout.on('data', (d) => { out += d; if (out.includes('locked')) resolve(); });
    exited.then((code) => reject(new Error(`psql exited with ${code} before locking`)));
    proc.stdin.write(`begin;\nlock table ${tables.join(', ')} in access exclusive mode;\nselect 'locked';\n`);
  });
  return {
    // Requests of the server waiting for the lock.
    waiting: () => Number(psql(`select count(*) from pg_locks l join pg_class c on c.oid = l.relation ` +
      `where not l.granted and c.relname in (${tables.map((t) => `'${t}'`).join(', ')})`)),
    release: () => { proc.stdin.end('commit;\n'); return exited; },
  };
}

// Until `cond()` holds (an event the test cannot be told of otherwise).
async function until(cond, what) {
  for (let i = 0; i < 3000; i++) {
    if (await cond()) return;
    await sleep(20);
  }
  throw new Error(`gave up waiting for ${what}`);
}

// ---------------------------------------------------------------------------

before(async () => {
  media = await startMediaServer();
  wav = dialogue([
    { voice: 'slt', text: 'The museum opens at nine in the morning. Tickets cost five dollars for children and ten dollars for adults.' },
    { voice: 'rms', text: 'The library closes at six in the evening on weekdays.' },
  ], 'hardening-talk');
  duration = seconds(wav);
  a = newAccount({ plan: 'pro', balance: 10 });
  b = newAccount({ plan: 'pro', balance: 10 });
  // A's recording, transcribed by a server with one pipeline worker.
  const first = await startServer({ workers: true, extraEnv: ENV });
  try {
    const created = await curl(`${first.url}/api/v1/transcriptions`, { method: 'POST', key: a.key,
      body: { source: 'external_url', url: media.url(wav), duration_seconds: duration } });
    assert.equal(created.status, 202, created.body);
    tid = created.json.id;
    const done = await finished(first, a.key, tid);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
  } finally {
    await first.stop();
  }
  server = await startServer({ extraEnv: ENV }); // no worker of either kind from here on
});

after(async () => {
  await server?.stop();
  await media?.close();
});

// --- Item 1: long requests and waits ----------------------------------------------------

test('asks and regenerations: at most 2 in flight per account; the excess is 429 rate_limited, others are not', async () => {
  // Asks read search_stats and search_segments, regenerations enrichments:
  // with those locked, the requests that got in stay in flight.
  const lock = await lockTables(['search_stats', 'search_segments', 'enrichments']);
  let released = false;
  try {
    const ask = (key, path = `/transcriptions/${tid}/ask`) =>
      track(api(path, { method: 'POST', key, body: { question: 'When does the museum open?' } }));
    const regenerate = (key) => track(api(`/transcriptions/${tid}/timestamps/regenerate`, { method: 'POST', key, body: {} }));
    // A's first two, one of each kind, are in flight (waiting on the lock).
    const held = [ask(a.key), regenerate(a.key)];
    await until(() => lock.waiting() >= LONG_REQUESTS || held.some((h) => h.settled), 'A\'s two requests to wait on the lock');
    assert.equal(held.filter((h) => h.settled).length, 0, JSON.stringify(held.map((h) => h.value?.text)));

    // Another account's ask is not refused (it waits on the lock like A's, or answers).
    const other = ask(b.key, '/ask');
    await until(() => other.settled || lock.waiting() >= LONG_REQUESTS + 1, 'B\'s ask to be in flight');

    // A's next ones, of every kind and through MCP too, are refused at once
    // (rather than waiting on the lock beside the first two).
    const waitingBefore = lock.waiting();
    const tries = [
      track(api(`/transcriptions/${tid}/ask`, { method: 'POST', key: a.key, body: { question: 'When does the library close?' } })),
      track(api('/ask', { method: 'POST', key: a.key, body: { question: 'When does the library close?' } })),
      track(api(`/transcriptions/${tid}/timestamps/regenerate`, { method: 'POST', key: a.key, body: {} })),
    ];
    await until(() => tries.every((t) => t.settled) || lock.waiting() >= waitingBefore + tries.length,
      'A\'s further requests to be answered or to wait on the lock');
    assert.equal(tries.filter((t) => t.settled).length, tries.length,
      `${lock.waiting() - waitingBefore} of A's further requests went in and wait on the lock`);
    const excess = tries.map((t) => t.value);
    for (const res of excess) {
      assert.equal(res.status, 429, res.text);
      const e = res.json.error;
      assert.equal(e.code, 'rate_limited');
      assert.equal(e.reason, 'long_requests_in_flight');
      assert.ok(Number.isInteger(e.retry_after) && e.retry_after >= 1, res.text);
      assert.equal(res.headers['retry-after'], String(e.retry_after));
      assert.match(e.message, /2/);
      assert.equal(e.request_id, res.headers['x-request-id']);
    }
    const viaMcp = toolResult(await callTool(a.key, 'askTranscription', { id: tid, question: 'Who closes at six?' }));
    assert.equal(viaMcp.isError, true, JSON.stringify(viaMcp));
    assert.equal(viaMcp.structuredContent.error.code, 'rate_limited');
    assert.equal(viaMcp.structuredContent.error.reason, 'long_requests_in_flight');
    // Other requests of A are served meanwhile.
    assert.equal((await api('/me', { key: a.key })).status, 200);

    assert.equal(held.filter((h) => h.settled).length, 0, 'the held requests were still in flight');
    released = true;
    await lock.release();
    for (const h of [...held, other]) {
      const res = await h.promise;
      assert.equal(res?.status, 200, res?.text ?? String(h.error));
    }
    // The slots are free again.
    const again = await api(`/transcriptions/${tid}/ask`, { method: 'POST', key: a.key, body: { question: 'When does the library close?' } });
    assert.equal(again.status, 200, again.text);
  } finally {
    if (!released) await lock.release();
  }
});

test('an account holding many more waits than the server has request threads does not delay another account', async () => {
  // A clip that stays queued (no clip worker) and a transcription that stays queued (no pipeline worker).
  const clip = await api(`/transcriptions/${tid}/clips`, { method: 'POST', key: a.key,
    body: { start_seconds: 0, end_seconds: Math.min(3, Math.floor(duration * 100) / 100) } });
  assert.equal(clip.status, 202, clip.text);
  assert.equal(clip.json.status, 'queued');
  const queued = await api('/transcriptions', { method: 'POST', key: a.key,
    body: { source: 'external_url', url: media.url(wav), duration_seconds: duration } });
  assert.equal(queued.status, 202, queued.text);

  const waits = [];
  for (let i = 0; i < 2 * REQUEST_THREADS; i++)
    waits.push(track(callTool(a.key, 'getClip', { id: tid, clip_id: clip.json.id, wait: 45 })));
  for (let i = 0; i < 2; i++)
    waits.push(track(callTool(a.key, 'waitForTranscription', { id: queued.json.id, timeout_seconds: 45 })));
  for (let i = 0; i < 4; i++) {
    waits.push(track(api(`/transcriptions/${queued.json.id}/wait?timeout=45`, { key: a.key })));
    waits.push(track(api(`/transcriptions/${tid}/clips/${clip.json.id}?wait=45`, { key: a.key })));
  }
  try {
    // Every wait has reached the server and is held there.
    const first = await untilHeld(waits.length, waits);
    const endedEarly = waits.filter((w) => w.settled).length;
    assert.equal(first, 'held', `${endedEarly} of A's ${waits.length} waits ended before the server held them all`);

    // B's requests, REST and MCP, and A's own other requests, are answered
    // while every one of A's waits is still held.
    const answers = await Promise.all([
      api('/me', { key: b.key }),
      api('/transcriptions', { key: b.key }),
      api('/pipelines', { key: b.key }),
      callTool(b.key, 'getAccount', {}),
      mcp(b.key, 'tools/list'),
      api('/me', { key: a.key }),
      callTool(a.key, 'getTranscription', { id: tid }),
    ]);
    const ended = waits.filter((w) => w.settled).length;
    for (const res of answers) assert.equal(res.status, 200, res.text);
    assert.equal(toolResult(answers[3]).isError, false);
    assert.equal(toolResult(answers[6]).isError, false);
    assert.equal(ended, 0, `${ended} of A's waits ended before the other requests were answered`);
  } finally {
    // Stopping the server answers every held wait (_timed_out); the next
    // tests get a fresh server.
    await server.stop();
    await Promise.all(waits.map((w) => w.promise));
    server = await startServer({ extraEnv: ENV });
  }
  // Each wait had an answer, none of them an error.
  for (const w of waits) {
    if (w.error) continue; // a connection closed by the stopping server
    assert.equal(w.value.status, 200, w.value.text);
    if (w.value.json?.result) assert.equal(w.value.json.result.isError, false, w.value.text);
  }
});

// --- Item 9: Origin -----------------------------------------------------------------------

test('Origin: the server\'s own origin under each loopback name, its public URL and configured origins pass; others are 403', async () => {
  // A server that also has a public URL and origins configured by the operator.
  const extra = await startServer({ extraEnv: { ...ENV, SCRIBE_PUBLIC_URL: 'https://scribe.example',
    SCRIBE_MCP_ALLOWED_ORIGINS: 'https://Console.Example, http://127.0.0.1:7999' } });
  try {
    const body = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: META } };
    const send = (srv, host, origin) => curl(`${srv.url}/mcp`, { method: 'POST', key: a.key, body,
      headers: { Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'tools/list',
        Host: host, ...(origin === undefined ? {} : { Origin: origin }) } });
    const accepted = async (srv, host, origin) => {
      const res = await send(srv, host, origin);
      assert.equal(res.status, 200, `Host ${host}, Origin ${origin}: ${res.body}`);
      assert.ok(res.json.result.tools.length > 0);
    };
    const refused = async (srv, host, origin) => {
      const res = await send(srv, host, origin);
      assert.equal(res.status, 403, `Host ${host}, Origin ${origin}: ${res.body}`);
      assert.equal(res.json.error.code, -32000);
      assert.match(res.json.error.message, /Origin/);
    };
    for (const srv of [server, extra]) {
      const port = srv.port;
      // The page the server serves itself, whichever loopback name reached it.
      for (const name of ['localhost', '127.0.0.1', '[::1]']) await accepted(srv, `${name}:${port}`, `http://${name}:${port}`);
      await accepted(srv, `localhost:${port}`, undefined);
      // With Host localhost, every other origin is still refused: the list
      // is fixed, never taken from the request.
      for (const origin of ['https://evil.example', `http://evil.example:${port}`, `http://localhost:${port + 1}`,
        `https://localhost:${port}`, 'http://localhost', 'null'])
        await refused(srv, `localhost:${port}`, origin);
    }
    // The public URL and the configured origins (compared as origins: case and default port do not matter).
    await accepted(extra, `localhost:${extra.port}`, 'https://scribe.example');
    await accepted(extra, 'scribe.example', 'https://scribe.example:443');
    await accepted(extra, `localhost:${extra.port}`, 'https://console.example');
    await accepted(extra, `127.0.0.1:${extra.port}`, 'http://127.0.0.1:7999');
    await refused(extra, `localhost:${extra.port}`, 'https://console.example.evil');
    // Configured on one server only.
    await refused(server, `localhost:${server.port}`, 'https://console.example');
    // The Host rule is unchanged: a name that is not this server's is refused whatever the origin.
    const rebound = await send(server, `rebind.example:${server.port}`, `http://localhost:${server.port}`);
    assert.equal(rebound.status, 403, rebound.body);
    assert.match(rebound.json.error.message, /Host/);
  } finally {
    await extra.stop();
  }
});

test('SCRIBE_MCP_ALLOWED_ORIGINS: a value that is not a list of http(s) origins stops the server with the setting\'s name', () => {
  for (const bad of ['https://app.example/path', 'ftp://app.example', 'app.example', 'https://']) {
    const run = spawnSync(BIN, ['config', '--check'], { encoding: 'utf8',
      env: { ...process.env, SCRIBE_DATABASE_URL: DB, SCRIBE_MCP_ALLOWED_ORIGINS: bad } });
    assert.equal(run.status, 2, `${bad}: ${run.stdout}${run.stderr}`);
    assert.match(run.stderr, /SCRIBE_MCP_ALLOWED_ORIGINS/);
  }
});

// --- Item 10: capabilities --------------------------------------------------------------

// A method of each capability a server may declare, with params it accepts
// when the capability is served (a served method never answers -32601).
const PROBES = {
  tools: ['tools/list', {}],
  resources: ['resources/list', {}],
  prompts: ['prompts/list', {}],
  logging: ['logging/setLevel', { level: 'info' }],
  completions: ['completion/complete', { ref: { type: 'ref/prompt', name: 'none' }, argument: { name: 'a', value: 'b' } }],
};

// Which capabilities answer their probe; the others must be "method not found".
async function served(send) {
  const out = [];
  for (const [capability, [method, params]] of Object.entries(PROBES)) {
    const res = await send(method, params);
    if (res.json?.result) out.push(capability);
    else assert.equal(res.json?.error?.code, -32601, `${method}: ${res.text}`);
  }
  return out.sort();
}

test('capabilities: server/discover (2026-07-28) and initialize (2025-11-25) declare exactly what is served', async () => {
  // 2026-07-28.
  const discover = await mcp(a.key, 'server/discover');
  assert.equal(discover.status, 200, discover.text);
  const modernCaps = discover.json.result.capabilities;
  assert.deepEqual(Object.keys(modernCaps).sort(), await served((method, params) => mcp(a.key, method, params)));
  for (const value of Object.values(modernCaps)) assert.deepEqual(value, {}, 'nothing to subscribe to or be told of in 2026-07-28');

  // 2025-11-25, in a session.
  const init = await request(`${server.url}/mcp`, { method: 'POST', key: a.key,
    headers: { Accept: 'application/json, text/event-stream' },
    body: { jsonrpc: '2.0', id: 0, method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'e2e-hardening', version: '1.0.0' } } } });
  assert.equal(init.status, 200, init.text);
  const session = init.headers['mcp-session-id'];
  const legacyCaps = init.json.result.capabilities;
  const legacy = (method, params) => request(`${server.url}/mcp`, { method: 'POST', key: a.key,
    headers: { Accept: 'application/json, text/event-stream', 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '2025-11-25' },
    body: { jsonrpc: '2.0', id: rpcId++, method, params } });
  assert.deepEqual(Object.keys(legacyCaps).sort(), await served(legacy));
  // What the declared sub-capabilities promise: resources/subscribe is
  // served (it refuses a bad uri with -32602, not -32601); nothing is ever
  // pushed, so no listChanged.
  assert.equal(legacyCaps.resources.subscribe, true);
  assert.equal((await legacy('resources/subscribe', { uri: 'nope' })).json.error.code, -32602);
  for (const c of ['tools', 'resources', 'prompts']) assert.equal(legacyCaps[c].listChanged, false, c);

  // prompts is declared, so prompts/get is served: there are no prompts, so any name is -32602.
  const get = await mcp(a.key, 'prompts/get', { name: 'summary' });
  assert.equal(get.json?.error?.code, -32602, get.text);
  assert.equal((await legacy('prompts/get', { name: 'summary' })).json.error.code, -32602);
});
