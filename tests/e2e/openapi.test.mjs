// The OpenAPI document served at GET /api/v1/openapi.yaml: it lints clean,
// lists exactly the routes `scribe routes` prints, and what it documents is
// what the running server answers.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { startServer, curl, newAccount, BIN } from './harness.mjs';

const HERE = new URL('.', import.meta.url).pathname;
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

// Every code of the spec's Errors table (shared/spec/transcription-api.md).
const SPEC_ERROR_CODES = [
  'unauthenticated', 'invalid_api_key', 'forbidden', 'entitlement_required', 'scope_forbidden', 'not_found',
  'not_ready', 'invalid_request', 'unsupported_pipeline', 'unsupported_language', 'addon_not_supported',
  'video_private', 'video_unavailable', 'video_unavailable_probe', 'video_members_only', 'video_age_restricted',
  'probe_proxy_auth_quota', 'probe_proxy_connectivity', 'probe_runtime_misconfigured', 'source_busy',
  'insufficient_funds', 'max_charge_exceeded', 'spend_cap_exceeded', 'rate_limited', 'qna_quota_exceeded',
  'queue_full', 'internal_error',
];

let server, text, doc, account;

before(async () => {
  server = await startServer();
  const res = await curl(`${server.url}/api/v1/openapi.yaml`);
  assert.equal(res.status, 200, res.body);
  assert.match(res.headers['content-type'], /^application\/yaml/);
  text = res.body;
  doc = parse(text);
  account = newAccount();
});
after(() => server?.stop());

// --- a tiny JSON Schema checker: type, required, properties, enum, items,
// nullable via type arrays, $ref into the document. Objects are closed unless
// they say additionalProperties, so undocumented fields fail too.
function resolve(schema) {
  while (schema && schema.$ref) {
    assert.match(schema.$ref, /^#\//, `only local $refs are supported: ${schema.$ref}`);
    schema = schema.$ref.slice(2).split('/').reduce((node, key) => node?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
    assert.ok(schema, 'dangling $ref');
  }
  return schema;
}
const TYPES = {
  null: (v) => v === null,
  boolean: (v) => typeof v === 'boolean',
  integer: (v) => Number.isInteger(v),
  number: (v) => typeof v === 'number' && Number.isFinite(v),
  string: (v) => typeof v === 'string',
  array: (v) => Array.isArray(v),
  object: (v) => v !== null && typeof v === 'object' && !Array.isArray(v),
};
const FORMATS = {
  'date-time': /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/,
  uri: /^[A-Za-z][A-Za-z0-9+.-]*:\S+$/,
};
function validate(schemaOrRef, value, path = '$', errors = []) {
  const schema = resolve(schemaOrRef);
  if (schema.type !== undefined) {
    const types = [].concat(schema.type);
    if (!types.some((t) => TYPES[t]?.(value))) {
      errors.push(`${path}: expected ${types.join(' or ')}, got ${JSON.stringify(value)}`);
      return errors;
    }
  }
  if (schema.enum && !schema.enum.includes(value)) errors.push(`${path}: ${JSON.stringify(value)} not in enum`);
  if (typeof value === 'string' && FORMATS[schema.format] && !FORMATS[schema.format].test(value))
    errors.push(`${path}: ${JSON.stringify(value)} is not a ${schema.format}`);
  if (TYPES.object(value) && (schema.properties || schema.required)) {
    for (const name of schema.required ?? [])
      if (!(name in value)) errors.push(`${path}: required property ${name} is missing`);
    for (const [name, v] of Object.entries(value)) {
      if (schema.properties?.[name]) validate(schema.properties[name], v, `${path}.${name}`, errors);
      else if (schema.additionalProperties === undefined || schema.additionalProperties === false)
        errors.push(`${path}: property ${name} is not documented`);
    }
  }
  if (Array.isArray(value) && schema.items) value.forEach((v, i) => validate(schema.items, v, `${path}[${i}]`, errors));
  return errors;
}
// Checks a live response against what the operation documents for its status.
function checkResponse(op, res, label) {
  const documented = op.responses[String(res.status)] ?? op.responses.default;
  assert.ok(documented, `${label}: status ${res.status} is not documented: ${res.body}`);
  const response = resolve(documented);
  for (const [name, header] of Object.entries(response.headers ?? {}))
    if (resolve(header).required) assert.ok(res.headers[name.toLowerCase()], `${label}: header ${name} missing`);
  const type = (res.headers['content-type'] ?? '').split(';')[0].trim();
  const media = response.content?.[type];
  assert.ok(media, `${label}: content type ${type} is not documented for ${res.status}`);
  if (type === 'application/json' && media.schema) {
    const errors = validate(media.schema, res.json);
    assert.deepEqual(errors, [], `${label}: body does not match the documented schema:\n${errors.join('\n')}\n${res.body}`);
  }
}
const operations = () =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((m) => ({ path, method: m.toUpperCase(), op: item[m], item })));

test('the served document passes redocly lint', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'scribe-openapi-'));
  const file = join(dir, 'openapi.yaml');
  writeFileSync(file, text);
  const args = ['lint', file];
  if (existsSync(join(HERE, 'redocly.yaml'))) args.push('--config', join(HERE, 'redocly.yaml'));
  const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
  const result = await promisify(execFile)(join(HERE, 'node_modules/.bin/redocly'), args, { env, cwd: HERE })
    .then(() => ({ code: 0 }), (err) => ({ code: err.code, out: `${err.stdout}\n${err.stderr}` }));
  assert.equal(result.code, 0, `redocly lint failed:\n${result.out}`);
  assert.equal(doc.openapi, '3.1.0');
  assert.equal(doc.info.version, '1.1.0');
});

