// Realtime transcription through the real server (docs/realtime_protocol.md):
// sessions over HTTP with curl, the stream over WebSocket with npm `ws`,
// flite speech sent at real-time pace. Partials arrive while speaking, finals
// carry absolute session times and confidences, the money is settled exactly
// once however the session ends (Terminate, DELETE, cap, idle, a dropped
// connection left to the stale sweep), resume replays finals and continues
// the clock on the same or another server process, and refusals come
// in-band with the documented close codes.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, newAccount, curl, envelope, admin, auditWallet, finished, clipFinished } from './harness.mjs';
import { say, silence } from './media.mjs';
import { StreamClient, pcmOf, silencePcm } from './realtime_client.mjs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { MEDIA_DIR } from './media.mjs';

// S1: short test-only timers (heartbeat 1 s, idle 3 s, stale 6 s, tickets
// 3 s) and a generous pace bound so the cap test streams a minute fast; its
// workers complete the transcriptions. S2: the defaults (pace bound 10 s),
// and the second process a session is resumed on.
const FAST = {
  SCRIBE_REALTIME_HEARTBEAT_SECONDS: '1', SCRIBE_REALTIME_IDLE_SECONDS: '3', SCRIBE_REALTIME_STALE_SECONDS: '6',
  SCRIBE_REALTIME_TICKET_TTL_SECONDS: '3', SCRIBE_REALTIME_MAX_AHEAD_SECONDS: '120', SCRIBE_WORKER_POLL_MS: '100',
};
let s1, s2, speech, twoTurns;
const RATE_PER_SECOND = 1 / 3600; // USD: the standard pipeline's 1 USD per hour

before(async () => {
  const one = say('slt', 'Good morning. The library opens at nine and closes at five.', 'rt-one');
  const two = say('rms', 'Please bring your card and return the books on time.', 'rt-two');
  const gap = silence(1.5, 'rt-gap');
  twoTurns = join(MEDIA_DIR, 'rt-two-turns.wav');
  execFileSync('sox', [one, gap, two, gap, twoTurns]);
  speech = { one: pcmOf(one), two: pcmOf(two), both: pcmOf(twoTurns), gap: silencePcm(1.5) };
  [s1, s2] = await Promise.all([startServer({ extraEnv: FAST, workers: true }), startServer()]);
});
after(async () => { await Promise.all([s1?.stop(), s2?.stop()]); });

function realtimeAccount(opts = {}) {
  const a = newAccount(opts);
  admin('realtime', 'grant', '--key', a.keyId);
  return a;
}
const create = (srv, key, body) => curl(`${srv.url}/api/v1/realtime/sessions`, { method: 'POST', key, body });
const me = async (srv, key) => (await curl(`${srv.url}/api/v1/me`, { key })).json;
// 800 ms of silence ends a turn here (the default is 400): each flite
// recording below is one turn, even where it holds two sentences.
const connect = (srv, ticket, query = '') =>
  new StreamClient(`ws://127.0.0.1:${srv.port}/api/v1/realtime/ws?ticket=${encodeURIComponent(ticket)}${query}&end_of_turn_silence_ms=800`);
const usd = (x) => Math.round(x * 1e6);

