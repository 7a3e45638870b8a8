// The Node helper of bench/ask_quality.sh (built-ins only: fetch, fs, crypto).
//
//   node bench/ask_quality.mjs upload
//     Uploads every recording of the library that the id map does not already
//     hold (presigned flow: POST /uploads, PUT, POST /transcriptions), then
//     waits for all of them (/wait). The map, ASK_WORK_DIR/ids.tsv, has a
//     first line `# db SYSTEM_IDENTIFIER` and then `NAME<TAB>ID<TAB>MD5` lines;
//     a map of another cluster is ignored, an entry whose recording changed
//     (MD5) or whose transcription is gone or failed is uploaded again.
//
//   node bench/ask_quality.mjs check
//     Offline checks of questions.tsv (targets exist, counts, no long runs of
//     words copied from the target's text).
//
//   node bench/ask_quality.mjs ask [--set tune|report|all] [--verbose] [--top-k N]
//     Asks the questions of bench/ask_eval/questions.tsv and scores them
//     (bench/ask_eval/README.md): per set and scope the answerable hit share,
//     the unanswerable no_answer share, the answered-but-wrong share and the
//     latency p50/p95, then JSON lines {"bench":"ask_quality",...}.
//
// Environment: ASK_API (http://127.0.0.1:PORT/api/v1), ASK_KEY, ASK_DB_ID,
// ASK_WORK_DIR (dialogue-NN and passage-NN recordings, ids.tsv),
// ASK_ENRICH_DIR (tune-N, report-N), ASK_QUESTIONS.
import { readFileSync, writeFileSync, readdirSync, existsSync, renameSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join, basename } from 'node:path';

const api = process.env.ASK_API;
const key = process.env.ASK_KEY;
const workDir = process.env.ASK_WORK_DIR || '/tmp/scribe-ask-eval';
const enrichDir = process.env.ASK_ENRICH_DIR || '/tmp/scribe-enrich-eval';
const questionsFile = process.env.ASK_QUESTIONS || new URL('./ask_eval/questions.tsv', import.meta.url).pathname;
const mapFile = join(workDir, 'ids.tsv');
const auth = { Authorization: `Bearer ${key}` };
const now = () => performance.now() / 1000;

async function call(method, url, { json, body, headers = {}, allow = [] } = {}) {
  const init = { method, headers: { ...auth, ...headers } };
  if (json !== undefined) {
    init.body = JSON.stringify(json);
    init.headers['Content-Type'] = 'application/json';
  } else if (body !== undefined) {
    init.body = body;
  }
  const res = await fetch(url, init);
  const text = await res.text();
  if (res.status >= 300 && !allow.includes(res.status)) throw new Error(`${method} ${url}: ${res.status} ${text.slice(0, 300)}`);
  let parsed = {};
  try { parsed = text ? JSON.parse(text) : {}; } catch { parsed = { _raw: text }; }
  return { status: res.status, body: parsed };
}

// ---------------------------------------------------------------- recordings

// A labels file: `# set S recording R duration D`, `passage START END NAME VOICES`,
// `paragraph START END NAME P`, `turn START END SPEAKER INDEX`; other lines ignored.
function loadLabels(path) {
  const rec = { name: basename(path, '.labels'), wav: path.replace(/\.labels$/, '.wav'), set: null, duration: null,
    passages: [], paragraphs: [], turns: [] };
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const w = line.trim().split(/\s+/);
    if (w[0] === '#') {
      for (let i = 1; i + 1 < w.length; i += 2) {
        if (w[i] === 'set') rec.set = w[i + 1];
        if (w[i] === 'duration') rec.duration = Number(w[i + 1]);
      }
    } else if (w[0] === 'passage') {
      rec.passages.push({ start: Number(w[1]), end: Number(w[2]), name: w[3], num: w[3].slice(0, 2) });
    } else if (w[0] === 'paragraph') {
      rec.paragraphs.push({ start: Number(w[1]), end: Number(w[2]), name: w[3], num: w[3].slice(0, 2), p: Number(w[4]) });
    } else if (w[0] === 'turn') {
      rec.turns.push({ start: Number(w[1]), end: Number(w[2]), speaker: w[3], index: Number(w[4]) });
    }
  }
  rec.kind = rec.name.startsWith('dialogue-') ? 'dialogue' : rec.name.startsWith('passage-') ? 'passage' : 'multi';
  return rec;
}

