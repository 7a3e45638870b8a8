// Transcriptions and quotes through the real `scribe serve`: quote, create,
// idempotency, validation, money (ceilings, funds, key caps, plans, fair use,
// backlog), list and its cursor, tenant isolation, delete, retry, /result and
// /wait. Responses are also checked against the served OpenAPI document: the
// status is documented for the operation and the body matches its schema.
//
// No worker runs in this process, so a created transcription stays
// `processing`/`queued`. Link sources use loopback URLs with
// `duration_seconds` given (no probe), allowed by SCRIBE_ALLOW_PRIVATE_URLS.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { startServer, newAccount, newKey, admin, curl, envelope } from './harness.mjs';

let server, doc;
before(async () => {
  server = await startServer({ extraEnv: { SCRIBE_ALLOW_PRIVATE_URLS: '1' } });
  doc = parse((await curl(`${server.url}/api/v1/openapi.yaml`)).body);
});
after(async () => { await server?.stop(); });

const MEDIA = 'http://127.0.0.1:9/talk.mp3';
const HOOK = 'http://127.0.0.1:9/hook';
const CHARGE_60S = 0.016667; // 60 s at exactly 1 USD/hour, rounded up to the micro-dollar
const link = (extra = {}) => ({ source: 'external_url', url: MEDIA, duration_seconds: 60, ...extra });

const api = (path, opts = {}) => curl(`${server.url}/api/v1${path}`, opts);
const post = (path, key, body, headers = {}) => api(path, { method: 'POST', key, body, headers });
const create = (key, body = link(), headers = {}) => post('/transcriptions', key, body, headers);
const quote = (key, body = link(), headers = {}) => post('/quotes', key, body, headers);
const get = (path, key) => api(path, { key });
const del = (path, key) => api(path, { method: 'DELETE', key });
const me = async (key) => (await get('/me', key)).json;
const ids = (res) => res.json.data.map((t) => t.id);

async function created(key, body = link()) {
  const res = await create(key, body);
  assert.equal(res.status, 202, res.body);
  return res.json;
}

// --- conformance to the served document: required fields present, no
// undocumented field, JSON types right (a small subset of JSON Schema).
function resolve(schema) {
  while (schema?.$ref) schema = schema.$ref.slice(2).split('/').reduce((n, k) => n?.[k], doc);
  return schema;
}
const TYPES = {
  null: (v) => v === null, boolean: (v) => typeof v === 'boolean', integer: Number.isInteger,
  number: (v) => typeof v === 'number', string: (v) => typeof v === 'string', array: Array.isArray,
  object: (v) => v !== null && typeof v === 'object' && !Array.isArray(v),
};
function conform(schemaOrRef, value, path = '$', errors = []) {
  const s = resolve(schemaOrRef);
  if (s.type && ![].concat(s.type).some((t) => TYPES[t](value))) {
    errors.push(`${path}: ${JSON.stringify(value)} is not ${s.type}`);
    return errors;
  }
  if (s.enum && !s.enum.includes(value)) errors.push(`${path}: ${JSON.stringify(value)} not in ${s.enum}`);
  if (s.pattern && typeof value === 'string' && !new RegExp(s.pattern).test(value))
    errors.push(`${path}: ${value} does not match ${s.pattern}`);
  if (TYPES.object(value) && s.properties) {
    for (const r of s.required ?? []) if (!(r in value)) errors.push(`${path}: ${r} missing`);
    for (const [k, v] of Object.entries(value)) {
      if (s.properties[k]) conform(s.properties[k], v, `${path}.${k}`, errors);
      else if (!s.additionalProperties) errors.push(`${path}: ${k} is not documented`);
    }
  }
  if (Array.isArray(value) && s.items) value.forEach((v, i) => conform(s.items, v, `${path}[${i}]`, errors));
  return errors;
}
function documented(method, path, res) {
  const op = doc.paths[path][method.toLowerCase()];
  const response = resolve(op.responses[String(res.status)]);
  assert.ok(response, `${method} ${path}: ${res.status} is not documented`);
  const errors = conform(response.content['application/json'].schema, res.json);
  assert.deepEqual(errors, [], `${method} ${path} ${res.status}: ${errors.join('; ')}\n${res.body}`);
}

// ---------------------------------------------------------------------------

