// Clips from a range of the recording: the range comes from the words
// selected in the transcript, from the playback position, or typed in; the
// charge is quoted (GET /clips/quote) before anything is held; the render is
// followed with GET /clips/{id}?wait=45 (a long-poll, no polling loop), and
// the finished clip plays here.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, qs } from '../api.js';
import { ErrorNote, Status, formatUsd, formatDate } from '../ui.jsx';

// The selected words' range in the transcript (their data-ms/data-end).
function selectedRange() {
  const sel = getSelection();
  if (!sel || sel.isCollapsed || !sel.rangeCount) return null;
  const words = [...document.querySelectorAll('.transcript .word[data-ms]')].filter((w) => sel.containsNode(w, true));
  if (!words.length) return null;
  const start = Math.min(...words.map((w) => Number(w.dataset.ms)));
  const end = Math.max(...words.map((w) => Number(w.dataset.end)));
  return { start: start / 1000, end: end / 1000 };
}

const round = (x) => Math.round(x * 100) / 100;

export function Clips({ id, clock }) {
  const base = `/api/v1/transcriptions/${encodeURIComponent(id)}/clips`;
  const [form, setForm] = useState({ start: '', end: '', aspect: '9:16', style: 'captions', output: 'audiogram', title: '' });
  const [quote, setQuote] = useState(null);
  const [error, setError] = useState(null);
  const [clips, setClips] = useState([]);
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState('');
  const [rendering, setRendering] = useState(null); // when the render started

  const body = () => {
    const b = { start_seconds: Number(form.start), end_seconds: Number(form.end), aspect: form.aspect, style: form.style, output: form.output };
    if (form.title.trim()) b.title = form.title.trim();
    return b;
  };
  const valid = form.start !== '' && form.end !== '' && Number(form.end) > Number(form.start);

  useEffect(() => {
    api(base).then(
      (r) => setClips(r.data || r.clips || []),
      () => {},
    );
  }, [id]);

  // The quote follows the form (after a short pause in typing).
  useEffect(() => {
    setQuote(null);
    if (!valid) return;
    const t = setTimeout(() => {
      api(`${base}/quote${qs(body())}`).then(
        (q) => {
          setQuote(q);
          setError(null);
        },
        (e) => setError(e),
      );
    }, 300);
    return () => clearTimeout(t);
  }, [form.start, form.end, form.aspect, form.style, form.output]);

  // Long-polls stop when the page goes away.
  const live = useRef(true);
  useEffect(() => () => (live.current = false), []);

  const follow = async (clip) => {
    let c = clip;
    setRendering(Date.now());
    while (live.current && c.status !== 'completed' && c.status !== 'failed') {
      setNote(`Rendering clip ${c.id} (${c.status})…`);
      c = await api(`${base}/${c.id}?wait=45`);
      setClips((list) => list.map((x) => (x.id === c.id ? c : x)));
    }
    setRendering(null);
    setNote(c.status === 'completed' ? `Clip ${c.id} is ready.` : `Clip ${c.id} failed: ${c.error?.message || 'see the clip below'}`);
  };

  const create = async () => {
    setBusy(true);
    setError(null);
    try {
      const clip = await api(base, { method: 'POST', body: { ...body(), client_nonce: crypto.randomUUID() } });
      setClips((list) => [clip, ...list.filter((x) => x.id !== clip.id)]);
      await follow(clip);
    } catch (e) {
      setError(e);
      setNote('');
      setRendering(null);
    } finally {
      setBusy(false);
    }
  };

  const set = (k) => (e) => setForm({ ...form, [k]: e.target.value });
  const fromSelection = () => {
    const r = selectedRange();
    if (!r) {
      setNote('Select some words in the transcript first (drag across them), then use the selection.');
      return;
    }
    setNote(`Range set from the selected words: ${round(r.start)}–${round(r.end)} s.`);
    setForm({ ...form, start: String(round(r.start)), end: String(round(r.end)) });
  };

  return (
    <details class="rail-part">
      <summary>
        <h2>Clips</h2>
      </summary>
      <p class="small muted">A clip of 1 to 60 seconds, with captions, costs $0.05 per started minute.</p>
      <div class="row">
        <button type="button" class="secondary" onMouseDown={(e) => e.preventDefault()} onClick={fromSelection}>
          Use the selected words
        </button>
      </div>
      <div class="row">
        <div>
          <label for="clip-start">Clip start (seconds)</label>
          <input id="clip-start" type="number" min="0" step="0.01" value={form.start} onInput={set('start')} />
          <button type="button" class="secondary small-button" onClick={() => setForm({ ...form, start: String(round(clock.now() / 1000)) })}>
            Start here
          </button>
        </div>
        <div>
          <label for="clip-end">Clip end (seconds)</label>
          <input id="clip-end" type="number" min="0" step="0.01" value={form.end} onInput={set('end')} />
          <button type="button" class="secondary small-button" onClick={() => setForm({ ...form, end: String(round(clock.now() / 1000)) })}>
            End here
          </button>
        </div>
      </div>
      <label for="clip-output">Output</label>
      <select id="clip-output" value={form.output} onChange={set('output')}>
        <option value="audiogram">Audiogram video with captions (MP4)</option>
        <option value="video">The recording's video with captions (MP4)</option>
        <option value="audio">Audio only (M4A)</option>
      </select>
      <label for="clip-aspect">Aspect</label>
      <select id="clip-aspect" value={form.aspect} onChange={set('aspect')}>
        <option value="9:16">9:16 portrait</option>
        <option value="1:1">1:1 square</option>
        <option value="16:9">16:9 landscape</option>
      </select>
      <label for="clip-style">Caption style</label>
      <select id="clip-style" value={form.style} onChange={set('style')}>
        <option value="captions">Captions</option>
        <option value="karaoke">Karaoke</option>
        <option value="minimal">Minimal</option>
      </select>
      <label for="clip-title">Title (optional)</label>
      <input id="clip-title" maxLength={120} value={form.title} onInput={set('title')} />
      {quote && (
        <p>
          {quote.clip_seconds} s, charge {formatUsd(quote.charge_usd)}
        </p>
      )}
      <button type="button" onClick={create} disabled={busy || !valid}>
        Render clip
      </button>
      <Status>{note}</Status>
      {rendering && <Elapsed since={rendering} />}
      <ErrorNote error={error} />
      {clips.length > 0 && (
        <ul class="clips" aria-label="Clips of this recording">
          {clips.map((c) => (
            <li key={c.id}>
              <p>
                <strong>
                  Clip {c.id}
                  {c.title ? `: ${c.title}` : ''}
                </strong>{' '}
                {round(c.start_seconds)}–{round(c.end_seconds)} s · {c.status} · {formatDate(c.created_at)}
              </p>
              {c.status === 'completed' && c.file_url && <ClipMedia clip={c} />}
              {c.status === 'failed' && <p class="small">{c.error?.message}</p>}
            </li>
          ))}
        </ul>
      )}
    </details>
  );
}

function ClipMedia({ clip }) {
  const audio = clip.output === 'audio' || (clip.file_content_type || '').startsWith('audio/');
  const label = `Clip ${clip.id}`;
  return (
    <>
      {audio ? (
        <audio controls preload="none" src={clip.file_url} aria-label={label} class="clip-media" />
      ) : (
        <video controls preload="none" src={clip.file_url} aria-label={label} class="clip-media" />
      )}
      <p class="small">
        <a href={clip.file_url} download>
          Download clip {clip.id}
        </a>
      </p>
    </>
  );
}

// Seconds since the render started (a local clock; the server is asked only
// by the long-poll).
function Elapsed({ since }) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);
  const s = Math.round((now - since) / 1000);
  return (
    <p class="small muted">
      {s} s so far; short clips usually take under a minute.
      <progress aria-label="Render in progress" />
    </p>
  );
}
