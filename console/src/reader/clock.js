// The reader's playback clock: one object shared by the player, the
// transcript, the side rail and the editor. The player attaches its media
// element; the others seek through it and listen to the position, which is
// sampled every animation frame while playing (timeupdate fires only about
// four times a second, too coarse to follow words), and on seeks.
export function createClock() {
  const listeners = new Set();
  const seekListeners = new Set();
  let el = null;
  let pendingMs = null; // a seek asked for before the media could take it
  let frame = 0;
  let lastMs = -1;

  const now = () => (el ? Math.round(el.currentTime * 1000) : pendingMs ?? 0);
  const emit = () => {
    const ms = now();
    if (ms === lastMs) return;
    lastMs = ms;
    for (const f of listeners) f(ms);
  };
  const loop = () => {
    emit();
    frame = el && !el.paused ? requestAnimationFrame(loop) : 0;
  };
  const onPlay = () => {
    if (!frame) frame = requestAnimationFrame(loop);
  };
  const events = ['play', 'playing', 'seeked', 'timeupdate', 'pause', 'loadedmetadata'];
  const handler = (e) => (e.type === 'play' || e.type === 'playing' ? onPlay() : emit());

  return {
    attach(media) {
      if (el) for (const t of events) el.removeEventListener(t, handler);
      el = media;
      if (!el) return;
      for (const t of events) el.addEventListener(t, handler);
    },
    get media() {
      return el;
    },
    // Applies a waiting seek once the media knows its duration.
    ready() {
      if (el && pendingMs !== null) {
        el.currentTime = pendingMs / 1000;
        pendingMs = null;
      }
      emit();
    },
    now,
    seek(ms, { play = false } = {}) {
      const t = Math.max(0, ms);
      if (el && el.readyState >= 1) {
        el.currentTime = t / 1000;
        if (play) el.play().catch(() => {});
      } else pendingMs = t;
      lastMs = -1;
      for (const f of seekListeners) f(t);
      emit();
    },
    // Seeks asked for by the person (a word, a hit, a citation): the
    // transcript follows playback again.
    onSeek(f) {
      seekListeners.add(f);
      return () => seekListeners.delete(f);
    },
    subscribe(f) {
      listeners.add(f);
      return () => listeners.delete(f);
    },
  };
}