test('a quote prices the request, holds nothing and leaves a quoted row that /wait answers at once', async () => {
  // The balance is exactly one 60 s charge: a create after the quote must still fit.
  const acct = newAccount({ balance: CHARGE_60S });
  const before = await me(acct.key);
  const t0 = Date.now();
  const res = await quote(acct.key, link({ client_reference: 'q-1' }));
  assert.equal(res.status, 200, res.body);
  documented('POST', '/api/v1/quotes', res);
  const q = res.json;
  assert.deepEqual(Object.keys(q).sort(), ['addons', 'billed_minutes', 'duration_seconds', 'expires_at', 'retail_usd',
    'retail_usd_per_hour', 'retail_usd_per_minute', 'status', 'subscription_tier', 'transcription_id']);
  assert.ok(Number.isInteger(q.transcription_id) && q.transcription_id >= 1);
  assert.equal(q.status, 'quoted');
  assert.equal(q.duration_seconds, 60);
  assert.equal(q.billed_minutes, 1);
  assert.equal(q.retail_usd, CHARGE_60S);
  assert.equal(q.retail_usd_per_minute, 0.0167);
  assert.equal(q.retail_usd_per_hour, 1);
  assert.equal(q.subscription_tier, 'free');
  assert.deepEqual(q.addons, []);
  const expires = Date.parse(q.expires_at);
  assert.ok(Math.abs(expires - (t0 + 3600_000)) < 60_000, `expires_at ${q.expires_at} is not an hour away`);

  // Nothing held or charged.
  const after = await me(acct.key);
  assert.equal(after.wallet_balance_usd, before.wallet_balance_usd);
  assert.equal(after.api_key.month_to_date_spend_usd, 0);

  // The quoted row is visible with status quoted.
  const row = await get(`/transcriptions/${q.transcription_id}`, acct.key);
  assert.equal(row.status, 200, row.body);
  documented('GET', '/api/v1/transcriptions/{id}', row);
  assert.equal(row.json.status, 'quoted');
  assert.equal(row.json.stage, 'quoted');
  assert.equal(row.json.attempt, 0);
  assert.equal(row.json.quote_expires_at, q.expires_at);
  assert.equal(row.json.url, MEDIA);
  assert.equal(row.json.client_reference, 'q-1');
  const list = await get('/transcriptions', acct.key);
  assert.deepEqual(list.json.data.map((t) => [t.id, t.status]), [[q.transcription_id, 'quoted']]);

  // /wait on a quoted row answers at once, even with timeout=999 (clamped to 45).
  const started = Date.now();
  const wait = await get(`/transcriptions/${q.transcription_id}/wait?timeout=999`, acct.key);
  assert.equal(wait.status, 200, wait.body);
  assert.ok(Date.now() - started < 3000, `waited ${Date.now() - started} ms on a quoted row`);
  documented('GET', '/api/v1/transcriptions/{id}/wait', wait);
  assert.equal(wait.json._timed_out, false);
  assert.equal(wait.json.status, 'quoted');
  assert.deepEqual(wait.json.included, []);
  // Content is attached only to a completed transcription: asked for, it is
  // still left out of a quoted one (no empty arrays that claim "genuinely empty").
  const waitSections = await get(`/transcriptions/${q.transcription_id}/wait?include=sections,segments`, acct.key);
  assert.equal(waitSections.status, 200, waitSections.body);
  documented('GET', '/api/v1/transcriptions/{id}/wait', waitSections);
  assert.deepEqual(waitSections.json.included, []);
  assert.ok(!('sections' in waitSections.json) && !('segments' in waitSections.json), waitSections.body);
  assert.ok(!('segments_meta' in waitSections.json), waitSections.body);

  // The whole balance is still available, and create makes a new transcription.
  const t = await created(acct.key);
  assert.notEqual(t.id, q.transcription_id);
  assert.equal((await get(`/transcriptions/${q.transcription_id}`, acct.key)).json.status, 'quoted');
  // Retry refuses a quoted row.
  const retry = await post(`/transcriptions/${q.transcription_id}/retry`, acct.key);
  assert.equal(envelope(assert, retry, 400, 'invalid_request').status, 'quoted');
});

test('create answers 202 with the documented body; the callback secret only in that 202', async () => {
  const acct = newAccount();
  const plain = await create(acct.key);
  assert.equal(plain.status, 202, plain.body);
  documented('POST', '/api/v1/transcriptions', plain);
  const t = plain.json;
  assert.deepEqual(Object.keys(t).sort(), ['addons', 'billed_minutes', 'client_reference', 'duration_seconds', 'id',
    'language', 'pipeline_code', 'retail_usd', 'source', 'stage', 'status', 'url']);
  assert.equal(t.status, 'processing');
  assert.equal(t.stage, 'queued');
  assert.equal(t.pipeline_code, 'standard');
  assert.equal(t.language, 'auto');
  assert.equal(t.source, 'external_url');
  assert.equal(t.url, MEDIA);
  assert.equal(t.duration_seconds, 60);
  assert.equal(t.billed_minutes, 1);
  assert.equal(t.retail_usd, CHARGE_60S);
  assert.deepEqual(t.addons, []);
  assert.equal(t.client_reference, null);
  assert.equal(plain.headers['idempotent-replayed'], undefined);

  const withHook = await create(acct.key, link({ callback_url: HOOK, client_reference: 'ep-1', duration_seconds: 90.2 }));
  assert.equal(withHook.status, 202, withHook.body);
  documented('POST', '/api/v1/transcriptions', withHook);
  const { callback } = withHook.json;
  assert.deepEqual(Object.keys(callback).sort(), ['secret', 'url']);
  assert.equal(callback.url, HOOK);
  assert.match(callback.secret, /^whsec_[0-9a-f]{64}$/);
  assert.equal(withHook.json.client_reference, 'ep-1');
  // 90.2 s bill 91 s: billed_minutes 1.52, 91/3600 USD rounded up to the micro-dollar.
  assert.equal(withHook.json.billed_minutes, 1.52);
  assert.equal(withHook.json.retail_usd, 0.025278);

  // GET: processing/queued, callback_url echoed, the secret never.
  const got = await get(`/transcriptions/${withHook.json.id}`, acct.key);
  assert.equal(got.status, 200, got.body);
  documented('GET', '/api/v1/transcriptions/{id}', got);
  assert.equal(got.json.status, 'processing');
  assert.equal(got.json.stage, 'queued');
  assert.equal(got.json.attempt, 1);
  assert.equal(got.json.callback_url, HOOK);
  assert.equal(got.json.charge_usd, 0.025278);
  assert.equal(got.json.retail_usd, 0.025278);
  assert.equal(got.json.billed_minutes, 1.52);
  assert.equal(got.json.error, null);
  assert.equal(got.json.quote_expires_at, undefined);
  assert.ok(!('callback' in got.json));
  const plainGot = await get(`/transcriptions/${t.id}`, acct.key);
  assert.ok(!('callback_url' in plainGot.json), 'callback_url only when one was sent');
  assert.ok(!('upload_id' in plainGot.json) && !('original_filename' in plainGot.json));

  // An upload: upload_id (normalized) instead of url; the file name is the title.
  // A finished tus upload of one second of audio (uploads.test.mjs covers
  // the protocol); the server measures it, so it must be real media.
  const tone = join(mkdtempSync(join(tmpdir(), 'scribe-tone-')), 'tone.wav');
  execFileSync('sox', ['-n', '-r', '16000', '-c', '1', '-b', '16', tone, 'synth', '1', 'sine', '440']);
  const toneSize = String(statSync(tone).size);
  const ticket = (await post('/uploads/tus', acct.key, { filename: 'talk.mp3', file_size: Number(toneSize) })).json;
  const tus = { 'Tus-Resumable': '1.0.0' };
  const loc = (await curl(ticket.upload_endpoint, { method: 'POST', headers: { ...tus, 'Upload-Length': toneSize,
    'Upload-Metadata': `upload_token ${Buffer.from(ticket.upload_token).toString('base64')}` } })).headers.location;
  const patched = await curl(loc, { method: 'PATCH', rawArgs: ['--data-binary', `@${tone}`],
    headers: { ...tus, 'Content-Type': 'application/offset+octet-stream', 'Upload-Offset': '0' } });
  assert.equal(patched.status, 204, patched.body);
  const tusId = `tus/${loc.split('/').pop().split('+')[0]}`;
  const up = await create(acct.key, { source: 'upload', upload_id: `tus/${loc.split('/').pop()}`, original_filename: 'talk.mp3',
    duration_seconds: 30 });
  assert.equal(up.status, 202, up.body);
  documented('POST', '/api/v1/transcriptions', up);
  assert.equal(up.json.upload_id, tusId);
  assert.ok(!('url' in up.json));
  const upGot = await get(`/transcriptions/${up.json.id}`, acct.key);
  documented('GET', '/api/v1/transcriptions/{id}', upGot);
  assert.equal(upGot.json.source, 'upload');
  assert.equal(upGot.json.upload_id, tusId);
  assert.equal(upGot.json.original_filename, 'talk.mp3');
  assert.equal(upGot.json.title, 'talk.mp3');
  assert.ok(!('url' in upGot.json));
  for (const path of [`/transcriptions/${withHook.json.id}`, '/transcriptions',
    `/transcriptions/${withHook.json.id}/result?include=all`, `/transcriptions/${withHook.json.id}/wait?timeout=1`]) {
    const res = await get(path, acct.key);
    assert.equal(res.status, 200, res.body);
    assert.ok(!res.body.includes(callback.secret), `${path} leaks the callback secret`);
    assert.ok(!res.body.includes('whsec_'), `${path} leaks a callback secret`);
  }
});

