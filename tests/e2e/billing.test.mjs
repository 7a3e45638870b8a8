// Billing integrity end to end: what is charged is what was transcribed.
// Real media (flite, ffmpeg) uploaded or served from a loopback server, the
// real `scribe serve` workers measuring and recognizing it, the wallet read
// back over HTTP and audited from the event log with `scribe audit wallet`.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { FAST_RECOGNIZER, startServer, newAccount, curl, envelope, finished, auditWallet, DB } from './harness.mjs';
import { dialogue, convert, seconds, startMediaServer } from './media.mjs';

const psql = (sql) => execFileSync('psql', [DB, '-At', '-c', sql], { encoding: 'utf8' }).trim();
const WORKER_ENV = { ...FAST_RECOGNIZER, SCRIBE_ALLOW_PRIVATE_URLS: '1', SCRIBE_WORKER_POLL_MS: '100' };
const usd = (billedSeconds) => Math.ceil(billedSeconds * 1e6 / 3600) / 1e6;

let media, server, talk, talkSeconds, long, longSeconds;
before(async () => {
  media = await startMediaServer();
  talk = convert(dialogue([
    { voice: 'slt', text: 'The harbour opens at six and the ferry leaves at seven every morning.' },
    { voice: 'rms', text: 'Tickets are sold on board, and children under five travel for free.' },
  ], 'billing-talk'), 'billing-talk.mp3');
  talkSeconds = seconds(talk);
  const lines = ['The committee met on Tuesday to discuss the plans for the river park.',
    'Several neighbours asked questions about the parking and the new bridge.',
    'The mayor promised an answer before the end of the month.'];
  const turns = [];
  for (let i = 0; i < 6; i++) turns.push({ voice: i % 2 ? 'awb' : 'slt', text: lines[i % 3] });
  long = convert(dialogue(turns, 'billing-long'), 'billing-long.mp3');
  longSeconds = seconds(long);
  server = await startServer({ workers: true, extraEnv: WORKER_ENV });
});
after(async () => { await server?.stop(); await media?.close(); });

const api = (srv, path, opts = {}) => curl(`${srv.url}/api/v1${path}`, opts);

const settledMicros = (id) => Number(psql(`select coalesce(sum((data->>'charged_micros')::bigint), 0) from events ` +
  `where type = 'WalletHoldSettled' and data->>'hold_id' like 'transcription-${id}-%'`));
const count = (sql) => Number(psql(`select count(*) from events where ${sql}`));

// Runs fn with the shared server stopped, so that jobs created meanwhile
// stay queued or go only to the servers fn starts; it is started again after.
async function workersPaused(fn) {
  await server.stop();
  try {
    return await fn();
  } finally {
    server = await startServer({ workers: true, extraEnv: WORKER_ENV });
  }
}

async function balance(srv, key) {
  const me = await api(srv, '/me', { key });
  assert.equal(me.status, 200, me.body);
  return me.json;
}

async function presignedUpload(srv, key, path) {
  const size = statSync(path).size;
  const t = await api(srv, '/uploads', { method: 'POST', key,
    body: { filename: 'talk.mp3', content_type: 'audio/mpeg', file_size: size } });
  assert.equal(t.status, 200, t.body);
  const up = await curl(t.json.upload_url, { method: 'PUT', headers: { 'Content-Type': 'audio/mpeg' },
    rawArgs: ['--data-binary', `@${path}`] });
  assert.equal(up.status, 200, up.body);
  return t.json.upload_id;
}

