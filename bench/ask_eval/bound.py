#!/usr/bin/env python3
"""What bounds the ask benchmark: the same questions answered from the
recognizer's transcripts and from the reference texts the recordings were
read from (a perfect transcript), by a replica of enrichment/answering.cpp's
ranking (BM25 over segments, 20 s windows, coverage threshold, the citation
moving from a question to what follows it).

The replica is for this measurement only; on the recognizer's transcripts it
reproduces the server's own figures (bench/ask_quality.sh) exactly, which is
what makes its reference-text figures a fair bound. Needs the benchmark's
database (bench/ask_quality.sh --keep-cluster, port 55498, scribe_ask) and
the work dir /tmp/scribe-ask-eval with ask-results-SET.jsonl.

  bench/ask_eval/bound.py tune|report [threshold ...]
"""
import collections, glob, json, math, re, subprocess, sys

ROOT = __file__.rsplit('/bench/', 1)[0]
WORK, ENRICH = '/tmp/scribe-ask-eval', '/tmp/scribe-enrich-eval'
DB = 'postgresql://scribe@127.0.0.1:55498/scribe_ask'
K1, B, WINDOW_MS, NEIGHBOUR, FOLLOW_MS = 1.2, 0.75, 20000, 0.5, 15000
FRAME = set('accord answer ask describ discuss episod explain mention podcast question record said say speaker talk '
            'tell told transcript video someon anyon peopl thing kind lot way els'.split())