test('an idempotent replay returns the identical body; the same key with another body or path is 400', async () => {
  const acct = newAccount();
  const key = `idem-${Date.now()}`;
  const body = link({ callback_url: HOOK, client_reference: 'idem' });
  const first = await create(acct.key, body, { 'Idempotency-Key': key });
  assert.equal(first.status, 202, first.body);
  const replay = await create(acct.key, body, { 'Idempotency-Key': key });
  assert.equal(replay.status, 202, replay.body);
  assert.equal(replay.body, first.body);
  assert.equal(replay.json.id, first.json.id);
  assert.equal(replay.json.callback.secret, first.json.callback.secret);
  assert.equal(replay.headers['idempotent-replayed'], 'true');
  assert.notEqual(replay.headers['x-request-id'], first.headers['x-request-id']);

  // The same JSON reformatted (whitespace, key order) is the same request: a replay.
  const reordered = Object.fromEntries(Object.entries(body).reverse());
  const reformatted = await create(acct.key, JSON.stringify(reordered, null, 2) + '\n', { 'Idempotency-Key': key });
  assert.equal(reformatted.status, 202, reformatted.body);
  assert.equal(reformatted.body, first.body);
  assert.equal(reformatted.headers['idempotent-replayed'], 'true');

  // One transcription, one hold.
  assert.deepEqual(ids(await get('/transcriptions', acct.key)), [first.json.id]);
  assert.equal((await me(acct.key)).api_key.month_to_date_spend_usd, CHARGE_60S);

  const other = await create(acct.key, link({ duration_seconds: 61 }), { 'Idempotency-Key': key });
  assert.equal(envelope(assert, other, 400, 'invalid_request').field, 'Idempotency-Key');
  const otherPath = await quote(acct.key, body, { 'Idempotency-Key': key });
  assert.equal(envelope(assert, otherPath, 400, 'invalid_request').field, 'Idempotency-Key');
  envelope(assert, await create(acct.key, body, { 'Idempotency-Key': 'k'.repeat(129) }), 400, 'invalid_request');

  // A 4xx is kept too: the replay of a refused create is the same refusal.
  const badKey = `${key}-bad`;
  const bad = await create(acct.key, link({ language: 'xx' }), { 'Idempotency-Key': badKey });
  envelope(assert, bad, 400, 'unsupported_language');
  const badReplay = await create(acct.key, link({ language: 'xx' }), { 'Idempotency-Key': badKey });
  assert.equal(badReplay.body, bad.body);
  assert.equal(badReplay.headers['idempotent-replayed'], 'true');

  // Quotes accept a key as well.
  const q1 = await quote(acct.key, link(), { 'Idempotency-Key': `${key}-quote` });
  const q2 = await quote(acct.key, link(), { 'Idempotency-Key': `${key}-quote` });
  assert.equal(q1.status, 200, q1.body);
  assert.equal(q2.body, q1.body);
});

