// Webhooks and per-request callbacks through the real server: registration
// rules, signed deliveries verified by a Node receiver (HTTPS with a
// self-signed CA handed to the server), retries, the 10 s timeout, automatic
// disabling, transcription events to a webhook and a callback, and a SIGKILL
// of the server while deliveries are in flight.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { startServer, newAccount, newKey, curl, envelope, finished, BIN, DB } from './harness.mjs';
import { dialogue, convert, startMediaServer } from './media.mjs';
import { selfSignedCertificate, startReceiver, verifySignature } from './webhook_receiver.mjs';

const psql = (sql) => execFileSync('psql', [DB, '-At', '-c', sql], { encoding: 'utf8' }).trim();
const api = (srv, path, opts = {}) => curl(`${srv.url}/api/v1${path}`, opts);

let tls, receiver, plain, server, strict, media;
let serverEnv;
before(async () => {
  tls = selfSignedCertificate();
  receiver = await startReceiver({ tls });
  plain = await startReceiver();
  media = await startMediaServer();
  serverEnv = {
    SCRIBE_ALLOW_PRIVATE_URLS: '1',
    SCRIBE_OUTBOUND_CA_FILE: tls.certPath,
    SCRIBE_WEBHOOK_RETRY_DELAYS: '1,1,1,1',
    SCRIBE_WEBHOOK_POLL_MS: '100',
    SCRIBE_WORKER_POLL_MS: '100',
  };
  server = await startServer({ workers: true, args: ['--rate-limit', '100000'], extraEnv: serverEnv });
  // Without the operator flag, and sending nothing: for the registration rules.
  strict = await startServer({ extraEnv: { SCRIBE_WEBHOOK_SENDERS: '0' } });
});
after(async () => {
  await server?.stop();
  await strict?.stop();
  await receiver?.close();
  await plain?.close();
  await media?.close();
});

const register = (srv, key, body) => api(srv, '/webhooks', { method: 'POST', key, body });

function checkDelivery(req, secret, event) {
  assert.equal(req.method, 'POST');
  assert.equal(req.headers['content-type'], 'application/json');
  assert.equal(req.headers['user-agent'], 'service-webhook/1');
  assert.equal(req.headers['x-service-event'], event);
  assert.equal(verifySignature(secret, req.headers['x-service-signature'], req.raw), null);
  assert.match(req.json.id, /^evt_\d+$/);
  assert.equal(req.json.event, event);
  assert.ok(Number.isInteger(req.json.created));
  assert.ok(Math.abs(req.json.created - Date.now() / 1000) < 600, `created ${req.json.created}`);
  assert.equal(typeof req.json.data, 'object');
}

