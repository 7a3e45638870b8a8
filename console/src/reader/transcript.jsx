// The transcript as a virtualized list: only the rows near the viewport are
// in the DOM (spacers stand for the others), and only they get their words,
// so a 12-hour transcript scrolls like a short one. Row heights start as
// estimates from the text's length and are replaced by measured ones as rows
// are drawn; the scroll position is corrected when rows above the viewport
// change height, so the text under the reader's eyes does not jump.
//
// The word being spoken is highlighted (aria-current) and kept in view while
// the reader follows playback; scrolling away stops following and offers
// "Back to playback". A word is a button: click or Enter seeks to it.
import { Fragment } from 'preact';
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { formatTime } from '../ui.jsx';

const OVERSCAN = 4;
const PLACEHOLDER = 72;

function estimate(row, width) {
  if (!row) return PLACEHOLDER;
  const perLine = Math.max(20, Math.floor((width - 24) / 8.4));
  return 38 + Math.ceil(Math.max(1, (row.text || '').length) / perLine) * 25;
}

export function speakerName(names, label) {
  if (!label) return 'Unknown speaker';
  return names?.[label] || label;
}

export function Transcript({ store, clock, names, version, editing, onEdit }) {
  const box = useRef();
  const total = store.state.total;
  const heights = useRef([]); // measured, or undefined (estimated)
  const shape = useRef(total);
  if (shape.current !== total) {
    // Rows were split, merged or replaced: measure again.
    shape.current = total;
    heights.current = [];
  }
  const [view, setView] = useState({ top: 0, height: 480, width: 720 });
  const [measureTick, setMeasureTick] = useState(0);
  const [current, setCurrent] = useState({ row: -1, word: -1 });
  const [follow, setFollow] = useState(true);
  const expected = useRef(null); // a scrollTop the code set itself

  // Row offsets: prefix sums of measured or estimated heights.
  const offsets = useMemo(() => {
    const o = new Float64Array(total + 1);
    for (let i = 0; i < total; i++) o[i + 1] = o[i] + (heights.current[i] ?? estimate(store.row(i), view.width));
    return o;
  }, [total, version, measureTick, view.width]);

  const indexAt = (y) => {
    let lo = 0;
    let hi = total;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (offsets[mid + 1] <= y) lo = mid + 1;
      else hi = mid;
    }
    return Math.min(lo, Math.max(0, total - 1));
  };
  const firstOnScreen = total ? indexAt(view.top) : 0;
  const lastOnScreen = total ? indexAt(view.top + view.height) : -1;
  const first = Math.max(0, firstOnScreen - OVERSCAN);
  const last = Math.min(total - 1, lastOnScreen + OVERSCAN);

  useEffect(() => {
    if (total) store.ensure(Math.max(0, first - 50), Math.min(total, last + 50), [first, last + 1]);
  }, [first, last, total, version]);

  const setTop = (y) => {
    const el = box.current;
    const top = Math.max(0, Math.min(y, el.scrollHeight - el.clientHeight));
    expected.current = Math.round(top);
    el.scrollTop = top;
  };

  // Viewport size and position.
  useEffect(() => {
    const el = box.current;
    const read = () => setView({ top: el.scrollTop, height: el.clientHeight, width: el.clientWidth });
    const onScroll = () => {
      if (expected.current !== null && Math.abs(el.scrollTop - expected.current) <= 2) expected.current = null;
      else setFollow(false);
      read();
    };
    const ro = new ResizeObserver(read);
    ro.observe(el);
    el.addEventListener('scroll', onScroll, { passive: true });
    read();
    return () => {
      ro.disconnect();
      el.removeEventListener('scroll', onScroll);
    };
  }, []);

  // Measure the drawn rows; keep the first row on screen where it was.
  useLayoutEffect(() => {
    const el = box.current;
    let changed = false;
    let shift = 0;
    for (const node of el.querySelectorAll('[data-row]')) {
      const i = Number(node.dataset.row);
      const h = node.offsetHeight;
      const before = heights.current[i] ?? estimate(store.row(i), view.width);
      if (store.row(i) && Math.abs(h - before) > 0.5) {
        heights.current[i] = h;
        changed = true;
        if (i < firstOnScreen) shift += h - before;
      }
    }
    if (changed) {
      if (shift) setTop(el.scrollTop + shift);
      setMeasureTick((t) => t + 1);
    }
  });


  // The current word, from the playback clock.
  useEffect(() => {
    const onTime = (ms) => {
      let row = store.rowAt(ms);
      if (row < 0 || (row + 1 < store.state.total && !store.row(row + 1))) {
        // Not loaded around here yet: fetch the page the time falls in.
        const dur = store.state.durationMs || 1;
        const guess = Math.floor((store.state.total * ms) / dur);
        store.ensure(Math.max(0, guess - 20), Math.min(store.state.total, guess + 20), [0, 0]);
      }
      let word = -1;
      if (row >= 0) {
        const r = store.row(row);
        if (ms > r.end_ms + 1500 && row + 1 < store.state.total) {
          // Between rows: keep the last one, no word.
        } else {
          const toks = store.tokens(row);
          for (let k = 0; k < toks.length; k++) if (toks[k].start_ms <= ms) word = k;
        }
      }
      setCurrent((c) => (c.row === row && c.word === word ? c : { row, word }));
    };
    onTime(clock.now());
    const a = clock.subscribe(onTime);
    const b = clock.onSeek(() => setFollow(true));
    return () => {
      a();
      b();
    };
  }, [clock, store, version]);

  // Keep the current row in view while following.
  useEffect(() => {
    if (!follow || current.row < 0) return;
    const el = box.current;
    const y = offsets[current.row];
    const h = offsets[current.row + 1] - y;
    if (y < el.scrollTop || y + h > el.scrollTop + el.clientHeight) setTop(y - el.clientHeight / 3);
  }, [current.row, follow, offsets]);

  const rows = [];
  for (let i = first; i <= last; i++) {
    const r = store.row(i);
    rows.push(
      <Row
        key={r ? r.id : `p${i}`}
        index={i}
        row={r}
        tokens={r ? store.tokens(i) : null}
        names={names}
        currentWord={current.row === i ? current.word : -1}
        isCurrent={current.row === i}
        clock={clock}
        editing={editing}
        onEdit={onEdit}
      />,
    );
  }

  return (
    <div class="transcript-wrap">
      <div class="transcript" ref={box} tabIndex={0} role="region" aria-label="Transcript">
        <div class="spacer" aria-hidden="true" style={{ height: `${offsets[first] || 0}px` }} />
        {rows}
        <div class="spacer" aria-hidden="true" style={{ height: `${Math.max(0, offsets[total] - offsets[last + 1])}px` }} />
        {total === 0 && <p class="muted">No speech was recognized in this recording.</p>}
      </div>
      {!follow && current.row >= 0 && (
        <button type="button" class="secondary back-to-playback" onClick={() => setFollow(true)}>
          Back to playback
        </button>
      )}
    </div>
  );
}

