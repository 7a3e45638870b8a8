// Realtime sessions survive the death of their server process: a `scribe
// serve` is killed with SIGKILL while several sessions stream (some
// mid-utterance, one whose connection had already dropped, one whose DELETE
// was just answered, one connected but silent, one never connected), then
// started again on the same database and object store with short realtime
// timers (heartbeat 1 s, stale window 6 s) so the sweep acts within seconds.
// A small campaign: the kill comes at a random moment, several rounds.
//
// Checked after each round, from the event log and the realtime tables
// (psql on the file's database): every session ends, its hold is settled
// for the audio that was persisted (billed seconds = ceil(stored samples /
// 16000), the stored pieces contiguous and summing to the count billed) or
// released when none was, EXACTLY once (one WalletHoldSettled or
// WalletHoldReleased per hold id, one RealtimeSessionEnded per session, one
// hold placed), the wallet agrees (balance down by the charges, nothing held,
// `scribe audit wallet` clean). A resume right after the restart either
// continues the same session (Begin resumed, the audio stored so far, the same
// transcription; billed once for all of it) or is refused with 410
// session_ended (4004 on the socket). At the end, every session with audio
// becomes a completed transcription and every one without is cancelled.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { startServer, newAccount, curl, admin, auditWallet, finished, DB } from './harness.mjs';
import { say, silence } from './media.mjs';
import { StreamClient, pcmOf } from './realtime_client.mjs';

const FAST = {
  SCRIBE_REALTIME_HEARTBEAT_SECONDS: '1', SCRIBE_REALTIME_STALE_SECONDS: '6',
  SCRIBE_WORKER_POLL_MS: '100', SCRIBE_WORKER_LEASE_SECONDS: '3',
};
const ROUNDS = 3;
const SAMPLE_RATE = 16000;
const psql = (sql) => execFileSync('psql', [DB, '-At', '-F', '|', '-c', sql], { encoding: 'utf8' }).trim();
const rows = (sql) => psql(sql).split('\n').filter(Boolean).map((l) => l.split('|'));
const q = (s) => `'${String(s).replace(/'/g, "''")}'`;
const usd = (x) => Math.round(x * 1e6);

let server, speech;

before(async () => {
  const one = say('slt', 'Good morning. The library opens at nine and closes at five.', 'rtk-one');
  const two = say('rms', 'Please bring your card and return the books on time.', 'rtk-two');
  const gap = pcmOf(silence(0.3, 'rtk-gap'));
  // Continuous speech with short pauses: whenever the kill comes, a turn is
  // most likely in progress.
  const a = pcmOf(one), b = pcmOf(two);
  speech = { one: a, loop: Buffer.concat([a, gap, b, gap, a, gap, b, gap, a, gap, b]) };
  server = await startServer({ extraEnv: FAST, workers: true });
});
after(async () => { await server?.stop(); });

const api = (path, opts = {}) => curl(`${server.url}/api/v1${path}`, opts);
// 800 ms of silence ends a turn here (the default is 400): a flite recording
// holding two sentences stays one turn.
const connect = (ticket, query = '') =>
  new StreamClient(`ws://127.0.0.1:${server.port}/api/v1/realtime/ws?ticket=${encodeURIComponent(ticket)}${query}&end_of_turn_silence_ms=800`);

