// A clip render survives the death of its worker: the server runs no workers,
// a separate `scribe worker` (short lease) transcribes a recording and starts
// rendering a 45 s karaoke clip of it, and is killed with SIGKILL (its FFmpeg
// child too, as when a machine dies) while FFmpeg runs. A second worker takes
// the clip once the lease has run out and renders it. Checked: one clip, it
// completes with the right file, and the wallet is charged 0.05 USD exactly
// once for it: one hold, settled once, never released, and the audit agrees.
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  startServer, startWorker, childPids, newAccount, curl, envelope, finished, auditWallet, clipFinished, clipHolds, DB,
} from './harness.mjs';
import { dialogue, convert, startMediaServer, download, probe, FOUR_TOPICS } from './media.mjs';

const psql = (sql) => execFileSync('psql', [DB, '-At', '-c', sql], { encoding: 'utf8' }).trim();
const ENV = { SCRIBE_ALLOW_PRIVATE_URLS: '1', SCRIBE_WORKER_POLL_MS: '100', SCRIBE_RATE_LIMIT_PER_MINUTE: '100000' };
const WORKER_ENV = { ...ENV, SCRIBE_WORKER_SLOTS: '1', SCRIBE_CLIP_SLOTS: '1', SCRIBE_WORKER_LEASE_SECONDS: '3' };
const START = 5, END = 50; // a 45 s clip