test('an under-declared upload is quoted, held and charged for its measured length', async () => {
  const acc = newAccount({ balance: 5 });
  const uploadId = await presignedUpload(server, acc.key, talk);
  const body = { source: 'upload', upload_id: uploadId, original_filename: 'talk.mp3', duration_seconds: 1 };
  const q = await api(server, '/quotes', { method: 'POST', key: acc.key, body });
  assert.equal(q.status, 200, q.body);
  assert.ok(Math.abs(q.json.duration_seconds - talkSeconds) < 0.2, `quoted ${q.json.duration_seconds} s`);
  assert.equal(q.json.retail_usd, usd(Math.ceil(q.json.duration_seconds)));

  const res = await api(server, '/transcriptions', { method: 'POST', key: acc.key, body });
  assert.equal(res.status, 202, res.body);
  assert.ok(Math.abs(res.json.duration_seconds - talkSeconds) < 0.2, `held for ${res.json.duration_seconds} s`);
  assert.ok(res.json.retail_usd > usd(1) * 5, `held ${res.json.retail_usd} USD`);
  const done = await finished(server, acc.key, res.json.id);
  assert.equal(done.status, 'completed', JSON.stringify(done.error));
  const t = (await api(server, `/transcriptions/${res.json.id}`, { key: acc.key })).json;
  assert.equal(t.charge_usd, usd(Math.ceil(t.duration_seconds)));
  assert.equal(settledMicros(res.json.id), Math.round(t.charge_usd * 1e6));
  const me = await balance(server, acc.key);
  assert.ok(Math.abs(me.wallet_balance_usd - (5 - t.charge_usd)) < 1e-9, JSON.stringify(me));
  auditWallet(acc.accountId);
});

test('a file that is not media is refused at upload create, nothing held', async () => {
  const acc = newAccount({ balance: 5 });
  const notMedia = media.write('notes-billing.mp3', 'these are meeting notes, not audio\n'.repeat(200));
  const uploadId = await presignedUpload(server, acc.key, notMedia);
  const res = await api(server, '/transcriptions', { method: 'POST', key: acc.key,
    body: { source: 'upload', upload_id: uploadId, duration_seconds: 60 } });
  assert.equal(envelope(assert, res, 400, 'invalid_request').field, 'upload_id');
  const me = await balance(server, acc.key);
  assert.equal(me.open_holds, 0);
  assert.equal(me.wallet_available_usd, 5);
});

test('an under-declared external_url is measured before recognition and charged its measured length', async () => {
  const acc = newAccount({ balance: 5 });
  const res = await api(server, '/transcriptions', { method: 'POST', key: acc.key,
    body: { source: 'external_url', url: media.url(talk), duration_seconds: 1 } });
  assert.equal(res.status, 202, res.body);
  assert.equal(res.json.retail_usd, usd(1));
  const id = res.json.id;
  const done = await finished(server, acc.key, id);
  assert.equal(done.status, 'completed', JSON.stringify(done.error));
  const t = (await api(server, `/transcriptions/${id}`, { key: acc.key })).json;
  assert.ok(Math.abs(t.duration_seconds - talkSeconds) < 0.3);
  assert.equal(t.charge_usd, usd(Math.ceil(t.duration_seconds)));
  assert.equal(settledMicros(id), Math.round(t.charge_usd * 1e6));
  // The first hold was released once and the measured one settled once.
  assert.equal(count(`type = 'WalletHoldReleased' and data->>'hold_id' = 'transcription-${id}-1'`), 1);
  assert.equal(count(`type = 'WalletHoldSettled' and data->>'hold_id' = 'transcription-${id}-1-measured'`), 1);
  assert.equal(count(`stream_id = 'transcription-${id}' and type = 'TranscriptionMeasured'`), 1);
  const me = await balance(server, acc.key);
  assert.ok(Math.abs(me.wallet_balance_usd - (5 - t.charge_usd)) < 1e-9);
  assert.equal(me.open_holds, 0);
  auditWallet(acc.accountId);
});

test('an over-declared external_url settles at the measured length', async () => {
  const acc = newAccount({ balance: 5 });
  const res = await api(server, '/transcriptions', { method: 'POST', key: acc.key,
    body: { source: 'external_url', url: media.url(talk), duration_seconds: 1800 } });
  assert.equal(res.status, 202, res.body);
  assert.equal(res.json.retail_usd, 0.5);
  const done = await finished(server, acc.key, res.json.id);
  assert.equal(done.status, 'completed', JSON.stringify(done.error));
  const t = (await api(server, `/transcriptions/${res.json.id}`, { key: acc.key })).json;
  assert.equal(t.charge_usd, usd(Math.ceil(t.duration_seconds)));
  assert.ok(t.charge_usd < 0.01);
  auditWallet(acc.accountId);
});