test('the document lists exactly the routes the server serves', () => {
  const served = new Set(execFileSync(BIN, ['routes'], { encoding: 'utf8' }).trim().split('\n').map((l) => l.trim()));
  const documented = new Set(operations().map(({ method, path }) => `${method} ${path}`));
  const missing = [...served].filter((r) => !documented.has(r));
  const extra = [...documented].filter((r) => !served.has(r));
  assert.deepEqual({ missing, extra }, { missing: [], extra: [] },
    `served but not documented: ${missing.join(', ') || 'none'}; documented but not served: ${extra.join(', ') || 'none'}`);
});

test('documented GET routes answer as documented', async () => {
  const checked = [];
  for (const { path, method, op } of operations()) {
    if (method !== 'GET' || path.includes('{')) continue;
    const res = await curl(`${server.url}${path}`, { key: account.key });
    assert.notEqual(res.status, 404, `GET ${path}: ${res.body}`);
    checkResponse(op, res, `GET ${path}`);
    if (res.status === 200) checked.push(path);
    // Security as documented: public routes answer without a key, the rest 401.
    const isPublic = (op.security ?? doc.security ?? []).length === 0;
    const anon = await curl(`${server.url}${path}`);
    if (isPublic) assert.notEqual(anon.status, 401, `GET ${path} is documented public: ${anon.body}`);
    else {
      assert.equal(anon.status, 401, `GET ${path} is documented authenticated: ${anon.body}`);
      checkResponse(op, anon, `GET ${path} without a key`);
    }
  }
  for (const path of ['/api/v1/me', '/api/v1/pipelines']) assert.ok(checked.includes(path), `${path} was not checked`);
  const me = await curl(`${server.url}/api/v1/me`, { key: account.key });
  assert.equal(me.json.api_key?.id, Number(account.keyId), 'an API-key caller sees its api_key block');
});

test('a wrong method on a documented path is the documented 405', async () => {
  for (const [path, item] of Object.entries(doc.paths)) {
    const allowed = METHODS.filter((m) => item[m]).map((m) => m.toUpperCase());
    // PATCH is served on the tus upload path (uploads.test.mjs covers it).
    if (allowed.includes('PATCH')) continue;
    // Every GET route also answers HEAD, and the Allow header says so.
    const expectedAllow = allowed.includes('GET') ? [...allowed, 'HEAD'] : allowed;
    const res = await curl(`${server.url}${path}`, { method: 'PATCH', key: account.key });
    assert.equal(res.status, 405, `PATCH ${path}: ${res.body}`);
    assert.equal(res.json.error.code, 'invalid_request');
    assert.deepEqual(res.headers.allow.split(/,\s*/).sort(), expectedAllow.sort());
    checkResponse(item[allowed[0].toLowerCase()], res, `PATCH ${path}`);
  }
});

test('the error envelope lists every code of the spec, each with its doc_url anchor', async () => {
  const code = resolve(resolve(resolve(doc.components.schemas.Error).properties.error).properties.code);
  const missing = SPEC_ERROR_CODES.filter((c) => !code.enum.includes(c));
  assert.deepEqual(missing, [], `error codes missing from the envelope's code enum: ${missing.join(', ')}`);
  const noAnchor = SPEC_ERROR_CODES.filter((c) => !doc.info.description.includes(`id="error-${c}"`));
  assert.deepEqual(noAnchor, [], `error codes without an error-<code> anchor in info.description: ${noAnchor.join(', ')}`);
  const res = await curl(`${server.url}/api/v1/me`);
  assert.equal(res.json.error.doc_url, `${server.url}/docs/errors#unauthenticated`);
});

test('every error code has a section on the /docs/errors page that doc_url points into', async () => {
  const page = await curl(`${server.url}/docs/errors`);
  assert.equal(page.status, 200, page.body);
  assert.match(page.headers['content-type'], /^text\/html/);
  const noSection = SPEC_ERROR_CODES.filter((c) => !page.body.includes(`id="${c}"`));
  assert.deepEqual(noSection, [], `error codes without a section on /docs/errors: ${noSection.join(', ')}`);
  // The doc_url of real error responses resolves to that page and a section on it.
  const answers = [
    await curl(`${server.url}/api/v1/me`),
    await curl(`${server.url}/api/v1/me`, { key: 'key_live_0000000000000000000000000000000000000000' }),
    await curl(`${server.url}/api/v1/no-such-thing`, { key: account.key }),
    await curl(`${server.url}/api/v1/transcriptions?limit=0`, { key: account.key }),
  ];
  for (const res of answers) {
    const url = new URL(res.json.error.doc_url);
    assert.equal(url.hash, `#${res.json.error.code}`);
    const target = await curl(`${url.origin}${url.pathname}`);
    assert.equal(target.status, 200, `${res.json.error.doc_url}: ${target.body}`);
    assert.ok(target.body.includes(`id="${res.json.error.code}"`), `${res.json.error.doc_url} has no section`);
  }
});