test('registration: https only, public hosts, event filtering, one per key, secret shown once', async () => {
  const acc = newAccount();
  let res = await api(strict, '/webhooks', { key: acc.key });
  assert.equal(res.status, 200, res.body);
  assert.deepEqual(res.json, { webhook: null });

  for (const url of ['http://93.184.215.14/hook', 'https://127.0.0.1/hook', 'https://localhost/hook',
    'https://10.1.2.3/hook', 'https://169.254.169.254/latest', 'https://[::1]/x', 'ftp://93.184.215.14/x',
    'https://user:pw@93.184.215.14/x', `https://93.184.215.14/${'a'.repeat(2048)}`, 'not a url']) {
    const e = envelope(assert, await register(strict, acc.key, { url }), 400, 'invalid_request');
    assert.equal(e.field, 'url', url);
  }
  envelope(assert, await register(strict, acc.key, {}), 400, 'invalid_request');
  envelope(assert, await register(strict, acc.key, { url: 42 }), 400, 'invalid_request');
  envelope(assert, await api(strict, '/webhooks', { method: 'POST', key: acc.key, body: '{"url":' }), 400,
    'invalid_request');
  let e = envelope(assert, await register(strict, acc.key, { url: 'https://93.184.215.14/h', events: ['nope', 'webhook.test'] }),
    400, 'invalid_request');
  assert.equal(e.field, 'events');
  e = envelope(assert, await register(strict, acc.key, { url: 'https://93.184.215.14/h', events: 'transcription.failed' }),
    400, 'invalid_request');
  assert.equal(e.field, 'events');
  // The body is validated whole before the host is looked up: with a host
  // that does not resolve, a bad `events` is still the error reported.
  e = envelope(assert, await register(strict, acc.key, { url: 'https://no-such-host.invalid/h', events: ['nope'] }),
    400, 'invalid_request');
  assert.equal(e.field, 'events', e.message);
  e = envelope(assert, await register(strict, acc.key, { url: 'https://no-such-host.invalid/h' }), 400, 'invalid_request');
  assert.equal(e.field, 'url');
  assert.match(e.message, /does not resolve/);
  // Nothing was registered by any of those.
  assert.deepEqual((await api(strict, '/webhooks', { key: acc.key })).json, { webhook: null });

  res = await register(strict, acc.key, { url: 'https://93.184.215.14/h', events: ['transcription.failed', 'bogus', 'clip.completed'] });
  assert.equal(res.status, 201, res.body);
  const first = res.json;
  assert.ok(Number.isInteger(first.id));
  assert.deepEqual(first.events, ['transcription.failed', 'clip.completed']);
  assert.match(first.signing_secret, /^whsec_[0-9a-f]{64}$/);
  assert.equal(first.consecutive_failures, 0);
  assert.equal(first.disabled_at, null);
  assert.equal(first.last_delivery_at, null);
  assert.equal(first.last_success_at, null);
  assert.match(first.created_at, /^\d{4}-\d\d-\d\dT/);

  res = await api(strict, '/webhooks', { key: acc.key });
  assert.equal(res.json.webhook.id, first.id);
  assert.equal(res.json.webhook.signing_secret, undefined);
  assert.ok(!res.body.includes(first.signing_secret));

  // Another key of the same account has its own (none); another account sees none.
  const second = newKey(acc.accountId);
  assert.deepEqual((await api(strict, '/webhooks', { key: second.key })).json, { webhook: null });
  assert.deepEqual((await api(strict, '/webhooks', { key: newAccount().key })).json, { webhook: null });

  // Default events are all four; registering again replaces the first.
  res = await register(strict, acc.key, { url: 'https://93.184.215.14/other' });
  assert.equal(res.status, 201, res.body);
  assert.notEqual(res.json.id, first.id);
  assert.notEqual(res.json.signing_secret, first.signing_secret);
  assert.deepEqual(res.json.events, ['transcription.completed', 'transcription.failed', 'clip.completed', 'clip.failed']);
  assert.equal((await api(strict, '/webhooks', { key: acc.key })).json.webhook.url, 'https://93.184.215.14/other');
  assert.equal(psql(`select count(*) from webhooks where key_id = ${acc.keyId} and revoked_at is null`), '1');

  // Read-only keys cannot change webhooks.
  const ro = newKey(acc.accountId, '--permission', 'read_only');
  envelope(assert, await register(strict, ro.key, { url: 'https://93.184.215.14/h' }), 403, 'scope_forbidden');

  res = await api(strict, '/webhooks', { method: 'DELETE', key: acc.key });
  assert.equal(res.status, 200, res.body);
  assert.deepEqual(res.json, { revoked: true });
  assert.deepEqual((await api(strict, '/webhooks', { key: acc.key })).json, { webhook: null });
  envelope(assert, await api(strict, '/webhooks', { method: 'DELETE', key: acc.key }), 404, 'not_found');
  envelope(assert, await api(strict, '/webhooks/test', { method: 'POST', key: acc.key }), 404, 'not_found');
  envelope(assert, await api(strict, '/webhooks', { key: 'key_live_' + 'x'.repeat(40) }), 401, 'invalid_api_key');
});

