// The AssemblyAI v3 alias (docs/realtime_assemblyai_wire.md) driven by the
// real `assemblyai` npm SDK: a program written to its docs works against
// scribe with only its base URLs and key changed. The SDK insists on
// https:/wss:, so the server sits behind a TLS terminator with a certificate
// made here (tls_terminator.mjs), and the SDK program
// (assemblyai_sdk_client.mjs) runs as a child process that trusts it through
// NODE_EXTRA_CA_CERTS. Checked: the temporary token is a session's ticket,
// Begin's id is the session, partial and final turns, close() waits for
// Termination, the money is settled once, the key on the socket, a refused
// sample rate leaves the ticket unspent, and the refusals of keys.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { startServer, newAccount, newKey, curl, admin, auditWallet } from './harness.mjs';
import { say, silence, MEDIA_DIR } from './media.mjs';
import { StreamClient } from './realtime_client.mjs';
import { makeCertificate, startTlsTerminator, trustEnv } from './tls_terminator.mjs';

let srv, tls, idleSrv, idleTls, cert, speechWav, quietWav;
const CLIENT = new URL('./assemblyai_sdk_client.mjs', import.meta.url).pathname;

before(async () => {
  // Two sentences 1.5 s apart: two turns at our default end-of-turn silence.
  const one = say('slt', 'The library opens at nine and closes at five.', 'aai-one');
  const two = say('rms', 'Please bring your card and return the books on time.', 'aai-two');
  const gap = silence(1.5, 'aai-gap');
  speechWav = join(MEDIA_DIR, 'aai-two-turns.wav');
  execFileSync('sox', [one, gap, two, gap, speechWav]);
  quietWav = silence(1, 'aai-quiet');
  cert = makeCertificate();
  // A second server idles sessions out after 2 s (the default is 30 s).
  [srv, idleSrv] = await Promise.all([startServer(),
    startServer({ extraEnv: { SCRIBE_REALTIME_IDLE_SECONDS: '2', SCRIBE_REALTIME_HEARTBEAT_SECONDS: '1' } })]);
  [tls, idleTls] = await Promise.all([startTlsTerminator(srv.port, cert), startTlsTerminator(idleSrv.port, cert)]);
});
after(async () => { await Promise.all([tls?.close(), idleTls?.close()]); await Promise.all([srv?.stop(), idleSrv?.stop()]); });

const httpsBase = () => `https://127.0.0.1:${tls.port}`;
const wssBase = () => `wss://127.0.0.1:${tls.port}/v3/ws`;

// Runs the SDK program with `opts`; resolves with its events once it exits.
function runSdk(opts) {
  const child = spawn(process.execPath, [CLIENT, JSON.stringify({
    streamingBaseUrl: httpsBase(), websocketBaseUrl: wssBase(), wav: quietWav, ...opts,
  })], { env: trustEnv(cert.certPath), stdio: ['ignore', 'pipe', 'pipe'], cwd: new URL('.', import.meta.url).pathname });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { err += d; });
  const killer = setTimeout(() => child.kill('SIGKILL'), 90000);
  return new Promise((resolve) => child.on('exit', (code) => {
    clearTimeout(killer);
    const events = out.split('\n').filter(Boolean).map((l) => JSON.parse(l));
    const of = (name) => events.filter((e) => e.event === name);
    resolve({ code, events, of, one: (name) => of(name)[0], stderr: err, dump: `${out}\n${err}` });
  }));
}

function realtimeAccount(opts = {}) {
  const a = newAccount(opts);
  admin('realtime', 'grant', '--key', a.keyId);
  return a;
}
const session = async (key, id) => curl(`${srv.url}/api/v1/realtime/sessions/${id}`, { key });
const me = async (key) => (await curl(`${srv.url}/api/v1/me`, { key })).json;
const usd = (x) => Math.round(x * 1e6);

