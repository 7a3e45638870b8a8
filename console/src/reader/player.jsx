// The reader's player: the recording through the signed, expiring URL of
// GET /transcriptions/{id}/media (served by HTTP range), an <audio> or
// <video> by its kind. While a browser-playable rendition is being made the
// API answers 409 not_ready with Retry-After: the player says so and asks
// again then. The URL is fetched again a minute before it expires (and when
// the element reports an error, e.g. an expired link), keeping the position
// and whether it was playing.
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, request } from '../api.js';
import { ErrorNote, Status, formatTime } from '../ui.jsx';

const SPEEDS = [0.75, 1, 1.25, 1.5, 1.75, 2];

async function mediaLink(id) {
  const res = await request(`/api/v1/transcriptions/${encodeURIComponent(id)}/media`);
  const text = await res.text();
  let body = null;
  try {
    body = JSON.parse(text);
  } catch {}
  if (res.ok) return { link: body };
  const err = new ApiError(res.status, body, text.slice(0, 200));
  if (res.status === 404 && err.code === 'not_found') return { gone: err };
  if (res.status === 409) return { wait: Math.min(60, Math.max(2, Number(res.headers.get('retry-after')) || 5)), err };
  throw err;
}

export function Player({ id, clock, onSpeed }) {
  const [link, setLink] = useState(null);
  const [waiting, setWaiting] = useState(null);
  const [gone, setGone] = useState(false);
  const [error, setError] = useState(null);
  const [speed, setSpeed] = useState(1);
  const [tick, setTick] = useState(0);
  const media = useRef();
  const resume = useRef(null); // {ms, playing} across a URL change
  const failures = useRef(0); // media errors since the last good load

  // Fetch (and refetch) the link; `tick` asks again.
  useEffect(() => {
    let live = true;
    let timer;
    const get = async () => {
      try {
        const r = await mediaLink(id);
        if (!live) return;
        if (r.gone) {
          setGone(true);
          return;
        }
        if (r.wait) {
          setWaiting(r.err.message);
          timer = setTimeout(get, r.wait * 1000);
          return;
        }
        setWaiting(null);
        setError(null);
        setLink(r.link);
        const left = Date.parse(r.link.expires_at) - Date.now() - 60_000;
        if (Number.isFinite(left)) timer = setTimeout(() => live && renew(), Math.max(10_000, left));
      } catch (e) {
        if (live) setError(e);
      }
    };
    get();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [id, tick]);

  function renew() {
    const el = media.current;
    if (el) resume.current = { ms: Math.round(el.currentTime * 1000), playing: !el.paused };
    setTick((t) => t + 1);
  }

  useEffect(() => {
    clock.attach(media.current || null);
    return () => clock.attach(null);
  }, [link?.url, clock]);

  useEffect(() => {
    if (media.current) media.current.playbackRate = speed;
    onSpeed?.(speed);
  }, [speed, link]);

  // Keyboard shortcuts, documented beside the player; never while typing.
  useEffect(() => {
    const onKey = (e) => {
      if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return;
      const t = e.target;
      if (t?.closest?.('input, textarea, select, [contenteditable=""], [contenteditable="true"], dialog[open]')) return;
      const el = media.current;
      if (!el) return;
      const step = (d) => clock.seek(Math.round(el.currentTime * 1000) + d);
      const at = SPEEDS.indexOf(speed);
      switch (e.key) {
        case 'k':
        case 'K':
          if (el.paused) el.play().catch(() => {});
          else el.pause();
          break;
        case 'j':
        case 'J':
        case 'ArrowLeft':
          if (e.key === 'ArrowLeft' && t?.closest?.('button, a, audio, video')) return;
          step(-5000);
          break;
        case 'l':
        case 'L':
        case 'ArrowRight':
          if (e.key === 'ArrowRight' && t?.closest?.('button, a, audio, video')) return;
          step(5000);
          break;
        case '[':
          setSpeed(SPEEDS[Math.max(0, at - 1)]);
          break;
        case ']':
          setSpeed(SPEEDS[Math.min(SPEEDS.length - 1, at + 1)]);
          break;
        default:
          return;
      }
      e.preventDefault();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [speed, clock]);

  const onLoaded = () => {
    const r = resume.current;
    resume.current = null;
    failures.current = 0;
    if (r) {
      media.current.currentTime = r.ms / 1000;
      if (r.playing) media.current.play().catch(() => {});
    }
    clock.ready();
  };
  const onError = () => {
    // An expired or refused link: fetch a fresh one (once per link).
    if (link && failures.current++ < 2) {
      renew();
    } else setError(new Error('the recording could not be played in this browser'));
  };

  const Tag = link?.kind === 'video' ? 'video' : 'audio';
  return (
    <div class="player panel">
      {gone && <p>The recording is not kept for this transcription, so there is nothing to play; the transcript is all here.</p>}
      {waiting && <Status>Preparing a playable version of the recording… ({waiting})</Status>}
      <ErrorNote error={error} />
      {link && (
        <Tag
          ref={media}
          key={link.url}
          src={link.url}
          controls
          preload="metadata"
          aria-label="Recording"
          class={Tag}
          onLoadedMetadata={onLoaded}
          onError={onError}
        />
      )}
      <div class="row player-controls">
        <label class="inline">
          Speed{' '}
          <select value={String(speed)} onChange={(e) => setSpeed(Number(e.target.value))}>
            {SPEEDS.map((s) => (
              <option key={s} value={String(s)}>
                {s}×
              </option>
            ))}
          </select>
        </label>
        <PositionNote clock={clock} />
      </div>
      <details class="shortcuts">
        <summary>Keyboard shortcuts</summary>
        <dl>
          <dt>
            <kbd>k</kbd>
          </dt>
          <dd>play or pause</dd>
          <dt>
            <kbd>j</kbd> or <kbd>←</kbd>
          </dt>
          <dd>back 5 seconds</dd>
          <dt>
            <kbd>l</kbd> or <kbd>→</kbd>
          </dt>
          <dd>forward 5 seconds</dd>
          <dt>
            <kbd>[</kbd> and <kbd>]</kbd>
          </dt>
          <dd>slower and faster</dd>
        </dl>
        <p class="small muted">The shortcuts do nothing while you type in a field.</p>
      </details>
    </div>
  );
}

function PositionNote({ clock }) {
  const [s, setS] = useState(Math.floor(clock.now() / 1000));
  useEffect(() => clock.subscribe((ms) => setS(Math.floor(ms / 1000))), [clock]);
  return <span class="muted small">at {formatTime(s)}</span>;
}
