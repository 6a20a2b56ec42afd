#!/usr/bin/env python3
"""How each side's first timed round compares with its later ones, from the
results of `skilldb kernelbench eval` (JSON lines with "rounds": per round
the baseline's and the candidate's device times of each timed call).

  python3 round_drift.py FILE [FILE...] [--per-answer]

Per answer: the median of round 1 over the median of the later rounds'
medians, for the baseline and for the candidate; then the median of those
ratios over the answers. A fresh candidate runner whose allocator has no
blocks yet pays a cudaMalloc inside each timed call of its first round
(2026-12-06g, H100: candidate ratios 1.1-9x, baselines about 1); the
runner's op_prime is meant to bring the candidate's to the baseline's."""
import argparse
import json
import statistics


def ratios(record):
    rounds = record.get("rounds") or []
    if len(rounds) < 2:
        return None
    out = {}
    for side in ("baseline_ms", "candidate_ms"):
        meds = [statistics.median(r[side]) for r in rounds if r.get(side)]
        if len(meds) < 2 or statistics.median(meds[1:]) <= 0:
            return None
        out[side] = meds[0] / statistics.median(meds[1:])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--per-answer", action="store_true")
    a = ap.parse_args()
    for path in a.files:
        rows = []
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                r = json.loads(line)
                q = ratios(r)
                if q is None:
                    continue
                rows.append(q)
                if a.per_answer:
                    print("  level %s problem %s sample %s %-14s baseline %.2f candidate %.2f" % (
                        r.get("level"), r.get("problem"), r.get("sample"), r.get("verdict"),
                        q["baseline_ms"], q["candidate_ms"]))
        if not rows:
            print("%s: no answer with two timed rounds" % path)
            continue
        b = sorted(q["baseline_ms"] for q in rows)
        c = sorted(q["candidate_ms"] for q in rows)
        print("%s: %d answers; round 1 over later rounds, median (min-max): baseline %.2f "
              "(%.2f-%.2f), candidate %.2f (%.2f-%.2f)" % (
                  path, len(rows), statistics.median(b), b[0], b[-1],
                  statistics.median(c), c[0], c[-1]))


if __name__ == "__main__":
    main()