// What every successful SDK run shares: Begin's id is an ended session of
// this account, turns with partials and a final of the spoken words, close()
// returned after Termination, no error, the money settled once.
async function assertStreamed(run, account, { balance, capMinutes }) {
  assert.equal(run.code, 0, run.dump);
  assert.deepEqual(run.of('error'), [], run.dump);
  assert.deepEqual(run.of('close'), [], 'the SDK calls no close listener after close()');
  const open = run.one('open');
  assert.ok(open, run.dump);
  assert.match(open.id, /^rt_[0-9a-f]{24}$/);
  // expires_at: integer Unix seconds when the cap runs out.
  assert.ok(Number.isInteger(open.expires_at), JSON.stringify(open));
  assert.ok(open.expires_at <= open.t / 1000 + capMinutes * 60 + 1 && open.expires_at >= open.t / 1000 + capMinutes * 60 - 30,
    JSON.stringify(open));

  const turns = run.of('turn');
  const partials = turns.filter((t) => !t.end_of_turn);
  const finals = turns.filter((t) => t.end_of_turn);
  assert.ok(partials.length >= 1, `partials: ${run.dump}`);
  assert.ok(finals.length >= 1, `finals: ${run.dump}`);
  const heard = finals.map((f) => f.transcript).join(' ');
  assert.match(heard, /library|nine|five|opens|closes/);
  assert.match(heard, /card|books|time|return/);
  for (const t of turns) {
    assert.equal(t.turn_is_formatted, false);
    assert.equal(typeof t.transcript, 'string');
    assert.equal(typeof t.end_of_turn_confidence, 'number');
    assert.equal(t.utterance, t.end_of_turn ? t.transcript : '');
    for (const w of t.words) {
      assert.ok(Number.isInteger(w.start) && Number.isInteger(w.end) && w.end >= w.start, JSON.stringify(w));
      // A partial's words are guesses: not final, confidence 0 (a number,
      // as the SDK's types ask, where our native wire says null).
      assert.equal(w.word_is_final, t.end_of_turn, JSON.stringify(w));
      if (t.end_of_turn) assert.ok(w.confidence >= 0 && w.confidence <= 1, JSON.stringify(w));
      else assert.equal(w.confidence, 0);
    }
  }
  // One final per turn order, in order from 0.
  assert.deepEqual(finals.map((f) => f.turn_order), finals.map((_, i) => i));
  // close() sent Terminate and returned once Termination came: the last frame.
  const closed = run.one('closed');
  assert.ok(closed, run.dump);
  assert.equal(closed.raw.at(-1), 'Termination', JSON.stringify(closed.raw));

  const s = (await session(account.key, open.id)).json;
  assert.equal(s.status, 'ended', JSON.stringify(s));
  assert.equal(s.end_reason, 'terminated');
  assert.equal(s.cap_minutes, capMinutes);
  const streamed = run.one('streamed').bytes / 32000;
  assert.ok(Math.abs(s.audio_seconds - streamed) < 0.01, JSON.stringify([s, streamed]));
  // Billed per started second of the audio received, once.
  assert.ok(Math.abs(usd(s.charge_usd) - usd(Math.ceil(streamed - 1e-9) / 3600)) <= 1, JSON.stringify(s));
  const wallet = await me(account.key);
  assert.equal(wallet.wallet_held_usd, 0);
  assert.ok(Math.abs(usd(balance - wallet.wallet_balance_usd) - usd(s.charge_usd)) <= 1, JSON.stringify([wallet, s]));
  auditWallet(account.accountId);
  return { open, session: s };
}

test('createTemporaryToken makes a session; the SDK streams with its token: partials, a final, close() after Termination, settled once', async () => {
  const a = realtimeAccount({ balance: 5 });
  // formatTurns, as AssemblyAI's examples set it: turns stay unformatted here.
  const run = await runSdk({
    apiKey: a.key, wav: speechWav, awaitFinal: true, formatTurns: true, minTurnSilence: 800,
    tokenParams: { expires_in_seconds: 60, max_session_duration_seconds: 120 },
  });
  const token = run.one('token')?.token;
  assert.equal(typeof token, 'string', run.dump);
  // max_session_duration_seconds became the cap: 120 s is 2 minutes.
  await assertStreamed(run, a, { balance: 5, capMinutes: 2 });
  // 800 ms of silence (the SDK's minTurnSilence) ends a turn in the 1.5 s
  // pause between the recordings, not inside one.
  const finals = run.of('turn').filter((t) => t.end_of_turn);
  assert.deepEqual(finals.map((f) => f.turn_order), [0, 1], run.dump);
  assert.ok(tls.connections() >= 2, 'the token request and the socket went through TLS');

  // The token is the session's single-use ticket: spent now.
  const again = new StreamClient(`ws://127.0.0.1:${srv.port}/v3/ws?token=${encodeURIComponent(token)}&sample_rate=16000`);
  const err = await again.type('Error');
  assert.equal(err.error_code, 1008, JSON.stringify(err));
  assert.equal(typeof err.error, 'string');
  assert.equal((await again.closed).code, 1008);
});

