// One realtime session as the Record page runs it (docs/realtime_protocol.md):
// POST /api/v1/realtime/sessions for a ticket, the WebSocket with it, audio
// frames out, Begin / Turn / Warning / Error / Termination in.
//   const s = await startSession({capMinutes, on});
//   s.send(pcm); ...; await s.stop();
// on: {begin(msg), partial(turn), final(turn), warning(msg), error(err),
//      ended(termination|null)}. Audio before Begin is kept and sent once the
// stream has begun, so the first words are not lost.
import { api, ApiError } from '../api.js';

// The stream's address on this origin (the page's own host: the
// Content-Security-Policy's connect-src is 'self', and the API's public URL
// may name another host than the one the browser used).
function streamUrl(websocketUrl, ticket) {
  const path = new URL(websocketUrl).pathname;
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${location.host}${path}?ticket=${encodeURIComponent(ticket)}`;
}

export async function startSession({ capMinutes, on }) {
  const created = await api('/api/v1/realtime/sessions', { method: 'POST', body: { cap_minutes: capMinutes } });
  const ws = new WebSocket(streamUrl(created.websocket_url, created.ticket));
  ws.binaryType = 'arraybuffer';
  let begun = false;
  let ended = false;
  let failed = null;
  const pending = [];
  let resolveEnd;
  const done = new Promise((r) => (resolveEnd = r));

  const finish = (termination) => {
    if (ended) return;
    ended = true;
    on.ended?.(termination);
    resolveEnd(termination);
  };

  ws.onmessage = (e) => {
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
      for (const b of pending.splice(0)) ws.send(b);
    } else if (m.type === 'Turn') {
      if (m.end_of_turn) on.final?.(m);
      else on.partial?.(m);
    } else if (m.type === 'Warning') on.warning?.(m);
    else if (m.type === 'Error') {
      failed = new ApiError(0, { error: { code: m.code, message: m.message } });
      failed.resumable = m.resumable;
      on.error?.(failed);
    } else if (m.type === 'Termination') finish(m);
  };
  ws.onclose = (e) => {
    if (!ended && !failed && e.code !== 1000)
      on.error?.(new ApiError(0, { error: { code: `closed_${e.code}`, message: `the stream closed unexpectedly (code ${e.code})` } }));
    finish(null);
  };

  return {
    sessionId: created.session_id,
    transcriptionId: created.transcription_id,
    capMinutes: created.cap_minutes,
    send(pcm) {
      if (ended || ws.readyState > WebSocket.OPEN) return;
      if (!begun || ws.readyState !== WebSocket.OPEN) pending.push(pcm);
      else ws.send(pcm);
    },
    // Terminate: the last finals and Termination come, then the close. If
    // the stream is already gone, DELETE ends the session on the server.
    async stop() {
      if (ended) return done;
      if (ws.readyState === WebSocket.OPEN && begun) ws.send(JSON.stringify({ type: 'Terminate' }));
      else {
        ws.close();
        await api(`/api/v1/realtime/sessions/${created.session_id}`, { method: 'DELETE' }).catch(() => {});
      }
      return done;
    },
  };
}