test('a test delivery arrives signed over HTTPS and the webhook records the success', async () => {
  const acc = newAccount();
  const reg = await register(server, acc.key, { url: receiver.url('/ok') });
  assert.equal(reg.status, 201, reg.body);
  const res = await api(server, '/webhooks/test', { method: 'POST', key: acc.key });
  assert.equal(res.status, 202, res.body);
  assert.equal(res.json.enqueued, true);
  assert.ok(Number.isInteger(res.json.delivery_id));
  const id = `evt_${res.json.delivery_id / 2}`;
  const [req] = await receiver.waitFor((r) => r.json?.id === id);
  checkDelivery(req, reg.json.signing_secret, 'webhook.test');
  assert.equal(typeof req.json.data.message, 'string');
  assert.match(req.json.data.delivered_at, /^\d{4}-\d\d-\d\dT.*Z$/);
  // A signature made with another secret, or over another body, fails the receiver's check.
  assert.notEqual(verifySignature('whsec_' + '0'.repeat(64), req.headers['x-service-signature'], req.raw), null);
  assert.notEqual(verifySignature(reg.json.signing_secret, req.headers['x-service-signature'], req.raw + ' '), null);

  let hook;
  for (let i = 0; i < 50; i++) {
    hook = (await api(server, '/webhooks', { key: acc.key })).json.webhook;
    if (hook.last_success_at) break;
    await sleep(100);
  }
  assert.ok(hook.last_success_at, JSON.stringify(hook));
  assert.ok(hook.last_delivery_at);
  assert.equal(hook.consecutive_failures, 0);
  assert.equal(psql(`select status || ':' || attempts from webhook_deliveries where delivery_id = ${res.json.delivery_id}`),
    'delivered:1');

  const metrics = await curl(`${server.metricsUrl}/metrics`);
  assert.match(metrics.body, /^scribe_webhook_deliveries_pending \d+$/m);
  assert.match(metrics.body, /^scribe_webhook_deliveries_due \d+$/m);
  assert.match(metrics.body, /^scribe_projection_lag_events\{projection="webhook_outbox"\} \d+$/m);

  // Rebuilding the outbox projection re-creates its rows but sends nothing again.
  execFileSync(BIN, ['projections', 'rebuild', 'webhook_outbox'], { env: { ...process.env, SCRIBE_DATABASE_URL: DB } });
  assert.ok(Number(psql(`select count(*) from webhook_outbox where id = ${res.json.delivery_id}`)) === 1);
  await sleep(1500);
  assert.equal(receiver.requests.filter((r) => r.json?.id === id).length, 1);
});

test('failed attempts are retried with the same id and body, five at most, then the webhook is disabled', async () => {
  const acc = newAccount();
  const reg = await register(server, acc.key, { url: receiver.url('/fail') });
  assert.equal(reg.status, 201, reg.body);
  const res = await api(server, '/webhooks/test', { method: 'POST', key: acc.key });
  const id = `evt_${res.json.delivery_id / 2}`;
  const attempts = await receiver.waitFor((r) => r.json?.id === id, 5, 60000);
  await sleep(2500);
  const all = receiver.requests.filter((r) => r.json?.id === id);
  assert.equal(all.length, 5, 'exactly five attempts');
  for (const a of all) {
    checkDelivery(a, reg.json.signing_secret, 'webhook.test');
    assert.equal(a.raw, attempts[0].raw, 'the body is the same on every attempt');
  }
  for (let i = 1; i < all.length; i++) assert.ok(all[i].at - all[i - 1].at >= 900, 'retries wait their delay');
  assert.equal(psql(`select status || ':' || attempts || ':' || last_status from webhook_deliveries ` +
    `where delivery_id = ${res.json.delivery_id}`), 'failed:5:500');
  const hook = (await api(server, '/webhooks', { key: acc.key })).json.webhook;
  assert.equal(hook.consecutive_failures, 5);
  assert.ok(hook.disabled_at, 'disabled after five consecutive failures');
  assert.equal(hook.last_success_at, null);

  // A disabled webhook receives nothing more.
  const again = await api(server, '/webhooks/test', { method: 'POST', key: acc.key });
  assert.equal(again.status, 202);
  let status = '';
  for (let i = 0; i < 100 && status !== 'dropped'; i++) {
    await sleep(100);
    status = psql(`select status from webhook_deliveries where delivery_id = ${again.json.delivery_id}`);
  }
  assert.equal(status, 'dropped');
  assert.equal(receiver.requests.filter((r) => r.json?.id === `evt_${again.json.delivery_id / 2}`).length, 0);
});