function library() {
  const recs = [];
  const add = (dir, test) => {
    if (!existsSync(dir)) return;
    for (const f of readdirSync(dir).sort()) if (f.endsWith('.labels') && test(f)) recs.push(loadLabels(join(dir, f)));
  };
  add(enrichDir, (f) => /^(tune|report)-/.test(f));
  add(workDir, (f) => /^(dialogue|passage)-/.test(f));
  for (const r of recs) {
    if (!existsSync(r.wav)) throw new Error(`${r.wav} is missing`);
    if (r.kind !== 'dialogue' && r.paragraphs.length === 0)
      throw new Error(`${r.name}.labels has no paragraph lines: run bench/enrichment_eval/make_set.sh once more`);
  }
  return recs;
}

function readMap() {
  const map = new Map();
  if (!existsSync(mapFile)) return map;
  const lines = readFileSync(mapFile, 'utf8').split('\n');
  if (lines[0] !== `# db ${process.env.ASK_DB_ID}`) return map;
  for (const l of lines.slice(1)) {
    const [name, id, md5] = l.split('\t');
    if (name && id) map.set(name, { id: Number(id), md5 });
  }
  return map;
}

function writeMap(map) {
  const lines = [`# db ${process.env.ASK_DB_ID}`];
  for (const [name, v] of [...map.entries()].sort()) lines.push(`${name}\t${v.id}\t${v.md5}`);
  writeFileSync(`${mapFile}.tmp`, lines.join('\n') + '\n');
  renameSync(`${mapFile}.tmp`, mapFile);
}

// Seconds of a 16-bit PCM WAV from its header.
function wavSeconds(bytes) {
  let off = 12, rate = 16000, channels = 1, bits = 16;
  while (off + 8 <= bytes.length) {
    const id = bytes.toString('ascii', off, off + 4), size = bytes.readUInt32LE(off + 4);
    if (id === 'fmt ') { channels = bytes.readUInt16LE(off + 10); rate = bytes.readUInt32LE(off + 12); bits = bytes.readUInt16LE(off + 22); }
    if (id === 'data') return size / (rate * channels * (bits / 8));
    off += 8 + size + (size % 2);
  }
  return (bytes.length - 44) / 32000;
}

async function upload() {
  const recs = library();
  const map = readMap();
  const pending = [];
  let kept = 0;
  for (const r of recs) {
    const bytes = readFileSync(r.wav);
    const md5 = createHash('md5').update(bytes).digest('hex');
    const old = map.get(r.name);
    if (old && old.md5 === md5) {
      const got = await call('GET', `${api}/transcriptions/${old.id}`, { allow: [404, 410] });
      if (got.status === 200 && got.body.status !== 'failed' && got.body.status !== 'cancelled') {
        kept++;
        if (got.body.status !== 'completed') pending.push({ name: r.name, id: old.id });
        continue;
      }
    }
    const ticket = (await call('POST', `${api}/uploads`, {
      json: { filename: `${r.name}.wav`, content_type: 'audio/wav', file_size: bytes.length },
    })).body;
    await call('PUT', ticket.upload_url, { body: bytes, headers: { 'Content-Type': 'audio/wav' } });
    const created = (await call('POST', `${api}/transcriptions`, {
      json: { source: 'upload', upload_id: ticket.upload_id, original_filename: `${r.name}.wav`,
        duration_seconds: Math.max(1, Math.round(wavSeconds(bytes))) },
    })).body;
    map.set(r.name, { id: created.id, md5 });
    writeMap(map);
    pending.push({ name: r.name, id: created.id });
    console.error(`uploaded ${r.name} -> transcription ${created.id}`);
  }
  console.error(`library: ${recs.length} recordings, ${kept} already on the server, ${pending.length} to wait for`);
  const t0 = now();
  let failed = 0;
  for (const [i, p] of pending.entries()) {
    let answer;
    for (;;) {
      answer = (await call('GET', `${api}/transcriptions/${p.id}/wait?timeout=30`)).body;
      if (answer._timed_out === false || ['completed', 'failed', 'cancelled'].includes(answer.status)) break;
    }
    if (answer.status !== 'completed') {
      failed++;
      map.delete(p.name);
      writeMap(map);
    }
    console.error(`${p.name}: ${answer.status} (${i + 1}/${pending.length}, ${(now() - t0).toFixed(0)} s)`);
  }
  if (failed) throw new Error(`${failed} transcriptions did not complete; run again to retry them`);
}