test('when covering the measured length is refused the job fails with that code and nothing is charged', async () => {
  // The wallet covers 1 s (0.000278 USD) but not the recording.
  const poor = newAccount({ balance: 0.001 });
  const capped = newAccount({ balance: 5 });
  const cases = [
    [poor, { duration_seconds: 1 }, 'insufficient_funds'],
    [capped, { duration_seconds: 1, max_charge_usd: 0.001 }, 'max_charge_exceeded'],
  ];
  for (const [acc, extra, code] of cases) {
    const before = await balance(server, acc.key);
    const res = await api(server, '/transcriptions', { method: 'POST', key: acc.key,
      body: { source: 'external_url', url: media.url(talk), ...extra } });
    assert.equal(res.status, 202, res.body);
    const done = await finished(server, acc.key, res.json.id);
    assert.equal(done.status, 'failed');
    assert.equal(done.error.code, code, JSON.stringify(done.error));
    assert.match(done.error.message, /Nothing was charged/);
    assert.doesNotMatch(done.error.message, /transcription-\d/);
    assert.equal(settledMicros(res.json.id), 0);
    assert.equal(count(`stream_id = 'transcription-${res.json.id}' and type = 'TranscriptionStageChanged' ` +
      `and data->>'stage' = 'transcribing'`), 0, 'no recognition work was started');
    const after = await balance(server, acc.key);
    assert.equal(after.wallet_balance_usd, before.wallet_balance_usd);
    assert.equal(after.open_holds, 0);
    auditWallet(acc.accountId);
  }
});

test('a worker killed between measuring and settling: one settlement for the measured length', async () => {
  const acc = newAccount({ balance: 5 });
  const env = { ...WORKER_ENV, SCRIBE_WORKER_LEASE_SECONDS: '3', SCRIBE_ASR_THREADS: '1' };
  const measured = (id) => count(`stream_id = 'transcription-${id}' and type = 'TranscriptionMeasured'`);
  let id;
  await workersPaused(async () => {
    const first = await startServer({ workers: true, extraEnv: env });
    try {
      const res = await api(first, '/transcriptions', { method: 'POST', key: acc.key,
        body: { source: 'external_url', url: media.url(long), duration_seconds: 2 } });
      assert.equal(res.status, 202, res.body);
      id = res.json.id;
      const until = Date.now() + 60_000;
      while (Date.now() < until && measured(id) === 0) await sleep(20);
    } finally {
      await first.stop('SIGKILL');
    }
    assert.equal(measured(id), 1, 'never measured');
    assert.equal(count(`stream_id = 'transcription-${id}' and type = 'TranscriptionCompleted'`), 0,
      'the kill came after completion; the recording is too short for this test');
    assert.equal(settledMicros(id), 0);

    const second = await startServer({ workers: true, extraEnv: env });
    try {
      const done = await finished(second, acc.key, id);
      assert.equal(done.status, 'completed', JSON.stringify(done.error));
    } finally {
      await second.stop();
    }
  });
  // Measured once (the second worker found the attempt measured), the first
  // hold released once, the measured hold settled once, for the measured length.
  assert.equal(measured(id), 1);
  assert.equal(count(`type = 'WalletHoldReleased' and data->>'hold_id' = 'transcription-${id}-1'`), 1);
  assert.equal(count(`type = 'WalletHoldSettled' and data->>'hold_id' like 'transcription-${id}-%'`), 1);
  const t = (await api(server, `/transcriptions/${id}`, { key: acc.key })).json;
  assert.ok(Math.abs(t.duration_seconds - longSeconds) < 0.3, `${t.duration_seconds} vs ${longSeconds}`);
  assert.equal(t.charge_usd, usd(Math.ceil(t.duration_seconds)));
  assert.equal(settledMicros(id), Math.round(t.charge_usd * 1e6));
  auditWallet(acc.accountId);
});

