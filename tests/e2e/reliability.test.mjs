// Money under crashes: SIGKILL the server at random moments while creates are
// in flight, restart it, and check that every hold has its job and every job
// its hold, that nothing was charged twice, and that the audit is clean.
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { startServer, newAccount, curl, BIN, DB } from './harness.mjs';

const psql = (sql) => execFileSync('psql', [DB, '-At', '-c', sql], { encoding: 'utf8' }).trim();

test('SIGKILL during a stream of creates leaves no hold without a job and no job without a hold', async () => {
  // Plan pro pays nothing, so use pay-as-you-go with a wallet for ~30 of the
  // ~60 creates we try: refusals for funds are part of the stream.
  const acc = newAccount({ balance: 30 * (60 / 3600) + 0.0001 });
  // 60 creates and the /me below share one key within a minute: the default
  // limit of 60 would refuse /me whenever every create reached the server
  // before the kill. Rate limiting is not what this test is about.
  const env = { SCRIBE_ALLOW_PRIVATE_URLS: '1', SCRIBE_RATE_LIMIT_PER_MINUTE: '100000' };
  let accepted = 0;
  const seen = new Set();
  for (let round = 0; round < 4; round++) {
    const server = await startServer({ extraEnv: env });
    const inflight = [];
    for (let i = 0; i < 15; i++) {
      const key = `crash-${round}-${i}`;
      inflight.push(
        curl(`${server.url}/api/v1/transcriptions`, {
          method: 'POST', key: acc.key, headers: { 'Idempotency-Key': key },
          body: { source: 'external_url', url: `http://127.0.0.1:9/r${round}-${i}.mp3`, duration_seconds: 60 },
        }).catch(() => ({ status: 0 })),
      );
    }
    await sleep(Math.floor(Math.random() * 120));
    server.proc.kill('SIGKILL');
    const results = await Promise.all(inflight);
    for (const r of results) {
      if (r.status === 202) {
        accepted++;
        assert.ok(!seen.has(r.json.id), 'an id was handed out twice');
        seen.add(r.json.id);
      }
    }
    await server.exited;
  }
  const account = acc.accountId;
  // Every transcription of the account has exactly one hold placed, and a
  // hold exists only for a transcription that was created (same transaction).
  const created = psql(`select count(*) from events where type = 'TranscriptionCreated' and (data->>'account_id')::bigint = ${account}`);
  const holds = psql(`select count(*) from events where type = 'WalletHoldPlaced' and (data->>'account_id')::bigint = ${account}`);
  const jobs = psql(`select count(*) from jobs where account_id = ${account}`);
  const rows = psql(`select count(*) from transcriptions where account_id = ${account}`);
  assert.equal(holds, created, 'holds and created transcriptions differ');
  assert.equal(jobs, created, 'jobs and created transcriptions differ');
  assert.equal(rows, created);
  assert.ok(Number(created) >= accepted, 'a 202 answered for a transcription that does not exist');
  const orphans = psql(`select count(*) from events h where h.type = 'WalletHoldPlaced' and (h.data->>'account_id')::bigint = ${account}
    and not exists (select 1 from events c where c.type = 'TranscriptionCreated' and c.data->>'transcription_id' = h.data->>'transcription_id')`);
  assert.equal(orphans, '0');
  // Never more held than the wallet had.
  const held = Number(psql(`select coalesce(sum((data->>'amount_micros')::bigint), 0) from events where type = 'WalletHoldPlaced' and (data->>'account_id')::bigint = ${account}`));
  const deposited = Number(psql(`select coalesce(sum((data->>'amount_micros')::bigint), 0) from events where type = 'WalletDeposited' and (data->>'account_id')::bigint = ${account}`));
  assert.ok(held <= deposited, `held ${held} > deposited ${deposited}`);
  // Restarted server agrees, and the audit is clean.
  const server = await startServer({ extraEnv: env });
  try {
    const me = await curl(`${server.url}/api/v1/me`, { key: acc.key });
    assert.equal(me.status, 200);
    const audit = spawnSync(BIN, ['audit', 'wallet', '--account', String(account)], {
      env: { ...process.env, SCRIBE_DATABASE_URL: DB }, encoding: 'utf8',
    });
    assert.equal(audit.status, 0, audit.stdout + audit.stderr);
  } finally {
    await server.stop();
  }
});