// ---------------------------------------------------------------- questions

// questions.tsv: SET<TAB>SCOPE<TAB>TARGET<TAB>QUESTION; '#' lines and blank lines skipped.
// TARGET: passage:NN:P | passage:NN | turn:dialogue-NN:K | - | -:passage:NN | -:dialogue-NN;
// several answerable targets may be joined with ',' (any of them counts).
function loadQuestions() {
  const out = [];
  readFileSync(questionsFile, 'utf8').split('\n').forEach((line, i) => {
    if (!line.trim() || line.startsWith('#')) return;
    const [set, scope, target, question] = line.split('\t');
    if (!['tune', 'report'].includes(set) || !['transcript', 'library'].includes(scope) || !target || !question)
      throw new Error(`${questionsFile}:${i + 1}: expected SET<TAB>SCOPE<TAB>TARGET<TAB>QUESTION`);
    out.push({ line: i + 1, set, scope, target, question, answerable: !target.startsWith('-') });
  });
  return out;
}

// The places in recording `rec` that answer target `t` (one alternative): [{start, end, label}].
function spansIn(rec, t) {
  const m = t.match(/^passage:(\d\d)(?::([12]))?$/);
  if (m) {
    if (m[2]) return rec.paragraphs.filter((p) => p.num === m[1] && p.p === Number(m[2])).map((p) => ({ ...p, label: `passage ${p.num} paragraph ${p.p}` }));
    return rec.passages.filter((p) => p.num === m[1]).map((p) => ({ ...p, label: `passage ${p.num}` }));
  }
  const d = t.match(/^turn:(dialogue-\d\d):(\d+)$/);
  if (d) return rec.name === d[1] ? rec.turns.filter((x) => x.index === Number(d[2])).map((x) => ({ ...x, label: `turn ${x.index}` })) : [];
  throw new Error(`unknown target ${t}`);
}

// What is at [a, b] in a recording: for the miss categories.
function placeAt(rec, a, b) {
  const hit = (x) => Math.min(b, x.end) > Math.max(a, x.start) || (a === b && a >= x.start && a <= x.end);
  if (rec.kind === 'dialogue') return rec.turns.filter(hit).map((x) => `turn ${x.index}`).join('+') || 'pause';
  return rec.paragraphs.filter(hit).map((x) => `${x.name} p${x.p}`).join('+') || 'pause';
}

const segmentCache = new Map();
async function segments(id) {
  if (!segmentCache.has(id)) {
    const all = [];
    for (let offset = 0; ; offset += 1000) {
      const r = (await call('GET', `${api}/transcriptions/${id}/result?include=segments&segments_limit=1000&segments_offset=${offset}`)).body;
      all.push(...(r.segments || []));
      if (!r.segments_meta?.has_more) break;
    }
    segmentCache.set(id, all);
  }
  return segmentCache.get(id);
}

// The cited interval: from start_seconds to the end of the transcript segment
// that contains it (the last segment starting at or before it, within 0.05 s).
async function citedInterval(id, t) {
  const segs = await segments(id);
  let best = null;
  for (const s of segs) if (s.start_seconds <= t + 0.05) best = s;
  if (best && best.end_seconds >= t) return [t, best.end_seconds];
  return [t, t + 1];
}

const overlaps = (a, b, s) => Math.min(b, s.end) > Math.max(a, s.start);

function quantile(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))] : null;
}