test('validation errors answer 400 with the right code and error.field, on create and on quote', async () => {
  const acct = newAccount();
  const quoter = newAccount();
  const cases = [
    [{}, 'invalid_request', 'source'],
    [{ source: 'youtube', url: MEDIA }, 'invalid_request', 'source'],
    [{ source: 7, url: MEDIA }, 'invalid_request', 'source'],
    [{ source: 'external_url', duration_seconds: 60 }, 'invalid_request', 'url'],
    [{ source: 'upload', duration_seconds: 60 }, 'invalid_request', 'upload_id'],
    [{ source: 'upload', upload_id: 'not-an-upload', duration_seconds: 60 }, 'invalid_request', 'upload_id'],
    [{ source: 'upload', upload_id: 'upl_abc123' }, 'invalid_request', 'duration_seconds'],
    [link({ duration_seconds: -5 }), 'invalid_request', 'duration_seconds'],
    [link({ duration_seconds: 0 }), 'invalid_request', 'duration_seconds'],
    [link({ duration_seconds: '60' }), 'invalid_request', 'duration_seconds'],
    [link({ language: 'xx' }), 'unsupported_language', 'language'],
    [link({ language: 5 }), 'invalid_request', 'language'],
    [link({ pipeline_code: 'turbo' }), 'unsupported_pipeline', 'pipeline_code'],
    [link({ addons: ['diarization'] }), 'addon_not_supported', 'addons'],
    [link({ addons: Array.from({ length: 9 }, (_, i) => `a${i}`) }), 'invalid_request', 'addons'],
    [link({ addons: 'diarization' }), 'invalid_request', 'addons'],
    [link({ client_reference: 'r'.repeat(201) }), 'invalid_request', 'client_reference'],
    [link({ client_reference: '' }), 'invalid_request', 'client_reference'],
    [link({ client_reference: 'line\nbreak' }), 'invalid_request', 'client_reference'],
    [link({ client_reference: 'bell\u0007' }), 'invalid_request', 'client_reference'],
    [link({ client_reference: 'c1\u0080' }), 'invalid_request', 'client_reference'],
    [link({ client_reference: '\u009fc1' }), 'invalid_request', 'client_reference'],
    [link({ client_reference: 'nel\u0085' }), 'invalid_request', 'client_reference'],
    [link({ callback_url: 'ftp://127.0.0.1/hook' }), 'invalid_request', 'callback_url'],
    [link({ callback_url: 'not a url' }), 'invalid_request', 'callback_url'],
    [link({ url: 'file:///etc/passwd' }), 'invalid_request', 'url'],
    [link({ max_charge_usd: -0.01 }), 'invalid_request', 'max_charge_usd'],
    [link({ max_charge_usd: '1' }), 'invalid_request', 'max_charge_usd'],
    ['{"source": "external_url",', 'invalid_request', 'body'],
    // A repeated key is refused, not resolved last-wins; nested keys by path.
    [`{"source":"external_url","url":"${MEDIA}","duration_seconds":60,"max_charge_usd":0,"max_charge_usd":100}`,
      'invalid_request', 'max_charge_usd'],
    [`{"source":"external_url","url":"${MEDIA}","duration_seconds":60,"x":{"a":[{"b":1,"b":2}]}}`,
      'invalid_request', 'x.a[0].b'],
    ['[1, 2]', 'invalid_request', 'body'],
    ['', 'invalid_request', 'body'],
  ];
  // Independent requests: sent at once (well under the 60 per minute of each key).
  const runs = cases.flatMap(([body, code, field]) => [['create', create, acct], ['quote', quote, quoter]]
    .map(([label, send, who]) => send(who.key, body).then((res) => ({ label, body, code, field, res }))));
  for (const { label, body, code, field, res } of await Promise.all(runs)) {
    const e = envelope(assert, res, 400, code);
    assert.equal(e.field, field, `${label} ${JSON.stringify(body)}: ${res.body}`);
    documented('POST', label === 'create' ? '/api/v1/transcriptions' : '/api/v1/quotes', res);
  }
  // Numbers in messages as people write them.
  const range = envelope(assert, await create(acct.key, link({ duration_seconds: -5 })), 400, 'invalid_request');
  assert.equal(range.message, 'duration_seconds must be between 0.001 and 10000000');
  // A file over the pay-as-you-go cap of 90 minutes.
  for (const send of [create, quote]) {
    const e = envelope(assert, await send(acct.key, link({ duration_seconds: 90 * 60 + 1 })), 400, 'invalid_request');
    assert.equal(e.field, 'duration_seconds');
    assert.equal(e.max_file_minutes, 90);
    assert.match(e.message, /90 minutes/);
  }
  // Nothing was created, quoted or held by any of it.
  assert.deepEqual((await get('/transcriptions', acct.key)).json.data, []);
  assert.deepEqual((await get('/transcriptions', quoter.key)).json.data, []);
  assert.equal((await me(acct.key)).api_key.month_to_date_spend_usd, 0);
});

test('legacy pipeline codes map to standard; a supported language is kept; 90 minutes exactly is accepted', async () => {
  const acct = newAccount();
  const codes = ['standard', 'default', 'standard_v1', 'standard_v2', 'fast', 'basic'];
  const quotes = await Promise.all(codes.map((code) => quote(acct.key, link({ pipeline_code: code }))));
  quotes.forEach((q, i) => assert.equal(q.status, 200, `${codes[i]}: ${q.body}`));
  const t = await created(acct.key, link({ pipeline_code: 'standard_v1', language: 'en', duration_seconds: 30 }));
  assert.equal(t.pipeline_code, 'standard');
  assert.equal(t.language, 'en');
  const got = (await get(`/transcriptions/${t.id}`, acct.key)).json;
  assert.equal(got.pipeline_code, 'standard');
  assert.equal(got.language, 'en');
  const q = await quote(acct.key, link({ duration_seconds: 90 * 60 }));
  assert.equal(q.status, 200, q.body);
  assert.equal(q.json.retail_usd, 1.5);
  assert.equal(q.json.billed_minutes, 90);
});

test('max_charge_usd below the charge is 402 max_charge_exceeded with nothing created or held', async () => {
  const acct = newAccount({ balance: CHARGE_60S });
  const e = envelope(assert, await create(acct.key, link({ max_charge_usd: 0.016666 })), 402, 'max_charge_exceeded');
  assert.equal(e.charge_usd, CHARGE_60S);
  assert.equal(e.max_charge_usd, 0.016666);
  assert.deepEqual((await get('/transcriptions', acct.key)).json.data, []);
  // The whole balance is still available: a create that needs all of it fits,
  // and a ceiling equal to the charge passes.
  const t = await created(acct.key, link({ max_charge_usd: CHARGE_60S }));
  assert.equal(t.retail_usd, CHARGE_60S);
  // Now the balance is held: the next one is refused.
  const broke = envelope(assert, await create(acct.key), 402, 'insufficient_funds');
  assert.equal(broke.charge_usd, CHARGE_60S);
  assert.equal(broke.available_usd, 0);
  // A hold does not change the balance; it counts toward the key's month to date.
  const m = await me(acct.key);
  assert.equal(m.wallet_balance_usd, CHARGE_60S);
  assert.equal(m.api_key.month_to_date_spend_usd, CHARGE_60S);
});

