// MCP end to end: the real `scribe serve` at /mcp, spoken to by the two
// official TypeScript clients (@modelcontextprotocol/sdk 1.x, which speaks
// 2025-11-25, and @modelcontextprotocol/client 2.x in its default legacy mode
// and in `auto` mode, which negotiates 2026-07-28 through server/discover) and
// by raw HTTP for every transport rule: headers against the body, versions,
// sessions (also across a restart), Origin and Host, auth, the limiter shared
// with the REST API, progress as Server-Sent Events, and the discovery
// documents. Each client lists the tools and calls every one of them against
// real data: a short flite recording uploaded through createUpload,
// transcribed through transcribe and waited for with waitForTranscription.
//
// Order matters: the first tests run with no pipeline worker anywhere, so a
// created job stays queued (waitForTranscription then reports progress
// between its 10 s slices); the server is then restarted with workers (the
// 2025-11-25 session opened before must survive that) and the clients
// transcribe for real.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { Client as Client1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as Transport1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as Client2, StreamableHTTPClientTransport as Transport2 } from '@modelcontextprotocol/client';
import { FAST_RECOGNIZER, startServer, newAccount, newKey, curl } from './harness.mjs';
import { dialogue, seconds, startMediaServer } from './media.mjs';

const MODERN = '2026-07-28';
const LEGACY = '2025-11-25';
const META_VERSION = 'io.modelcontextprotocol/protocolVersion';
const META_CAPS = 'io.modelcontextprotocol/clientCapabilities';
const META_INFO = 'io.modelcontextprotocol/clientInfo';
const SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
// Many requests per test: the limiter has a test of its own (its own server).
const ENV = { ...FAST_RECOGNIZER, SCRIBE_ALLOW_PRIVATE_URLS: '1', SCRIBE_WORKER_POLL_MS: '100', SCRIBE_RATE_LIMIT_PER_MINUTE: '100000' };

const READ_TOOLS = ['getAccount', 'listPipelines', 'listTranscriptions', 'getTranscription', 'getTranscriptionResult',
  'waitForTranscription', 'getTranscriptionTimestamps', 'getTranscriptionWords', 'getSubtitles', 'getClip', 'search',
  'fetch'];
const WRITE_TOOLS = ['askTranscription', 'askLibrary', 'transcribe', 'getQuote', 'createUpload', 'renderClip',
  'regeneratePostingChapters', 'retryTranscription', 'deleteTranscription'];
const ALL_TOOLS = [...READ_TOOLS, ...WRITE_TOOLS];
const sorted = (a) => [...a].sort();

let server; // no workers until the restart test, then workers
let media, acc, other, wav, wavSeconds, gone;
let queuedId; // a job that stays queued while no worker runs
let sessionBeforeRestart; // a 2025-11-25 session opened on the first server process
const shared = {}; // {id, key}: a completed transcription of acc's, from the first client

// ---------------------------------------------------------------------------
// Raw HTTP.

const modernMeta = (extra = {}) => ({ [META_VERSION]: MODERN, [META_CAPS]: {}, [META_INFO]: { name: 'e2e-raw', version: '1.0.0' },
  ...extra });
let nextId = 1;