test('POST /realtime/sessions: the spec precedence of errors, the cap clamped, nothing held on a refusal', async () => {
  const plain = newAccount(); // realtime not granted
  envelope(assert, await create(s1, plain.key, { language: 'fr' }), 400, 'unsupported_language');
  envelope(assert, await create(s1, plain.key, { language: 'en' }), 400, 'unsupported_pipeline');
  const a = realtimeAccount({ balance: 10 });
  for (const cap of [1.5, 0, -3, '5', true]) {
    const e = envelope(assert, await create(s1, a.key, { cap_minutes: cap }), 400, 'invalid_request');
    assert.equal(e.field, 'cap_minutes', `cap ${cap}`);
  }
  envelope(assert, await create(s1, a.key, '{"cap_minutes": 5'), 400, 'invalid_request');
  envelope(assert, await create(s1, a.key, { language: 7 }), 400, 'invalid_request');
  const before = await me(s1, a.key);
  assert.equal(before.wallet_held_usd, 0, 'refusals hold nothing');

  const big = await create(s1, a.key, { cap_minutes: 90 });
  assert.equal(big.status, 201, big.body);
  assert.equal(big.json.cap_minutes, 60, 'clamped to 60');
  assert.match(big.json.session_id, /^rt_[0-9a-f]{24}$/);
  assert.equal(typeof big.json.ticket, 'string');
  assert.match(big.json.websocket_url, /^ws:\/\/127\.0\.0\.1:\d+\/api\/v1\/realtime\/ws$/);
  assert.ok(Date.parse(big.json.ticket_expires_at) > Date.now());
  assert.equal(big.json.held_usd, 1, 'sixty minutes at 1 USD per hour');
  assert.equal((await me(s1, a.key)).wallet_held_usd, 1);
  // The live transcription is listed.
  const t = await curl(`${s1.url}/api/v1/transcriptions/${big.json.transcription_id}`, { key: a.key });
  assert.equal(t.json.status, 'processing');
  assert.equal(t.json.stage, 'live');
  const none = await create(s1, a.key); // no body: every default
  assert.equal(none.status, 201, none.body);
  assert.equal(none.json.cap_minutes, 60);

  // The cap is what the wallet covers, in whole minutes.
  const poor = realtimeAccount({ balance: 0.04 }); // 2.4 minutes at 1 USD per hour
  const small = await create(s1, poor.key, { cap_minutes: 10 });
  assert.equal(small.status, 201, small.body);
  assert.equal(small.json.cap_minutes, 2);
  const broke = realtimeAccount({ balance: 0.01 });
  envelope(assert, await create(s1, broke.key, {}), 402, 'insufficient_funds');
  // The full cap is reserved against the key's monthly cap.
  const capped = newAccount({ balance: 10, cap: 0.5 });
  admin('realtime', 'grant', '--key', capped.keyId);
  envelope(assert, await create(s1, capped.key, { cap_minutes: 60 }), 402, 'spend_cap_exceeded');
  assert.equal((await create(s1, capped.key, { cap_minutes: 20 })).status, 201);
  // A read-only key may not start one.
  const ro = newAccount();
  const roKey = admin('key', 'create', '--account', ro.accountId, '--permission', 'read_only').api_key;
  envelope(assert, await create(s1, roKey, {}), 403, 'scope_forbidden');
  for (const acc of [a, poor, broke, capped]) auditWallet(acc.accountId);
});