test('the API key on the socket (no token): default cap; minTurnSilence and forceEndpoint() are honoured', async () => {
  const a = realtimeAccount({ balance: 5 });
  // A 3 s end-of-turn silence (the SDK's min_turn_silence) keeps both
  // sentences in one turn; forceEndpoint() ends it before close() is called.
  const run = await runSdk({ apiKey: a.key, useKey: true, wav: speechWav, minTurnSilence: 3000, forceEndpoint: true, awaitFinal: true });
  assert.equal(run.of('token').length, 0);
  await assertStreamed(run, a, { balance: 5, capMinutes: 60 });
  const finals = run.of('turn').filter((t) => t.end_of_turn);
  assert.equal(finals.length, 1, run.dump);
  const at = (e) => run.events.indexOf(e);
  assert.ok(at(run.one('forced')) < at(finals[0]) && at(finals[0]) < at(run.one('closing')),
    'the final came after forceEndpoint(), before close()');
});

test('sample_rate other than 16000 is refused with 3006 before the ticket is spent', async () => {
  const a = realtimeAccount({ balance: 5 });
  const refused = await runSdk({ apiKey: a.key, sampleRate: 8000 });
  const token = refused.one('token')?.token;
  assert.ok(token, refused.dump);
  const failed = refused.one('connect_failed');
  assert.ok(failed, refused.dump);
  assert.equal(failed.code, 3006, refused.dump);
  assert.match(failed.message, /sample_rate/);
  assert.equal(refused.of('open').length, 0);
  // The SDK retried the same URL and met the same refusal, not "ticket
  // used"; the ticket still opens a session at 16 kHz.
  const run = await runSdk({ apiKey: a.key, token });
  assert.equal(run.code, 0, run.dump);
  const open = run.one('open');
  assert.ok(open, run.dump);
  assert.ok(run.one('closed'), run.dump);
  const s = (await session(a.key, open.id)).json;
  assert.equal(s.status, 'ended', JSON.stringify(s));
  assert.equal(s.cap_minutes, 60, 'expires_in_seconds alone: the default cap');
  assert.equal((await me(a.key)).wallet_held_usd, 0);
  auditWallet(a.accountId);
});

test('refusals: a read-only key gets 403 from /v3/token, a key without realtime is refused on both paths', async () => {
  const a = realtimeAccount({ balance: 5 });
  const ro = newKey(a.accountId, '--permission', 'read_only');
  admin('realtime', 'grant', '--key', ro.keyId);
  const plain = newAccount({ balance: 5 }); // realtime not granted
  const tokenUrl = `${srv.url}/v3/token?expires_in_seconds=60`;

  // As the SDK sends it: the key bare in Authorization; errors as {error: string}.
  const roHttp = await curl(tokenUrl, { headers: { Authorization: ro.key } });
  assert.equal(roHttp.status, 403, roHttp.body);
  assert.equal(typeof roHttp.json.error, 'string');
  assert.equal(roHttp.headers['x-error-code'], 'scope_forbidden');
  const plainHttp = await curl(tokenUrl, { headers: { Authorization: plain.key } });
  assert.equal(plainHttp.status, 400, plainHttp.body);
  assert.equal(typeof plainHttp.json.error, 'string');
  assert.equal(plainHttp.headers['x-error-code'], 'unsupported_pipeline');

  const [roToken, plainToken, roSocket, plainSocket, badKey] = await Promise.all([
    runSdk({ apiKey: ro.key, tokenOnly: true }),
    runSdk({ apiKey: plain.key, tokenOnly: true }),
    runSdk({ apiKey: ro.key, useKey: true }),
    runSdk({ apiKey: plain.key, useKey: true }),
    runSdk({ apiKey: 'key_live_not_a_real_key', useKey: true }),
  ]);
  // The SDK throws the body's error text (not "[object Object]").
  assert.equal(roToken.one('token_error')?.message, roHttp.json.error, roToken.dump);
  assert.equal(plainToken.one('token_error')?.message, plainHttp.json.error, plainToken.dump);
  for (const run of [roSocket, plainSocket, badKey]) {
    const failed = run.one('connect_failed');
    assert.ok(failed, run.dump);
    assert.equal(failed.code, 1008, run.dump);
    assert.equal(run.of('open').length, 0);
  }
  for (const acc of [a, plain]) {
    assert.equal((await me(acc.key)).wallet_held_usd, 0);
    assert.equal((await me(acc.key)).wallet_balance_usd, 5);
    auditWallet(acc.accountId);
  }
});

