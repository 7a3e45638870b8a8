// The HTTP core of the real `scribe serve`: request ids, CORS, routing errors,
// body limit, keep-alive, the operational endpoints, /pipelines and /me.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { startServer, newAccount, admin, curl, envelope, BIN, DB } from './harness.mjs';

const GENERATED_ID = /^req_[0-9a-f]{24}$/;

let server;
before(async () => { server = await startServer(); });
after(async () => { await server?.stop(); });

function run(cmd, args) {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${cmd} failed: ${err.message} ${stderr}`));
      resolve(stdout);
    });
  });
}

test('every response carries X-Request-Id: success, 404, 401, preflight', async () => {
  const { key } = newAccount();
  const ok = await curl(`${server.url}/api/v1/me`, { key });
  assert.equal(ok.status, 200);
  assert.match(ok.headers['x-request-id'], GENERATED_ID);

  const health = await curl(`${server.url}/healthz`);
  assert.equal(health.status, 200);
  assert.match(health.headers['x-request-id'], GENERATED_ID);

  const missing = await curl(`${server.url}/api/v1/no-such-thing`, { key });
  envelope(assert, missing, 404, 'not_found');
  assert.match(missing.headers['x-request-id'], GENERATED_ID);

  const unauth = await curl(`${server.url}/api/v1/me`);
  envelope(assert, unauth, 401, 'unauthenticated');
  assert.match(unauth.headers['x-request-id'], GENERATED_ID);

  const pre = await curl(`${server.url}/api/v1/me`, { method: 'OPTIONS', headers: { Origin: 'https://app.example' } });
  assert.equal(pre.status, 204);
  assert.match(pre.headers['x-request-id'], GENERATED_ID);

  // Fresh ids per response.
  const ids = new Set([ok, health, missing, unauth, pre].map((r) => r.headers['x-request-id']));
  assert.equal(ids.size, 5);
});

test('a caller-supplied X-Request-Id is echoed; an illegal one is replaced', async () => {
  const mine = 'trace-ABC_123.x';
  const echoed = await curl(`${server.url}/api/v1/me`, { headers: { 'X-Request-Id': mine } });
  envelope(assert, echoed, 401, 'unauthenticated');
  assert.equal(echoed.headers['x-request-id'], mine);
  assert.equal(echoed.json.error.request_id, mine);

  const ok = await curl(`${server.url}/healthz`, { headers: { 'X-Request-Id': mine } });
  assert.equal(ok.headers['x-request-id'], mine);

  for (const bad of ['has space', 'semi;colon', 'quote"d', 'x'.repeat(129)]) {
    const res = await curl(`${server.url}/api/v1/me`, { headers: { 'X-Request-Id': bad } });
    envelope(assert, res, 401, 'unauthenticated');
    assert.match(res.headers['x-request-id'], GENERATED_ID, `id ${JSON.stringify(bad)} was not replaced`);
    assert.equal(res.json.error.request_id, res.headers['x-request-id']);
  }
  // 128 characters is still accepted.
  const long = 'y'.repeat(128);
  const res = await curl(`${server.url}/healthz`, { headers: { 'X-Request-Id': long } });
  assert.equal(res.headers['x-request-id'], long);
});

test('CORS: any origin on /api/v1 responses, and a preflight answers 204', async () => {
  const { key } = newAccount();
  const origin = { Origin: 'https://somewhere.example' };
  const ok = await curl(`${server.url}/api/v1/me`, { key, headers: origin });
  assert.equal(ok.status, 200);
  assert.equal(ok.headers['access-control-allow-origin'], '*');
  assert.match(ok.headers['access-control-expose-headers'], /X-Request-Id/);
  assert.match(ok.headers['access-control-expose-headers'], /Idempotent-Replayed/);
  assert.match(ok.headers['access-control-expose-headers'], /Retry-After/);
  assert.equal(ok.headers['access-control-allow-credentials'], undefined);

  const err = await curl(`${server.url}/api/v1/me`, { headers: origin });
  envelope(assert, err, 401, 'unauthenticated');
  assert.equal(err.headers['access-control-allow-origin'], '*');

  const notFound = await curl(`${server.url}/api/v1/nothing/here`, { headers: origin });
  envelope(assert, notFound, 404, 'not_found');
  assert.equal(notFound.headers['access-control-allow-origin'], '*');

  const pre = await curl(`${server.url}/api/v1/transcriptions`, {
    method: 'OPTIONS',
    headers: { ...origin, 'Access-Control-Request-Method': 'POST',
      'Access-Control-Request-Headers': 'authorization, content-type, idempotency-key' },
  });
  assert.equal(pre.status, 204);
  assert.equal(pre.body, '');
  assert.equal(pre.headers['access-control-allow-origin'], '*');
  const methods = pre.headers['access-control-allow-methods'].split(/,\s*/);
  for (const m of ['GET', 'POST', 'DELETE', 'OPTIONS']) assert.ok(methods.includes(m), `allow-methods lacks ${m}`);
  const allowHeaders = pre.headers['access-control-allow-headers'].toLowerCase().split(/,\s*/);
  for (const h of ['authorization', 'content-type', 'idempotency-key', 'x-request-id'])
    assert.ok(allowHeaders.includes(h), `allow-headers lacks ${h}`);
  assert.ok(Number(pre.headers['access-control-max-age']) > 0);
});

test('unknown route is 404 not_found; wrong method is 405 with Allow', async () => {
  const { key } = newAccount();
  const missing = await curl(`${server.url}/api/v1/definitely-not-a-route`, { key });
  const e = envelope(assert, missing, 404, 'not_found');
  assert.match(e.message, /definitely-not-a-route/);
  envelope(assert, await curl(`${server.url}/nope`), 404, 'not_found');

  const wrong = await curl(`${server.url}/api/v1/me`, { method: 'DELETE', key });
  envelope(assert, wrong, 405, 'invalid_request');
  const allowed = (res) => res.headers.allow.split(/,\s*/);
  assert.ok(allowed(wrong).includes('GET'), `Allow: ${wrong.headers.allow}`);
  assert.ok(!allowed(wrong).includes('DELETE'), `Allow: ${wrong.headers.allow}`);
  const wrongPost = await curl(`${server.url}/api/v1/pipelines`, { method: 'POST', key, body: {} });
  envelope(assert, wrongPost, 405, 'invalid_request');
  assert.ok(allowed(wrongPost).includes('GET'), `Allow: ${wrongPost.headers.allow}`);
  assert.ok(!allowed(wrongPost).includes('POST'), `Allow: ${wrongPost.headers.allow}`);
});

test('a body over 1 MiB is 413 invalid_request; exactly 1 MiB is not', async () => {
  const { key } = newAccount();
  const big = await curl(`${server.url}/api/v1/me`, { method: 'POST', key, body: 'x'.repeat(1024 * 1024 + 1) });
  const e = envelope(assert, big, 413, 'invalid_request');
  assert.match(e.message, /1048576/);
  assert.equal(big.headers['access-control-allow-origin'], '*');

  // At the limit the body is read and routing answers (405: /me is GET only).
  const edge = await curl(`${server.url}/api/v1/me`, { method: 'POST', key, body: 'x'.repeat(1024 * 1024) });
  envelope(assert, edge, 405, 'invalid_request');
});

test('a body over 1 MiB sent without Expect: 100-continue still gets the 413 envelope', async () => {
  // Clients such as fetch() send the body straight after the headers; the
  // answer must not be lost to a connection reset.
  const { key } = newAccount();
  for (let i = 0; i < 3; i++) {
    const big = await curl(`${server.url}/api/v1/me`, {
      method: 'POST', key, body: 'x'.repeat(4 * 1024 * 1024), rawArgs: ['-H', 'Expect:'],
    });
    envelope(assert, big, 413, 'invalid_request');
  }
});

test('malformed percent-encoding in the path is 400 invalid_request', async () => {
  for (const path of ['/api/v1/%zz', '/api/v1/me%', '/api/v1/me%4']) {
    const res = await curl(`${server.url}${path}`, { rawArgs: ['--path-as-is'] });
    const e = envelope(assert, res, 400, 'invalid_request');
    assert.equal(e.field, 'path');
    // Still an /api/v1 response: open to any origin like every other error there.
    assert.equal(res.headers['access-control-allow-origin'], '*', `no CORS on ${path}`);
  }
  // Valid encoding decodes: %6D%65 is "me".
  const { key } = newAccount();
  const ok = await curl(`${server.url}/api/v1/%6D%65`, { key });
  assert.equal(ok.status, 200);
});

test('keep-alive: two requests over one connection', async () => {
  const { key } = newAccount();
  const out = await run('curl', ['-sS', '-H', `Authorization: Bearer ${key}`,
    '-o', '/dev/null', '-o', '/dev/null', '-w', '%{http_code} %{num_connects}\n',
    `${server.url}/api/v1/me`, `${server.url}/api/v1/pipelines`]);
  const lines = out.trim().split('\n');
  assert.deepEqual(lines, ['200 1', '200 0']);
});

test('/healthz, /readyz and /metrics (on the metrics listener)', async () => {
  const health = await curl(`${server.url}/healthz`);
  assert.equal(health.status, 200);
  assert.deepEqual(health.json, { status: 'ok' });

  const ready = await curl(`${server.url}/readyz`);
  assert.equal(ready.status, 200, ready.body);
  assert.equal(ready.json.status, 'ready');
  assert.equal(ready.json.checks.database, 'ok');
  // Every migration the binary carries is applied (001-003 at least).
  const { applied, expected } = ready.json.checks.migrations;
  assert.ok(Number.isInteger(expected) && expected >= 3, `expected ${expected}`);
  assert.equal(applied, expected);

  const metrics = await curl(`${server.metricsUrl}/metrics`);
  assert.equal(metrics.status, 200);
  assert.match(metrics.headers['content-type'], /^text\/plain/);
  // The two requests above are counted by route and status.
  assert.match(metrics.body, /^scribe_http_requests_total\{route="\/healthz",method="GET",status="200"\} [1-9]\d*$/m);
  assert.match(metrics.body, /^scribe_http_requests_total\{route="\/readyz",method="GET",status="200"\} [1-9]\d*$/m);
  assert.match(metrics.body, /^# TYPE scribe_events_appended_total counter$/m);
  assert.match(metrics.body, /^scribe_events_appended_total \d+$/m);
  assert.match(metrics.body, /^# TYPE scribe_projection_lag_events gauge$/m);
  assert.match(metrics.body, /^scribe_projection_lag_events\{projection="wallet_ledger"\} \d+$/m);
});

test('/metrics is not served on the API port, only on its own listener, which serves nothing else', async () => {
  const onApi = await curl(`${server.url}/metrics`);
  envelope(assert, onApi, 404, 'not_found');
  const other = await curl(`${server.metricsUrl}/api/v1/me`);
  envelope(assert, other, 404, 'not_found');
  const post = await curl(`${server.metricsUrl}/metrics`, { method: 'POST', body: {} });
  envelope(assert, post, 405, 'invalid_request');
  assert.equal(post.headers.allow, 'GET, HEAD');
});

test('the metrics listener defaults to loopback port 9464 and is off with SCRIBE_METRICS_ADDR=off', async () => {
  assert.match(execFileSync(BIN, ['serve', '--help'], { encoding: 'utf8' }), /default 127\.0\.0\.1:9464/);
  const off = await startServer({ extraEnv: { SCRIBE_METRICS_ADDR: 'off' } });
  try {
    assert.equal(off.metricsUrl, undefined);
    envelope(assert, await curl(`${off.url}/metrics`), 404, 'not_found');
  } finally {
    await off.stop();
  }
  // A malformed address stops the server at start instead of serving without metrics.
  const bad = spawnSync(BIN, ['serve', '--port', '0', '--metrics-addr', 'nowhere'], {
    env: { ...process.env, SCRIBE_DATABASE_URL: DB }, encoding: 'utf8', timeout: 20000,
  });
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /metrics-addr/);
});

test('quotes commit through group commit: concurrent quotes all land, /metrics counts the shared transactions', async () => {
  // A server of its own: the quotes' link is on loopback (never fetched, the
  // duration is given), and its counters start at zero.
  const srv = await startServer({ extraEnv: { SCRIBE_ALLOW_PRIVATE_URLS: '1' } });
  try {
    const metric = (body, name) => {
      const m = body.match(new RegExp(`^${name} (\\d+)$`, 'm'));
      assert.ok(m, `${name} missing from /metrics`);
      return Number(m[1]);
    };
    const { key } = newAccount();
    const quotes = await Promise.all(Array.from({ length: 12 }, (_, i) => curl(`${srv.url}/api/v1/quotes`, {
      method: 'POST', key,
      body: { source: 'external_url', url: `http://127.0.0.1:9/group-${i}.mp3`, duration_seconds: 60 + i },
    })));
    const ids = new Set();
    for (const q of quotes) {
      assert.equal(q.status, 200, q.body);
      ids.add(q.json.transcription_id);
      // Read-your-writes: the inline projection ran in the shared transaction.
      const got = await curl(`${srv.url}/api/v1/transcriptions/${q.json.transcription_id}`, { key });
      assert.equal(got.status, 200, got.body);
      assert.equal(got.json.status, 'quoted');
    }
    assert.equal(ids.size, 12);
    const body = (await curl(`${srv.metricsUrl}/metrics`)).body;
    const units = metric(body, 'scribe_append_group_units_total');
    const txns = metric(body, 'scribe_append_group_transactions_total');
    assert.ok(units >= 12, `units ${units}`);
    assert.ok(txns >= 1 && txns <= units, `transactions ${txns}, units ${units}`);
    assert.equal(metric(body, 'scribe_append_group_isolated_total'), 0);
  } finally {
    await srv.stop();
  }
});

