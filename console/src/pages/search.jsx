// Library search (/app/search?q=…&offset=…): GET /api/v1/search, a
// case-insensitive substring over every completed transcription's segments.
// Each hit shows its segment with the match marked and opens the reader at
// that moment (/app/transcriptions/<id>?t=<whole seconds of start_ms>, the
// API's own deep-link rule). The query and the page live in the URL, so the
// back button returns to the same results.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, qs } from '../api.js';
import { navigate } from '../router.js';
import { ErrorNote, Status, formatTime, useAsync, useTitle } from '../ui.jsx';

const LIMIT = 20;
const MAX_OFFSET = 1000; // the API refuses offsets above 1000

// The segment's text split around every case-insensitive occurrence of q.
export function highlight(text, q) {
  const needle = q.toLowerCase();
  const hay = text.toLowerCase();
  const parts = [];
  let at = 0;
  if (needle) {
    for (let i = hay.indexOf(needle); i >= 0; i = hay.indexOf(needle, i + needle.length)) {
      if (i > at) parts.push(text.slice(at, i));
      parts.push(<mark key={i}>{text.slice(i, i + needle.length)}</mark>);
      at = i + needle.length;
    }
  }
  if (at < text.length) parts.push(text.slice(at));
  return parts;
}

export default function Search({ query }) {
  const q = (query.get('q') || '').trim();
  const offset = Math.min(MAX_OFFSET, Math.max(0, Number.parseInt(query.get('offset') || '0', 10) || 0));
  useTitle(q ? `Search: ${q}` : 'Search');
  const [draft, setDraft] = useState(q);
  const results = useAsync(
    () => (q.length >= 2 ? api(`/api/v1/search${qs({ q, limit: LIMIT, offset })}`) : Promise.resolve(null)),
    [q, offset],
  );
  const heading = useRef();
  useEffect(() => {
    if (results.data && offset > 0) heading.current?.focus();
  }, [results.data]);

  const go = (nextQ, nextOffset) => navigate(`/app/search${qs({ q: nextQ, offset: nextOffset || undefined })}`);
  const r = results.data;

  return (
    <section class="search">
      <h1>Search</h1>
      <form
        role="search"
        class="row search-form"
        onSubmit={(e) => {
          e.preventDefault();
          go(draft.trim(), 0);
        }}
      >
        <div class="search-field">
          <label for="search-q">Words to find in every transcript</label>
          <input
            id="search-q"
            type="search"
            minLength={2}
            maxLength={200}
            required
            value={draft}
            onInput={(e) => setDraft(e.currentTarget.value)}
          />
        </div>
        <button type="submit">Search</button>
      </form>
      <p class="muted small">Finds the exact words (not meaning), in completed transcriptions, newest first.</p>
      {q.length === 1 && <p role="alert">Type at least two characters.</p>}
      <ErrorNote error={results.error} />
      {results.loading && q.length >= 2 && <p class="muted">Searching…</p>}
      {r && (
        <>
          <h2 ref={heading} tabIndex={-1} id="search-results-h">
            Results
          </h2>
          <Status>
            {r.total === 0
              ? `Nothing found for “${r.query}”.`
              : `${r.total >= 1000 ? 'At least 1000' : r.total} ${r.total === 1 ? 'match' : 'matches'} for “${r.query}”; showing ${r.offset + 1}–${r.offset + r.hits.length}.`}
          </Status>
          <ol class="search-hits" start={r.offset + 1} aria-labelledby="search-results-h">
            {r.hits.map((h) => (
              <Hit key={`${h.transcription_id}-${h.segment_id}`} hit={h} q={r.query} />
            ))}
          </ol>
          <nav class="row" aria-label="Result pages">
            {r.offset > 0 && (
              <button type="button" class="secondary" onClick={() => go(q, Math.max(0, r.offset - LIMIT))}>
                Previous page
              </button>
            )}
            {r.has_more && r.offset + LIMIT <= MAX_OFFSET && (
              <button type="button" class="secondary" onClick={() => go(q, r.offset + LIMIT)}>
                Next page
              </button>
            )}
          </nav>
        </>
      )}
    </section>
  );
}

function Hit({ hit, q }) {
  const seconds = Math.floor(hit.start_ms / 1000);
  const title = hit.title || `Transcription ${hit.transcription_id}`;
  return (
    <li class="search-hit">
      <a href={`/app/transcriptions/${hit.transcription_id}?t=${seconds}`} class="search-hit-link">
        <span class="search-hit-title">{title}</span> <span class="search-hit-time">at {formatTime(seconds)}</span>
      </a>
      <p class="search-hit-text">
        {hit.speaker && <span class="muted">{hit.speaker}: </span>}
        {highlight(hit.text, q)}
      </p>
    </li>
  );
}
