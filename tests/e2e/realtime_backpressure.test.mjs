// Realtime streams under pressure (docs/realtime_protocol.md sections 3-5):
// a client that stops reading its socket while it keeps sending audio gets,
// once it reads again, every final (turn orders contiguous, the same turns
// the server stored) while partials may have been skipped, and the server's
// memory stays bounded meanwhile; control messages mixed with audio do what
// the protocol says (ForceEndpoint mid-utterance gives that turn's final
// without more audio, KeepAlive keeps a session with no audio open past the
// idle timeout); and frames the protocol does not allow, sent after valid
// audio and control messages, get the in-band Error (bad_message, its field,
// resumable) and close 4008 with the audio before them stored.
// (realtime.test.mjs covers an odd 641-byte frame, an out-of-range
// Configure and an unknown type; these are the other cases.)
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { startServer, newAccount, curl, admin, DB } from './harness.mjs';
import { say } from './media.mjs';
import { StreamClient, pcmOf, silencePcm } from './realtime_client.mjs';

// Heartbeat 1 s, idle 3 s; a client may run far ahead of real time (the
// slow reader sends a minute of audio three times faster than spoken).
const ENV = {
  SCRIBE_REALTIME_HEARTBEAT_SECONDS: '1', SCRIBE_REALTIME_IDLE_SECONDS: '3', SCRIBE_REALTIME_MAX_AHEAD_SECONDS: '120',
};
const psql = (sql) => execFileSync('psql', [DB, '-At', '-c', sql], { encoding: 'utf8' }).trim();
const q = (s) => `'${String(s).replace(/'/g, "''")}'`;
let srv, acc, speech;

before(async () => {
  // Long sentences with no full stop: turns of many words, so partials grow.
  const long1 = say('slt', 'the library on the corner of the main street opens at nine in the morning and closes at five ' +
    'in the afternoon on every weekday except the public holidays when it stays closed all day long', 'rtb-long1');
  const long2 = say('rms', 'please bring your reader card with you and return the books you borrowed on time or the ' +
    'librarian will ask you to pay a small fine for every day that they are late', 'rtb-long2');
  const one = say('slt', 'Good morning. The library opens at nine and closes at five.', 'rtb-one');
  speech = { long1: pcmOf(long1), long2: pcmOf(long2), one: pcmOf(one) };
  srv = await startServer({ extraEnv: ENV });
  acc = newAccount({ balance: 10 });
  admin('realtime', 'grant', '--key', acc.keyId);
});
after(async () => { await srv?.stop(); });

const create = async () => {
  const r = await curl(`${srv.url}/api/v1/realtime/sessions`, { method: 'POST', key: acc.key, body: { cap_minutes: 3 } });
  assert.equal(r.status, 201, r.body);
  return r.json;
};
const resume = async (sid) => {
  const r = await curl(`${srv.url}/api/v1/realtime/sessions/${sid}/resume`, { method: 'POST', key: acc.key });
  assert.equal(r.status, 201, r.body);
  return r.json;
};
// 800 ms of silence ends a turn here (the default is 400): a flite recording
// holding two sentences stays one turn.
const connect = (ticket, query = '') =>
  new StreamClient(`ws://127.0.0.1:${srv.port}/api/v1/realtime/ws?ticket=${encodeURIComponent(ticket)}${query}&end_of_turn_silence_ms=800`);
const rssKiB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
const storedSamples = (sid) => Number(psql(`select samples_persisted from realtime_live where session_id = ${q(sid)}`));