test('insufficient_funds when the wallet cannot cover the charge', async () => {
  const acct = newAccount({ balance: 0.01 });
  const res = await create(acct.key);
  const e = envelope(assert, res, 402, 'insufficient_funds');
  documented('POST', '/api/v1/transcriptions', res);
  assert.equal(e.charge_usd, CHARGE_60S);
  assert.equal(e.available_usd, 0.01);
  assert.match(e.message, /: 0\.016667 USD needed, 0\.01 USD available;/);
  assert.deepEqual((await get('/transcriptions', acct.key)).json.data, []);
  // 30 s (0.008334 USD) fits.
  assert.equal((await created(acct.key, link({ duration_seconds: 30 }))).retail_usd, 0.008334);
  const empty = newAccount({ balance: 0 });
  envelope(assert, await create(empty.key), 402, 'insufficient_funds');
});

test('concurrent creates cannot spend the same balance twice', async () => {
  const acct = newAccount({ balance: CHARGE_60S });
  const all = await Promise.all(Array.from({ length: 6 }, () => create(acct.key)));
  const accepted = all.filter((r) => r.status === 202);
  assert.equal(accepted.length, 1, all.map((r) => r.status).join(','));
  for (const r of all.filter((x) => x.status !== 202)) envelope(assert, r, 402, 'insufficient_funds');
  assert.deepEqual(ids(await get('/transcriptions', acct.key)), [accepted[0].json.id]);
});

test('concurrent requests with one Idempotency-Key create one transcription (replay or 409 not_ready)', async () => {
  const acct = newAccount();
  const headers = { 'Idempotency-Key': `race-${Date.now()}` };
  const all = await Promise.all(Array.from({ length: 5 }, () => create(acct.key, link(), headers)));
  const made = await get('/transcriptions', acct.key);
  assert.equal(made.json.data.length, 1, made.body);
  for (const r of all) {
    if (r.status === 202) {
      assert.equal(r.json.id, made.json.data[0].id);
    } else {
      const e = envelope(assert, r, 409, 'not_ready');
      assert.ok(Number.isInteger(e.in_flight_seconds));
      documented('POST', '/api/v1/transcriptions', r);
    }
  }
  assert.equal((await me(acct.key)).api_key.month_to_date_spend_usd, CHARGE_60S);
});

test('a capped key gets spend_cap_exceeded once settled plus held plus the charge would pass its cap', async () => {
  const acct = newAccount({ balance: 10, cap: 0.04 });
  const first = await created(acct.key);
  await created(acct.key);
  assert.equal((await me(acct.key)).api_key.month_to_date_spend_usd, 0.033334);
  const res = await create(acct.key);
  const e = envelope(assert, res, 402, 'spend_cap_exceeded');
  documented('POST', '/api/v1/transcriptions', res);
  assert.equal(e.charge_usd, CHARGE_60S);
  assert.equal(e.monthly_cap_usd, 0.04);
  assert.equal(e.month_to_date_spend_usd, 0.033334);
  // What still fits under the cap is accepted: 20 s cost 0.005556 (0.03889 in all).
  assert.equal((await created(acct.key, link({ duration_seconds: 20 }))).retail_usd, 0.005556);
  // The cap is the key's: another key of the account is not limited by it.
  const other = newKey(acct.accountId);
  await created(other.key);
  // Deleting an active transcription releases its hold from the month to date.
  assert.equal((await del(`/transcriptions/${first.id}`, acct.key)).status, 200);
  assert.equal((await me(acct.key)).api_key.month_to_date_spend_usd, 0.022223);
  await created(acct.key);
});

test('on a subscription plan the API is included: retail_usd 0, no hold, wallet untouched', async () => {
  const acct = newAccount({ balance: 0 });
  admin('plan', 'set', '--account', acct.accountId, '--plan', 'pro');
  const q = await quote(acct.key);
  assert.equal(q.status, 200, q.body);
  assert.equal(q.json.subscription_tier, 'pro');
  assert.equal(q.json.retail_usd, 0);
  assert.equal(q.json.retail_usd_per_minute, 0.0167);
  const res = await create(acct.key, link({ max_charge_usd: 0 }));
  assert.equal(res.status, 202, res.body);
  assert.equal(res.json.retail_usd, 0);
  assert.equal(res.json.billed_minutes, 1);
  const got = (await get(`/transcriptions/${res.json.id}`, acct.key)).json;
  assert.equal(got.retail_usd, 0);
  assert.equal(got.charge_usd, 0);
  // 4 hours: over the pay-as-you-go cap and fair-use wall, within pro's 300 minutes.
  assert.equal((await create(acct.key, link({ duration_seconds: 4 * 3600 }))).status, 202);
  const e = envelope(assert, await create(acct.key, link({ duration_seconds: 300 * 60 + 1 })), 400, 'invalid_request');
  assert.equal(e.max_file_minutes, 300);
  const m = await me(acct.key);
  assert.equal(m.wallet_balance_usd, 0);
  assert.equal(m.api_key.month_to_date_spend_usd, 0);
});