async function ask(argv) {
  const opts = { set: 'all', verbose: false, topK: null };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--set') opts.set = argv[++i];
    else if (argv[i] === '--verbose') opts.verbose = true;
    else if (argv[i] === '--top-k') opts.topK = Number(argv[++i]);
    else throw new Error(`unknown option ${argv[i]}`);
  }
  // ASK_SKIP_KINDS=passage: ask only the multi-topic recordings and the
  // dialogues (a partial run while the single passages are still being
  // transcribed; the library scope then holds whatever is completed).
  const skip = (process.env.ASK_SKIP_KINDS || '').split(',').filter(Boolean);
  const recs = library();
  if (skip.length) console.log(`per-transcript asks skip recordings of kind ${skip.join(', ')}`);
  const map = readMap();
  const byName = new Map(recs.map((r) => [r.name, r]));
  const byId = new Map();
  for (const r of recs) {
    const e = map.get(r.name);
    if (!e && skip.includes(r.kind)) continue;
    if (!e) throw new Error(`${r.name} has no transcription: run bench/ask_quality.sh (upload) first`);
    r.id = e.id;
    byId.set(e.id, r);
  }
  const questions = loadQuestions().filter((q) => opts.set === 'all' || q.set === opts.set);

  // Expand into asks.
  const asks = [];
  for (const q of questions) {
    const setRecs = recs.filter((r) => r.set === q.set && !skip.includes(r.kind));
    if (q.scope === 'library') {
      asks.push({ q, rec: null });
      continue;
    }
    let on;
    if (q.answerable) {
      const alts = q.target.split(',');
      on = setRecs.filter((r) => alts.some((t) => spansIn(r, t).length));
      if (!on.length) throw new Error(`questions.tsv:${q.line}: no recording of set ${q.set} holds ${q.target}`);
    } else if (q.target === '-') {
      on = setRecs.filter((r) => r.kind !== 'passage');
    } else {
      const ref = q.target.slice(2);
      on = setRecs.filter((r) => (ref.startsWith('passage:') ? spansIn(r, ref).length > 0 : r.name === ref));
      if (!on.length) throw new Error(`questions.tsv:${q.line}: no recording of set ${q.set} holds ${ref}`);
    }
    for (const rec of on) asks.push({ q, rec });
  }

  let probe = null;
  const results = [];
  for (const a of asks) {
    const { q, rec } = a;
    const url = rec ? `${api}/transcriptions/${rec.id}/ask` : `${api}/ask`;
    const body = { question: q.question };
    if (rec && opts.topK) body.top_k = opts.topK;
    const t0 = now();
    let res;
    try {
      res = await call('POST', url, { json: body, allow: [400, 402, 404, 409, 422, 429, 500, 502, 503] });
    } catch (e) {
      res = { status: 0, body: { error: String(e) } };
    }
    const latency = now() - t0;
    if (res.status === 404 && probe === null && !res.body?.error?.toString().includes('transcription')) probe = res;
    const r = { q, rec, latency, status: res.status, body: res.body, outcome: null, detail: '' };
    scoreOne(r);
    results.push(r);
  }
  // Segment ends are needed for the overlap test: done after the asks so that
  // latency is not mixed with the result reads.
  for (const r of results) await finishScore(r, byId, byName, recs);

  if (results.length && results.every((r) => r.status === 404 || r.status === 0)) {
    console.log(`every ask failed (HTTP ${results[0].status}): ${JSON.stringify(results[0].body).slice(0, 200)}`);
    console.log(JSON.stringify({ bench: 'ask_quality', error: 'endpoint_unavailable', status: results[0].status }));
    process.exitCode = 3;
    return;
  }
  report(results, opts);
}

// First pass (no I/O): errors and no_answer.
function scoreOne(r) {
  const b = r.body || {};
  if (r.status !== 200) { r.outcome = 'error'; r.detail = `HTTP ${r.status} ${JSON.stringify(b).slice(0, 160)}`; return; }
  if (b.no_answer === true) { r.outcome = r.q.answerable ? 'miss_no_answer' : 'hit'; return; }
  if (!r.q.answerable) { r.outcome = 'answered_unanswerable'; return; }
  if (!Array.isArray(b.citations) || b.citations.length === 0) { r.outcome = 'miss_no_citation'; return; }
  r.outcome = 'pending';
}