async function until(what, fn, seconds) {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${seconds} s`);
    await sleep(100);
  }
}

test('a slow reader: nothing read for half a minute of audio, then every final arrives, partials may be skipped', async () => {
  const s = await create();
  // End of turn after 5 s of silence: the turns are long (many words in each
  // partial) and end where the client says, with ForceEndpoint.
  const c = connect(s.ticket, '&end_of_turn_silence_ms=5000');
  await c.type('Begin');
  const gap = silencePcm(0.4);
  const block = Buffer.concat([speech.long1, gap, speech.long2, gap]);
  await c.stream(block.subarray(0, 64000)); // the recognizer is warm, its decoder taken
  const rssBefore = rssKiB(srv.proc.pid);

  c.ws._socket.pause(); // the reader stops reading; it still sends
  const readBefore = c.messages.length;
  // Long turns (a whole sentence each, end of turn at 5 s of silence): each
  // partial repeats its turn so far. Sent a little faster than spoken, not
  // so fast that recognition falls 20 s behind (the server then refuses).
  const blocks = 2;
  for (let i = 0; i < blocks; i++) {
    for (const sentence of [speech.long1, speech.long2]) {
      await c.stream(Buffer.concat([sentence, gap]), { speed: 1.5 });
      c.send({ type: 'ForceEndpoint' }); // a final per sentence
      c.send({ type: 'KeepAlive' });
    }
  }
  const sentSeconds = 2 + (blocks * block.length) / 32000; // block = both sentences and their gaps
  // Give the server time to recognize all of it and queue what it sends.
  // The client keeps talking meanwhile (KeepAlive): a peer that sends nothing
  // and answers no ping for 10 s is taken for dead (keepalive), rightly.
  const talking = setInterval(() => c.send({ type: 'KeepAlive' }), 500);
  const strandDone = async () => storedSamples(s.session_id) >= Math.floor(sentSeconds - 1) * 16000;
  try {
    await until('the audio is stored', strandDone, 120);
  } finally {
    clearInterval(talking);
  }
  const rssAfter = rssKiB(srv.proc.pid);
  assert.equal(c.messages.length, readBefore, 'nothing was read while the socket was paused');
  assert.ok(c.isOpen(), 'the slow reader was not dropped');

  c.ws._socket.resume();
  c.send({ type: 'Terminate' });
  const term = await c.type('Termination', 120000);
  assert.equal((await c.closed).code, 1000);
  assert.equal(term.reason, 'terminated');

  const finals = c.finals();
  const orders = finals.map((f) => f.turn_order);
  assert.deepEqual(orders, orders.map((_, i) => i), `finals contiguous from 0: ${orders}`);
  assert.ok(finals.length >= 2 * blocks, `a final per ForceEndpoint: ${orders}`);
  // The same finals the server stored (and would replay on a resume).
  const storedTurns = psql(`select string_agg(turn_order::text || ':' || (select string_agg(w->>'text', ' ') ` +
    `from jsonb_array_elements(payload->'words') w), '|' order by turn_order) ` +
    `from realtime_turns where session_id = ${q(s.session_id)}`);
  assert.equal(storedTurns, finals.map((f) => `${f.turn_order}:${f.words.map((w) => w.text).join(' ')}`).join('|'));
  for (const f of finals) assert.ok(f.words.length > 5, `turn ${f.turn_order}: ${f.transcript}`);
  // Partials never come after their turn's final, and their turns never go back.
  let turn = 0, finalSeen = new Set();
  for (const m of c.of('Turn')) {
    assert.ok(m.turn_order >= turn, `turn ${m.turn_order} after ${turn}`);
    turn = m.turn_order;
    if (!m.end_of_turn) assert.ok(!finalSeen.has(m.turn_order), `a partial of turn ${m.turn_order} after its final`);
    else finalSeen.add(m.turn_order);
  }
  // Memory: what waits for the reader is bounded (partials are skipped past
  // 256 KiB), so the server grew by far less than what it would have sent.
  const grownMiB = (rssAfter - rssBefore) / 1024;
  // Whether partials were skipped: the widest step of audio between two
  // partials of a turn. (The kernel's socket buffers take the backlog first:
  // on loopback about 2 MB of it before the server's own queue grows, as
  // `ss -tm` shows, so a skip needs a longer pause than this test's.)
  let widest = 0, last = new Map();
  for (const p of c.partials()) {
    const end = p.words.at(-1)?.end ?? 0;
    if (last.has(p.turn_order)) widest = Math.max(widest, end - last.get(p.turn_order));
    last.set(p.turn_order, end);
  }
  const bytes = c.of('Turn').reduce((n, m) => n + JSON.stringify(m).length, 0);
  console.log(`slow reader: ${finals.length} finals, ${c.partials().length} partials received (${Math.round(bytes / 1024)} KiB of turns, ` +
    `widest step between partials ${widest} ms of audio: ${widest > 2000 ? 'some' : 'none'} skipped); ` +
    `server RSS ${Math.round(rssBefore / 1024)} MiB -> ${Math.round(rssAfter / 1024)} MiB`);
  assert.ok(grownMiB < 128, `the server grew by ${grownMiB.toFixed(1)} MiB while the reader was paused`);
});

test('ForceEndpoint mid-utterance: that turn\'s final comes without more audio; the next turn follows on', async () => {
  const s = await create();
  const c = connect(s.ticket);
  await c.type('Begin');
  const cut = 32000 * 2; // 2 s into "Good morning. The library opens at nine ..."
  await c.stream(speech.one.subarray(0, cut));
  await c.type('SpeechStarted');
  c.send({ type: 'ForceEndpoint' });
  // No audio is sent until the final comes; the idle timeout (3 s) would end
  // the session if nothing did.
  const f0 = await c.next((m) => m.type === 'Turn' && m.end_of_turn, 'the forced final', 30000);
  assert.equal(f0.turn_order, 0);
  assert.ok(f0.words.length > 0, JSON.stringify(f0));
  assert.ok(f0.words.at(-1).end <= 2100, `the forced turn ends with the audio sent: ${JSON.stringify(f0.words.at(-1))}`);
  assert.equal(c.of('Termination').length, 0);
  // The rest of the sentence is a new turn, after the first one in time.
  await c.stream(Buffer.concat([speech.one.subarray(cut), silencePcm(1.2)]));
  const f1 = await c.next((m) => m.type === 'Turn' && m.end_of_turn && m.turn_order === 1, 'the next final', 30000);
  assert.ok(f1.words[0].start >= f0.words.at(-1).end, `${JSON.stringify(f1.words[0])} after ${JSON.stringify(f0.words.at(-1))}`);
  c.send({ type: 'Terminate' });
  await c.type('Termination');
  assert.deepEqual(c.finals().map((f) => f.turn_order), [0, 1]);
  assert.equal((await c.closed).code, 1000);
});

test('KeepAlive keeps a session with no audio open past the idle timeout; audio still flows after it', async () => {
  const s = await create();
  const c = connect(s.ticket);
  await c.type('Begin');
  await c.stream(speech.one.subarray(0, 32000));
  // 7 s without audio, a KeepAlive each second: more than twice the idle timeout.
  for (let i = 0; i < 7; i++) {
    c.send({ type: 'KeepAlive' });
    await sleep(1000);
  }
  assert.equal(c.of('Termination').length, 0, JSON.stringify(c.of('Termination')));
  assert.ok(c.isOpen());
  await c.stream(Buffer.concat([speech.one.subarray(32000), silencePcm(1.2)]));
  await c.next((m) => m.type === 'Turn' && m.end_of_turn, 'a final', 30000);
  c.send({ type: 'Terminate' });
  const term = await c.type('Termination');
  assert.equal(term.reason, 'terminated');
  const sent = speech.one.length + 1.2 * 32000;
  assert.ok(Math.abs(term.audio_duration_seconds - sent / 32000) < 0.02, JSON.stringify(term));
  assert.equal((await c.closed).code, 1000);
  // Without them, the same session shape ends idle.
  const s2 = await create();
  const c2 = connect(s2.ticket);
  await c2.type('Begin');
  await c2.stream(speech.one.subarray(0, 32000));
  assert.equal((await c2.type('Termination', 15000)).reason, 'idle');
  assert.equal((await c2.closed).code, 4011);
});

test('frames the protocol does not allow, after valid audio and control messages: Error, close 4008, audio kept', async () => {
  const cases = [
    { what: 'a 600-byte frame (under 20 ms)', frame: Buffer.alloc(600), field: 'audio' },
    { what: 'a 32002-byte frame (over 1000 ms)', frame: Buffer.alloc(32002), field: 'audio' },
    { what: 'a 3201-byte frame (half a sample)', frame: Buffer.alloc(3201), field: 'audio' },
    { what: 'text that is not JSON', text: 'hello {' },
    { what: 'a JSON array', text: '[{"type":"KeepAlive"}]' },
    { what: 'a JSON string', text: '"KeepAlive"' },
    { what: 'an object without type', text: '{}', field: 'type' },
    { what: 'a numeric type', text: '{"type":7}', field: 'type' },
    { what: 'Configure partials as a string', text: '{"type":"Configure","partials":"yes"}', field: 'partials' },
    { what: 'Configure silence as a string', text: '{"type":"Configure","end_of_turn_silence_ms":"800"}', field: 'end_of_turn_silence_ms' },
    { what: 'Configure silence with a fraction', text: '{"type":"Configure","end_of_turn_silence_ms":800.5}', field: 'end_of_turn_silence_ms' },
    { what: 'Configure silence as a boolean', text: '{"type":"Configure","end_of_turn_silence_ms":true}', field: 'end_of_turn_silence_ms' },
  ];
  const s = await create();
  let ticket = s.ticket, stored = 0;
  const half = 16000; // bytes: 0.5 s
  for (const [i, k] of cases.entries()) {
    const c = connect(ticket);
    const begin = await c.type('Begin');
    assert.ok(Math.abs(begin.audio_received_seconds - stored / 32000) < 1e-6,
      `${k.what}: Begin says ${begin.audio_received_seconds} s stored, ${stored / 32000} s were sent`);
    // Valid audio and control messages first, then the bad frame.
    const from = (stored % (speech.one.length - half));
    c.send({ type: 'Configure', end_of_turn_silence_ms: 700, partials: i % 2 === 0 });
    await c.stream(speech.one.subarray(from, from + half), { frameBytes: 1600 });
    c.send({ type: 'KeepAlive' });
    if (k.frame) c.ws.send(k.frame); else c.send(k.text);
    const err = await c.type('Error', 15000);
    assert.equal(err.code, 'bad_message', `${k.what}: ${JSON.stringify(err)}`);
    assert.equal(err.resumable, true, k.what);
    assert.equal(typeof err.message, 'string');
    if (k.field) assert.equal(err.field, k.field, `${k.what}: ${JSON.stringify(err)}`);
    assert.equal((await c.closed).code, 4008, k.what);
    assert.equal(c.of('Termination').length, 0, k.what);
    stored += half;
    // The audio that came before the bad frame is stored when the
    // connection ends; a resume continues from it.
    await until(`${k.what}: the audio before it is stored`, () => storedSamples(s.session_id) === stored / 2, 15);
    ticket = (await resume(s.session_id)).ticket;
  }
  const c = connect(ticket);
  assert.ok(Math.abs((await c.type('Begin')).audio_received_seconds - stored / 32000) < 1e-6);
  c.send({ type: 'Terminate' });
  const term = await c.type('Termination');
  assert.equal(term.billed_seconds, Math.ceil(stored / 32000));
  assert.equal((await c.closed).code, 1000);
});