async function until(what, fn, seconds) {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${seconds} s`);
    await sleep(100);
  }
}

// What the database holds of a session's audio: the count the session's row
// says is persisted and its pieces (contiguous from sample 0, summing to it).
function stored(sid) {
  // One statement, one snapshot: a live session may store a piece meanwhile.
  const [count, list] = rows(`select l.samples_persisted, coalesce((select json_agg(json_build_array(seq, ` +
    `start_sample, samples) order by seq) from realtime_audio_pieces p where p.session_id = l.session_id), '[]') ` +
    `from realtime_live l where l.session_id = ${q(sid)}`)[0];
  const live = Number(count);
  const pieces = JSON.parse(list).map(([seq, start, n]) => ({ seq: Number(seq), start: Number(start), n: Number(n) }));
  let at = 0;
  for (const p of pieces) {
    assert.equal(p.start, at, `${sid}: piece ${p.seq} starts at ${p.start}, not ${at} (${JSON.stringify(pieces)})`);
    at += p.n;
  }
  assert.equal(at, live, `${sid}: the pieces hold ${at} samples, the session says ${live}`);
  return live;
}

// The money of one session from the event log: exactly one hold placed, and
// exactly one settlement or release of it, and one end.
function ledger(sid) {
  const hold = `realtime-${sid}`;
  const placed = Number(psql(`select count(*) from events where type = 'WalletHoldPlaced' and data->>'hold_id' = ${q(hold)}`));
  const ends = rows(`select type, coalesce(data->>'charged_micros', '') from events where ` +
    `type in ('WalletHoldSettled', 'WalletHoldReleased') and data->>'hold_id' = ${q(hold)} order by position`);
  const ended = Number(psql(`select count(*) from events where type = 'RealtimeSessionEnded' and data->>'session_id' = ${q(sid)}`));
  return { placed, ends, ended };
}

function checkSettledOnce(s) {
  const samples = stored(s.id);
  const [status, billed, charge, reason] = rows(
    `select status, audio_seconds, charge_micros, end_reason from realtime_sessions where id = ${q(s.id)}`)[0];
  assert.equal(status, 'ended', `${s.kind} ${s.id}`);
  assert.equal(Number(billed), Math.ceil(samples / SAMPLE_RATE), `${s.kind}: billed for the stored audio`);
  const l = ledger(s.id);
  assert.equal(l.placed, 1, `${s.kind}: one hold placed`);
  assert.equal(l.ended, 1, `${s.kind}: ended once`);
  assert.equal(l.ends.length, 1, `${s.kind}: settled or released exactly once: ${JSON.stringify(l.ends)}`);
  if (samples > 0) {
    assert.equal(l.ends[0][0], 'WalletHoldSettled', `${s.kind}: audio was stored, so the hold is settled`);
    assert.equal(Number(l.ends[0][1]), Number(charge));
    assert.ok(Math.abs(Number(charge) - usd(Number(billed) / 3600)) <= 1, `${s.kind}: ${charge} micros for ${billed} s`);
  } else {
    assert.equal(l.ends[0][0], 'WalletHoldReleased', `${s.kind}: no audio stored, so the hold is released`);
    assert.equal(Number(charge), 0);
  }
  s.samples = samples;
  s.reason = reason;
  return Number(charge);
}

// One round: sessions in every state, the server killed at a random moment,
// started again; everything settles once.
async function round(n) {
  const acc = newAccount({ balance: 5 });
  admin('realtime', 'grant', '--key', acc.keyId);
  const me = async () => (await api('/me', { key: acc.key })).json;
  const sessions = [];
  const open = async (kind) => {
    const r = await api('/realtime/sessions', { method: 'POST', key: acc.key, body: { cap_minutes: 2 } });
    assert.equal(r.status, 201, r.body);
    const s = { kind, id: r.json.session_id, tid: r.json.transcription_id, ticket: r.json.ticket };
    sessions.push(s);
    return s;
  };
  const streaming = [];
  let killed = false;
  const talk = async (kind) => {
    const s = await open(kind);
    s.client = connect(s.ticket);
    await s.client.type('Begin');
    streaming.push(s.client.stream(speech.loop, { stop: () => killed }).catch(() => {}));
    return s;
  };
  // A connection that drops on its own before the others start, its 2 s of
  // audio stored: the session is live, no connection owns it.
  const dropped = await open('dropped');
  dropped.client = connect(dropped.ticket);
  await dropped.client.type('Begin');
  await dropped.client.stream(speech.one.subarray(0, 32000 * 2));
  dropped.client.terminate();
  await dropped.client.closed;
  await until('the dropped connection\'s audio is stored', () => stored(dropped.id) === 32000, 20);
  const speakers = [await talk('speaking'), await talk('speaking'), await talk('resumed')];
  const deleted = await talk('deleted');
  const silent = await open('silent');
  silent.client = connect(silent.ticket);
  await silent.client.type('Begin');
  await open('never connected');

  // The kill: a random moment a little into the speech (the first pieces
  // are stored each second), just after a DELETE was answered.
  await sleep(500 + Math.random() * 3000);
  const del = await api(`/realtime/sessions/${deleted.id}`, { method: 'DELETE', key: acc.key });
  assert.equal(del.status, 202, del.body);
  killed = true;
  await server.stop('SIGKILL');
  await Promise.all(streaming);
  const resumed = speakers[2];
  const storedAtKill = stored(resumed.id);

  server = await startServer({ extraEnv: FAST, workers: true });
  // A resume within the stale window continues the session, else it is over.
  const r = await api(`/realtime/sessions/${resumed.id}/resume`, { method: 'POST', key: acc.key });
  let termination;
  if (r.status === 201) {
    assert.equal(r.json.session_id, resumed.id);
    assert.equal(r.json.transcription_id, resumed.tid);
    const c = connect(r.json.ticket, '&last_turn_order=-1');
    const first = await c.next((m) => m.type === 'Begin' || m.type === 'Error', 'Begin or Error');
    if (first.type === 'Begin') {
      assert.equal(first.resumed, true);
      assert.equal(first.transcription_id, resumed.tid);
      assert.ok(Math.abs(first.audio_received_seconds - storedAtKill / SAMPLE_RATE) < 1e-6,
        `resumed at ${first.audio_received_seconds} s, ${storedAtKill} samples stored`);
      assert.equal(stored(resumed.id), storedAtKill, 'nothing stored between the kill and the resume');
      const more = await c.stream(speech.one.subarray(0, 32000 * 2));
      c.send({ type: 'Terminate' });
      termination = await c.type('Termination');
      assert.equal((await c.closed).code, 1000);
      assert.ok(Math.abs(termination.audio_duration_seconds - (storedAtKill + more / 2) / SAMPLE_RATE) < 1e-3,
        `billed for what was stored before and after: ${JSON.stringify(termination)} (${storedAtKill} + ${more / 2})`);
      resumed.outcome = 'continued';
    } else {
      assert.equal(first.code, 'session_ended', JSON.stringify(first));
      assert.equal((await c.closed).code, 4004);
      resumed.outcome = 'ended';
    }
  } else {
    assert.equal(r.status, 410, r.body);
    assert.equal(r.json.error.code, 'session_ended');
    resumed.outcome = 'ended';
  }

  // The sweep of the new process ends the rest (stale window 6 s).
  const ids = sessions.map((s) => q(s.id)).join(',');
  await until(`round ${n}: every session ends`, () =>
    psql(`select count(*) from realtime_sessions where id in (${ids}) and status <> 'ended'`) === '0', 40);
  // Past the sweep, a resume is refused and charges nothing.
  const late = await api(`/realtime/sessions/${dropped.id}/resume`, { method: 'POST', key: acc.key });
  assert.equal(late.status, 410, late.body);
  assert.equal(late.json.error.code, 'session_ended');
  let charged = 0;
  for (const s of sessions) charged += checkSettledOnce(s);
  if (termination) {
    assert.equal(termination.billed_seconds, Math.ceil(resumed.samples / SAMPLE_RATE));
    assert.equal(usd(termination.charge_usd), Number(psql(`select charge_micros from realtime_sessions where id = ${q(resumed.id)}`)));
  }
  for (const s of sessions) {
    const got = await api(`/realtime/sessions/${s.id}`, { key: acc.key });
    assert.equal(got.json.status, 'ended');
    // GET says the audio stored (seconds, not rounded); the bill is per started second.
    assert.ok(Math.abs(got.json.audio_seconds - s.samples / SAMPLE_RATE) < 1e-3, `${s.kind}: ${got.body}`);
    assert.ok(Math.abs(got.json.charge_usd * 1e6 - Math.ceil(s.samples / SAMPLE_RATE) * 1e6 / 3600) <= 1 ||
      s.samples === 0, `${s.kind}: ${got.body}`);
  }
  assert.ok(['deleted', 'stale'].includes(deleted.reason), `the deleted one ended as ${deleted.reason}`);
  // What a session had stored when the process died depends on how far its
  // recognition (which stores each second it has read) had come: on a busy
  // machine a strand may be seconds behind. The campaign as a whole must
  // have settled some stored audio through the sweep (checked at the end).
  assert.equal(dropped.samples, 32000);
  assert.equal(dropped.reason, 'stale');
  assert.equal(sessions.find((s) => s.kind === 'never connected').samples, 0);
  assert.equal(silent.samples, 0);
  const wallet = await me();
  assert.equal(wallet.wallet_held_usd, 0, JSON.stringify(wallet));
  assert.equal(usd(5 - wallet.wallet_balance_usd), charged, JSON.stringify(wallet));
  auditWallet(acc.accountId);
  return { acc, sessions, balance: wallet.wallet_balance_usd };
}

test(`SIGKILL of scribe serve while sessions stream, ${ROUNDS} times: every hold settled once for the stored audio`, async () => {
  const done = [];
  for (let n = 1; n <= ROUNDS; n++) done.push(await round(n));
  const swept = done.flatMap((d) => d.sessions).filter((s) => s.reason === 'stale' && s.samples > 0);
  assert.ok(swept.length > 0, 'some session with stored audio was ended by the sweep after a kill');
  // Later sweeps (of the later processes) changed nothing.
  for (const { acc, sessions } of done) {
    for (const s of sessions) assert.equal(ledger(s.id).ends.length, 1, `${s.kind} ${s.id}: still settled once`);
    auditWallet(acc.accountId);
  }
  // The transcriptions: those with audio complete, the others are cancelled.
  for (const { acc, sessions, balance } of done) {
    for (const s of sessions) {
      if (s.samples > 0) {
        const t = await finished(server, acc.key, s.tid);
        assert.equal(t.status, 'completed', `${s.kind}: ${JSON.stringify(t)}`);
        assert.ok(Math.abs(t.duration_seconds - s.samples / SAMPLE_RATE) < 0.05, `${s.kind}: ${t.duration_seconds} s`);
      } else {
        const t = await api(`/transcriptions/${s.tid}`, { key: acc.key });
        assert.equal(t.json.status, 'cancelled', `${s.kind}: ${t.body}`);
      }
    }
    const wallet = await me(acc);
    assert.equal(wallet.wallet_held_usd, 0);
    assert.equal(wallet.wallet_balance_usd, balance, 'no charge of their own for the transcriptions');
    auditWallet(acc.accountId);
  }
  console.log(done.map(({ sessions }) => sessions.map((s) => `${s.kind}:${s.samples}:${s.reason}${s.outcome ? ':' + s.outcome : ''}`).join(' ')).join('\n'));
});

const me = async (acc) => (await api('/me', { key: acc.key })).json;