def psql_json(sql):
    out = subprocess.run(['psql', DB, '-At', '-c', sql], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def tsvectors(texts):
    q = json.dumps(texts).replace("'", "''")
    return psql_json("select coalesce(json_agg(to_tsvector('english', t)::text order by n), '[]') "
                     "from json_array_elements_text('%s'::json) with ordinality x(t, n)" % q)


def parse_tsv(t):
    out = collections.Counter()
    for m in re.finditer(r"'((?:[^']|'')*)'(?::([0-9A-D,]+))?", t):
        out[m.group(1).replace("''", "'")] += len(m.group(2).split(',')) if m.group(2) else 1
    return out


ids = {}
for line in open(WORK + '/ids.tsv'):
    if not line.startswith('#'):
        n, t, *_ = line.split('\t')
        ids[n] = int(t)
name_of = {v: k for k, v in ids.items()}
labels = {p.split('/')[-1][:-7]: p for p in glob.glob(WORK + '/*.labels') + glob.glob(ENRICH + '/*.labels')}
spans = collections.defaultdict(dict)
for rec, path in labels.items():
    for line in open(path):
        p = line.split()
        if p and p[0] == 'paragraph':
            spans[rec]['passage:%s:%s' % (p[3][:2], p[4])] = (float(p[1]), float(p[2]))
        if p and p[0] == 'turn':
            spans[rec]['turn:%s:%s' % (rec, p[4])] = (float(p[1]), float(p[2]))


def recognized():
    return psql_json("select json_agg(json_build_object('tid', transcription_id, 's', start_ms, 'e', end_ms, "
                     "'text', text, 'terms', terms::text) order by transcription_id, start_ms) from search_segments")


def reference():
    passages = {p.split('/')[-1][:2]: [x.strip() for x in open(p).read().split('\n\n') if x.strip()]
                for p in glob.glob(ROOT + '/bench/enrichment_eval/passages/*.txt')}
    dialogues = {'dialogue-' + p.split('/')[-1][:2]: [l.split(':', 1)[1].strip() for l in open(p)
                                                       if not l.startswith('#') and ':' in l]
                 for p in glob.glob(ROOT + '/bench/ask_eval/dialogues/*.txt')}
    segs = []
    for rec, path in labels.items():
        if rec not in ids:
            continue
        for line in open(path):
            p = line.split()
            if not p or p[0] not in ('paragraph', 'turn'):
                continue
            text = passages[p[3][:2]][int(p[4]) - 1] if p[0] == 'paragraph' else dialogues[rec][int(p[4]) - 1]
            start, end = float(p[1]), float(p[2])
            sents = [x for x in re.split(r'(?<=[.?!])\s+', text) if x]
            total, t = sum(len(x) for x in sents), start
            for x in sents:  # times spread over the span by length
                d = (end - start) * len(x) / total
                segs.append({'tid': ids[rec], 's': int(t * 1000), 'e': int((t + d) * 1000), 'text': x})
                t += d
    for s, tv in zip(segs, tsvectors([s['text'] for s in segs])):
        s['terms'] = tv
    return segs


def answer(terms, scope, by_tid, order):
    n = len(scope)
    avgdl = sum(s['len'] for s in scope) / max(n, 1)
    cand = [s for s in scope if any(t in s['tf'] for t in terms)]
    if not terms or not cand:
        return None, 0
    df = {t: sum(1 for s in cand if t in s['tf']) for t in terms}
    w = {t: math.log(1 + (n - df[t] + .5) / (df[t] + .5)) for t in terms}
    total = sum(w.values())
    own = {id(s): sum(w[t] * s['tf'][t] * (K1 + 1) / (s['tf'][t] + K1 * (1 - B + B * s['len'] / avgdl))
                      for t in terms if t in s['tf']) for s in cand}
    cand.sort(key=lambda s: (s['tid'], s['s']))
    best = None
    for c in cand:
        pooled, cite, cov = own[id(c)], c, {t for t in terms if t in c['tf']}
        for o in cand:
            if o is c or o['tid'] != c['tid'] or abs(o['s'] - c['s']) > WINDOW_MS:
                continue
            pooled += NEIGHBOUR * own[id(o)]
            cite = o if own[id(o)] > own[id(cite)] else cite
            cov |= {t for t in terms if t in o['tf']}
        key = (pooled, sum(w[t] for t in cov) / total)
        if best is None or key > best[0]:
            best = (key, cite)
    cite = best[1]
    if cite['text'].rstrip().endswith('?'):
        tid, i = order[id(cite)]
        if i + 1 < len(by_tid[tid]) and by_tid[tid][i + 1]['s'] - cite['e'] <= FOLLOW_MS:
            cite = by_tid[tid][i + 1]
    return cite, best[0][1]


def evaluate(segs, asks, lex, threshold):
    by_tid = collections.defaultdict(list)
    for s in segs:
        s['tf'] = parse_tsv(s['terms'])
        s['len'] = sum(s['tf'].values())
        by_tid[s['tid']].append(s)
    order = {}
    for tid, l in by_tid.items():
        l.sort(key=lambda s: s['s'])
        for i, s in enumerate(l):
            order[id(s)] = (tid, i)
    res = collections.Counter()
    for a in asks:
        terms = list(dict.fromkeys(l for l in lex[a['question']] if l not in FRAME))
        scope = segs if a['scope'] == 'library' else by_tid[ids[a['asked_on']]]
        cite, conf = answer(terms, scope, by_tid, order)
        answered = cite is not None and conf >= threshold
        kind = a['scope'] + (' unanswerable' if a['target'].startswith('-') else ' answerable')
        res[kind, 'n'] += 1
        if a['target'].startswith('-'):
            res[kind, 'hit'] += not answered
        elif answered:
            sp = spans[name_of[cite['tid']]].get(a['target'])
            res[kind, 'hit'] += bool(sp and cite['s'] / 1000 <= sp[1] and cite['e'] / 1000 >= sp[0])
    return {k: round(res[k, 'hit'] / res[k, 'n'], 3) for k in
            ('transcript answerable', 'transcript unanswerable', 'library answerable', 'library unanswerable')}


if __name__ == '__main__':
    which = sys.argv[1] if len(sys.argv) > 1 else 'report'
    thresholds = [float(x) for x in sys.argv[2:]] or [0.0, 0.4]
    asks = [json.loads(l) for l in open('%s/ask-results-%s.jsonl' % (WORK, which))]
    questions = sorted({a['question'] for a in asks})
    q = json.dumps(questions).replace("'", "''")
    lex = {d['q']: d['lex'] or [] for d in psql_json(
        "select json_agg(json_build_object('q', q, 'lex', tsvector_to_array(to_tsvector('english', q)))) "
        "from json_array_elements_text('%s'::json) q" % q)}
    for name, segs in (('recognized', recognized()), ('reference', reference())):
        for th in thresholds:
            print(json.dumps({'bench': 'ask_bound', 'set': which, 'text': name, 'threshold': th,
                              **evaluate(segs, asks, lex, th)}))
