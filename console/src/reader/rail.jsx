// The reader's side rail: chapters and sections, search inside the
// transcript, and questions answered with citations. Everything that names
// a moment is a button that seeks the player there.
import { useState } from 'preact/hooks';
import { api, qs } from '../api.js';
import { ErrorNote, Status, formatTime } from '../ui.jsx';
import { speakerName } from './transcript.jsx';

function SeekButton({ clock, seconds, children, label }) {
  return (
    <button type="button" class="link seek" onClick={() => clock.seek(Math.round(seconds * 1000))} aria-label={label}>
      {children}
    </button>
  );
}

export function Outline({ chapters, sections, clock }) {
  return (
    <details class="rail-part" open>
      <summary>
        <h2>Chapters and sections</h2>
      </summary>
      {chapters?.length > 0 && (
        <>
          <h3>Chapters</h3>
          <ol class="outline">
            {chapters.map((c) => (
              <li key={c.id ?? c.chapter_index}>
                <SeekButton clock={clock} seconds={c.start_seconds} label={`Chapter at ${formatTime(c.start_seconds)}: ${c.title}`}>
                  <span class="t">{formatTime(c.start_seconds)}</span> {c.title}
                </SeekButton>
              </li>
            ))}
          </ol>
        </>
      )}
      {sections?.length > 0 && (
        <>
          <h3>Sections</h3>
          <ol class="outline">
            {sections.map((s) => (
              <li key={s.id ?? s.section_index}>
                <SeekButton clock={clock} seconds={s.start_seconds} label={`Section at ${formatTime(s.start_seconds)}: ${s.title}`}>
                  <span class="t">{formatTime(s.start_seconds)}</span> {s.title}
                </SeekButton>
                {s.summary && <p class="small muted">{s.summary}</p>}
              </li>
            ))}
          </ol>
        </>
      )}
      {!chapters?.length && !sections?.length && <p class="muted small">No chapters or sections for this recording (yet).</p>}
    </details>
  );
}

export function SearchInside({ id, clock, names }) {
  const [q, setQ] = useState('');
  const [res, setRes] = useState(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const search = async (offset = 0) => {
    setBusy(true);
    setError(null);
    try {
      const r = await api(`/api/v1/transcriptions/${encodeURIComponent(id)}/search${qs({ q: q.trim(), limit: 50, offset })}`);
      setRes(offset ? { ...r, hits: [...res.hits, ...r.hits] } : r);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <details class="rail-part" open>
      <summary>
        <h2>Search in this transcript</h2>
      </summary>
      <form
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          search();
        }}
      >
        <label for="inside-q">Words to find</label>
        <div class="row">
          <input id="inside-q" type="search" minLength={2} maxLength={200} required value={q} onInput={(e) => setQ(e.target.value)} />
          <button type="submit" disabled={busy}>
            Search
          </button>
        </div>
      </form>
      <ErrorNote error={error} />
      {res && (
        <>
          <Status>
            {res.total ?? res.hits.length} {(res.total ?? res.hits.length) === 1 ? 'hit' : 'hits'} for “{res.query}”
          </Status>
          <ul class="hits" aria-label="Search hits">
            {res.hits.map((h) => (
              <li key={`${h.segment_id}-${h.start_ms}`}>
                <SeekButton clock={clock} seconds={h.start_ms / 1000} label={`Play hit at ${formatTime(h.start_ms / 1000)}`}>
                  {formatTime(h.start_ms / 1000)}
                </SeekButton>{' '}
                <span class="muted small">{speakerName(names, h.speaker)}</span> <Highlighted text={h.text} q={res.query} />
              </li>
            ))}
          </ul>
          {res.has_more && (
            <button type="button" class="secondary" onClick={() => search(res.hits.length)} disabled={busy}>
              More hits
            </button>
          )}
        </>
      )}
    </details>
  );
}

function Highlighted({ text, q }) {
  const i = text.toLowerCase().indexOf((q || '').toLowerCase());
  if (!q || i < 0) return <span>{text}</span>;
  return (
    <span>
      {text.slice(0, i)}
      <mark>{text.slice(i, i + q.length)}</mark>
      {text.slice(i + q.length)}
    </span>
  );
}

export function Ask({ id, clock }) {
  const [question, setQuestion] = useState('');
  const [answer, setAnswer] = useState(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const ask = async () => {
    setBusy(true);
    setError(null);
    setAnswer(null);
    try {
      setAnswer(await api(`/api/v1/transcriptions/${encodeURIComponent(id)}/ask`, { method: 'POST', body: { question: question.trim() } }));
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const byMarker = new Map((answer?.citations || []).map((c) => [c.marker, c]));
  return (
    <details class="rail-part" open>
      <summary>
        <h2>Ask about this recording</h2>
      </summary>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          ask();
        }}
      >
        <label for="ask-q">Question</label>
        <textarea id="ask-q" rows={2} maxLength={500} required value={question} onInput={(e) => setQuestion(e.target.value)} />
        <button type="submit" disabled={busy || !question.trim()}>
          Ask
        </button>
      </form>
      {busy && <Status>Reading the transcript for an answer (about ten seconds)…</Status>}
      <ErrorNote error={error} />
      {answer && (
        <div class="answer" aria-live="polite">
          {answer.no_answer ? (
            <p>The transcript does not answer this question. Nothing was counted against your allowance.</p>
          ) : (
            <p>
              {answer.answer.split(/(\[\d+\])/).map((part, k) => {
                const m = /^\[(\d+)\]$/.exec(part);
                const c = m && byMarker.get(Number(m[1]));
                return c ? (
                  <SeekButton key={k} clock={clock} seconds={c.start_seconds} label={`Citation ${c.marker} at ${formatTime(c.start_seconds)}`}>
                    [{c.marker}]
                  </SeekButton>
                ) : (
                  part
                );
              })}
            </p>
          )}
          {answer.citations?.length > 0 && (
            <ol class="citations" aria-label="Citations">
              {answer.citations.map((c) => (
                <li key={c.marker}>
                  <SeekButton clock={clock} seconds={c.start_seconds} label={`Play citation ${c.marker} from ${formatTime(c.start_seconds)}`}>
                    {formatTime(c.start_seconds)}
                  </SeekButton>{' '}
                  {c.title && <strong>{c.title}: </strong>}
                  {c.quote && <q>{c.quote}</q>}
                </li>
              ))}
            </ol>
          )}
          {answer.remaining_per_transcript !== null && answer.remaining_per_transcript !== undefined && (
            <p class="small muted">
              {answer.remaining_per_transcript} questions left for this recording
              {answer.remaining_per_day !== null && answer.remaining_per_day !== undefined ? `, ${answer.remaining_per_day} today` : ''}.
            </p>
          )}
        </div>
      )}
    </details>
  );
}