test('pay-as-you-go fair use counts measured seconds, so under-declaring cannot pass the wall', async () => {
  const acc = newAccount({ balance: 5 });
  // 3,590 of the window's 3,600 s: a job declared that long whose source is
  // gone fails before it is measured, and the window keeps its seconds.
  const missing = media.write('billing-gone.mp3', 'x');
  media.gone(missing);
  const big = await api(server, '/transcriptions', { method: 'POST', key: acc.key,
    body: { source: 'external_url', url: media.url(missing), duration_seconds: 3590 } });
  assert.equal(big.status, 202, big.body);
  assert.equal((await finished(server, acc.key, big.json.id)).status, 'failed');
  // Declared 1 s, it fits under the wall; measured, it does not.
  const res = await api(server, '/transcriptions', { method: 'POST', key: acc.key,
    body: { source: 'external_url', url: media.url(long), duration_seconds: 1 } });
  assert.equal(res.status, 202, res.body);
  const done = await finished(server, acc.key, res.json.id);
  assert.equal(done.status, 'failed');
  assert.equal(done.error.code, 'rate_limited', JSON.stringify(done.error));
  assert.equal(settledMicros(res.json.id), 0);
  auditWallet(acc.accountId);
});

test('eight concurrent retries of one failed transcription: one 202, the rest answered like a later retry', async () => {
  const acc = newAccount({ balance: 5 });
  const missing = media.write('billing-missing.mp3', 'x');
  media.gone(missing);
  const res = await api(server, '/transcriptions', { method: 'POST', key: acc.key,
    body: { source: 'external_url', url: media.url(missing), duration_seconds: 10 } });
  assert.equal(res.status, 202, res.body);
  const id = res.json.id;
  assert.equal((await finished(server, acc.key, id)).status, 'failed');

  await workersPaused(async () => {
    const api0 = await startServer({ workers: false, extraEnv: WORKER_ENV });
    try {
      const answers = await Promise.all(Array.from({ length: 8 }, () =>
        api(api0, `/transcriptions/${id}/retry`, { method: 'POST', key: acc.key, body: {} })));
      const statuses = answers.map((a) => a.status).sort();
      assert.deepEqual(statuses, [202, 400, 400, 400, 400, 400, 400, 400], answers.map((a) => a.body).join('\n'));
      const later = await api(api0, `/transcriptions/${id}/retry`, { method: 'POST', key: acc.key, body: {} });
      const expected = envelope(assert, later, 400, 'invalid_request');
      for (const a of answers.filter((x) => x.status === 400)) {
        const e = envelope(assert, a, 400, 'invalid_request');
        assert.equal(e.message, expected.message);
        assert.doesNotMatch(e.message, /transcription-\d|hold/);
      }
    } finally {
      await api0.stop();
    }
  });
  assert.equal(count(`type = 'WalletHoldPlaced' and data->>'transcription_id' = '${id}'`), 2, 'one hold per attempt');
  assert.equal((await finished(server, acc.key, id)).status, 'failed');
  auditWallet(acc.accountId);
});

test('GET /me shows the available balance and the open holds', async () => {
  const acc = newAccount({ balance: 0.6 });
  await workersPaused(async () => {
    const api0 = await startServer({ workers: false, extraEnv: WORKER_ENV });
    try {
      let me = await balance(api0, acc.key);
      assert.deepEqual([me.wallet_balance_usd, me.wallet_available_usd, me.wallet_held_usd, me.open_holds],
        [0.6, 0.6, 0, 0]);
      const res = await api(api0, '/transcriptions', { method: 'POST', key: acc.key,
        body: { source: 'external_url', url: media.url(talk), duration_seconds: 1800 } });
      assert.equal(res.status, 202, res.body);
      me = await balance(api0, acc.key);
      assert.deepEqual([me.wallet_balance_usd, me.wallet_available_usd, me.wallet_held_usd, me.open_holds],
        [0.6, 0.1, 0.5, 1]);
      // The 402 speaks of the same available amount.
      const over = await api(api0, '/transcriptions', { method: 'POST', key: acc.key,
        body: { source: 'external_url', url: media.url(talk), duration_seconds: 1000 } });
      assert.equal(envelope(assert, over, 402, 'insufficient_funds').available_usd, me.wallet_available_usd);
      const del = await api(api0, `/transcriptions/${res.json.id}`, { method: 'DELETE', key: acc.key });
      assert.equal(del.status, 200, del.body);
      me = await balance(api0, acc.key);
      assert.deepEqual([me.wallet_available_usd, me.open_holds], [0.6, 0]);
    } finally {
      await api0.stop();
    }
  });
  auditWallet(acc.accountId);
});