test('SIGKILL during a stream of creates and retries: every attempt has one hold, settled at most once', async () => {
  // Jobs fail fast here (nothing listens on port 9: source_unavailable), so
  // workers keep turning attempts into retryable failures while retries and
  // creates arrive and the server is killed.
  const env = { SCRIBE_ALLOW_PRIVATE_URLS: '1', SCRIBE_WORKER_POLL_MS: '50' };
  const acc = newAccount({ balance: 1 });
  const body = (tag) => ({ source: 'external_url', url: `http://127.0.0.1:9/${tag}.mp3`, duration_seconds: 10 });
  const api = (server, path, opts) => curl(`${server.url}/api/v1${path}`, { key: acc.key, ...opts })
    .catch(() => ({ status: 0 }));
  let server = await startServer({ workers: true, extraEnv: env });
  const ids = [];
  for (let i = 0; i < 6; i++) {
    const r = await api(server, '/transcriptions', { method: 'POST', body: body(`seed-${i}`) });
    assert.equal(r.status, 202, r.body);
    ids.push(r.json.id);
  }
  const failed = async () => {
    const until = Date.now() + 30_000;
    while (Date.now() < until) {
      const n = Number(psql(`select count(*) from transcriptions where account_id = ${acc.accountId} and status = 'failed'`));
      if (n > 0) return n;
      await sleep(50);
    }
    return 0;
  };
  assert.ok(await failed() > 0, 'no job failed');
  let retried = 0;
  for (let round = 0; round < 5; round++) {
    if (round > 0) server = await startServer({ workers: true, extraEnv: env });
    await failed();
    const inflight = [];
    for (const id of ids) {
      inflight.push(api(server, `/transcriptions/${id}/retry`, { method: 'POST', body: {},
        headers: { 'Idempotency-Key': `retry-${round}-${id}` } }));
    }
    for (let i = 0; i < 4; i++) {
      inflight.push(api(server, '/transcriptions', { method: 'POST', body: body(`r${round}-${i}`),
        headers: { 'Idempotency-Key': `create-${round}-${i}` } }));
    }
    await sleep(Math.floor(Math.random() * 150));
    server.proc.kill('SIGKILL');
    for (const r of await Promise.all(inflight)) if (r.status === 202 && r.json?.stage === 'queued') retried++;
    await server.exited;
  }
  assert.ok(retried > 0, 'no retry or create was accepted');
  const account = acc.accountId;
  const n = (sql) => Number(psql(sql));
  const ofAccount = (type) => `select count(*) from events where type = '${type}' and (data->>'account_id')::bigint = ${account}`;
  // One hold per accepted attempt (creation or retry), placed in the same transaction.
  const attempts = n(ofAccount('TranscriptionCreated')) + n(ofAccount('TranscriptionRetried'));
  assert.equal(n(ofAccount('WalletHoldPlaced')), attempts, 'holds and accepted attempts differ');
  assert.equal(n(`select count(*) from (select data->>'hold_id' from events where type = 'WalletHoldPlaced'
    and (data->>'account_id')::bigint = ${account} group by 1 having count(*) > 1) d`), 0, 'a hold id placed twice');
  // Each hold is settled or released at most once.
  assert.equal(n(`select count(*) from (select data->>'hold_id' from events where type in ('WalletHoldSettled', 'WalletHoldReleased')
    and (data->>'account_id')::bigint = ${account} group by 1 having count(*) > 1) d`), 0, 'a hold was closed twice');
  // A job exactly for each transcription still processing, for its current attempt.
  assert.equal(n(`select count(*) from jobs where account_id = ${account}`),
    n(`select count(*) from transcriptions where account_id = ${account} and status = 'processing'`));
  assert.equal(n(`select count(*) from jobs j join transcriptions t on t.id = j.transcription_id
    where j.account_id = ${account} and j.attempt <> t.attempt`), 0, 'a job for an attempt that is not current');
  const audit = spawnSync(BIN, ['audit', 'wallet', '--account', String(account)],
    { env: { ...process.env, SCRIBE_DATABASE_URL: DB }, encoding: 'utf8' });
  assert.equal(audit.status, 0, audit.stdout + audit.stderr);
});