test('a stream: partials while speaking, finals with absolute times and confidences, Terminate settles once', async () => {
  const a = realtimeAccount({ balance: 5 });
  const s = (await create(s1, a.key, { cap_minutes: 3 })).json;
  const c = connect(s1, s.ticket);
  await c.opened;
  const begin = await c.type('Begin');
  assert.equal(begin.session_id, s.session_id);
  assert.equal(begin.resumed, false);
  assert.equal(begin.last_turn_order, null);
  assert.equal(begin.audio_received_seconds, 0);
  assert.equal(begin.cap_minutes, 3);
  const sent = await c.stream(speech.both);
  await c.next((m) => m.type === 'Turn' && m.end_of_turn && m.turn_order === 1, 'the second final', 20000);
  c.send({ type: 'Terminate' });
  const term = await c.type('Termination');
  const closed = await c.closed;
  assert.equal(closed.code, 1000);

  assert.ok(c.of('SpeechStarted').length >= 2, 'speech started twice');
  const finals = c.finals();
  assert.deepEqual(finals.map((f) => f.turn_order), [0, 1], 'one final per turn, in order');
  // Partials of the first turn came before its final, several of them.
  const firstFinalAt = finals[0]._at;
  const early = c.partials().filter((p) => p.turn_order === 0 && p._at < firstFinalAt);
  assert.ok(early.length >= 3, `partials while speaking: ${early.length}`);
  for (const f of finals) {
    assert.ok(f.words.length > 0);
    for (const w of f.words) {
      assert.ok(w.end >= w.start, JSON.stringify(w));
      assert.ok(w.confidence >= 0 && w.confidence <= 1, JSON.stringify(w));
      assert.equal(w.word_is_final, true);
    }
  }
  // Absolute session times: the second turn starts after the first one's
  // audio (4+ s of speech and 1.5 s of silence in).
  const oneSeconds = speech.one.length / 32000;
  assert.ok(finals[1].words[0].start >= (oneSeconds + 1) * 1000, `second turn at ${finals[1].words[0].start} ms`);
  assert.ok(finals[0].words.at(-1).end <= (oneSeconds + 0.5) * 1000);
  assert.match(finals[0].transcript, /library|nine|five/);
  assert.match(finals[1].transcript, /card|books|time/);

  // Billed: every started second of what was sent, once.
  assert.equal(term.reason, 'terminated');
  assert.ok(Math.abs(term.audio_duration_seconds - sent / 32000) < 0.01, JSON.stringify(term));
  assert.equal(term.billed_seconds, Math.ceil(sent / 32000));
  const charge = usd(term.billed_seconds * RATE_PER_SECOND);
  assert.ok(Math.abs(usd(term.charge_usd) - charge) <= 1);
  const after = await me(s1, a.key);
  assert.equal(after.wallet_held_usd, 0);
  assert.ok(Math.abs(usd(5 - after.wallet_balance_usd) - usd(term.charge_usd)) <= 1, JSON.stringify(after));
  auditWallet(a.accountId);
  const got = await curl(`${s1.url}/api/v1/realtime/sessions/${s.session_id}`, { key: a.key });
  assert.equal(got.json.status, 'ended');
  assert.equal(got.json.end_reason, 'terminated');

  // The session becomes a completed transcription like an upload, at no
  // further charge: its transcript has the same words as the finals.
  const done = await finished(s1, a.key, s.transcription_id);
  assert.equal(done.status, 'completed', JSON.stringify(done));
  const text = (await curl(`${s1.url}/api/v1/transcriptions/${s.transcription_id}/transcript?format=txt`, { key: a.key })).body.toLowerCase();
  const spoken = new Set(finals.flatMap((f) => f.words.map((w) => w.text.toLowerCase())));
  const shared = [...spoken].filter((w) => text.includes(w));
  assert.ok(shared.length >= spoken.size * 0.6, `offline transcript shares ${shared.length}/${spoken.size} words: ${text}`);
  assert.ok(Math.abs(usd(5 - (await me(s1, a.key)).wallet_balance_usd) - usd(term.charge_usd)) <= 1, 'no second charge');
  // Search finds it; subtitles export; a clip of it renders from the stored
  // audio (an audiogram: a session has no video).
  const found = await curl(`${s1.url}/api/v1/search?q=${encodeURIComponent(finals[0].words.at(-1).text)}`, { key: a.key });
  assert.equal(found.status, 200, found.body);
  assert.ok(JSON.stringify(found.json).includes(String(s.transcription_id)), found.body);
  const srt = await curl(`${s1.url}/api/v1/transcriptions/${s.transcription_id}/subtitles?format=srt`, { key: a.key });
  assert.equal(srt.status, 200, srt.body);
  assert.match(srt.body, /-->/);
  const clip = await curl(`${s1.url}/api/v1/transcriptions/${s.transcription_id}/clips`,
    { method: 'POST', key: a.key, body: { start_seconds: 0, end_seconds: 3 } });
  assert.equal(clip.status, 202, clip.body);
  const video = await curl(`${s1.url}/api/v1/transcriptions/${s.transcription_id}/clips`,
    { method: 'POST', key: a.key, body: { start_seconds: 0, end_seconds: 3, output: 'video' } });
  envelope(assert, video, 400, 'video_unavailable');
  const rendered = await clipFinished(s1, a.key, s.transcription_id, clip.json.id);
  assert.equal(rendered.status, 'completed', JSON.stringify(rendered));
  auditWallet(a.accountId);
});