test('queue_full at the plan backlog limit (starter: 10 queued jobs)', async () => {
  const acct = newAccount({ balance: 0 });
  admin('plan', 'set', '--account', acct.accountId, '--plan', 'starter');
  const made = [];
  for (let i = 0; i < 10; i++) made.push((await created(acct.key, link({ duration_seconds: 5 }))).id);
  const res = await create(acct.key, link({ duration_seconds: 5 }));
  const e = envelope(assert, res, 429, 'queue_full');
  documented('POST', '/api/v1/transcriptions', res);
  assert.equal(e.queued, 10);
  assert.equal(e.max_queued, 10);
  assert.equal(e.retry_after, 60);
  assert.equal(res.headers['retry-after'], '60');
  assert.equal(ids(await get('/transcriptions', acct.key)).length, 10);
  // Deleting a queued job frees a place.
  assert.equal((await del(`/transcriptions/${made[0]}`, acct.key)).status, 200);
  assert.equal((await create(acct.key, link({ duration_seconds: 5 }))).status, 202);
});

test('pay-as-you-go fair use: 60 minutes of audio per rolling 6 h, then 429 rate_limited with retry_after', async () => {
  const acct = newAccount({ balance: 5 });
  const hour = await created(acct.key, link({ duration_seconds: 3600 }));
  assert.equal(hour.retail_usd, 1);
  const res = await create(acct.key, link({ duration_seconds: 1 }));
  const e = envelope(assert, res, 429, 'rate_limited');
  documented('POST', '/api/v1/transcriptions', res);
  assert.match(e.message, /fair use/);
  assert.ok(Number.isInteger(e.retry_after) && e.retry_after > 6 * 3600 - 120 && e.retry_after <= 6 * 3600,
    `retry_after ${e.retry_after}`);
  assert.equal(res.headers['retry-after'], String(e.retry_after));
  // Quotes are not counted; deleting does not give the minutes back.
  assert.equal((await quote(acct.key, link({ duration_seconds: 1 }))).status, 200);
  assert.equal((await del(`/transcriptions/${hour.id}`, acct.key)).status, 200);
  envelope(assert, await create(acct.key, link({ duration_seconds: 1 })), 429, 'rate_limited');
});