test('GET /api/v1/pipelines lists only en with a band and fleurs_wer null', async () => {
  const { key } = newAccount();
  const res = await curl(`${server.url}/api/v1/pipelines`, { key });
  assert.equal(res.status, 200);
  assert.equal(res.json.pipelines.length, 1);
  const p = res.json.pipelines[0];
  assert.equal(p.code, 'standard');
  assert.equal(typeof p.name, 'string');
  assert.equal(p.retail_usd_per_min, 0.0167);
  assert.equal(p.retail_usd_per_hour, 1);
  assert.ok(p.timestamp_options.includes('sentence'));
  assert.equal(p.speech_profile, 'balanced', 'the default profile');
  assert.equal(typeof p.speech_profile_description, 'string');
  for (const list of [p.supported_languages, p.word_timestamp_languages]) {
    assert.deepEqual(list.map((l) => l.code), ['en']);
    const en = list[0];
    assert.deepEqual(Object.keys(en).sort(), ['benchmark_error_rate_band', 'code', 'fleurs_wer', 'label', 'native_name']);
    assert.equal(en.fleurs_wer, null);
    assert.ok(['under_5_percent', '5_to_under_15_percent', '15_percent_or_higher'].includes(en.benchmark_error_rate_band),
      `band ${en.benchmark_error_rate_band}`);
  }
});

