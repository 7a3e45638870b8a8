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
  let accepted = 0;
  const seen = new Set();
  for (let round = 0; round < 4; round++) {
    const server = await startServer({ extraEnv: { SCRIBE_ALLOW_PRIVATE_URLS: '1' } });
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
  const server = await startServer({ extraEnv: { SCRIBE_ALLOW_PRIVATE_URLS: '1' } });
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