test('list: newest first, limit bounds, cursor pagination, client_reference filter', async () => {
  const acct = newAccount();
  const made = [];
  for (let i = 0; i < 4; i++) made.push((await created(acct.key, link({ client_reference: i < 2 ? 'batch-a' : 'batch-b' }))).id);
  made.push((await quote(acct.key, link({ client_reference: 'batch-b' }))).json.transcription_id);
  const newestFirst = [...made].reverse();

  const all = await get('/transcriptions', acct.key);
  assert.equal(all.status, 200, all.body);
  documented('GET', '/api/v1/transcriptions', all);
  assert.deepEqual(ids(all), newestFirst);
  assert.equal(all.json.next_cursor, null);
  assert.equal((await get('/transcriptions?limit=5', acct.key)).json.next_cursor, null, 'an exact fit has no next page');
  assert.equal((await get('/transcriptions?limit=200', acct.key)).status, 200);

  const badLimits = ['0', '201', '-1', 'abc', '2.5'];
  for (const res of await Promise.all(badLimits.map((bad) => get(`/transcriptions?limit=${bad}`, acct.key))))
    assert.equal(envelope(assert, res, 400, 'invalid_request').field, 'limit', res.body);

  // Pages of 2: 2 + 2 + 1, no duplicates, next_cursor null at the end. A
  // transcription created while paging appears on no later page.
  const seen = [];
  let cursor = null;
  let pages = 0;
  do {
    const res = await get(`/transcriptions?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, acct.key);
    assert.equal(res.status, 200, res.body);
    documented('GET', '/api/v1/transcriptions', res);
    seen.push(...ids(res));
    cursor = res.json.next_cursor;
    if (pages++ === 0) {
      assert.equal(typeof cursor, 'string');
      await created(acct.key, link({ duration_seconds: 5 }));
    }
  } while (cursor !== null && pages < 10);
  assert.equal(pages, 3);
  assert.deepEqual(seen, newestFirst);

  const badCursors = ['garbage', 'c', 'czz', `c${'1'.repeat(17)}`, 'x'.repeat(65)];
  for (const res of await Promise.all(badCursors.map((bad) => get(`/transcriptions?cursor=${bad}`, acct.key))))
    assert.equal(envelope(assert, res, 400, 'invalid_request').field, 'cursor', res.body);

  assert.deepEqual(ids(await get('/transcriptions?client_reference=batch-a', acct.key)), [made[1], made[0]]);
  assert.deepEqual(ids(await get('/transcriptions?client_reference=batch-b', acct.key)), [made[4], made[3], made[2]]);
  assert.deepEqual(ids(await get('/transcriptions?client_reference=batch', acct.key)), []);
  assert.deepEqual(ids(await get('/transcriptions?client_reference=BATCH-A', acct.key)), []);
  assert.equal(ids(await get('/transcriptions?api_only=true', acct.key)).length, 6);
  envelope(assert, await get('/transcriptions?api_only=maybe', acct.key), 400, 'invalid_request');
});

test('tenant isolation: another account cannot see or touch a transcription', async () => {
  const owner = newAccount();
  const stranger = newAccount();
  const t = await created(owner.key);
  await created(stranger.key);
  const calls = [
    ['GET', `/transcriptions/${t.id}`],
    ['DELETE', `/transcriptions/${t.id}`],
    ['POST', `/transcriptions/${t.id}/retry`],
    ['GET', `/transcriptions/${t.id}/result`],
    ['GET', `/transcriptions/${t.id}/wait?timeout=1`],
  ];
  const answers = await Promise.all(calls.map(([method, path]) => api(path, { method, key: stranger.key })));
  answers.forEach((res, i) => {
    const [method, path] = calls[i];
    envelope(assert, res, 404, 'not_found');
    documented(method, `/api/v1${path.split('?')[0].replace(String(t.id), '{id}')}`, res);
  });
  assert.ok(!ids(await get('/transcriptions', stranger.key)).includes(t.id));
  assert.equal((await get(`/transcriptions/${t.id}`, owner.key)).json.status, 'processing');
  // Ids that do not exist or are not ids.
  for (const res of await Promise.all(['999999999999', '0', 'abc', '-1', '1.5'].map((id) => get(`/transcriptions/${id}`, owner.key))))
    envelope(assert, res, 404, 'not_found');
});

test('DELETE removes the transcription and releases its hold', async () => {
  const acct = newAccount({ balance: CHARGE_60S });
  const t = await created(acct.key);
  envelope(assert, await create(acct.key), 402, 'insufficient_funds');
  const res = await del(`/transcriptions/${t.id}`, acct.key);
  assert.equal(res.status, 200, res.body);
  documented('DELETE', '/api/v1/transcriptions/{id}', res);
  assert.deepEqual(res.json, { id: t.id, deleted: true });
  envelope(assert, await get(`/transcriptions/${t.id}`, acct.key), 404, 'not_found');
  envelope(assert, await del(`/transcriptions/${t.id}`, acct.key), 404, 'not_found');
  envelope(assert, await get(`/transcriptions/${t.id}/result`, acct.key), 404, 'not_found');
  envelope(assert, await get(`/transcriptions/${t.id}/wait?timeout=1`, acct.key), 404, 'not_found');
  envelope(assert, await post(`/transcriptions/${t.id}/retry`, acct.key), 404, 'not_found');
  assert.deepEqual((await get('/transcriptions', acct.key)).json.data, []);
  // The hold is released (nothing charged): a create needing the full balance fits.
  const m = await me(acct.key);
  assert.equal(m.wallet_balance_usd, CHARGE_60S);
  assert.equal(m.api_key.month_to_date_spend_usd, 0);
  await created(acct.key);
  // A quoted row can be deleted too.
  const q = (await quote(acct.key)).json;
  assert.equal((await del(`/transcriptions/${q.transcription_id}`, acct.key)).status, 200);
  envelope(assert, await get(`/transcriptions/${q.transcription_id}`, acct.key), 404, 'not_found');
});

test('retry is only for failed transcriptions', async () => {
  const acct = newAccount();
  const t = await created(acct.key);
  const res = await post(`/transcriptions/${t.id}/retry`, acct.key);
  const e = envelope(assert, res, 400, 'invalid_request');
  documented('POST', '/api/v1/transcriptions/{id}/retry', res);
  assert.equal(e.status, 'processing');
  assert.equal(envelope(assert, await post(`/transcriptions/${t.id}/retry`, acct.key, '{'), 400, 'invalid_request').field, 'body');
  assert.equal(envelope(assert, await post(`/transcriptions/${t.id}/retry`, acct.key, { max_charge_usd: -1 }), 400,
    'invalid_request').field, 'max_charge_usd');
  envelope(assert, await post('/transcriptions/999999999999/retry', acct.key), 404, 'not_found');
  // Nothing more was held.
  assert.equal((await me(acct.key)).api_key.month_to_date_spend_usd, CHARGE_60S);
});

test('result: include and paging parameters are validated; include=all returns every array', async () => {
  const acct = newAccount();
  const t = await created(acct.key, link({ client_reference: 'res' }));
  const base = `/transcriptions/${t.id}/result`;
  const bad = [
    ['include=bogus', 'include'], ['include=chapters,bogus', 'include'], ['include=CHAPTERS', 'include'],
    ['segments_limit=0', 'segments_limit'], ['segments_limit=1001', 'segments_limit'],
    ['segments_limit=ten', 'segments_limit'], ['segments_offset=-1', 'segments_offset'],
    ['qna_source=user', 'qna_source'], ['include=all&include=all', 'include'],
  ];
  const answers = await Promise.all(bad.map(([query]) => get(`${base}?${query}`, acct.key)));
  answers.forEach((res, i) => {
    const [query, field] = bad[i];
    assert.equal(envelope(assert, res, 400, 'invalid_request').field, field, `${query}: ${res.body}`);
    documented('GET', '/api/v1/transcriptions/{id}/result', res);
  });
  assert.match(envelope(assert, await get(`${base}?include=bogus`, acct.key), 400, 'invalid_request').message, /bogus/);

  const plain = await get(base, acct.key);
  assert.equal(plain.status, 200, plain.body);
  documented('GET', '/api/v1/transcriptions/{id}/result', plain);
  assert.deepEqual(plain.json.included, ['chapters', 'qna', 'sections']);
  assert.deepEqual([plain.json.chapters, plain.json.sections, plain.json.qna], [[], [], []]);
  assert.ok(!('segments' in plain.json) && !('segments_meta' in plain.json) && !('acts' in plain.json));
  assert.equal(plain.json.id, t.id);
  assert.equal(plain.json.status, 'processing');
  assert.equal(plain.json.client_reference, 'res');

  const all = await get(`${base}?include=all`, acct.key);
  assert.equal(all.status, 200, all.body);
  documented('GET', '/api/v1/transcriptions/{id}/result', all);
  assert.deepEqual(all.json.included, ['acts', 'chapters', 'posting_chapters', 'qna', 'sections', 'segments']);
  for (const name of ['acts', 'chapters', 'qna', 'sections', 'segments']) assert.deepEqual(all.json[name], [], name);
  assert.deepEqual(all.json.posting_chapters, {});
  assert.deepEqual(all.json.segments_meta, { offset: 0, limit: 1000, total: 0, has_more: false });

  const paged = await get(`${base}?include=segments&segments_offset=5&segments_limit=10&qna_source=system`, acct.key);
  assert.equal(paged.status, 200, paged.body);
  assert.deepEqual(paged.json.included, ['segments']);
  assert.deepEqual(paged.json.segments_meta, { offset: 5, limit: 10, total: 0, has_more: false });
  // include present but naming nothing is 400 (it used to answer included: []).
  for (const query of ['include=', 'include=,', 'include=%20']) {
    const none = await get(`${base}?${query}`, acct.key);
    const e = envelope(assert, none, 400, 'invalid_request');
    assert.equal(e.field, 'include', query);
    assert.match(e.message, /include must name at least one of/);
    documented('GET', '/api/v1/transcriptions/{id}/result', none);
  }
});

test('wait: timeout=1 answers _timed_out true; bad timeout is 400; a delete wakes a waiter with 404', async () => {
  const acct = newAccount();
  const t = await created(acct.key);
  let started = Date.now();
  const res = await get(`/transcriptions/${t.id}/wait?timeout=1`, acct.key);
  const took = Date.now() - started;
  assert.equal(res.status, 200, res.body);
  documented('GET', '/api/v1/transcriptions/{id}/wait', res);
  assert.ok(took >= 900 && took < 3000, `timeout=1 took ${took} ms`);
  assert.equal(res.json._timed_out, true);
  assert.equal(res.json.status, 'processing');
  assert.deepEqual(res.json.included, [], 'without include the body is the metadata only');
  assert.ok(!('chapters' in res.json));

  // 0 is clamped to 1 s; include works as for /result.
  started = Date.now();
  const zero = await get(`/transcriptions/${t.id}/wait?timeout=0&include=all`, acct.key);
  assert.equal(zero.status, 200, zero.body);
  assert.ok(Date.now() - started < 3000);
  assert.equal(zero.json._timed_out, true);
  // Still processing: /wait attaches no content, whatever include asks for.
  assert.deepEqual(zero.json.included, []);
  assert.ok(!('segments_meta' in zero.json) && !('chapters' in zero.json), zero.body);

  const bad = [['timeout=abc', 'timeout'], ['timeout=1.5', 'timeout'], ['timeout=', 'timeout'],
    ['timeout=1&include=bogus', 'include'], ['timeout=1&segments_limit=0', 'segments_limit'],
    ['timeout=1&include=', 'include'], ['timeout=1&include=,', 'include']];
  const answers = await Promise.all(bad.map(([query]) => get(`/transcriptions/${t.id}/wait?${query}`, acct.key)));
  answers.forEach((res, i) => {
    assert.equal(envelope(assert, res, 400, 'invalid_request').field, bad[i][1], bad[i][0]);
    documented('GET', '/api/v1/transcriptions/{id}/wait', res);
  });

  // A waiter is answered 404 as soon as the transcription is deleted.
  started = Date.now();
  const pending = get(`/transcriptions/${t.id}/wait?timeout=20`, acct.key);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal((await del(`/transcriptions/${t.id}`, acct.key)).status, 200);
  envelope(assert, await pending, 404, 'not_found');
  assert.ok(Date.now() - started < 5000, `the waiter was not woken by the delete (${Date.now() - started} ms)`);
});

test('a read-only key gets 403 scope_forbidden on POST and DELETE, and can still read', async () => {
  const acct = newAccount();
  const t = await created(acct.key);
  const ro = newKey(acct.accountId, '--permission', 'read_only');
  for (const [method, path, body] of [
    ['POST', '/transcriptions', link()],
    ['POST', '/quotes', link()],
    ['DELETE', `/transcriptions/${t.id}`],
    ['POST', `/transcriptions/${t.id}/retry`, {}],
  ]) {
    const res = await api(path, { method, key: ro.key, body });
    envelope(assert, res, 403, 'scope_forbidden');
    documented(method, `/api/v1${path.replace(String(t.id), '{id}')}`, res);
  }
  assert.deepEqual(ids(await get('/transcriptions', ro.key)), [t.id]);
  assert.equal((await get(`/transcriptions/${t.id}`, ro.key)).json.status, 'processing');
  assert.equal((await get(`/transcriptions/${t.id}/result`, ro.key)).status, 200);
});

// The spec's lengths count characters; strings PostgreSQL cannot store (U+0000,
// invalid UTF-8) must be refused as 400 naming the field, never fail as 500.
test('client_reference limits count characters, not bytes (spec: 1-200 chars)', async () => {
  const acct = newAccount();
  const ref = 'é'.repeat(150); // 150 characters, 300 bytes of UTF-8
  const res = await create(acct.key, link({ client_reference: ref }));
  assert.equal(res.status, 202, res.body);
  assert.equal(res.json.client_reference, ref);
  const found = await get(`/transcriptions?client_reference=${encodeURIComponent(ref)}`, acct.key);
  assert.equal(found.status, 200, found.body);
  assert.deepEqual(ids(found), [res.json.id]);
});

test('NUL characters in body strings are 400 naming the field, not 500', async () => {
  const acct = newAccount();
  for (const [body, field] of [
    [{ source: 'upload', upload_id: 'upl_abc123', original_filename: 'talk\u0000.mp3', duration_seconds: 30 }, 'original_filename'],
    [link({ url: 'http://127.0.0.1:9/talk\u0000.mp3' }), 'url'],
    [link({ callback_url: 'http://127.0.0.1:9/hook\u0000' }), 'callback_url'],
  ]) {
    for (const send of [quote, create]) {
      const res = await send(acct.key, body);
      assert.equal(envelope(assert, res, 400, 'invalid_request').field, field, res.body);
    }
  }
});

test('invalid UTF-8 in a query parameter or in the Idempotency-Key is 400, not 500', async () => {
  const acct = newAccount();
  const list = await get('/transcriptions?client_reference=%FF', acct.key);
  assert.equal(envelope(assert, list, 400, 'invalid_request').field, 'client_reference', list.body);
  // curl sends the header line from a file byte for byte.
  const file = join(mkdtempSync(join(tmpdir(), 'scribe-hdr-')), 'h');
  writeFileSync(file, Buffer.concat([Buffer.from('Idempotency-Key: k-'), Buffer.from([0xff, 0xfe]), Buffer.from('\r\n')]));
  const res = await api('/transcriptions', { method: 'POST', key: acct.key, body: link(), rawArgs: ['-H', `@${file}`] });
  assert.equal(envelope(assert, res, 400, 'invalid_request').field, 'Idempotency-Key', res.body);
});