test('tickets are single use and expire; a plain GET is told to upgrade', async () => {
  const a = realtimeAccount();
  const s = (await create(s1, a.key, { cap_minutes: 1 })).json;
  const first = connect(s1, s.ticket);
  await first.type('Begin');
  const again = connect(s1, s.ticket);
  const err = await again.type('Error');
  assert.equal(err.code, 'ticket_used');
  assert.equal((await again.closed).code, 4002);
  const bogus = connect(s1, 'not-a-ticket');
  assert.equal((await bogus.type('Error')).code, 'invalid_ticket');
  assert.equal((await bogus.closed).code, 4001);
  first.send({ type: 'Terminate' });
  assert.equal((await first.closed).code, 1000);
  // Ended: a fresh ticket is refused by resume, and an unused one by the socket.
  envelope(assert, await curl(`${s1.url}/api/v1/realtime/sessions/${s.session_id}/resume`, { method: 'POST', key: a.key }), 410, 'session_ended');
  const late = (await create(s1, a.key, { cap_minutes: 1 })).json;
  await new Promise((r) => setTimeout(r, 3500)); // S1's tickets live 3 s
  const expired = connect(s1, late.ticket);
  assert.equal((await expired.type('Error')).code, 'ticket_expired');
  assert.equal((await expired.closed).code, 4001);
  const plain = await curl(`${s1.url}/api/v1/realtime/ws?ticket=${late.ticket}`);
  assert.equal(plain.status, 426, plain.body);
});

test('DELETE ends the stream within a heartbeat and settles the audio received', async () => {
  const a = realtimeAccount({ balance: 5 });
  const s = (await create(s1, a.key, { cap_minutes: 2 })).json;
  const c = connect(s1, s.ticket);
  await c.type('Begin');
  let deleted;
  const streaming = c.stream(speech.both, { stop: () => c.of('Termination').length > 0 });
  await c.type('SpeechStarted');
  const del = await curl(`${s1.url}/api/v1/realtime/sessions/${s.session_id}`, { method: 'DELETE', key: a.key });
  assert.equal(del.status, 202, del.body);
  assert.deepEqual(del.json, { session_id: s.session_id, status: 'ending' });
  deleted = Date.now();
  const term = await c.type('Termination', 5000);
  assert.equal(term.reason, 'deleted');
  assert.equal((await c.closed).code, 1000);
  assert.ok(Date.now() - deleted < 2500, 'within a heartbeat (1 s here)');
  await streaming;
  const after = await me(s1, a.key);
  assert.equal(after.wallet_held_usd, 0);
  assert.ok(Math.abs(usd(5 - after.wallet_balance_usd) - usd(term.charge_usd)) <= 1);
  assert.equal(term.billed_seconds, Math.ceil(term.audio_duration_seconds - 1e-9));
  // A second DELETE changes nothing.
  const again = await curl(`${s1.url}/api/v1/realtime/sessions/${s.session_id}`, { method: 'DELETE', key: a.key });
  assert.equal(again.status, 202);
  assert.equal((await me(s1, a.key)).wallet_balance_usd, after.wallet_balance_usd);
  auditWallet(a.accountId);
});

test('bad frames are refused in-band and the session stays resumable', async () => {
  const a = realtimeAccount();
  const s = (await create(s1, a.key, { cap_minutes: 1 })).json;
  const c = connect(s1, s.ticket);
  await c.type('Begin');
  c.ws.send(Buffer.alloc(641));
  const err = await c.type('Error');
  assert.equal(err.code, 'bad_message');
  assert.equal(err.resumable, true);
  assert.equal((await c.closed).code, 4008);
  const r = await curl(`${s1.url}/api/v1/realtime/sessions/${s.session_id}/resume`, { method: 'POST', key: a.key });
  assert.equal(r.status, 201, r.body);
  const c2 = connect(s1, r.json.ticket);
  await c2.type('Begin');
  c2.send({ type: 'Configure', end_of_turn_silence_ms: 50 });
  const err2 = await c2.type('Error');
  assert.equal(err2.field, 'end_of_turn_silence_ms');
  assert.equal((await c2.closed).code, 4008);
  const r2 = await curl(`${s1.url}/api/v1/realtime/sessions/${s.session_id}/resume`, { method: 'POST', key: a.key });
  const c3 = connect(s1, r2.json.ticket);
  await c3.type('Begin');
  c3.send('{"type":"Dance"}');
  assert.equal((await c3.type('Error')).code, 'bad_message');
  assert.equal((await c3.closed).code, 4008);
});