test('a flaky receiver gets the delivery on a later attempt and the failure count resets', async () => {
  const acc = newAccount();
  const path = `/flaky-2-${acc.keyId}`;
  const reg = await register(server, acc.key, { url: receiver.url(path) });
  const res = await api(server, '/webhooks/test', { method: 'POST', key: acc.key });
  await receiver.waitFor((r) => r.path === path, 3, 30000);
  let hook;
  for (let i = 0; i < 50; i++) {
    hook = (await api(server, '/webhooks', { key: acc.key })).json.webhook;
    if (hook.last_success_at) break;
    await sleep(100);
  }
  assert.ok(hook.last_success_at);
  assert.equal(hook.consecutive_failures, 0);
  assert.equal(hook.disabled_at, null);
  const got = receiver.to(path);
  assert.equal(new Set(got.map((r) => r.json.id)).size, 1);
  for (const r of got) checkDelivery(r, reg.json.signing_secret, 'webhook.test');
  assert.equal(psql(`select status || ':' || attempts || ':' || last_status from webhook_deliveries ` +
    `where delivery_id = ${res.json.delivery_id}`), 'delivered:3:204');
});

test('a receiver that hangs is given up on after 10 s and tried again; redirects are not followed', async () => {
  const acc = newAccount();
  await register(server, acc.key, { url: receiver.url('/hang') });
  const res = await api(server, '/webhooks/test', { method: 'POST', key: acc.key });
  const id = `evt_${res.json.delivery_id / 2}`;
  const [first, second] = await receiver.waitFor((r) => r.json?.id === id, 2, 40000);
  const gap = second.at - first.at;
  assert.ok(gap >= 10000 && gap < 20000, `second attempt ${gap} ms after the first`);
  assert.match(psql(`select coalesce(last_error, '') from webhook_deliveries where delivery_id = ${res.json.delivery_id}`),
    /time|Timeout/i);
  await api(server, '/webhooks', { method: 'DELETE', key: acc.key });

  const other = newAccount();
  await register(server, other.key, { url: receiver.url('/redirect') });
  const r2 = await api(server, '/webhooks/test', { method: 'POST', key: other.key });
  await receiver.waitFor((r) => r.path === '/redirect', 2, 30000);
  assert.equal(receiver.requests.filter((r) => r.path === '/ok' && r.json?.id === `evt_${r2.json.delivery_id / 2}`).length, 0);
  assert.equal(psql(`select last_status from webhook_deliveries where delivery_id = ${r2.json.delivery_id}`), '302');
  await api(server, '/webhooks', { method: 'DELETE', key: other.key });
});

