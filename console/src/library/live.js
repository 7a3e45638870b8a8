// Live status for the library's rows: long-polls on GET
// /api/v1/transcriptions/{id}/wait, never a polling timer.
//
// A browser opens about six connections per host over HTTP/1.1, and every
// long-poll holds one for up to 30 s; so at most `slots` (3) are open at once
// and the rest of the page keeps its connections. Items in progress take turns:
// a wait that times out (`_timed_out`, with the current stage) puts its id at
// the back of the queue, so with more than three in progress each still
// reports its stage every minute or so, and an item finishing answers at once.
// A wait that fails (network gone) is parked until the browser is online again.
import { api } from '../api.js';

export const ACTIVE = new Set(['queued', 'pending', 'processing']);

export function createWatcher({ onUpdate, slots = 3, timeout = 30 }) {
  const queue = [];
  const watching = new Set();
  const parked = new Set();
  const controller = new AbortController();
  let running = 0;

  function pump() {
    while (running < slots && queue.length && !controller.signal.aborted) {
      const id = queue.shift();
      running++;
      api(`/api/v1/transcriptions/${id}/wait?timeout=${timeout}`, { signal: controller.signal })
        .then(
          (body) => {
            onUpdate(body);
            if (ACTIVE.has(body.status)) queue.push(id);
            else watching.delete(id);
          },
          (err) => {
            if (controller.signal.aborted) return;
            if (err.status === 404) watching.delete(id); // deleted meanwhile
            else parked.add(id);
          },
        )
        .finally(() => {
          running--;
          pump();
        });
    }
  }

  const online = () => {
    for (const id of parked) queue.push(id);
    parked.clear();
    pump();
  };
  addEventListener('online', online);

  return {
    watch(id) {
      if (watching.has(id)) return;
      watching.add(id);
      queue.push(id);
      pump();
    },
    stop() {
      controller.abort();
      removeEventListener('online', online);
    },
  };
}