async function finishScore(r, byId, byName, recs) {
  const b = r.body || {};
  const c = Array.isArray(b.citations) && b.citations.length ? b.citations[0] : null;
  if (c) {
    const rec = byId.get(Number(c.transcription_id)) || r.rec;
    if (rec) {
      const [s, e] = await citedInterval(rec.id, Number(c.start_seconds));
      r.cited = { rec: rec.name, start: s, end: e, place: placeAt(rec, s, e) };
    } else {
      r.cited = { rec: `transcription ${c.transcription_id}`, start: Number(c.start_seconds), end: Number(c.start_seconds) + 1, place: '?' };
    }
  }
  if (r.outcome !== 'pending') return;
  const citedRec = byId.get(Number(c.transcription_id));
  const alts = r.q.target.split(',');
  if (r.rec && citedRec !== r.rec) { r.outcome = 'miss_wrong_recording'; return; }
  if (!citedRec) { r.outcome = 'miss_wrong_recording'; return; }
  const spans = alts.flatMap((t) => spansIn(citedRec, t));
  if (!spans.length) { r.outcome = 'miss_wrong_recording'; return; }
  const { start, end } = r.cited;
  if (spans.some((s) => overlaps(start, end, s))) { r.outcome = 'hit'; return; }
  // Which kind of wrong: the same passage (other paragraph) or the same
  // dialogue (other turn), else another passage.
  if (citedRec.kind === 'dialogue') {
    // Citing the turn right before the answer is usually citing the question.
    const before = alts.some((t) => {
      const m = t.match(/^turn:(dialogue-\d\d):(\d+)$/);
      return m && m[1] === citedRec.name && citedRec.turns.some((x) => x.index === Number(m[2]) - 1 && overlaps(start, end, x));
    });
    r.outcome = before ? 'miss_previous_turn' : 'miss_wrong_turn';
    return;
  }
  const nums = new Set(alts.map((t) => t.split(':')[1]));
  const samePassage = citedRec.passages.some((p) => nums.has(p.num) && overlaps(start, end, p));
  r.outcome = samePassage ? 'miss_wrong_paragraph' : 'miss_wrong_passage';
}