test('SCRIBE_SPEECH_PROFILE picks the profile the catalogue names; a bad one stops scribe serve naming it', async () => {
  const live = await startServer({ extraEnv: { SCRIBE_SPEECH_PROFILE: 'live' } });
  try {
    const { key } = newAccount();
    const res = await curl(`${live.url}/api/v1/pipelines`, { key });
    assert.equal(res.json.pipelines[0].speech_profile, 'live');
  } finally {
    await live.stop();
  }
  await assert.rejects(startServer({ extraEnv: { SCRIBE_SPEECH_PROFILE: 'fastest' } }),
    /SCRIBE_SPEECH_PROFILE='fastest' \(environment\): not a speech profile; allowed: accuracy, balanced, live/);
});

test('GET /api/v1/me: every Account field, plan limits, plan change and top-up', async () => {
  const acct = newAccount({ balance: 12.5 });
  const me = await curl(`${server.url}/api/v1/me`, { key: acct.key });
  assert.equal(me.status, 200, me.body);
  const a = me.json;
  assert.equal(a.user_id, acct.accountId);
  assert.equal(a.email, acct.email);
  assert.equal(a.wallet_balance_usd, 12.5);
  assert.equal(a.subscription_tier, 'free');
  assert.deepEqual(a.limits, { max_file_minutes: 90, max_upload_bytes: 1073741824, max_concurrent_jobs: null });
  assert.deepEqual(Object.keys(a.links).sort(), ['api_keys', 'billing', 'dashboard', 'docs', 'support']);
  for (const [name, link] of Object.entries(a.links)) assert.match(link, /^https?:\/\/\S+$/, `links.${name}`);
  const k = a.api_key;
  assert.equal(k.permission, 'full');
  assert.deepEqual(k.scopes, ['read', 'write']);
  assert.equal(k.monthly_cap_usd, null);
  assert.equal(k.month_to_date_spend_usd, 0);
  assert.equal(k.id, acct.keyId);

  admin('plan', 'set', '--account', acct.accountId, '--plan', 'pro');
  const pro = await curl(`${server.url}/api/v1/me`, { key: acct.key });
  assert.equal(pro.json.subscription_tier, 'pro');
  assert.equal(pro.json.limits.max_file_minutes, 300);
  assert.equal(pro.json.limits.max_concurrent_jobs, 3);
  assert.equal(pro.json.limits.max_upload_bytes, 1073741824);

  admin('wallet', 'topup', '--account', acct.accountId, '--usd', '2.25');
  const topped = await curl(`${server.url}/api/v1/me`, { key: acct.key });
  assert.equal(topped.json.wallet_balance_usd, 14.75);
});
