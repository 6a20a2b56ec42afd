#!/usr/bin/env python3
"""Per-query latencies grouped by the kind of query.

    python3 benchmarks/latency_classes.py QUERIES.tsv LAT.tsv [LAT2.tsv ...]

QUERIES.tsv is a query file made by gen_corpus.py (its .meta.json beside it
gives each term's document-frequency decade); each LAT.tsv is the
`--latencies` output of a driver's search phase (qid, microseconds of the
timed top-10 pass). Prints, per class (number of terms, and how many of
them are frequent: in the two highest df decades, df >= 10k at 1M
documents), the count and the median latency of each file, then the overall quantiles, so two engines or two
builds can be compared where their time goes.
"""
import json
import statistics
import sys
from collections import defaultdict


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    queries, lat_files = sys.argv[1], sys.argv[2:]
    meta = json.load(open(queries + ".meta.json"))
    levels = meta["levels"]
    top = max(int(k) for k in meta["strata_sizes"])
    qids = [line.split("\t", 1)[0] for line in open(queries) if "\t" in line]
    if len(qids) != len(levels):
        sys.exit(f"{queries}: {len(qids)} queries but {len(levels)} in meta")
    runs = []
    for path in lat_files:
        lat = {}
        for line in open(path):
            qid, us = line.rstrip("\n").split("\t")
            lat[qid] = float(us)
        missing = [q for q in qids if q not in lat]
        if missing:
            sys.exit(f"{path}: no latency for {missing[0]} "
                     f"({len(missing)} missing)")
        runs.append([lat[q] for q in qids])
    frequent = lambda lv: sum(1 for x in lv if x >= top - 1)
    groups = defaultdict(list)
    for i, lv in enumerate(levels):
        groups[(len(lv), frequent(lv))].append(i)
    print(f"class = (terms, terms with df >= 10^{top - 1}); "
          f"median us per file: {' | '.join(lat_files)}")
    for key in sorted(groups):
        idx = groups[key]
        meds = [statistics.median(r[i] for i in idx) for r in runs]
        print(f"{key}\tn={len(idx)}\t" + "\t".join(f"{m:.0f}" for m in meds))
    for path, r in zip(lat_files, runs):
        s = sorted(r)
        q = [s[min(len(s) - 1, int(p * len(s)))] for p in (0.1, 0.25, 0.5, 0.75, 0.9)]
        print(f"{path}: p10 {q[0]:.0f} p25 {q[1]:.0f} p50 {q[2]:.0f} "
              f"p75 {q[3]:.0f} p90 {q[4]:.0f} us")


if __name__ == "__main__":
    main()
