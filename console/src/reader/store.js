// The reader's transcript, fetched by range so that a 12-hour recording
// (about 100,000 words, thousands of segments) opens at once:
// - segments come from /result?include=segments in pages of 1000, a page
//   fetched when one of its rows comes near the viewport;
// - words come from /words in pages of 5000, only for rows on screen; the
//   page that holds a segment's words is guessed from its time (words are
//   spread over the recording) and corrected by stepping to a neighbour;
// - when a revision exists (or while editing), the rows are its cues, all in
//   memory (a revision is one document). A cue whose words are the
//   recognized words of its time range (an unedited or only split, merged,
//   retimed or reassigned one) gets their timing; an edited cue's words have
//   none, so their moments are spread evenly over the cue.
// The store notifies its listeners after every arrival; rows read it with
// row(i) and tokens(i).
import { api, qs } from '../api.js';

export const SEGMENT_PAGE = 1000;
export const WORD_PAGE = 5000;

export function createStore(id, { durationMs = 0 } = {}) {
  const base = `/api/v1/transcriptions/${encodeURIComponent(id)}`;
  const listeners = new Set();
  const s = {
    mode: 'recognized', // or 'cues' (a revision or a draft)
    total: 0,
    rows: [], // sparse in recognized mode
    pages: new Map(), // segment page index -> promise
    words: new Map(), // segment id -> words[]
    wordPages: new Map(), // word offset -> promise of {first, last, hasMore}
    wordRuns: [], // the loaded pages' words, each run sorted by time
    wordCount: null,
    wordsAvailable: true,
    durationMs,
    error: null,
  };
  let notifyQueued = false;
  const notify = () => {
    if (notifyQueued) return;
    notifyQueued = true;
    queueMicrotask(() => {
      notifyQueued = false;
      for (const f of listeners) f();
    });
  };

  function acceptSegments(offset, segments, meta) {
    if (meta) s.total = meta.total;
    if (s.rows.length < s.total) s.rows.length = s.total;
    segments.forEach((g, k) => {
      s.rows[offset + k] = { id: g.id, start_ms: g.start_ms, end_ms: g.end_ms, speaker: g.speaker, text: g.text };
    });
    notify();
  }

  function loadPage(p) {
    if (s.mode !== 'recognized') return Promise.resolve();
    if (!s.pages.has(p)) {
      const promise = api(`${base}/result${qs({ include: 'segments', segments_offset: p * SEGMENT_PAGE, segments_limit: SEGMENT_PAGE })}`)
        .then((r) => acceptSegments(p * SEGMENT_PAGE, r.segments || [], r.segments_meta))
        .catch((e) => {
          s.pages.delete(p);
          s.error = e;
          notify();
        });
      s.pages.set(p, promise);
    }
    return s.pages.get(p);
  }

  // Words: one page, its words grouped under their segments.
  function loadWordPage(offset) {
    if (!s.wordPages.has(offset)) {
      const promise = api(`${base}/words${qs({ offset, limit: WORD_PAGE })}`).then((r) => {
        s.wordCount = r.count ?? 0;
        if (!r.available) {
          s.wordsAvailable = false;
          notify();
          return null;
        }
        const words = r.words || [];
        for (const w of words) {
          let list = s.words.get(w.segment_id);
          if (!list) s.words.set(w.segment_id, (list = []));
          if (!list.some((x) => x.word_index === w.word_index)) list.push(w);
        }
        for (const list of s.words.values()) list.sort((a, b) => a.word_index - b.word_index);
        if (words.length) s.wordRuns.push(words);
        notify();
        return words.length ? { first: words[0].start_ms, last: words[words.length - 1].start_ms, hasMore: r.has_more } : null;
      });
      promise.catch(() => s.wordPages.delete(offset));
      s.wordPages.set(offset, promise);
    }
    return s.wordPages.get(offset);
  }

  const done = new Set(); // time ranges whose words were looked for
  async function wordsFor(row) {
    const range = `${row.start_ms}-${row.end_ms}`;
    if (!s.wordsAvailable || done.has(range)) return;
    done.add(range);
    if (s.wordCount === null) await loadWordPage(0);
    if (!s.wordsAvailable || !s.wordCount) return;
    const pagesTotal = Math.ceil(s.wordCount / WORD_PAGE);
    const dur = s.durationMs || row.end_ms || 1;
    let p = Math.min(pagesTotal - 1, Math.max(0, Math.floor(((row.start_ms / dur) * s.wordCount) / WORD_PAGE)));
    const seen = new Set();
    while (!seen.has(p) && p >= 0 && p < pagesTotal) {
      seen.add(p);
      const page = await loadWordPage(p * WORD_PAGE);
      if (!page) return;
      if (row.start_ms < page.first && p > 0 && !seen.has(p - 1)) p -= 1;
      else if (row.end_ms > page.last && page.hasMore && !seen.has(p + 1)) p += 1;
      else return;
    }
  }

  // The recognized words of a cue's time range, when they are its words.
  const plain = (t) => t.toLowerCase().replace(/[^\p{L}\p{N}\s]+/gu, '').split(/\s+/).filter(Boolean).join(' ');
  function recognizedWords(r) {
    const ws = [];
    for (const run of s.wordRuns) {
      if (!run.length || run[run.length - 1].start_ms < r.start_ms || run[0].start_ms >= r.end_ms) continue;
      for (const w of run) if (w.start_ms >= r.start_ms && w.start_ms < r.end_ms) ws.push(w);
    }
    ws.sort((a, b) => a.start_ms - b.start_ms || a.word_index - b.word_index);
    return ws.length && plain(ws.map((w) => w.text + (w.punctuation || '')).join(' ')) === plain(r.text || '') ? ws : null;
  }

  const api_ = {
    state: s,
    subscribe(f) {
      listeners.add(f);
      return () => listeners.delete(f);
    },
    async open(firstPage) {
      // The page's first /result call (with chapters and sections) carries page 0.
      s.pages.set(0, Promise.resolve());
      acceptSegments(0, firstPage.segments || [], firstPage.segments_meta);
    },
    // Rows [from, to) are near the viewport: fetch their segments and, for
    // the rows on screen, their words.
    ensure(from, to, onScreen = [from, to]) {
      if (s.mode === 'recognized')
        for (let p = Math.floor(from / SEGMENT_PAGE); p <= Math.floor(Math.max(from, to - 1) / SEGMENT_PAGE); p++) loadPage(p);
      (async () => {
        for (let i = onScreen[0]; i < onScreen[1]; i++) {
          const r = s.rows[i];
          if (r) await wordsFor(r).catch(() => {});
        }
      })();
    },
    row: (i) => s.rows[i],
    // The words of row i: recognized words when loaded, else the text's words
    // with moments spread evenly over the row (edited cues have no timing).
    tokens(i) {
      const r = s.rows[i];
      if (!r) return [];
      const ws = s.mode === 'recognized' ? s.words.get(r.id) : recognizedWords(r);
      if (ws && ws.length)
        return ws.map((w) => ({ text: w.text + (w.punctuation || ''), start_ms: w.start_ms, end_ms: w.end_ms }));
      const parts = (r.text || '').split(/\s+/).filter(Boolean);
      const span = Math.max(1, r.end_ms - r.start_ms);
      return parts.map((text, k) => ({
        text,
        start_ms: Math.round(r.start_ms + (span * k) / parts.length),
        end_ms: Math.round(r.start_ms + (span * (k + 1)) / parts.length),
        approximate: true,
      }));
    },
    // Every recognized segment (for editing): the pages not loaded yet.
    async all() {
      if (s.mode === 'recognized') {
        const n = Math.ceil(s.total / SEGMENT_PAGE);
        await Promise.all(Array.from({ length: n }, (_, p) => loadPage(p)));
        if (s.error) throw s.error;
      }
      return s.rows.slice(0, s.total).map((r) => ({ start_ms: r.start_ms, end_ms: r.end_ms, text: r.text, speaker: r.speaker }));
    },
    // Show these cues instead of the recognized segments (a revision or a draft).
    useCues(cues) {
      s.mode = 'cues';
      s.rows = cues.map((c, i) => ({ ...c, id: `c${i}` }));
      s.total = s.rows.length;
      notify();
    },
    // Back to the recognized segments (after undoing the only revision).
    useRecognized() {
      s.mode = 'recognized';
      s.rows = [];
      s.total = 0;
      s.pages.clear();
      return loadPage(0);
    },
    // The row playing at `ms`: the last row starting at or before it, among
    // the rows loaded (binary search over the loaded ones near the guess).
    rowAt(ms) {
      let lo = 0;
      let hi = s.total - 1;
      let found = -1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        let k = mid;
        while (k >= lo && !s.rows[k]) k--;
        if (k < lo) {
          lo = mid + 1;
          continue;
        }
        if (s.rows[k].start_ms <= ms) {
          found = k;
          lo = mid + 1;
        } else hi = k - 1;
      }
      return found;
    },
  };
  return api_;
}