function report(results, opts) {
  const f = (x, d = 3) => (x === null || x === undefined || Number.isNaN(x) ? '-' : x.toFixed(d));
  const sets = [...new Set(results.map((r) => r.q.set))];
  const lines = [];
  console.log('');
  console.log(`${'set'.padEnd(7)}${'scope'.padEnd(11)}${'asks'.padStart(5)}${'answerable hit'.padStart(20)}${'unanswerable no_ans'.padStart(22)}` +
    `${'answered wrong'.padStart(17)}${'errors'.padStart(8)}${'p50 ms'.padStart(8)}${'p95 ms'.padStart(8)}`);
  const share = (n, d) => (d ? n / d : null);
  const ms = (x) => (x === null ? null : Math.round(x * 10000) / 10);
  // Per transcript, by the kind of recording asked: multi-topic, dialogue, single passage.
  const byKind = (rs) => {
    const out = {};
    for (const kind of ['multi', 'dialogue', 'passage']) {
      const k = rs.filter((r) => r.rec?.kind === kind);
      const ans = k.filter((r) => r.q.answerable), un = k.filter((r) => !r.q.answerable);
      if (!k.length) continue;
      out[kind] = { answerable_hit: ans.filter((r) => r.outcome === 'hit').length, answerable_asks: ans.length,
        unanswerable_no_answer: un.filter((r) => r.outcome === 'hit').length, unanswerable_asks: un.length };
    }
    return out;
  };
  for (const set of sets) for (const scope of ['transcript', 'library']) {
    const rs = results.filter((r) => r.q.set === set && r.q.scope === scope);
    if (!rs.length) continue;
    const ans = rs.filter((r) => r.q.answerable), un = rs.filter((r) => !r.q.answerable);
    const ansHit = ans.filter((r) => r.outcome === 'hit').length;
    const unHit = un.filter((r) => r.outcome === 'hit').length;
    // Answered but wrong: an answer (no_answer false) that is not a hit:
    // answerable ones citing the wrong place (or nothing), and unanswerable ones answered.
    const ansWrong = ans.filter((r) => r.outcome.startsWith('miss_') && r.outcome !== 'miss_no_answer').length;
    const unWrong = un.filter((r) => r.outcome === 'answered_unanswerable').length;
    const errors = rs.filter((r) => r.outcome === 'error').length;
    const lat = rs.filter((r) => r.status === 200).map((r) => r.latency);
    const cats = {};
    for (const r of rs) if (r.outcome !== 'hit') cats[r.outcome] = (cats[r.outcome] || 0) + 1;
    const row = {
      bench: 'ask_quality', set, scope, asks: rs.length, questions: new Set(rs.map((r) => r.q.line)).size,
      answerable_asks: ans.length, answerable_hit: ansHit, answerable_hit_share: share(ansHit, ans.length),
      unanswerable_asks: un.length, unanswerable_no_answer: unHit, unanswerable_no_answer_share: share(unHit, un.length),
      answered_wrong: ansWrong + unWrong, answered_wrong_share: share(ansWrong + unWrong, rs.length),
      answered_wrong_answerable_share: share(ansWrong, ans.length), answered_unanswerable_share: share(unWrong, un.length),
      errors, latency_p50_ms: ms(quantile(lat, 0.5)), latency_p95_ms: ms(quantile(lat, 0.95)), misses: cats,
      models: [...new Set(rs.map((r) => r.body?.model).filter(Boolean))],
      by_kind: scope === 'transcript' ? byKind(rs) : undefined,
    };
    lines.push(row);
    console.log(`${set.padEnd(7)}${scope.padEnd(11)}${String(rs.length).padStart(5)}` +
      `${`${f(row.answerable_hit_share)} (${ansHit}/${ans.length})`.padStart(20)}` +
      `${`${f(row.unanswerable_no_answer_share)} (${unHit}/${un.length})`.padStart(22)}` +
      `${`${f(row.answered_wrong_share)} (${ansWrong + unWrong})`.padStart(17)}${String(errors).padStart(8)}` +
      `${f(row.latency_p50_ms, 1).padStart(8)}${f(row.latency_p95_ms, 1).padStart(8)}`);
  }
  console.log('');
  console.log('per transcript, by kind of recording (answerable hits; unanswerable no_answer):');
  for (const row of lines.filter((x) => x.by_kind))
    console.log(`  ${row.set}: ${Object.entries(row.by_kind).map(([k, v]) => `${k} ${v.answerable_hit}/${v.answerable_asks}; ${v.unanswerable_no_answer}/${v.unanswerable_asks}`).join('   ')}`);
  console.log('misses by category (asks):');
  for (const row of lines) console.log(`  ${row.set} ${row.scope}: ${Object.entries(row.misses).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}`);
  if (opts.verbose) {
    console.log('');
    for (const r of results.filter((x) => x.outcome !== 'hit')) {
      const c = r.body?.citations?.[0];
      console.log(`[${r.q.set} ${r.q.scope} line ${r.q.line}] ${r.outcome}: ${r.q.question}`);
      console.log(`    target ${r.q.target}${r.rec ? ` asked on ${r.rec.name}` : ' (library)'}` +
        (r.q.answerable && r.rec ? ` = ${r.q.target.split(',').flatMap((t) => spansIn(r.rec, t)).map((s) => `${s.start.toFixed(1)}-${s.end.toFixed(1)}`).join(' ')}` : ''));
      if (r.outcome === 'error') console.log(`    ${r.detail}`);
      else {
        console.log(`    answer: ${String(r.body?.answer ?? '').replace(/\s+/g, ' ').slice(0, 240)}`);
        if (c) console.log(`    first citation: ${r.cited?.rec ?? c.transcription_id} ${f(r.cited?.start ?? c.start_seconds, 1)}-${f(r.cited?.end, 1)} s (${r.cited?.place ?? '?'}): "${String(c.quote ?? '').replace(/\s+/g, ' ').slice(0, 160)}"`);
      }
    }
  }
  console.log('');
  for (const row of lines) console.log(JSON.stringify(row));
  // Every ask of this run, for comparing runs: ASK_WORK_DIR/ask-results-SET.jsonl.
  const out = results.map((r) => JSON.stringify({
    set: r.q.set, scope: r.q.scope, line: r.q.line, target: r.q.target, question: r.q.question, asked_on: r.rec?.name ?? null,
    outcome: r.outcome, status: r.status, latency_ms: Math.round(r.latency * 10000) / 10, no_answer: r.body?.no_answer ?? null,
    answer: r.body?.answer ?? null, cited: r.cited ?? null, model: r.body?.model ?? null,
  }));
  const file = join(workDir, `ask-results-${opts.set}.jsonl`);
  writeFileSync(file, out.join('\n') + '\n');
  console.error(`every ask: ${file}`);
}