async function until(what, fn, seconds) {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${seconds} s`);
    await sleep(50);
  }
}

// A process that has exited (reaped, or a zombie nobody reaped yet).
const gone = (pid) => {
  try { return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].startsWith('Z'); } catch { return true; }
};

// The FFmpeg children of `pid` that render (encode H.264), not probes.
const renders = (pid) => childPids(pid, 'ffmpeg').filter((p) => {
  try { return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('libx264'); } catch { return false; }
});

// The common start: a recording transcribed by a separate worker, a 45 s
// karaoke clip of it requested and FFmpeg rendering it for 1.5 s.
async function renderingClip(ctx) {
  ctx.media = await startMediaServer();
  // Two passages, about 80 s of speech.
  const mp3 = convert(dialogue(FOUR_TOPICS.slice(0, 2), 'clips-kill', 1.0), 'clips-kill.mp3');
  ctx.server = await startServer({ args: ['--no-workers'], extraEnv: { ...ENV, SCRIBE_CLIP_SLOTS: '0' } });
  ctx.worker = startWorker({ extraEnv: WORKER_ENV });
  const api = (path, opts = {}) => curl(`${ctx.server.url}/api/v1${path}`, opts);
  const acc = newAccount({ balance: 5 });
  const me = async () => (await api('/me', { key: acc.key })).json;
  const t = await api('/transcriptions', { method: 'POST', key: acc.key,
    body: { source: 'external_url', url: ctx.media.url(mp3) } });
  assert.equal(t.status, 202, t.body);
  const tid = t.json.id;
  const done = await finished(ctx.server, acc.key, tid, { limitSeconds: 600 });
  assert.equal(done.status, 'completed', JSON.stringify(done.error));
  assert.ok(done.duration_seconds > END, `recording of ${done.duration_seconds} s`);
  const before = await me();
  const res = await api(`/transcriptions/${tid}/clips`, { method: 'POST', key: acc.key,
    body: { start_seconds: START, end_seconds: END, aspect: '9:16', style: 'karaoke' } });
  assert.equal(res.status, 202, res.body);
  const id = res.json.id;
  assert.equal(res.json.charge_usd, 0.05);
  await until('the clip is claimed', () => psql(`select count(*) from clip_leases where clip_id = ${id}`) === '1', 60);
  const ffmpeg = await until('FFmpeg renders', () => { const r = renders(ctx.worker.pid); return r.length ? r : null; }, 60);
  await sleep(1500);
  return { api, acc, me, tid, id, before, ffmpeg };
}

// After the second worker: one clip, completed with the right file, charged
// 0.05 USD once (one hold, settled once, never released).
async function renderedOnce(ctx, { api, acc, me, tid, id, before }) {
  const clip = await clipFinished(ctx.server, acc.key, tid, id, { limitSeconds: 400 });
  assert.equal(clip.status, 'completed', JSON.stringify(clip.error));
  assert.equal(clip.charge_usd, 0.05);
  assert.ok(Math.abs(clip.duration_seconds - (END - START)) <= 0.1, `duration ${clip.duration_seconds}`);
  const file = download(clip.mp4_url, `clip-${id}-kill.mp4`);
  assert.equal(file.status, 200);
  const p = probe(file.path);
  assert.ok(Math.abs(Number(p.format.duration) - (END - START)) <= 0.1, `file of ${p.format.duration} s`);
  const v = p.streams.find((s) => s.codec_type === 'video');
  assert.deepEqual([v.codec_name, v.width, v.height], ['h264', 1080, 1920]);
  assert.equal(p.streams.find((s) => s.codec_type === 'audio')?.codec_name, 'aac');
  const list = await api(`/transcriptions/${tid}/clips`, { key: acc.key });
  assert.deepEqual(list.json.data.map((c) => c.id), [id]);
  const after = await me();
  assert.ok(Math.abs(after.wallet_balance_usd - (before.wallet_balance_usd - 0.05)) < 1e-9, JSON.stringify(after));
  assert.equal(after.open_holds, before.open_holds);
  const ledger = clipHolds(acc.accountId, id);
  assert.equal(ledger.holds.length, 1, 'one hold placed');
  assert.deepEqual(ledger.settled, [50000], 'settled once');
  assert.equal(ledger.released, 0, 'never released');
  assert.equal(psql(`select count(*) from events where type = 'WalletHoldPlaced' and ` +
    `(data->>'account_id')::bigint = ${acc.accountId} and data->>'purpose' = 'clip'`), '1', 'no second hold');
  assert.equal(psql(`select string_agg(type, ',' order by version) from events where stream_id = 'clip-${id}'`),
    'ClipRequested,ClipCompleted');
  auditWallet(acc.accountId);
}

async function cleanUp(ctx, killed = []) {
  if (ctx.worker) await ctx.worker.stop('SIGTERM');
  for (const pid of killed) if (!gone(pid)) process.kill(pid, 'SIGKILL');
  if (ctx.server) await ctx.server.stop();
  if (ctx.media) await ctx.media.close();
}

test('SIGKILL of the worker while FFmpeg renders: the clip is rendered by the next worker and charged once', async () => {
  const ctx = {};
  const killed = [];
  try {
    const c = await renderingClip(ctx);
    const { api, acc, me, tid, id, before, ffmpeg } = c;
    // Rendering is still `queued` to the API.
    const rendering = await api(`/transcriptions/${tid}/clips/${id}`, { key: acc.key });
    assert.equal(rendering.json.status, 'queued', rendering.body);
    assert.deepEqual(renders(ctx.worker.pid), ffmpeg, 'FFmpeg is still rendering when the worker is killed');
    await ctx.worker.stop('SIGKILL');
    for (const pid of ffmpeg) {
      try { process.kill(pid, 'SIGKILL'); killed.push(pid); } catch { /* gone already */ }
    }
    await until('the killed FFmpeg is gone', () => killed.every(gone), 10);
    // Nothing was decided: still queued, still held, nothing settled.
    const mid = await api(`/transcriptions/${tid}/clips/${id}`, { key: acc.key });
    assert.equal(mid.status, 200, mid.body);
    assert.equal(mid.json.status, 'queued');
    const held = await me();
    assert.equal(held.open_holds, before.open_holds + 1);
    assert.equal(held.wallet_balance_usd, before.wallet_balance_usd);
    assert.deepEqual(clipHolds(acc.accountId, id).settled, []);

    // The next worker takes it once the lease has run out.
    ctx.worker = startWorker({ extraEnv: WORKER_ENV });
    await until('the next worker claims the clip again', () =>
      psql(`select claims from clip_leases where clip_id = ${id}`) === '2', 60);
    await renderedOnce(ctx, c);
    // Nothing more happens to it afterwards.
    await sleep(4000);
    assert.deepEqual(clipHolds(acc.accountId, id).settled, [50000]);
    assert.equal((await api(`/transcriptions/${tid}/clips/${id}`, { key: acc.key })).json.status, 'completed');
    envelope(assert, await api(`/transcriptions/${tid}/clips/${id}?wait=0`, { key: acc.key }), 400, 'invalid_request');
  } finally {
    await cleanUp(ctx, killed);
  }
});

test('SIGTERM of the worker while FFmpeg renders: FFmpeg stops at once, the clip is handed back uncounted and charged once', async () => {
  const ctx = {};
  try {
    const c = await renderingClip(ctx);
    const { id } = c;
    const stopped = Date.now();
    await ctx.worker.stop('SIGTERM');
    const took = Date.now() - stopped;
    assert.ok(took < 8000, `the worker took ${took} ms to stop`);
    await until('its FFmpeg is gone', () => c.ffmpeg.every(gone), 5);
    // Handed back: the claim is not counted and the lease is already over.
    assert.equal(psql(`select claims || ':' || (expires_at < now()) from clip_leases where clip_id = ${id}`), '0:true');
    assert.equal(psql(`select status from clips where id = ${id}`), 'queued');
    ctx.worker = startWorker({ extraEnv: WORKER_ENV });
    await renderedOnce(ctx, c);
  } finally {
    await cleanUp(ctx);
  }
});
