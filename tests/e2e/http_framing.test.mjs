// The request head as the transport sees it, over raw sockets (curl would
// not send these): oversized targets and header sections answer 414 and 431
// in the error envelope, and absolute-form targets (RFC 9112 §3.2.2) are
// served when they name this server and refused when they name another.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, newAccount, rawHttp, envelope } from './harness.mjs';

let server, acct;
before(async () => {
  server = await startServer();
  acct = newAccount();
});
after(async () => { await server?.stop(); });

const host = () => `127.0.0.1:${server.port}`;

test('a request target over 8 KiB is 414 in the envelope', async () => {
  for (const size of [8 * 1024 + 1, 100 * 1024]) {
    const target = `/api/v1/me?pad=${'a'.repeat(size - '/api/v1/me?pad='.length)}`;
    const res = await rawHttp(server.port, `GET ${target} HTTP/1.1\r\nHost: ${host()}\r\nX-Request-Id: long-${size}\r\n\r\n`);
    const e = envelope(assert, res, 414, 'invalid_request');
    assert.equal(res.headers['x-request-id'], size < 16 * 1024 ? `long-${size}` : res.headers['x-request-id']);
    assert.equal(e.field, 'target');
    assert.match(e.message, /8192 bytes/);
    assert.equal(e.doc_url, `${server.url}/docs/errors#invalid_request`);
  }
  // Exactly 8 KiB is still served.
  const target = `/api/v1/me?pad=${'a'.repeat(8 * 1024 - '/api/v1/me?pad='.length)}`;
  const ok = await rawHttp(server.port,
    `GET ${target} HTTP/1.1\r\nHost: ${host()}\r\nAuthorization: Bearer ${acct.key}\r\nConnection: close\r\n\r\n`);
  assert.equal(ok.status, 200, ok.raw);
});

test('header fields over 16 KiB together are 431 in the envelope', async () => {
  for (const size of [17 * 1024, 64 * 1024]) {
    const res = await rawHttp(server.port,
      `GET /api/v1/me HTTP/1.1\r\nHost: ${host()}\r\nX-Pad: ${'b'.repeat(size)}\r\n\r\n`);
    const e = envelope(assert, res, 431, 'invalid_request');
    assert.equal(e.field, 'headers');
    assert.match(e.message, /16384 bytes/);
  }
  // Several fields that add up past the limit count together.
  const many = Array.from({ length: 20 }, (_, i) => `X-Pad-${i}: ${'c'.repeat(1000)}\r\n`).join('');
  envelope(assert, await rawHttp(server.port, `GET /api/v1/me HTTP/1.1\r\nHost: ${host()}\r\n${many}\r\n`), 431,
    'invalid_request');
  // A large but allowed header section is served.
  const ok = await rawHttp(server.port, `GET /healthz HTTP/1.1\r\nHost: ${host()}\r\nX-Pad: ${'d'.repeat(15 * 1024)}\r\n` +
    'Connection: close\r\n\r\n');
  assert.equal(ok.status, 200, ok.raw);
});

test('an absolute-form target naming this server is served, with its authority as the Host', async () => {
  const res = await rawHttp(server.port, `GET http://${host()}/api/v1/me HTTP/1.1\r\nHost: elsewhere.example\r\n` +
    `Authorization: Bearer ${acct.key}\r\nConnection: close\r\n\r\n`);
  assert.equal(res.status, 200, res.raw);
  assert.equal(res.json.email, acct.email);
  // With a query, and with the scheme and host in upper case.
  const q = await rawHttp(server.port, `GET HTTP://127.0.0.1:${server.port}/api/v1/transcriptions?limit=1 HTTP/1.1\r\n` +
    `Host: ${host()}\r\nAuthorization: Bearer ${acct.key}\r\nConnection: close\r\n\r\n`);
  assert.equal(q.status, 200, q.raw);
  assert.ok(Array.isArray(q.json.data));
  // A public route, and an error that comes from the route itself.
  const health = await rawHttp(server.port, `GET http://${host()}/healthz HTTP/1.1\r\nConnection: close\r\n\r\n`);
  assert.equal(health.status, 200, health.raw);
  envelope(assert, await rawHttp(server.port, `GET http://${host()}/api/v1/nothing HTTP/1.1\r\n` +
    `Host: ${host()}\r\nConnection: close\r\n\r\n`), 404, 'not_found');
});

test('an absolute-form target naming another server is 400 invalid_request: this server is not a proxy', async () => {
  for (const target of [`http://example.com/api/v1/me`, `http://127.0.0.1:${server.port + 1}/api/v1/me`,
    `https://127.0.0.1:${server.port}/api/v1/me`, `ftp://${host()}/api/v1/me`, `http://user@${host()}/api/v1/me`]) {
    const res = await rawHttp(server.port, `GET ${target} HTTP/1.1\r\nHost: ${host()}\r\n` +
      `Authorization: Bearer ${acct.key}\r\nConnection: close\r\n\r\n`);
    const e = envelope(assert, res, 400, 'invalid_request');
    assert.equal(e.field, 'target', target);
    assert.match(e.message, /not a proxy/);
  }
});