test('a ticket from POST /api/v1/realtime/sessions is a token too; /v3/token tickets live 60 s whatever is asked', async () => {
  const a = realtimeAccount({ balance: 5 });
  const created = await curl(`${srv.url}/api/v1/realtime/sessions`, { method: 'POST', key: a.key, body: { cap_minutes: 1 } });
  assert.equal(created.status, 201, created.body);
  const run = await runSdk({ apiKey: a.key, token: created.json.ticket });
  assert.equal(run.one('open')?.id, created.json.session_id, run.dump);
  assert.ok(run.one('closed'), run.dump);
  // A 1-minute cap warns at once that less than a minute is left: an
  // integer warning_code, as the SDK's types have it (the close it foretells).
  const warning = run.one('warning');
  assert.equal(warning?.warning_code, 3008, run.dump);
  assert.equal(typeof warning.warning, 'string');

  const asked = await curl(`${srv.url}/v3/token?expires_in_seconds=600&max_session_duration_seconds=150`,
    { headers: { Authorization: a.key } });
  assert.equal(asked.status, 200, asked.body);
  assert.deepEqual(Object.keys(asked.json).sort(), ['expires_in_seconds', 'token']);
  assert.ok(asked.json.expires_in_seconds >= 1 && asked.json.expires_in_seconds <= 60, asked.body);
  assert.equal(asked.headers['cache-control'], 'no-store');
  // A plain v3 client (no SDK): token in the query, Terminate, integer durations.
  const c = new StreamClient(`ws://127.0.0.1:${srv.port}/v3/ws?token=${encodeURIComponent(asked.json.token)}&sample_rate=16000&speech_model=whatever`);
  const begin = await c.type('Begin');
  assert.deepEqual(Object.keys(begin).filter((k) => !k.startsWith('_')).sort(), ['expires_at', 'id', 'type']);
  c.send({ type: 'Terminate' });
  const term = await c.type('Termination');
  assert.ok(Number.isInteger(term.audio_duration_seconds) && Number.isInteger(term.session_duration_seconds), JSON.stringify(term));
  assert.equal((await c.closed).code, 1000);
  // 150 s is 2 whole minutes (rounded down, never longer than asked).
  assert.equal((await session(a.key, begin.id)).json.cap_minutes, 2);
  assert.equal((await me(a.key)).wallet_held_usd, 0);
  auditWallet(a.accountId);
});

test('idle: the SDK sees the Error 3008 and the close 3008; the session ends settled', async () => {
  const a = newAccount({ balance: 5 });
  admin('realtime', 'grant', '--key', a.keyId);
  const run = await runSdk({
    apiKey: a.key, silent: true,
    streamingBaseUrl: `https://127.0.0.1:${idleTls.port}`, websocketBaseUrl: `wss://127.0.0.1:${idleTls.port}/v3/ws`,
  });
  const open = run.one('open');
  assert.ok(open, run.dump);
  const error = run.one('error');
  assert.equal(error?.code, 3008, run.dump);
  const close = run.one('close');
  assert.equal(close?.code, 3008, run.dump);
  assert.ok(run.events.indexOf(error) < run.events.indexOf(close));
  const s = (await curl(`${idleSrv.url}/api/v1/realtime/sessions/${open.id}`, { key: a.key })).json;
  assert.equal(s.status, 'ended', JSON.stringify(s));
  assert.equal(s.end_reason, 'idle');
  assert.equal(s.charge_usd, 0);
  assert.equal((await curl(`${idleSrv.url}/api/v1/me`, { key: a.key })).json.wallet_held_usd, 0);
  auditWallet(a.accountId);
});
