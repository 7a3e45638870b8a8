#!/usr/bin/env python3
"""Word confidence calibration (issue 34): how well GET /words' `confidence`
(the recognizer's posterior) predicts that a word is right.

Reads the words of the ask benchmark's single-passage recordings
(passage-21..40 by default: the report set; nothing is tuned on them) from its
database, aligns each recording's words to the passage text it was read from
(bench/enrichment_eval/passages/NN_*.txt; minimum edit distance over
lower-cased words), and calls a recognized word right when it is aligned to
the same reference word. Prints the expected calibration error over 10 equal
bins of confidence, each bin's mean confidence and accuracy, and the word error
share (wrong recognized words / recognized words) of words with confidence
>= 0.5 and < 0.5, with one JSON line. The references only score the output.

  bench/confidence_calibration.py [--db URL] [--ids /tmp/scribe-ask-eval/ids.tsv] [--set report|tune]
Run bench/ask_quality.sh --upload-only --keep-cluster first (or while its cluster runs).
"""
import argparse, glob, json, os, re, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def words_of(text):
    return re.findall(r"[a-z0-9']+", text.lower().replace("\u2019", "'"))


def align(hyp, ref):
    """For each hyp index, whether it aligns to an equal ref word (Levenshtein backtrace)."""
    n, m = len(hyp), len(ref)
    d = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n + 1):
        d[i][0] = i
    for j in range(m + 1):
        d[0][j] = j
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            d[i][j] = min(d[i - 1][j - 1] + (hyp[i - 1] != ref[j - 1]), d[i - 1][j] + 1, d[i][j - 1] + 1)
    right = [False] * n
    i, j = n, m
    while i > 0 and j > 0:
        if d[i][j] == d[i - 1][j - 1] + (hyp[i - 1] != ref[j - 1]):
            right[i - 1] = hyp[i - 1] == ref[j - 1]
            i, j = i - 1, j - 1
        elif d[i][j] == d[i - 1][j] + 1:
            i -= 1
        else:
            j -= 1
    return right


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", default="postgresql://scribe@127.0.0.1:55498/scribe_ask")
    ap.add_argument("--ids", default="/tmp/scribe-ask-eval/ids.tsv")
    ap.add_argument("--set", default="report", choices=["report", "tune"])
    a = ap.parse_args()
    numbers = range(21, 41) if a.set == "report" else range(1, 21)
    ids = {}
    for line in open(a.ids):
        if line.startswith("#"):
            continue
        f = line.rstrip("\n").split("\t")
        ids[f[0]] = int(f[1])
    pairs = []  # (confidence, right)
    for n in numbers:
        name = "passage-%02d" % n
        if name not in ids:
            print("missing %s in %s" % (name, a.ids), file=sys.stderr)
            continue
        ref_path = glob.glob(os.path.join(ROOT, "bench/enrichment_eval/passages/%02d_*.txt" % n))[0]
        ref = words_of(open(ref_path).read())
        out = subprocess.run(["psql", a.db, "-At", "-F", "\t", "-c",
                              "select text, confidence from words where transcription_id = %d order by word_index"
                              % ids[name]], capture_output=True, text=True, check=True).stdout
        rows = [l.split("\t") for l in out.splitlines() if l]
        hyp = [words_of(t)[0] if words_of(t) else t.lower() for t, _ in rows]
        right = align(hyp, ref)
        pairs += [(float(c), r) for (_, c), r in zip(rows, right)]
    if not pairs:
        sys.exit("no words")
    bins = [[] for _ in range(10)]
    for c, r in pairs:
        bins[min(9, int(c * 10))].append((c, r))
    ece = 0.0
    print("bin        words  mean_conf  accuracy")
    for k, b in enumerate(bins):
        if not b:
            continue
        conf = sum(c for c, _ in b) / len(b)
        acc = sum(r for _, r in b) / len(b)
        ece += len(b) / len(pairs) * abs(conf - acc)
        print("%.1f-%.1f  %6d  %9.3f  %8.3f" % (k / 10, (k + 1) / 10, len(b), conf, acc))
    hi = [r for c, r in pairs if c >= 0.5]
    lo = [r for c, r in pairs if c < 0.5]
    err = lambda v: (1 - sum(v) / len(v)) if v else None
    result = {"bench": "confidence_calibration", "set": a.set, "words": len(pairs),
              "accuracy": sum(r for _, r in pairs) / len(pairs), "ece_10_bins": round(ece, 4),
              "words_at_or_above_0_5": len(hi), "error_share_at_or_above_0_5": err(hi),
              "words_below_0_5": len(lo), "error_share_below_0_5": err(lo)}
    print("ECE (10 bins): %.4f; error share: confidence >= 0.5 %.3f (%d words), < 0.5 %.3f (%d words)"
          % (ece, err(hi) or 0, len(hi), err(lo) or 0, len(lo)))
    print(json.dumps(result))


main()