// POSTs one message to /mcp. `headers` replace the defaults (a null value drops one).
async function post(body, { key = acc.key, headers = {}, url = server.url } = {}) {
  const h = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
  if (key) h.Authorization = `Bearer ${key}`;
  for (const [k, v] of Object.entries(headers)) {
    for (const existing of Object.keys(h)) if (existing.toLowerCase() === k.toLowerCase()) delete h[existing];
    if (v !== null) h[k] = v;
  }
  const res = await fetch(`${url}/mcp`, { method: 'POST', headers: h,
    body: typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await res.text();
  let json;
  try { json = JSON.parse(text); } catch { json = undefined; }
  return { status: res.status, headers: res.headers, text, json };
}

// The headers a 2026-07-28 request needs.
function modernHeaders(method, params = {}) {
  const h = { 'MCP-Protocol-Version': MODERN, 'Mcp-Method': method };
  if (method === 'tools/call' || method === 'prompts/get') h['Mcp-Name'] = params.name;
  if (method === 'resources/read') h['Mcp-Name'] = params.uri;
  return h;
}

function modernBody(method, params = {}, id = nextId++) {
  return { jsonrpc: '2.0', id, method, params: { ...params, _meta: modernMeta(params._meta) } };
}

// A well-formed 2026-07-28 request; opts.headers override (null drops).
function modern(method, params = {}, opts = {}) {
  const body = modernBody(method, params, opts.id);
  return post(body, { ...opts, headers: { ...modernHeaders(method, params), ...(opts.headers || {}) } }).then((r) => ({ ...r, id: body.id }));
}

// Asserts a JSON-RPC error answer and returns error.
function rpcError(res, status, code, id) {
  assert.equal(res.status, status, `expected HTTP ${status} (${code}), got ${res.status}: ${res.text}`);
  assert.ok(res.json && res.json.error, `no JSON-RPC error: ${res.text}`);
  assert.equal(res.json.jsonrpc, '2.0');
  assert.equal(res.json.error.code, code, res.text);
  assert.equal(typeof res.json.error.message, 'string');
  assert.ok(res.json.error.message.length > 0);
  if (id !== undefined) assert.deepEqual(res.json.id, id, `the error's id must be the request's: ${res.text}`);
  assert.equal('result' in res.json, false);
  return res.json.error;
}

function rpcResult(res, id) {
  assert.equal(res.status, 200, res.text);
  assert.match(res.headers.get('content-type') || '', /^application\/json/);
  assert.ok(res.json && res.json.result, `no result: ${res.text}`);
  assert.equal(res.json.jsonrpc, '2.0');
  if (id !== undefined) assert.deepEqual(res.json.id, id);
  return res.json.result;
}

// A 2026-07-28 result carries resultType and the server's identity.
function modernResult(res, id) {
  const r = rpcResult(res, id);
  assert.equal(r.resultType, 'complete', res.text.slice(0, 300));
  assert.equal(r._meta?.[SERVER_INFO]?.name, 'scribe');
  assert.equal(typeof r._meta[SERVER_INFO].version, 'string');
  assert.equal(res.headers.get('mcp-session-id'), null, 'a 2026-07-28 answer never carries a session');
  return r;
}

// Opens a 2025-11-25 session the way the clients do; returns its id.
async function openSession(key = acc.key, { url = server.url, version = LEGACY } = {}) {
  const res = await post({ jsonrpc: '2.0', id: 0, method: 'initialize',
    params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'e2e-raw', version: '1.0.0' } } },
  { key, url });
  const r = rpcResult(res, 0);
  assert.equal(r.protocolVersion, version);
  assert.equal(r.serverInfo.name, 'scribe');
  assert.equal(typeof r.capabilities.tools, 'object');
  assert.equal('resultType' in r, false, '2025-11-25 results have no resultType');
  const sid = res.headers.get('mcp-session-id');
  assert.match(sid || '', /^[\x21-\x7e]{16,}$/, `Mcp-Session-Id: ${sid}`);
  const note = await post({ jsonrpc: '2.0', method: 'notifications/initialized' },
    { key, url, headers: { 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': version } });
  assert.equal(note.status, 202, note.text);
  assert.equal(note.text, '');
  return sid;
}

function legacy(sid, method, params = {}, { key = acc.key, url = server.url, id = nextId++, headers = {} } = {}) {
  const h = { 'MCP-Protocol-Version': LEGACY, ...headers };
  if (sid) h['Mcp-Session-Id'] = sid;
  return post({ jsonrpc: '2.0', id, method, params }, { key, url, headers: h }).then((r) => ({ ...r, id }));
}

// One request with node:http, which sends the Host header as given.
function rawRequest(url, { method = 'GET', headers = {}, body } = {}) {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method, headers,
      setHost: !Object.keys(headers).some((k) => k.toLowerCase() === 'host') }, (res) => {
      const chunks = [];
      res.on('data', (d) => chunks.push(d));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json;
        try { json = JSON.parse(text); } catch { json = undefined; }
        resolve({ status: res.statusCode, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    if (body !== undefined) req.write(typeof body === 'string' ? body : JSON.stringify(body));
    req.end();
  });
}

// Reads a text/event-stream body: [{at (ms since start), message}].
async function readEvents(res, started) {
  const events = [];
  const decoder = new TextDecoder();
  let buf = '';
  for await (const chunk of res.body) {
    buf += decoder.decode(chunk, { stream: true }).replace(/\r\n/g, '\n');
    let end;
    while ((end = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      const data = block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).replace(/^ /, '')).join('\n');
      if (data) events.push({ at: Date.now() - started, message: JSON.parse(data) });
    }
  }
  return events;
}

// ---------------------------------------------------------------------------
// The official clients.

async function connect(kind, key, url = server.url) {
  const endpoint = new URL(`${url}/mcp`);
  const requestInit = { headers: { Authorization: `Bearer ${key}` } };
  if (kind === 'sdk1') {
    const client = new Client1({ name: 'e2e-sdk1', version: '1.0.0' });
    const transport = new Transport1(endpoint, { requestInit });
    await client.connect(transport);
    return { kind, client, transport };
  }
  const client = new Client2({ name: `e2e-client2-${kind}`, version: '1.0.0' },
    kind === 'auto' ? { versionNegotiation: { mode: 'auto' } } : undefined);
  const transport = new Transport2(endpoint, { requestInit });
  await client.connect(transport);
  return { kind, client, transport };
}

function callTool(c, name, args, options) {
  const params = { name, arguments: args };
  return c.kind === 'sdk1' ? c.client.callTool(params, undefined, options) : c.client.callTool(params, options);
}

// A successful tool result: its structuredContent, which the text block repeats.
function ok(result, name) {
  assert.ok(!result.isError, `${name} failed: ${JSON.stringify(result).slice(0, 600)}`);
  assert.equal(typeof result.structuredContent, 'object');
  assert.equal(result.content[0].type, 'text');
  if (name !== 'getSubtitles') assert.deepEqual(JSON.parse(result.content[0].text), result.structuredContent, name);
  return result.structuredContent;
}

// A tool failure: isError with the REST error code.
function toolError(result, code, name = '') {
  assert.equal(result.isError, true, `${name} should have failed with ${code}: ${JSON.stringify(result).slice(0, 400)}`);
  assert.equal(result.structuredContent?.error?.code, code, JSON.stringify(result.structuredContent));
  assert.equal(typeof result.structuredContent.error.message, 'string');
  assert.equal(result.content[0].type, 'text');
  assert.ok(result.content[0].text.startsWith(`${code}: `), result.content[0].text);
  return result.structuredContent.error;
}

async function tool(c, name, args = {}, options) { return ok(await callTool(c, name, args, options), name); }

// Waits with the tool until the transcription is no longer processing.
// With onprogress the client sends a progressToken, and the answer is an
// event stream (whose last message is the result).
async function waitDone(c, id, include, onprogress) {
  const until = Date.now() + 240_000;
  while (Date.now() < until) {
    const args = { id, timeout_seconds: 20 };
    if (include) args.include = include;
    const r = await tool(c, 'waitForTranscription', args, onprogress ? { onprogress, timeout: 60_000 } : undefined);
    assert.equal(r.id, id);
    if (!r._timed_out) return r;
    assert.equal(r.status, 'processing');
  }
  throw new Error(`transcription ${id} did not finish`);
}

async function closeClient(c) {
  try { await c.client.close(); } catch { /* already closed */ }
}

// ---------------------------------------------------------------------------

before(async () => {
  media = await startMediaServer();
  wav = dialogue([
    { voice: 'slt', text: 'The museum opens at nine in the morning. Tickets cost five dollars for children and ten dollars for adults.' },
    { voice: 'rms', text: 'The library closes at six in the evening on weekdays.' },
  ], 'mcp-talk');
  wavSeconds = seconds(wav);
  gone = media.write('mcp-gone.mp3', 'x');
  media.gone(gone);
  server = await startServer({ extraEnv: ENV }); // no workers yet
  acc = newAccount({ balance: 10 });
  other = newAccount({ balance: 10 });
});

after(async () => {
  await server?.stop();
  await media?.close();
});

// --- Discovery ----------------------------------------------------------------

test('discovery documents: public, CORS *, cached, a card and a server.json naming the /mcp endpoint', async () => {
  for (const path of ['/.well-known/mcp/server-card.json', '/mcp/server-card', '/.well-known/mcp/server.json']) {
    const res = await fetch(`${server.url}${path}`); // no Authorization
    assert.equal(res.status, 200, path);
    assert.match(res.headers.get('content-type'), /json/, path);
    assert.equal(res.headers.get('access-control-allow-origin'), '*', path);
    assert.match(res.headers.get('cache-control') || '', /max-age=\d+/, path);
    const doc = await res.json();
    assert.match(doc.$schema, /^https:\/\/static\.modelcontextprotocol\.io\/schemas\//, path);
    assert.match(doc.name, /^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/, path);
    assert.equal(typeof doc.version, 'string');
    assert.ok(doc.description.length > 0);
    assert.equal(doc.remotes[0].type, 'streamable-http');
    assert.equal(doc.remotes[0].url, `${server.url}/mcp`);
    if (path.endsWith('server.json')) {
      assert.equal(doc.$schema, 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json');
      assert.ok(doc.description.length <= 100, 'the registry caps description at 100 characters');
    } else {
      assert.equal(doc.$schema, 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json');
      assert.deepEqual(sorted(doc.remotes[0].supportedProtocolVersions), sorted([MODERN, LEGACY]));
    }
  }
});

// --- Auth, Origin, Host -------------------------------------------------------------

test('auth: no key or a bad key is 401 with WWW-Authenticate, on every method', async () => {
  const body = modernBody('tools/list');
  for (const key of [undefined, 'key_live_notarealkeyatall0000000000000000']) {
    const res = await post(body, { key: key ?? null, headers: modernHeaders('tools/list') });
    assert.equal(res.status, 401, res.text);
    assert.match(res.headers.get('www-authenticate') || '', /^Bearer\b/);
  }
  for (const method of ['GET', 'DELETE']) {
    const res = await fetch(`${server.url}/mcp`, { method });
    assert.equal(res.status, 401);
    assert.match(res.headers.get('www-authenticate') || '', /^Bearer\b/);
  }
});

test('Origin: a foreign one is 403, the server\'s own passes; Host: a foreign name is 403', async () => {
  const body = modernBody('tools/list');
  for (const origin of ['https://evil.example', 'http://127.0.0.1:1', 'null']) {
    const res = await post(body, { headers: { ...modernHeaders('tools/list'), Origin: origin } });
    assert.equal(res.status, 403, `${origin}: ${res.text}`);
  }
  modernResult(await post(body, { headers: { ...modernHeaders('tools/list'), Origin: server.url } }), body.id);

  const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
    Authorization: `Bearer ${acc.key}`, ...modernHeaders('tools/list') };
  const evil = await rawRequest(`${server.url}/mcp`, { method: 'POST', body,
    headers: { ...headers, Host: `evil.example:${server.port}` } });
  assert.equal(evil.status, 403, evil.text);
  const evilGet = await rawRequest(`${server.url}/mcp`, { headers: { Authorization: `Bearer ${acc.key}`, Host: 'rebind.example' } });
  assert.equal(evilGet.status, 403, evilGet.text);
  for (const host of [`localhost:${server.port}`, `127.0.0.1:${server.port}`]) {
    const res = await rawRequest(`${server.url}/mcp`, { method: 'POST', body, headers: { ...headers, Host: host } });
    assert.equal(res.status, 200, `${host}: ${res.text}`);
  }
});

// --- 2026-07-28 ---------------------------------------------------------------------

test('2026-07-28: server/discover', async () => {
  const res = await modern('server/discover', {}, { id: 'discover-1' });
  const r = modernResult(res, 'discover-1');
  assert.ok(Array.isArray(r.supportedVersions) && r.supportedVersions.includes(MODERN), JSON.stringify(r.supportedVersions));
  assert.equal(typeof r.capabilities, 'object');
  assert.equal(typeof r.capabilities.tools, 'object');
  assert.ok(Number.isInteger(r.ttlMs) && r.ttlMs >= 0);
  assert.ok(['public', 'private'].includes(r.cacheScope));
  assert.equal(typeof r._meta[SERVER_INFO].version, 'string');
  assert.equal(typeof r.instructions, 'string');
});

test('2026-07-28: tools/list: cacheable, every tool with object schemas and annotations; no clip tools', async () => {
  const r = modernResult(await modern('tools/list'));
  assert.ok(Number.isInteger(r.ttlMs) && r.ttlMs >= 0);
  assert.ok(['public', 'private'].includes(r.cacheScope));
  assert.deepEqual(sorted(r.tools.map((t) => t.name)), sorted(ALL_TOOLS));
  for (const t of r.tools) {
    assert.equal(t.inputSchema?.type, 'object', t.name);
    assert.equal(t.outputSchema?.type, 'object', t.name);
    assert.equal(typeof t.description, 'string');
    assert.ok(t.description.length > 20, t.name);
    const a = t.annotations;
    assert.ok(a, t.name);
    for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'])
      assert.equal(typeof a[hint], 'boolean', `${t.name}.${hint}`);
    assert.equal(a.readOnlyHint, READ_TOOLS.includes(t.name), `${t.name} readOnlyHint`);
  }
  const byName = Object.fromEntries(r.tools.map((t) => [t.name, t]));
  assert.equal(byName.deleteTranscription.annotations.destructiveHint, true);
  assert.equal(byName.getTranscription.annotations.destructiveHint, false);
  assert.deepEqual(byName.transcribe.inputSchema.required, ['source']);
  assert.match(byName.transcribe.description, /SPENDS WALLET MONEY/);
  // The other list methods are cacheable too.
  for (const method of ['resources/list', 'resources/templates/list', 'prompts/list']) {
    const l = modernResult(await modern(method));
    assert.ok(Number.isInteger(l.ttlMs), method);
    assert.ok(['public', 'private'].includes(l.cacheScope), method);
  }
});

test('2026-07-28: a read-only key lists the read tools only and is refused the write tools', async () => {
  const ro = newKey(acc.accountId, '--permission', 'read_only');
  const r = modernResult(await modern('tools/list', {}, { key: ro.key }));
  assert.deepEqual(sorted(r.tools.map((t) => t.name)), sorted(READ_TOOLS));
  for (const name of ['createUpload', 'deleteTranscription', 'transcribe']) {
    const args = name === 'createUpload' ? { filename: 'a.wav', content_type: 'audio/wav', file_size: 10 }
      : name === 'transcribe' ? { source: 'external_url', url: media.url(wav), duration_seconds: 5 } : { id: 1 };
    const res = modernResult(await modern('tools/call', { name, arguments: args }, { key: ro.key }));
    toolError(res, 'scope_forbidden', name);
  }
  ok(modernResult(await modern('tools/call', { name: 'getAccount', arguments: {} }, { key: ro.key })), 'getAccount');
});

test('2026-07-28: tools/call results; tool failures are isError with the REST code; an unknown tool is -32602', async () => {
  const me = ok(modernResult(await modern('tools/call', { name: 'getAccount', arguments: {} })), 'getAccount');
  assert.equal(me.email, acc.email);
  toolError(modernResult(await modern('tools/call', { name: 'getTranscription', arguments: { id: 999999999 } })), 'not_found');
  toolError(modernResult(await modern('tools/call', { name: 'getTranscription', arguments: {} })), 'invalid_request');
  toolError(modernResult(await modern('tools/call', { name: 'getAccount', arguments: { bogus: 1 } })), 'invalid_request');
  // Another account's transcription does not exist for this key.
  const theirs = await curl(`${server.url}/api/v1/quotes`, { method: 'POST', key: other.key,
    body: { source: 'external_url', url: media.url(wav), duration_seconds: 5 } });
  assert.equal(theirs.status, 200, theirs.body);
  toolError(modernResult(await modern('tools/call', { name: 'getTranscription',
    arguments: { id: theirs.json.transcription_id } })), 'not_found');
  const unknown = await modern('tools/call', { name: 'getClips', arguments: {} });
  assert.ok(unknown.json?.error, unknown.text);
  assert.equal(unknown.json.error.code, -32602);
  assert.equal(unknown.json.id, unknown.id);
});

test('2026-07-28: GET and DELETE without a session are 405; a notification is 202; Mcp-Session-Id is ignored', async () => {
  for (const method of ['GET', 'DELETE']) {
    const res = await fetch(`${server.url}/mcp`, { method,
      headers: { Authorization: `Bearer ${acc.key}`, Accept: 'text/event-stream', 'MCP-Protocol-Version': MODERN } });
    assert.equal(res.status, 405, method);
    assert.match(res.headers.get('allow') || '', /POST/);
    await res.body?.cancel();
  }
  const note = await post({ jsonrpc: '2.0', method: 'notifications/cancelled',
    params: { requestId: 7, reason: 'user', _meta: modernMeta() } },
  { headers: { 'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'notifications/cancelled' } });
  assert.equal(note.status, 202, note.text);
  assert.equal(note.text, '');
  // A stray session id on a 2026-07-28 request changes nothing.
  modernResult(await modern('tools/list', {}, { headers: { 'Mcp-Session-Id': 'mcp_madeup' } }));
});

test('2026-07-28: missing or mismatched MCP-Protocol-Version, Mcp-Method, Mcp-Name: 400 -32020 with the request id', async () => {
  const call = { name: 'getAccount', arguments: {} };
  const cases = [
    ['no MCP-Protocol-Version', 'tools/list', {}, { 'MCP-Protocol-Version': null }],
    ['MCP-Protocol-Version differs from the body', 'tools/list', {}, { 'MCP-Protocol-Version': LEGACY }],
    ['no Mcp-Method', 'tools/list', {}, { 'Mcp-Method': null }],
    ['Mcp-Method differs', 'tools/list', {}, { 'Mcp-Method': 'tools/call' }],
    ['Mcp-Method differs in case', 'tools/list', {}, { 'Mcp-Method': 'TOOLS/LIST' }],
    ['no Mcp-Name', 'tools/call', call, { 'Mcp-Name': null }],
    ['Mcp-Name differs', 'tools/call', call, { 'Mcp-Name': 'listPipelines' }],
    ['no Mcp-Name on resources/read', 'resources/read', { uri: 'scribe://transcriptions/1' }, { 'Mcp-Name': null }],
  ];
  let i = 0;
  for (const [what, method, params, headers] of cases) {
    const id = i++ % 2 ? `req-${i}` : 1000 + i; // string and integer ids
    const res = await modern(method, params, { id, headers });
    const e = rpcError(res, 400, -32020, id);
    assert.match(e.message, /mismatch|missing/i, what);
  }
  // A value sent base64-encoded is decoded before comparing.
  const b64 = `=?base64?${Buffer.from('getAccount').toString('base64')}?=`;
  ok(modernResult(await modern('tools/call', call, { headers: { 'Mcp-Name': b64 } })), 'getAccount');
});

test('2026-07-28: an unsupported version is 400 -32022 with data.supported and data.requested', async () => {
  const body = modernBody('tools/list', { _meta: { [META_VERSION]: '1900-01-01' } }, 'v-1');
  const res = await post(body, { headers: { 'MCP-Protocol-Version': '1900-01-01', 'Mcp-Method': 'tools/list' } });
  const e = rpcError(res, 400, -32022, 'v-1');
  assert.ok(Array.isArray(e.data?.supported) && e.data.supported.includes(MODERN), JSON.stringify(e));
  assert.equal(e.data.requested, '1900-01-01');
});

test('2026-07-28: missing _meta clientCapabilities is 400 -32602; the 2026 header without the _meta claim too', async () => {
  const body = { jsonrpc: '2.0', id: 31, method: 'tools/list', params: { _meta: { [META_VERSION]: MODERN } } };
  rpcError(await post(body, { headers: modernHeaders('tools/list') }), 400, -32602, 31);
  const bare = { jsonrpc: '2.0', id: 32, method: 'tools/list', params: {} };
  rpcError(await post(bare, { headers: modernHeaders('tools/list') }), 400, -32602, 32);
  // Not JSON, not application/json.
  rpcError(await post('{', { headers: modernHeaders('tools/list') }), 400, -32700);
  const typed = await post(modernBody('tools/list'), { headers: { ...modernHeaders('tools/list'), 'Content-Type': 'text/plain' } });
  assert.equal(typed.status, 415, typed.text);
});

test('2026-07-28: unknown and removed methods are 404 -32601', async () => {
  rpcError(await modern('no/such/method', {}, { id: 41 }), 404, -32601, 41);
  const removed = [
    ['initialize', { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 'x', version: '1' } }],
    ['ping', {}],
    ['logging/setLevel', { level: 'info' }],
    ['resources/subscribe', { uri: 'scribe://transcriptions/1' }],
    ['resources/unsubscribe', { uri: 'scribe://transcriptions/1' }],
  ];
  for (const [method, params] of removed) {
    const id = `rm-${method}`;
    rpcError(await modern(method, params, { id }), 404, -32601, id);
  }
});

// --- 2025-11-25 ---------------------------------------------------------------------

test('2025-11-25: initialize mints a session, requests need it: none 400, made-up 404, another key\'s 404, DELETE ends it', async () => {
  const sid = await openSession();
  // An older version the client asks for is echoed; an unknown one gets the latest.
  const older = await post({ jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } });
  assert.equal(rpcResult(older, 1).protocolVersion, '2025-06-18');
  const future = await post({ jsonrpc: '2.0', id: 2, method: 'initialize',
    params: { protocolVersion: '2099-01-01', capabilities: {}, clientInfo: { name: 'x', version: '1' } } });
  assert.equal(rpcResult(future, 2).protocolVersion, LEGACY);

  const listed = rpcResult(await legacy(sid, 'tools/list', {}, { id: 5 }), 5);
  assert.deepEqual(sorted(listed.tools.map((t) => t.name)), sorted(ALL_TOOLS));
  assert.equal('resultType' in listed, false);
  const called = rpcResult(await legacy(sid, 'tools/call', { name: 'getAccount', arguments: {} }));
  assert.equal(ok(called, 'getAccount').email, acc.email);

  const none = await legacy(null, 'tools/list', {}, { id: 6 });
  assert.equal(none.status, 400, none.text);
  assert.equal(none.json?.id, 6);
  const madeUp = await legacy(`mcp_${'x'.repeat(32)}`, 'tools/list', {}, { id: 7 });
  assert.equal(madeUp.status, 404, madeUp.text);
  // Another account's key, and another key of the same account, find nothing; the session lives on.
  const sibling = newKey(acc.accountId);
  for (const key of [other.key, sibling.key]) {
    const stolen = await legacy(sid, 'tools/call', { name: 'getAccount', arguments: {} }, { key, id: 8 });
    assert.equal(stolen.status, 404, stolen.text);
    assert.doesNotMatch(stolen.text, new RegExp(acc.email.replace(/[.+]/g, '\\$&')));
    const del = await fetch(`${server.url}/mcp`, { method: 'DELETE', headers: { Authorization: `Bearer ${key}`, 'Mcp-Session-Id': sid } });
    assert.equal(del.status, 404);
  }
  rpcResult(await legacy(sid, 'ping', {}, { id: 9 }), 9);
  // An unsupported MCP-Protocol-Version on a session request is 400.
  const badVersion = await legacy(sid, 'tools/list', {}, { headers: { 'MCP-Protocol-Version': '1999-01-01' } });
  assert.equal(badVersion.status, 400, badVersion.text);
  // A GET stream is not offered.
  const get = await fetch(`${server.url}/mcp`, { headers: { Authorization: `Bearer ${acc.key}`, 'Mcp-Session-Id': sid,
    Accept: 'text/event-stream', 'MCP-Protocol-Version': LEGACY } });
  assert.equal(get.status, 405);
  await get.body?.cancel();

  const del = await fetch(`${server.url}/mcp`, { method: 'DELETE',
    headers: { Authorization: `Bearer ${acc.key}`, 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': LEGACY } });
  assert.ok(del.status === 200 || del.status === 204, `DELETE: ${del.status}`);
  const after = await legacy(sid, 'tools/list', {}, { id: 10 });
  assert.equal(after.status, 404, after.text);
  const again = await fetch(`${server.url}/mcp`, { method: 'DELETE', headers: { Authorization: `Bearer ${acc.key}`, 'Mcp-Session-Id': sid } });
  assert.equal(again.status, 404);
});

// --- Progress: a job that stays queued (no worker runs yet) ---------------------------

test('waitForTranscription without a progressToken answers JSON, _timed_out while the job is queued', async () => {
  const created = await curl(`${server.url}/api/v1/transcriptions`, { method: 'POST', key: acc.key,
    body: { source: 'external_url', url: media.url(wav), duration_seconds: wavSeconds, client_reference: 'mcp-queued' } });
  assert.equal(created.status, 202, created.body);
  queuedId = created.json.id;
  const started = Date.now();
  const r = ok(modernResult(await modern('tools/call', { name: 'waitForTranscription',
    arguments: { id: queuedId, timeout_seconds: 1 } })), 'waitForTranscription');
  assert.equal(r._timed_out, true);
  assert.equal(r.status, 'processing');
  assert.ok(Date.now() - started < 5000);
});

test('waitForTranscription with a progressToken: an event stream with notifications/progress before the result', async () => {
  // Raw HTTP (2026-07-28), and both clients with onprogress, at the same time.
  const raw = (async () => {
    const started = Date.now();
    const body = modernBody('tools/call', { name: 'waitForTranscription', arguments: { id: queuedId, timeout_seconds: 13 },
      _meta: { progressToken: 'p-1' } }, 'wait-1');
    const res = await fetch(`${server.url}/mcp`, { method: 'POST', body: JSON.stringify(body),
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
        Authorization: `Bearer ${acc.key}`, ...modernHeaders('tools/call', body.params) } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /^text\/event-stream/);
    assert.match(res.headers.get('cache-control') || '', /no-cache/);
    const events = await readEvents(res, started);
    const progress = events.filter((e) => e.message.method === 'notifications/progress');
    assert.ok(progress.length >= 1, JSON.stringify(events));
    for (const p of progress) {
      assert.equal(p.message.params.progressToken, 'p-1');
      assert.equal(typeof p.message.params.progress, 'number');
      assert.ok(p.at > 8000, `progress at ${p.at} ms: before the first 10 s slice ended`);
    }
    const last = events[events.length - 1];
    assert.equal(last.message.id, 'wait-1');
    assert.ok(events.indexOf(progress[0]) < events.length - 1, 'progress comes before the result');
    assert.equal(last.message.result.resultType, 'complete');
    assert.equal(last.message.result.structuredContent._timed_out, true);
    assert.ok(last.at >= 12000, `result at ${last.at} ms`);
  })();
  const viaClient = async (kind) => {
    const c = await connect(kind, acc.key);
    try {
      const seen = [];
      const r = await tool(c, 'waitForTranscription', { id: queuedId, timeout_seconds: 12 },
        { onprogress: (p) => seen.push(p), timeout: 60_000 });
      assert.equal(r._timed_out, true);
      assert.ok(seen.length >= 1, `${kind}: no progress`);
      assert.equal(typeof seen[0].progress, 'number');
    } finally {
      await closeClient(c);
    }
  };
  await Promise.all([raw, viaClient('sdk1'), viaClient('auto'), viaClient('legacy')]);
});

test('waitForTranscription: a closed event stream is a cancellation, and the server carries on', async () => {
  const abort = new AbortController();
  const body = modernBody('tools/call', { name: 'waitForTranscription', arguments: { id: queuedId, timeout_seconds: 12 },
    _meta: { progressToken: 7 } });
  const res = await fetch(`${server.url}/mcp`, { method: 'POST', body: JSON.stringify(body), signal: abort.signal,
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
      Authorization: `Bearer ${acc.key}`, ...modernHeaders('tools/call', body.params) } });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /^text\/event-stream/);
  assert.equal(res.headers.get('x-accel-buffering'), 'no');
  await new Promise((r) => setTimeout(r, 500));
  abort.abort();
  // Past the first 10 s slice, which now meets a gone stream.
  await new Promise((r) => setTimeout(r, 11_000));
  assert.equal(server.proc.exitCode, null, server.stderr());
  ok(modernResult(await modern('tools/call', { name: 'getAccount', arguments: {} })), 'getAccount');
});

test('waitForTranscription refuses what the other tools refuse: unknown arguments, bad include, a missing job', async () => {
  const wait = (args, extra = {}) => modern('tools/call', { name: 'waitForTranscription', arguments: args, ...extra });
  toolError(modernResult(await wait({ id: queuedId, timeout_seconds: 1, include: ['nothing'] })), 'invalid_request');
  toolError(modernResult(await wait({ id: 'abc' })), 'invalid_request');
  toolError(modernResult(await wait({ id: 999999999, timeout_seconds: 1 })), 'not_found');
  // The same refusals on an event stream (a progressToken): the result is the stream's one message.
  const body = modernBody('tools/call', { name: 'waitForTranscription', arguments: { id: 999999999, timeout_seconds: 1 },
    _meta: { progressToken: 'gone' } }, 'sse-404');
  const res = await fetch(`${server.url}/mcp`, { method: 'POST', body: JSON.stringify(body),
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
      Authorization: `Bearer ${acc.key}`, ...modernHeaders('tools/call', body.params) } });
  assert.equal(res.status, 200);
  const text = await res.text();
  const message = res.headers.get('content-type').startsWith('text/event-stream')
    ? JSON.parse(text.split('\n').filter((l) => l.startsWith('data:')).pop().slice(5)) : JSON.parse(text);
  assert.equal(message.id, 'sse-404');
  toolError(message.result, 'not_found');
  // Its schema is closed (additionalProperties: false) like every tool's: an
  // unknown argument is refused, not ignored (a misspelled `timeout` would
  // otherwise wait the default 30 s).
  toolError(modernResult(await wait({ id: queuedId, timeout_seconds: 1, timeout: 1 })), 'invalid_request',
    'waitForTranscription with an unknown argument');
});

test('protocol odds and ends: batches, posted responses, no version header in a session, another account\'s resource', async () => {
  rpcError(await post([modernBody('tools/list')], { headers: modernHeaders('tools/list') }), 400, -32600);
  const sid = await openSession();
  // A JSON-RPC response posted by a client is acknowledged.
  const answer = await post({ jsonrpc: '2.0', id: 'srv-1', result: {} },
    { headers: { 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': LEGACY } });
  assert.equal(answer.status, 202, answer.text);
  // Without MCP-Protocol-Version a session request still works (the spec: assume 2025-03-26).
  rpcResult(await legacy(sid, 'tools/list', {}, { id: 3, headers: { 'MCP-Protocol-Version': null } }), 3);
  rpcError(await legacy(sid, 'no/such/method', {}, { id: 4 }), 200, -32601, 4);
  rpcError(await legacy(sid, 'server/discover', {}, { id: 5 }), 200, -32601, 5);
  // Another account's transcript is no resource of this key's, in either era.
  const theirs = await curl(`${server.url}/api/v1/quotes`, { method: 'POST', key: other.key,
    body: { source: 'external_url', url: media.url(wav), duration_seconds: 5 } });
  const uri = `scribe://transcriptions/${theirs.json.transcription_id}`;
  rpcError(await legacy(sid, 'resources/read', { uri }, { id: 6 }), 200, -32602, 6);
  const modernRead = await modern('resources/read', { uri }, { id: 7 });
  assert.equal(modernRead.json?.error?.code, -32602, modernRead.text);
  assert.equal(modernRead.json.id, 7);
});

test('deleteTranscription stops the queued job (full key); a read-only key is refused', async () => {
  const c = await connect('auto', acc.key);
  const ro = newKey(acc.accountId, '--permission', 'read_only');
  const r = await connect('auto', ro.key);
  try {
    toolError(await callTool(r, 'deleteTranscription', { id: queuedId }), 'scope_forbidden');
    assert.equal((await tool(c, 'getTranscription', { id: queuedId })).status, 'processing');
    const del = await tool(c, 'deleteTranscription', { id: queuedId });
    assert.equal(del.deleted, true);
    toolError(await callTool(c, 'getTranscription', { id: queuedId }), 'not_found');
  } finally {
    await closeClient(c);
    await closeClient(r);
  }
});

// --- Restart: the session lives in the database ----------------------------------

test('a 2025-11-25 session still works after the server restarts (now with workers)', async () => {
  sessionBeforeRestart = await openSession();
  rpcResult(await legacy(sessionBeforeRestart, 'ping', {}, { id: 1 }), 1);
  await server.stop();
  server = await startServer({ workers: true, extraEnv: ENV });
  const listed = rpcResult(await legacy(sessionBeforeRestart, 'tools/list', {}, { id: 2 }), 2);
  assert.equal(listed.tools.length, ALL_TOOLS.length);
  const me = ok(rpcResult(await legacy(sessionBeforeRestart, 'tools/call', { name: 'getAccount', arguments: {} })), 'getAccount');
  assert.equal(me.email, acc.email);
});

// --- The clients: every tool against real data ---------------------------------------

async function everyTool(kind) {
  const c = await connect(kind, acc.key);
  try {
    if (kind === 'sdk1') {
      assert.equal(c.client.getServerVersion().name, 'scribe');
      assert.match(c.transport.sessionId || '', /^[\x21-\x7e]+$/);
    } else {
      assert.equal(c.client.getProtocolEra(), kind === 'auto' ? 'modern' : 'legacy');
      assert.equal(c.client.getServerVersion()?.name, 'scribe');
    }
    const { tools } = await c.client.listTools();
    assert.deepEqual(sorted(tools.map((t) => t.name)), sorted(ALL_TOOLS));
    const used = new Set();
    const use = async (name, args, options) => { used.add(name); return tool(c, name, args, options); };
    const useFailing = async (name, args, code) => { used.add(name); return toolError(await callTool(c, name, args), code, name); };

    const me = await use('getAccount', {});
    assert.equal(me.email, acc.email);
    const balance = me.wallet_balance_usd;
    assert.equal(typeof balance, 'number');
    const pipes = await use('listPipelines', {});
    assert.equal(pipes.pipelines[0].code, 'standard');

    // A real recording: createUpload, PUT, transcribe, waitForTranscription.
    const size = statSync(wav).size;
    const ticket = await use('createUpload', { filename: `mcp-${kind}.wav`, content_type: 'audio/wav', file_size: size });
    assert.match(ticket.upload_id, /^upl_/);
    const put = await fetch(ticket.upload_url, { method: 'PUT', headers: { 'Content-Type': 'audio/wav' }, body: readFileSync(wav) });
    assert.equal(put.status, 200, await put.text());
    const ref = `mcp-${kind}-${randomUUID()}`;
    const args = { source: 'upload', upload_id: ticket.upload_id, original_filename: `mcp-${kind}.wav`,
      duration_seconds: wavSeconds, max_charge_usd: 1, client_reference: ref, idempotency_key: randomUUID() };
    const started = await use('transcribe', args);
    assert.equal(started.status, 'processing');
    assert.ok(started.retail_usd > 0 && started.retail_usd <= 1, JSON.stringify(started));
    // The same idempotency key replays the first answer: no second paid job.
    assert.equal((await tool(c, 'transcribe', args)).id, started.id);
    const id = started.id;
    used.add('waitForTranscription');
    const done = await waitDone(c, id, ['segments'], kind === 'legacy' ? undefined : () => {});
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    assert.ok(done.segments.length >= 1);
    const text = done.segments.map((s) => s.text).join(' ');
    if (!shared.id) Object.assign(shared, { id, text });

    // Reading.
    const listed = await use('listTranscriptions', { client_reference: ref, limit: 5 });
    assert.deepEqual(listed.data.map((t) => t.id), [id]);
    assert.equal((await use('getTranscription', { id })).status, 'completed');
    const result = await use('getTranscriptionResult', { id, include: ['chapters', 'segments', 'qna'], segments_limit: 50 });
    assert.deepEqual(result.segments.map((s) => s.text), done.segments.map((s) => s.text));
    const words = await use('getTranscriptionWords', { id, limit: 100 });
    assert.equal(words.id, id);
    assert.equal(typeof words.available, 'boolean');
    const srt = await use('getSubtitles', { id, format: 'srt' });
    assert.match(srt.text, /-->/);
    const vtt = await callTool(c, 'getSubtitles', { id, format: 'vtt', preset: 'podcast' });
    assert.match(vtt.content[0].text, /^WEBVTT/);
    const regen = await use('regeneratePostingChapters', { id });
    assert.equal(regen.regenerated, true);
    const stamps = await use('getTranscriptionTimestamps', { id, format: 'plain' });
    assert.equal(typeof stamps.text, 'string');
    assert.equal(typeof stamps.ok_to_paste, 'boolean');

    // search and fetch: a word the recognizer heard.
    const word = text.split(/[^A-Za-z]+/).filter((w) => w.length >= 5).sort((a, b) => b.length - a.length)[0];
    assert.ok(word, text);
    const found = await use('search', { query: word, transcription_ids: [id] });
    assert.ok(found.results.length >= 1, `search ${word}: ${JSON.stringify(found)}`);
    assert.equal(found.results[0].transcription_id, id);
    assert.match(found.results[0].id, new RegExp(`^${id}#\\d+$`));
    const doc = await use('fetch', { id: found.results[0].id });
    assert.equal(doc.metadata.transcription_id, id);
    assert.ok(doc.text.toLowerCase().includes(word.toLowerCase()), doc.text);
    assert.equal((await tool(c, 'fetch', { id: String(id) })).id, String(id));

    // Q&A (the allowance, never money).
    const asked = await use('askTranscription', { id, question: 'When does the museum open in the morning?' });
    assert.equal(typeof asked.no_answer, 'boolean');
    if (!asked.no_answer) assert.ok(asked.citations.length >= 1);
    const lib = await use('askLibrary', { question: 'What do tickets cost for children?', transcription_ids: [id] });
    assert.equal(typeof lib.no_answer, 'boolean');

    // A clip: 0.05 USD held, rendered by this server's workers, read back with wait.
    const firstWord = words.words[0];
    assert.ok(firstWord, JSON.stringify(words));
    const clipStart = Math.max(0, Math.floor(firstWord.start_ms / 1000));
    const clip = await use('renderClip', { id, start_seconds: clipStart, end_seconds: clipStart + 2, output: 'audio',
      max_charge_usd: 0.05, idempotency_key: randomUUID() });
    assert.equal(clip.status, 'queued');
    assert.equal(clip.charge_usd, 0.05);
    let rendered = await use('getClip', { id, clip_id: clip.id, wait: 45 });
    for (let i = 0; i < 3 && rendered.status === 'queued'; i++) rendered = await tool(c, 'getClip', { id, clip_id: clip.id, wait: 45 });
    assert.equal(rendered.status, 'completed', JSON.stringify(rendered));
    assert.equal(rendered.file_content_type, 'audio/mp4');
    assert.equal((await fetch(rendered.file_url)).status, 200);

    // Money: a quote, a ceiling that refuses, a failed job retried and deleted.
    const quote = await use('getQuote', { source: 'external_url', url: media.url(wav), duration_seconds: 60 });
    assert.equal(quote.status, 'quoted');
    assert.ok(quote.retail_usd > 0);
    // Rows in other states go through the clients' output-schema validation too.
    assert.equal((await tool(c, 'getTranscription', { id: quote.transcription_id })).status, 'quoted');
    const quotedWait = await tool(c, 'waitForTranscription', { id: quote.transcription_id, timeout_seconds: 5 });
    assert.equal(quotedWait.status, 'quoted');
    assert.equal(quotedWait._timed_out, false);
    await useFailing('transcribe', { source: 'external_url', url: media.url(wav), duration_seconds: 600,
      max_charge_usd: 0.01 }, 'max_charge_exceeded');
    const doomed = await tool(c, 'transcribe', { source: 'external_url', url: media.url(gone), duration_seconds: 10,
      max_charge_usd: 1 });
    const failed = await waitDone(c, doomed.id);
    assert.equal(failed.status, 'failed');
    assert.equal((await tool(c, 'getTranscription', { id: doomed.id })).error.code, 'source_unavailable');
    assert.equal((await tool(c, 'getTranscriptionResult', { id: doomed.id })).status, 'failed');
    assert.equal((await tool(c, 'getTranscriptionWords', { id: doomed.id })).available, false);
    // The whole list (completed, quoted, failed rows), one page and then the next.
    const page = await tool(c, 'listTranscriptions', { limit: 50 });
    assert.ok(['completed', 'quoted', 'failed'].every((st) => page.data.some((t) => t.status === st)),
      JSON.stringify(page.data.map((t) => t.status)));
    const first = await tool(c, 'listTranscriptions', { limit: 1 });
    assert.equal(typeof first.next_cursor, 'string');
    const second = await tool(c, 'listTranscriptions', { limit: 1, cursor: first.next_cursor });
    assert.notEqual(second.data[0].id, first.data[0].id);
    const retried = await use('retryTranscription', { id: doomed.id, max_charge_usd: 1, idempotency_key: randomUUID() });
    assert.equal(retried.status, 'processing');
    assert.equal((await waitDone(c, doomed.id)).status, 'failed');
    assert.equal((await use('deleteTranscription', { id: doomed.id })).deleted, true);

    // Errors are results.
    await useFailing('getTranscription', { id: doomed.id }, 'not_found');
    await useFailing('getTranscriptionResult', { id: 999999999 }, 'not_found');
    toolError(await callTool(c, 'getAccount', { unexpected: true }), 'invalid_request');
    toolError(await callTool(c, 'retryTranscription', { id }), 'invalid_request'); // only a failed job
    await assert.rejects(() => callTool(c, 'renderClips', {}), (err) => {
      assert.equal(err.code, -32602, String(err));
      return true;
    });

    assert.deepEqual(sorted(used), sorted(ALL_TOOLS), 'every tool was called');
    const after = await tool(c, 'getAccount', {});
    assert.ok(after.wallet_balance_usd < balance, `the transcription was charged: ${balance} -> ${after.wallet_balance_usd}`);
    return c;
  } catch (err) {
    await closeClient(c);
    throw err;
  }
}

// Legacy connections also have ping, logging/setLevel and resources/subscribe.
async function legacyExtras(c) {
  const uri = `scribe://transcriptions/${shared.id}`;
  await c.client.ping();
  await c.client.setLoggingLevel('info');
  await c.client.subscribeResource({ uri });
  await c.client.unsubscribeResource({ uri });
  const read = await c.client.readResource({ uri });
  assert.equal(read.contents[0].uri, uri);
  assert.ok(read.contents[0].text.length > 0);
  const { resources } = await c.client.listResources();
  assert.ok(resources.some((r) => r.uri === uri), JSON.stringify(resources));
}

async function readOnly(kind) {
  const ro = newKey(acc.accountId, '--permission', 'read_only');
  const c = await connect(kind, ro.key);
  try {
    const { tools } = await c.client.listTools();
    assert.deepEqual(sorted(tools.map((t) => t.name)), sorted(READ_TOOLS));
    assert.equal((await tool(c, 'getTranscription', { id: shared.id })).status, 'completed');
    assert.equal((await tool(c, 'waitForTranscription', { id: shared.id, timeout_seconds: 1 }))._timed_out, false);
    for (const [name, args] of [
      ['createUpload', { filename: 'a.wav', content_type: 'audio/wav', file_size: 100 }],
      ['transcribe', { source: 'external_url', url: media.url(wav), duration_seconds: 5, max_charge_usd: 1 }],
      ['askTranscription', { id: shared.id, question: 'When does the museum open?' }],
      ['deleteTranscription', { id: shared.id }],
      ['getQuote', { source: 'external_url', url: media.url(wav), duration_seconds: 5 }],
    ]) toolError(await callTool(c, name, args), 'scope_forbidden', name);
  } finally {
    await closeClient(c);
  }
  // Nothing was deleted.
  const still = await curl(`${server.url}/api/v1/transcriptions/${shared.id}`, { key: acc.key });
  assert.equal(still.status, 200);
}

test('@modelcontextprotocol/sdk 1.x (2025-11-25): every tool, a real transcription, sessions end with DELETE', async () => {
  const c = await everyTool('sdk1');
  try {
    await legacyExtras(c);
    const sid = c.transport.sessionId;
    await c.transport.terminateSession();
    const gone = await legacy(sid, 'tools/list');
    assert.equal(gone.status, 404, gone.text);
  } finally {
    await closeClient(c);
  }
  await readOnly('sdk1');
});

test('@modelcontextprotocol/client 2.x, default mode (legacy era): every tool, a real transcription', async () => {
  const c = await everyTool('legacy');
  try {
    await legacyExtras(c);
  } finally {
    await closeClient(c);
  }
  await readOnly('legacy');
});

test('@modelcontextprotocol/client 2.x, auto mode (modern era via server/discover): every tool, a real transcription', async () => {
  const c = await everyTool('auto');
  try {
    const uri = `scribe://transcriptions/${shared.id}`;
    const read = await c.client.readResource({ uri });
    assert.ok(read.contents[0].text.length > 0);
  } finally {
    await closeClient(c);
  }
  await readOnly('auto');
});

test('2025-11-25 session: ping, logging/setLevel and resources/subscribe work (raw)', async () => {
  const sid = await openSession();
  const uri = `scribe://transcriptions/${shared.id}`;
  assert.deepEqual(rpcResult(await legacy(sid, 'ping', {}, { id: 'p' }), 'p'), {});
  assert.deepEqual(rpcResult(await legacy(sid, 'logging/setLevel', { level: 'warning' }, { id: 'l' }), 'l'), {});
  rpcError(await legacy(sid, 'logging/setLevel', { level: 'loud' }, { id: 'bad' }), 200, -32602, 'bad');
  assert.deepEqual(rpcResult(await legacy(sid, 'resources/subscribe', { uri }, { id: 's' }), 's'), {});
  assert.deepEqual(rpcResult(await legacy(sid, 'resources/unsubscribe', { uri }, { id: 'u' }), 'u'), {});
  // The session from before the restart is still good too.
  rpcResult(await legacy(sessionBeforeRestart, 'ping', {}, { id: 'old' }), 'old');
});

// --- The limiter is the REST API's ------------------------------------------------

test('one request budget for REST and /mcp: exhausted by either, the other answers 429', async () => {
  const LIMIT = 10;
  const limited = await startServer({ args: ['--rate-limit', String(LIMIT)] });
  try {
    const rest = (key) => curl(`${limited.url}/api/v1/me`, { key });
    const mcp = (key) => modern('tools/call', { name: 'getAccount', arguments: {} }, { key, url: limited.url });

    const a = newKey(acc.accountId);
    for (let i = 0; i < LIMIT; i++) assert.equal((await rest(a.key)).status, 200);
    const refused = await mcp(a.key);
    assert.equal(refused.status, 429, refused.text);
    assert.ok(Number(refused.headers.get('retry-after')) >= 1, `Retry-After ${refused.headers.get('retry-after')}`);

    const b = newKey(acc.accountId);
    for (let i = 0; i < LIMIT; i++) assert.equal((await mcp(b.key)).status, 200);
    const rest429 = await rest(b.key);
    assert.equal(rest429.status, 429, rest429.body);
    assert.equal(rest429.json.error.code, 'rate_limited');
    assert.equal((await mcp(b.key)).status, 429);
  } finally {
    await limited.stop();
  }
});
