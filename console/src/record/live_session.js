// One realtime session as the Record page runs it (docs/realtime_protocol.md):
// POST /api/v1/realtime/sessions for a ticket, the WebSocket with it, audio
// frames out, Begin / Turn / Warning / Error / Termination in.
//   const s = await startSession({capMinutes, on});
//   s.send(pcm); ...; await s.stop();
// on: {begin(msg), partial(turn), final(turn), warning(msg), reconnecting(),
//      error(err), ended(termination|null)}.
// Audio before Begin is kept and sent once the stream has begun, so the first
// words are not lost. A connection that drops, or that the server closes as
// resumable (section 6), is resumed (section 7): POST .../resume for a fresh
// ticket, connect again asking for the finals after the last one seen (a
// final may then come twice: the page keys them by turn_order), and send the
// audio kept meanwhile. Audio the server had not stored when the connection
// dropped is lost to the transcript, not billed.
import { api, ApiError } from '../api.js';

const RESUMABLE_CLOSES = new Set([1001, 1006, 1011, 1013, 4008, 4009]);
const MAX_RESUMES = 3;
// Kept while reconnecting: at most 4 s of 100 ms frames. Sent at once on the
// new stream they put the client ahead of its clock, which the server warns
// about past 5 s and refuses past 10 s; the oldest audio goes first.
const MAX_PENDING = 40;

// The stream's address on this origin (the page's own host: the
// Content-Security-Policy's connect-src is 'self', and the API's public URL
// may name another host than the one the browser used).
function streamUrl(websocketUrl, ticket, lastTurnOrder) {
  const path = new URL(websocketUrl).pathname;
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const q = new URLSearchParams({ ticket });
  if (lastTurnOrder !== null) q.set('last_turn_order', String(lastTurnOrder));
  return `${scheme}//${location.host}${path}?${q}`;
}

const streamError = (code, message) => new ApiError(0, { error: { code, message } });

export async function startSession({ capMinutes, on }) {
  const created = await api('/api/v1/realtime/sessions', { method: 'POST', body: { cap_minutes: capMinutes } });
  const id = created.session_id;
  let ws = null;
  let begun = false;
  let ended = false;
  let stopping = false;
  let resumes = 0;
  let lastFinal = null;
  let refusal = null; // the Error message before a close, if any
  const pending = [];
  let resolveEnd;
  const done = new Promise((r) => (resolveEnd = r));

  const finish = (termination) => {
    if (ended) return;
    ended = true;
    on.ended?.(termination);
    resolveEnd(termination);
  };

  // Ends the session on the server when the stream cannot say Terminate.
  const abandon = async (err) => {
    if (err) on.error?.(err);
    await api(`/api/v1/realtime/sessions/${id}`, { method: 'DELETE' }).catch(() => {});
    finish(null);
  };

  const resume = async () => {
    resumes += 1;
    on.reconnecting?.();
    try {
      const t = await api(`/api/v1/realtime/sessions/${id}/resume`, { method: 'POST' });
      if (!ended) connect(t.websocket_url, t.ticket);
    } catch (e) {
      // 410 session_ended: it ended meanwhile (idle, cap, another tab).
      await abandon(e);
    }
  };

  function connect(websocketUrl, ticket) {
    begun = false;
    refusal = null;
    const socket = new WebSocket(streamUrl(websocketUrl, ticket, lastFinal));
    ws = socket;
    socket.binaryType = 'arraybuffer';
    socket.onmessage = (e) => {
      if (typeof e.data !== 'string') return;
      let m;
      try {
        m = JSON.parse(e.data);
      } catch {
        return;
      }
      if (m.type === 'Begin') {
        begun = true;
        on.begin?.(m);
        if (stopping) socket.send(JSON.stringify({ type: 'Terminate' }));
        else for (const b of pending.splice(0)) socket.send(b);
      } else if (m.type === 'Turn') {
        if (m.end_of_turn) {
          lastFinal = Math.max(lastFinal ?? -1, m.turn_order);
          on.final?.(m);
        } else on.partial?.(m);
      } else if (m.type === 'Warning') on.warning?.(m);
      else if (m.type === 'Error') {
        refusal = streamError(m.code, m.message);
        refusal.resumable = m.resumable;
      } else if (m.type === 'Termination') finish(m);
    };
    socket.onclose = (e) => {
      if (socket !== ws || ended) return;
      const resumable = refusal ? refusal.resumable : RESUMABLE_CLOSES.has(e.code);
      if (!stopping && resumable && resumes < MAX_RESUMES) {
        resume();
        return;
      }
      abandon(refusal || (e.code === 1000 ? null : streamError(`closed_${e.code}`, `the stream closed (code ${e.code})`)));
    };
  }

  connect(created.websocket_url, created.ticket);

  return {
    sessionId: id,
    transcriptionId: created.transcription_id,
    capMinutes: created.cap_minutes,
    send(pcm) {
      if (ended || stopping) return;
      if (begun && ws.readyState === WebSocket.OPEN) ws.send(pcm);
      else {
        pending.push(pcm);
        if (pending.length > MAX_PENDING) pending.shift();
      }
    },
    // Terminate: the last finals and Termination come, then the close. While
    // (re)connecting, Terminate goes as soon as the stream has begun.
    async stop() {
      if (ended) return done;
      stopping = true;
      pending.length = 0;
      if (begun && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: 'Terminate' }));
      else if (ws.readyState !== WebSocket.CONNECTING) await abandon(null);
      return done;
    },
  };
}
