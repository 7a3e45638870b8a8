// A realtime stream client for the end-to-end tests, on npm `ws`: connects
// with a ticket, records every message and the close, and streams 16 kHz
// PCM from a wav file in 100 ms frames at real-time pace (or faster, when a
// test says so). docs/realtime_protocol.md is the contract it checks.
import WebSocket from 'ws';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

// The PCM samples of a 16 kHz mono 16-bit wav made by media.mjs (sox writes
// a 44-byte header; the data chunk is found rather than assumed).
export function pcmOf(wavPath) {
  const buf = readFileSync(wavPath);
  let at = 12;
  while (at + 8 <= buf.length) {
    const id = buf.toString('ascii', at, at + 4);
    const size = buf.readUInt32LE(at + 4);
    if (id === 'data') return buf.subarray(at + 8, at + 8 + size);
    at += 8 + size + (size % 2);
  }
  throw new Error(`${wavPath}: no data chunk`);
}

export const FRAME_BYTES = 3200; // 100 ms

export class StreamClient {
  constructor(url, { headers } = {}) {
    this.messages = [];
    this.waiters = [];
    this.ws = new WebSocket(url, { headers });
    this.opened = new Promise((resolve, reject) => {
      this.ws.once('open', resolve);
      this.ws.once('error', reject);
    });
    this.closed = new Promise((resolve) => {
      this.ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() }));
    });
    this.ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      const m = JSON.parse(data.toString());
      m._at = Date.now();
      this.messages.push(m);
      for (const w of [...this.waiters]) if (w.pred(m)) { this.waiters.splice(this.waiters.indexOf(w), 1); w.resolve(m); }
    });
    this.closed.then(() => { for (const w of this.waiters.splice(0)) w.reject(new Error(`closed while waiting for ${w.what}`)); });
  }

  // The first message (already received or still to come) that `pred` accepts.
  next(pred, what = 'a message', timeoutMs = 60000) {
    const seen = this.messages.find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const w = { pred, resolve, reject, what };
      this.waiters.push(w);
      setTimeout(() => {
        const i = this.waiters.indexOf(w);
        if (i >= 0) { this.waiters.splice(i, 1); reject(new Error(`timed out waiting for ${what}`)); }
      }, timeoutMs).unref();
    });
  }
  type(t, timeoutMs) { return this.next((m) => m.type === t, t, timeoutMs); }
  of(t) { return this.messages.filter((m) => m.type === t); }
  finals() { return this.of('Turn').filter((m) => m.end_of_turn); }
  partials() { return this.of('Turn').filter((m) => !m.end_of_turn); }
  send(obj) { this.ws.send(typeof obj === 'string' ? obj : JSON.stringify(obj)); }
  isOpen() { return this.ws.readyState === WebSocket.OPEN; }

  // Streams `pcm` from byte `from` in frames of `frameBytes`, each sent when
  // its audio would have been spoken (times `speed`: 2 = twice real time);
  // stops early when the socket closes or `stop()` returns true.
  async stream(pcm, { from = 0, frameBytes = FRAME_BYTES, speed = 1, stop } = {}) {
    const start = Date.now();
    let sent = 0;
    for (let at = from; at < pcm.length; at += frameBytes) {
      if (!this.isOpen() || (stop && stop())) break;
      let frame = pcm.subarray(at, Math.min(at + frameBytes, pcm.length));
      if (frame.length < 640) frame = Buffer.concat([frame, Buffer.alloc(640 - frame.length)]);
      this.ws.send(frame);
      sent += frame.length;
      const due = start + (sent / 32000) * 1000 / speed;
      const wait = due - Date.now();
      if (wait > 0) await sleep(wait);
    }
    return sent;
  }

  terminate() { this.ws.terminate(); }
}

// Silence, as PCM bytes.
export const silencePcm = (seconds) => Buffer.alloc(Math.round(seconds * 16000) * 2);
