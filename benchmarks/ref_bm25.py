#!/usr/bin/env python3
"""An independent, deliberately naive exact BM25 (numpy, float64), written
from the formula and nothing else, to check our engine's rankings.

  score(q, d) = sum over distinct terms t of q present in d of
                idf(t) * tf / (tf + k1 * (1 - b + b * dl / avgdl))
  idf(t)      = ln(1 + (N - n + 0.5) / (n + 0.5))

with k1 = 1.2, b = 0.75, dl = the document's exact token count, avgdl the
mean over the corpus, n the document frequency. Ties break by id ascending.

  ref_bm25.py topk  --corpus C --queries Q --k 10 --dump REF.tsv
  ref_bm25.py check --ref REF.tsv --got OURS.tsv [--rel 1e-6] [--json OUT]

`check` demands, query by query, the same number of hits, the same score at
every rank within `rel` relative error, and the same ids except where the
reference itself has a tie (within `rel`) that crosses the cut or swaps two
neighbours.
"""
import argparse
import json
import math
import sys
from collections import Counter, defaultdict

import numpy as np

K1, B = 1.2, 0.75


def build(corpus):
    postings = defaultdict(lambda: ([], []))
    lengths, ids = [], []
    with open(corpus, encoding="utf-8") as f:
        for docno, line in enumerate(f):
            doc_id, text = line.rstrip("\n").split("\t", 1)
            toks = text.split()
            ids.append(doc_id)
            lengths.append(len(toks))
            for t, tf in Counter(toks).items():
                d, c = postings[t]
                d.append(docno)
                c.append(tf)
    post = {t: (np.array(d, dtype=np.int64), np.array(c, dtype=np.float64))
            for t, (d, c) in postings.items()}
    return post, np.array(lengths, dtype=np.float64), ids


def topk(post, lengths, ids, terms, k):
    n_docs = len(lengths)
    avgdl = lengths.sum() / n_docs
    acc = np.zeros(n_docs)
    seen = []
    for t in dict.fromkeys(terms):
        if t not in post:
            continue
        docs, tf = post[t]
        n = len(docs)
        idf = math.log(1.0 + (n_docs - n + 0.5) / (n + 0.5))
        acc[docs] += idf * tf / (tf + K1 * (1.0 - B + B * lengths[docs] / avgdl))
        seen.append(docs)
    if not seen:
        return []
    cand = np.unique(np.concatenate(seen))
    order = np.lexsort((cand, -acc[cand]))[:k]  # score desc, then doc order
    return [(ids[cand[i]], float(acc[cand[i]])) for i in order]


def read_dump(path):
    out = defaultdict(list)
    with open(path) as f:
        for line in f:
            qid, rank, doc_id, score = line.rstrip("\n").split("\t")
            out[qid].append((doc_id, float(score)))
    return out


def close(a, b, rel):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def check(ref, got, rel):
    problems = []
    qids = sorted(set(ref) | set(got))
    for qid in qids:
        r, g = ref.get(qid, []), got.get(qid, [])
        if len(r) != len(g):
            problems.append((qid, f"{len(g)} hits, reference has {len(r)}"))
            continue
        for i, ((rid, rs), (gid, gs)) in enumerate(zip(r, g)):
            if not close(rs, gs, rel):
                problems.append((qid, f"rank {i + 1}: score {gs!r} "
                                      f"({gid}), reference {rs!r} ({rid})"))
                break
            if rid != gid:
                # Acceptable only inside a reference tie group.
                tied = {d for d, s in r if close(s, rs, rel)}
                if gid not in tied and not close(r[-1][1], gs, rel):
                    problems.append((qid, f"rank {i + 1}: id {gid}, "
                                          f"reference {rid}"))
                    break
    return len(qids), problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("topk")
    a.add_argument("--corpus", required=True)
    a.add_argument("--queries", required=True)
    a.add_argument("--k", type=int, default=10)
    a.add_argument("--dump", required=True)
    c = sub.add_parser("check")
    c.add_argument("--ref", required=True)
    c.add_argument("--got", required=True)
    c.add_argument("--rel", type=float, default=1e-6)
    c.add_argument("--json")
    args = ap.parse_args()
    if args.cmd == "topk":
        post, lengths, ids = build(args.corpus)
        with open(args.queries) as f, open(args.dump, "w") as out:
            for line in f:
                qid, text = line.rstrip("\n").split("\t", 1)
                for r, (doc_id, s) in enumerate(
                        topk(post, lengths, ids, text.split(), args.k)):
                    out.write(f"{qid}\t{r + 1}\t{doc_id}\t{s!r}\n")
        return
    n, problems = check(read_dump(args.ref), read_dump(args.got), args.rel)
    summary = {"queries": n, "mismatched_queries": len(problems),
               "rel_tolerance": args.rel,
               "examples": [f"{q}: {m}" for q, m in problems[:10]]}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1)
    print(f"exact check: {n - len(problems)}/{n} queries agree "
          f"(rel {args.rel})")
    for line in summary["examples"]:
        print("  " + line)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