test('resume: finals replayed, the clock continues, on the same and on another server process', async () => {
  const a = realtimeAccount({ balance: 5 });
  const s = (await create(s1, a.key, { cap_minutes: 3 })).json;
  const c = connect(s1, s.ticket);
  await c.type('Begin');
  await c.stream(Buffer.concat([speech.one, speech.gap]));
  const f0 = await c.next((m) => m.type === 'Turn' && m.end_of_turn, 'the first final', 20000);
  assert.equal(f0.turn_order, 0);
  c.terminate(); // the connection drops without Terminate
  await c.closed;

  const r = await curl(`${s1.url}/api/v1/realtime/sessions/${s.session_id}/resume`, { method: 'POST', key: a.key });
  assert.equal(r.status, 201, r.body);
  assert.equal(r.json.session_id, s.session_id);
  assert.equal(r.json.transcription_id, s.transcription_id);
  assert.notEqual(r.json.ticket, s.ticket);
  // On the second process, asking for every final again.
  const c2 = connect(s2, r.json.ticket, '&last_turn_order=-1');
  const begin = await c2.type('Begin');
  assert.equal(begin.resumed, true);
  assert.equal(begin.last_turn_order, 0);
  const stored = begin.audio_received_seconds;
  assert.ok(stored > 0 && stored <= (speech.one.length + speech.gap.length) / 32000 + 1e-6, `stored ${stored}`);
  const replayed = await c2.next((m) => m.type === 'Turn' && m.end_of_turn && m.turn_order === 0, 'the replayed final');
  assert.deepEqual(replayed.words.map((w) => w.text), f0.words.map((w) => w.text));
  await c2.stream(Buffer.concat([speech.two, speech.gap]));
  const f1 = await c2.next((m) => m.type === 'Turn' && m.end_of_turn && m.turn_order === 1, 'the next final', 20000);
  assert.ok(f1.words[0].start >= stored * 1000 - 300, `the clock continues: ${f1.words[0].start} ms after ${stored} s`);
  // A resume on the first process replaces the second one's connection.
  const r2 = await curl(`${s1.url}/api/v1/realtime/sessions/${s.session_id}/resume`, { method: 'POST', key: a.key });
  const c3 = connect(s1, r2.json.ticket, '&last_turn_order=1');
  const b3 = await c3.type('Begin');
  assert.equal(b3.last_turn_order, 1);
  const sup = await c2.type('Error', 5000);
  assert.equal(sup.code, 'superseded');
  assert.equal((await c2.closed).code, 4012);
  c3.send({ type: 'Terminate' });
  const term = await c3.type('Termination');
  // Billed once for everything stored across the three connections.
  assert.ok(term.audio_duration_seconds >= stored, JSON.stringify(term));
  const after = await me(s1, a.key);
  assert.equal(after.wallet_held_usd, 0);
  assert.ok(Math.abs(usd(5 - after.wallet_balance_usd) - usd(term.charge_usd)) <= 1);
  auditWallet(a.accountId);
});