function Row({ index, row, tokens, names, currentWord, isCurrent, clock, editing, onEdit }) {
  if (!row)
    return (
      <div class="seg placeholder" data-row={index}>
        <p class="muted">Loading…</p>
      </div>
    );
  const seek = (ms) => clock.seek(ms);
  const onKey = (e, ms) => {
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      seek(ms);
    }
  };
  return (
    <div class={`seg${isCurrent ? ' current' : ''}`} data-row={index} data-segment-index={index}>
      <div class="seg-head">
        <span class="speaker">{speakerName(names, row.speaker)}</span>
        <button type="button" class="link time" onClick={() => seek(row.start_ms)} aria-label={`Play from ${formatTime(row.start_ms / 1000)}`}>
          {formatTime(row.start_ms / 1000)}
        </button>
        {editing && (
          <button type="button" class="secondary small-button" onClick={() => onEdit(index)} aria-label={`Edit segment at ${formatTime(row.start_ms / 1000)}`}>
            Edit
          </button>
        )}
      </div>
      <p class="seg-text">
        {tokens.map((w, k) => (
          <Fragment key={k}>
            <span
              class={`word${k === currentWord ? ' now' : ''}`}
              role="button"
              tabIndex={0}
              data-ms={w.start_ms}
              data-end={w.end_ms}
              aria-current={k === currentWord ? 'true' : undefined}
              onClick={() => seek(w.start_ms)}
              onKeyDown={(e) => onKey(e, w.start_ms)}
            >
              {w.text}
            </span>{' '}
          </Fragment>
        ))}
      </p>
    </div>
  );
}