test('transcription events reach the registered webhook and the per-request callback, both signed', async () => {
  const acc = newAccount({ balance: 5 });
  const reg = await register(server, acc.key, { url: receiver.url('/ok') });
  // A link nothing listens on fails fast (source_unavailable).
  const cbFail = plain.url(`/cb-${acc.keyId}-failed`);
  let res = await api(server, '/transcriptions', { method: 'POST', key: acc.key,
    body: { source: 'external_url', url: 'http://127.0.0.1:9/gone.mp3', duration_seconds: 30, callback_url: cbFail } });
  assert.equal(res.status, 202, res.body);
  const failedId = res.json.id;
  const failedSecret = res.json.callback.secret;
  assert.match(failedSecret, /^whsec_[0-9a-f]{64}$/);
  const got = (await api(server, `/transcriptions/${failedId}`, { key: acc.key })).json;
  assert.equal(got.callback_url, cbFail);
  assert.ok(!JSON.stringify(got).includes(failedSecret), 'GET never returns the callback secret');

  const [cb] = await plain.waitFor((r) => r.path === `/cb-${acc.keyId}-failed`);
  checkDelivery(cb, failedSecret, 'transcription.failed');
  const snap = cb.json.data.transcription;
  assert.equal(snap.id, failedId);
  assert.equal(snap.status, 'failed');
  assert.equal(snap.error.code, 'source_unavailable');
  for (const k of ['id', 'status', 'stage', 'pipeline_code', 'language', 'detected_language', 'source', 'title',
    'duration_seconds', 'charge_usd', 'error', 'created_at', 'processing_started_at', 'completed_at'])
    assert.ok(k in snap, `snapshot has ${k}`);
  const [hook] = await receiver.waitFor((r) => r.json?.data?.transcription?.id === failedId);
  checkDelivery(hook, reg.json.signing_secret, 'transcription.failed');
  assert.equal(hook.json.id, cb.json.id, 'the same event has the same id for both targets');
  assert.equal(hook.raw, cb.raw);
  // Each target has its own secret: the webhook's does not verify the callback.
  assert.notEqual(verifySignature(reg.json.signing_secret, cb.headers['x-service-signature'], cb.raw), null);

  // A completed transcription: real speech through the pipeline.
  const wav = dialogue([{ voice: 'slt', text: 'Hello there. This recording tests the webhook delivery.' }], 'hook-talk');
  const mp3 = convert(wav, 'hook-talk.mp3');
  const cbDone = plain.url(`/cb-${acc.keyId}-done`);
  res = await api(server, '/transcriptions', { method: 'POST', key: acc.key,
    body: { source: 'external_url', url: media.url(mp3), callback_url: cbDone } });
  assert.equal(res.status, 202, res.body);
  const doneId = res.json.id;
  const final = await finished(server, acc.key, doneId);
  assert.equal(final.status, 'completed', JSON.stringify(final.error));
  const [done] = await plain.waitFor((r) => r.path === `/cb-${acc.keyId}-done`);
  checkDelivery(done, res.json.callback.secret, 'transcription.completed');
  const t = done.json.data.transcription;
  assert.equal(t.status, 'completed');
  assert.equal(t.stage, 'completed');
  assert.equal(t.error, null);
  assert.equal(t.detected_language, 'en');
  assert.ok(t.duration_seconds > 1);
  assert.ok(t.processing_started_at && t.completed_at);
  const [hookDone] = await receiver.waitFor((r) => r.json?.data?.transcription?.id === doneId);
  checkDelivery(hookDone, reg.json.signing_secret, 'transcription.completed');
  // The snapshot agrees with GET.
  const view = (await api(server, `/transcriptions/${doneId}`, { key: acc.key })).json;
  for (const k of ['status', 'pipeline_code', 'language', 'detected_language', 'source', 'duration_seconds',
    'charge_usd', 'created_at', 'completed_at'])
    assert.deepEqual(t[k], view[k], k);
});

test('event filters apply to the webhook only; a failing callback stops after its 5th attempt', async () => {
  const acc = newAccount({ balance: 5 });
  await register(server, acc.key, { url: receiver.url('/ok'), events: ['transcription.completed'] });
  const res = await api(server, '/transcriptions', { method: 'POST', key: acc.key,
    body: { source: 'external_url', url: 'http://127.0.0.1:9/gone.mp3', duration_seconds: 30,
      callback_url: plain.url('/fail') } });
  assert.equal(res.status, 202, res.body);
  const id = res.json.id;
  const attempts = await plain.waitFor((r) => r.path === '/fail' && r.json?.data?.transcription?.id === id, 5, 60000);
  await sleep(2500);
  assert.equal(plain.requests.filter((r) => r.path === '/fail' && r.json?.data?.transcription?.id === id).length, 5);
  for (const a of attempts) checkDelivery(a, res.json.callback.secret, 'transcription.failed');
  assert.equal(receiver.requests.filter((r) => r.json?.data?.transcription?.id === id).length, 0,
    'the webhook subscribed to completions only');
});