test('idle ends the session; a dropped connection is ended by the stale sweep; both settled once', async () => {
  const a = realtimeAccount({ balance: 5 });
  const idle = (await create(s1, a.key, { cap_minutes: 1 })).json;
  const c = connect(s1, idle.ticket);
  await c.type('Begin');
  const term = await c.type('Termination', 10000);
  assert.equal(term.reason, 'idle');
  assert.equal((await c.closed).code, 4011);
  assert.equal(term.billed_seconds, 0);

  const dropped = (await create(s1, a.key, { cap_minutes: 1 })).json;
  const d = connect(s1, dropped.ticket);
  await d.type('Begin');
  await d.stream(speech.one);
  d.terminate();
  await d.closed;
  // S1's stale window is 6 s and its sweep runs every quarter of it.
  let row;
  for (let i = 0; i < 60; i++) {
    row = (await curl(`${s1.url}/api/v1/realtime/sessions/${dropped.session_id}`, { key: a.key })).json;
    if (row.status === 'ended') break;
    await new Promise((r) => setTimeout(r, 250));
  }
  assert.equal(row.status, 'ended', JSON.stringify(row));
  assert.equal(row.end_reason, 'stale');
  assert.ok(row.audio_seconds > 0);
  envelope(assert, await curl(`${s1.url}/api/v1/realtime/sessions/${dropped.session_id}/resume`, { method: 'POST', key: a.key }), 410, 'session_ended');
  const after = await me(s1, a.key);
  assert.equal(after.wallet_held_usd, 0);
  assert.ok(Math.abs(usd(5 - after.wallet_balance_usd) - usd(row.charge_usd)) <= 1, JSON.stringify([after, row]));
  auditWallet(a.accountId);
});

test('the cap stops the stream with its final and Termination, billed for the cap', async () => {
  const a = realtimeAccount({ balance: 5 });
  const s = (await create(s1, a.key, { cap_minutes: 1 })).json;
  const c = connect(s1, s.ticket);
  await c.type('Begin');
  await c.next((m) => m.type === 'Warning' && m.code === 'cap_soon', 'cap_soon');
  // 64 s of speech and silence, sent 8 times faster than real time (S1 allows it).
  const minute = Buffer.concat(Array.from({ length: 7 }, () => Buffer.concat([speech.one, speech.gap, speech.two, speech.gap])));
  assert.ok(minute.length / 32000 > 62);
  await c.stream(minute, { speed: 8 });
  const term = await c.type('Termination', 60000);
  assert.equal(term.reason, 'cap_reached');
  assert.equal((await c.closed).code, 4010);
  assert.equal(term.billed_seconds, 60);
  assert.ok(c.finals().length >= 1);
  const after = await me(s1, a.key);
  assert.ok(Math.abs(usd(5 - after.wallet_balance_usd) - usd(60 * RATE_PER_SECOND)) <= 1);
  auditWallet(a.accountId);
});

test('audio sent far ahead of real time is refused (4009) after a slow_down warning', async () => {
  const a = realtimeAccount();
  const s = (await create(s2, a.key, { cap_minutes: 1 })).json;
  const c = connect(s2, s.ticket);
  await c.type('Begin');
  const burst = Buffer.concat([speech.both, speech.both, speech.both]);
  await c.stream(burst, { speed: 1000 });
  await c.next((m) => m.type === 'Warning' && m.code === 'slow_down', 'slow_down');
  assert.equal((await c.type('Error')).code, 'too_fast');
  assert.equal((await c.closed).code, 4009);
});

test('tenant isolation: another account gets 404 on every session route', async () => {
  const a = realtimeAccount();
  const b = realtimeAccount();
  const s = (await create(s1, a.key, { cap_minutes: 1 })).json;
  envelope(assert, await curl(`${s1.url}/api/v1/realtime/sessions/${s.session_id}`, { key: b.key }), 404, 'not_found');
  envelope(assert, await curl(`${s1.url}/api/v1/realtime/sessions/${s.session_id}`, { method: 'DELETE', key: b.key }), 404, 'not_found');
  envelope(assert, await curl(`${s1.url}/api/v1/realtime/sessions/${s.session_id}/resume`, { method: 'POST', key: b.key }), 404, 'not_found');
  envelope(assert, await curl(`${s1.url}/api/v1/realtime/sessions/rt_nope`, { key: a.key }), 404, 'not_found');
  // Still a's, still live.
  assert.equal((await curl(`${s1.url}/api/v1/realtime/sessions/${s.session_id}`, { key: a.key })).json.status, 'live');
  await curl(`${s1.url}/api/v1/realtime/sessions/${s.session_id}`, { method: 'DELETE', key: a.key });
});