// ---------------------------------------------------------------- check

// Offline checks of questions.tsv (no server): every target exists in some
// recording of its set (when the recordings are in the work dirs), counts per
// set and scope, and the longest run of words a question shares with the text
// of its target (passage paragraph or turn; the whole passage or dialogue for
// the hard unanswerable ones): questions are to be paraphrases, so runs of
// five words or more are listed.
function check() {
  const here = new URL('.', import.meta.url).pathname;
  const words = (t) => t.toLowerCase().replace(/[^a-z' ]+/g, ' ').split(/\s+/).filter(Boolean);
  const passageText = (nn, p) => {
    const f = readdirSync(join(here, 'enrichment_eval/passages')).find((x) => x.startsWith(`${nn}_`));
    const paras = readFileSync(join(here, 'enrichment_eval/passages', f), 'utf8').split(/\n\s*\n/);
    return p ? paras[p - 1] : paras.join(' ');
  };
  const turnText = (dn, k) => {
    const f = readdirSync(join(here, 'ask_eval/dialogues')).find((x) => x.startsWith(`${dn}_`));
    const turns = readFileSync(join(here, 'ask_eval/dialogues', f), 'utf8').split('\n').filter((l) => l && !l.startsWith('#'));
    return k ? turns[k - 1].replace(/^[a-z0-9]+: /, '') : turns.join(' ');
  };
  const textOf = (t) => {
    let m = t.match(/^-?:?passage:(\d\d)(?::([12]))?$/);
    if (m) return passageText(m[1], m[2] ? Number(m[2]) : 0);
    m = t.match(/^(?:turn:|-:)dialogue-(\d\d)(?::(\d+))?$/);
    if (m) return turnText(m[1], m[2] ? Number(m[2]) : 0);
    return '';
  };
  const longestRun = (a, b) => {
    let best = [];
    for (let i = 0; i < a.length; i++) for (let j = 0; j < b.length; j++) {
      let k = 0;
      while (i + k < a.length && j + k < b.length && a[i + k] === b[j + k]) k++;
      if (k > best.length) best = a.slice(i, i + k);
    }
    return best;
  };
  let recs = [];
  try { recs = library(); } catch (e) { console.log(`recordings not checked: ${e.message}`); }
  const counts = {};
  let problems = 0;
  const seen = new Map();
  for (const q of loadQuestions()) {
    const k = `${q.set} ${q.scope} ${q.answerable ? 'answerable' : 'unanswerable'}`;
    counts[k] = (counts[k] || 0) + 1;
    if (seen.has(q.question)) { console.log(`line ${q.line}: same question as line ${seen.get(q.question)}`); problems++; }
    seen.set(q.question, q.line);
    const targets = q.answerable ? q.target.split(',') : q.target === '-' ? [] : [q.target];
    for (const t of targets) {
      const nn = t.match(/passage:(\d\d)/)?.[1], dn = t.match(/dialogue-(\d\d)/)?.[1];
      const inSet = nn ? (Number(nn) <= 20 ? 'tune' : 'report') : dn ? (Number(dn) <= 4 ? 'tune' : 'report') : null;
      if (inSet && inSet !== q.set) { console.log(`line ${q.line}: ${t} belongs to the ${inSet} set`); problems++; }
      if (recs.length && q.answerable && !recs.some((r) => r.set === q.set && spansIn(r, t).length)) {
        console.log(`line ${q.line}: no recording of ${q.set} holds ${t}`); problems++;
      }
      const run = longestRun(words(q.question), words(textOf(t)));
      if (run.length >= 5) { console.log(`line ${q.line}: shares "${run.join(' ')}" with ${t}`); problems++; }
    }
  }
  for (const [k, n] of Object.entries(counts).sort()) console.log(`${k}: ${n}`);
  console.log(problems ? `${problems} problems` : 'no problems');
  if (problems) process.exitCode = 1;
}

const [cmd, ...rest] = process.argv.slice(2);
if (cmd === 'upload') await upload();
else if (cmd === 'ask') await ask(rest);
else if (cmd === 'check') check();
else {
  console.error('usage: node bench/ask_quality.mjs upload | ask [--set tune|report|all] [--verbose] [--top-k N] | check');
  process.exit(2);
}