test('SIGKILL while deliveries are in flight: each is delivered at least once, none after its 2xx was recorded', async () => {
  // The file's shared server would send these too; with it gone, the killed
  // server's senders are the only ones, so the kill really interrupts them.
  await server.stop();
  server = null;
  const env = { ...serverEnv, SCRIBE_WEBHOOK_LEASE_SECONDS: '11', SCRIBE_WEBHOOK_SENDERS: '4' };
  const first = await startServer({ args: ['--rate-limit', '100000'], extraEnv: env });
  const acc = newAccount();
  const path = `/slow-300-${acc.keyId}`;
  const reg = await register(first, acc.key, { url: receiver.url(path) });
  assert.equal(reg.status, 201, reg.body);
  const ids = [];
  for (let i = 0; i < 40; i++) {
    const res = await api(first, '/webhooks/test', { method: 'POST', key: acc.key });
    assert.equal(res.status, 202, res.body);
    ids.push(res.json.delivery_id);
  }
  await receiver.waitFor((r) => r.path === path, 6, 30000);
  await first.stop('SIGKILL');
  const inFlight = Number(psql(`select count(*) from webhook_deliveries where delivery_id = any(array[${ids}]) ` +
    `and status = 'pending' and attempts > 0`));

  const second = await startServer({ args: ['--rate-limit', '100000'], extraEnv: env });
  try {
    let delivered = 0;
    for (let i = 0; i < 600 && delivered < ids.length; i++) {
      await sleep(100);
      delivered = Number(psql(`select count(*) from webhook_deliveries where delivery_id = any(array[${ids}]) ` +
        `and status = 'delivered'`));
    }
    assert.equal(delivered, ids.length, 'every delivery ends delivered');
    const recorded = new Map(psql(`select delivery_id, (extract(epoch from delivered_at) * 1000)::bigint ` +
      `from webhook_deliveries where delivery_id = any(array[${ids}])`).split('\n')
      .map((l) => l.split('|').map(Number)));
    const byEvent = new Map();
    for (const r of receiver.to(path)) {
      checkDelivery(r, reg.json.signing_secret, 'webhook.test');
      const list = byEvent.get(r.json.id) || [];
      list.push(r.at);
      byEvent.set(r.json.id, list);
    }
    let duplicates = 0;
    for (const d of ids) {
      const arrivals = byEvent.get(`evt_${d / 2}`) || [];
      assert.ok(arrivals.length >= 1, `delivery ${d} arrived`);
      duplicates += arrivals.length - 1;
      for (const at of arrivals)
        assert.ok(at <= recorded.get(d), `delivery ${d} arrived at ${at}, after its 2xx was recorded at ${recorded.get(d)}`);
    }
    // Only what was in flight at the kill may arrive twice.
    assert.ok(duplicates <= inFlight, `${duplicates} duplicates, ${inFlight} in flight at the kill`);
  } finally {
    await second.stop();
  }
});

test('the target is checked again before every POST: a sender without the operator flag refuses loopback', async () => {
  // Registered where the operator flag admits loopback; sent by a process
  // without it, as if the address had changed since registration.
  const registrar = await startServer({ extraEnv: { ...serverEnv, SCRIBE_WEBHOOK_SENDERS: '0' } });
  const sender = await startServer({ extraEnv: { SCRIBE_OUTBOUND_CA_FILE: tls.certPath,
    SCRIBE_WEBHOOK_RETRY_DELAYS: '1', SCRIBE_WEBHOOK_POLL_MS: '100' } });
  try {
    const acc = newAccount();
    const path = `/recheck-${acc.keyId}`;
    assert.equal((await register(registrar, acc.key, { url: receiver.url(path) })).status, 201);
    const res = await api(registrar, '/webhooks/test', { method: 'POST', key: acc.key });
    assert.equal(res.status, 202, res.body);
    let row = '';
    for (let i = 0; i < 100 && !row.startsWith('2|'); i++) {
      await sleep(100);
      row = psql(`select attempts || '|' || coalesce(last_error, '') from webhook_deliveries ` +
        `where delivery_id = ${res.json.delivery_id}`);
    }
    assert.match(row, /^2\|url must/, row);
    assert.equal(receiver.to(path).length, 0, 'no request reached the loopback receiver');
  } finally {
    await registrar.stop();
    await sender.stop();
  }
});
