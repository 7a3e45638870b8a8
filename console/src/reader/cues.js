// Pure edits of a cue list ({start_ms, end_ms, text, speaker}), the body of a
// revision (POST /transcriptions/{id}/revisions). Each answers a new list, or
// throws an Error whose message tells the person what to change; the server
// checks the same rules again (ordering, no overlap, non-empty text).

export function replaceCue(cues, i, { text, start_ms, end_ms, speaker }) {
  const t = (text || '').replace(/\s+/g, ' ').trim();
  if (!t) throw new Error('A segment needs some text; merge it with a neighbour instead of emptying it.');
  if (!Number.isFinite(start_ms) || !Number.isFinite(end_ms) || start_ms < 0)
    throw new Error('Start and end must be times in seconds.');
  if (end_ms <= start_ms) throw new Error('The end must come after the start.');
  if (i > 0 && start_ms < cues[i - 1].end_ms)
    throw new Error(`The start overlaps the previous segment, which ends at ${(cues[i - 1].end_ms / 1000).toFixed(2)} s.`);
  if (i + 1 < cues.length && end_ms > cues[i + 1].start_ms)
    throw new Error(`The end overlaps the next segment, which starts at ${(cues[i + 1].start_ms / 1000).toFixed(2)} s.`);
  const out = cues.slice();
  out[i] = { start_ms, end_ms, text: t, speaker: speaker ?? null };
  return out;
}

// Splits cue i at character `at` of its text; the time is divided in the
// same proportion (the words of an edited cue have no timing of their own).
export function splitCue(cues, i, at) {
  const c = cues[i];
  const a = c.text.slice(0, at).trim();
  const b = c.text.slice(at).trim();
  if (!a || !b) throw new Error('Put the cursor between two words to split there.');
  const span = c.end_ms - c.start_ms;
  if (span < 2) throw new Error('This segment is too short to split.');
  const cut = Math.min(c.end_ms - 1, Math.max(c.start_ms + 1, Math.round(c.start_ms + (span * at) / c.text.length)));
  const out = cues.slice();
  out.splice(i, 1, { ...c, end_ms: cut, text: a }, { ...c, start_ms: cut, text: b });
  return out;
}

export function mergeWithNext(cues, i) {
  if (i + 1 >= cues.length) throw new Error('This is the last segment: there is nothing after it to merge with.');
  const a = cues[i];
  const b = cues[i + 1];
  const out = cues.slice();
  out.splice(i, 2, { start_ms: a.start_ms, end_ms: b.end_ms, text: `${a.text} ${b.text}`, speaker: a.speaker });
  return out;
}

// The labels in use, sorted, and the next free SPEAKER_NN label.
export function speakerLabels(cues, names = {}) {
  const set = new Set(Object.keys(names));
  for (const c of cues) if (c.speaker) set.add(c.speaker);
  return [...set].sort();
}

export function nextLabel(labels) {
  let n = 0;
  for (const l of labels) {
    const m = /^SPEAKER_(\d+)$/.exec(l);
    if (m) n = Math.max(n, Number(m[1]) + 1);
  }
  return `SPEAKER_${String(n).padStart(2, '0')}`;
}

// Display names without blanks (a blank name means "show the label").
export function cleanNames(names) {
  const out = {};
  for (const [k, v] of Object.entries(names || {})) if (v && v.trim()) out[k] = v.trim();
  return out;
}
