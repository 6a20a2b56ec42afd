#!/usr/bin/env python3
"""Where an evaluation's seconds go, from a results file of
`skilldb_kernelbench eval` (times_ms.ops: per request kind, the calls, the
wall time the evaluator measured and the time the runner spent in its
handler).

  python3 op_split.py RESULTS.jsonl [--trials 5] [--numel 1:12=16777216 ...]

--numel gives a problem's output elements (results files do not carry them).

Per answer: the phases (reference, correctness, timing, total; the build
runs on the pool, beside the evaluation), then the requests grouped as
candidate start-up (init), output fetches (trials and spot checks), trials
(inputs made and handed over, the call, the float64 check), timed calls
(prepare + call) and the rest. The last columns show what the two changes
after that run remove from an answer's evaluation, as arithmetic on these
measured times, not a measurement: the candidate's init runs beside the
previous answer (all of it), and spot checks fetch a sample of outputs over
4M elements (their share of the fetch time, scaled by sample / whole bytes).
Results made with both changes in (529a870 and later) already show their
effect: there the last columns do not apply (the init they list ran beside
the previous answer).
"""
import argparse
import json
import statistics

SAMPLE_ELEMENTS = (1 << 20) + 2 * 4096  # SampleIndices: 1M plus both ends


def group(ops):
    g = {"init": 0.0, "fetch": 0.0, "trial": 0.0, "timed": 0.0, "rest": 0.0}
    for op, (n, wall, _runner) in ops.items():
        kind = op.split(".", 1)[1]
        if kind == "init":
            g["init"] += wall
        elif kind == "fetch":
            g["fetch"] += wall
        elif kind == "trial":
            g["trial"] += wall
        elif kind in ("prepare", "call"):
            g["timed"] += wall
        else:
            g["rest"] += wall
    return g


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--numel", action="append", default=[],
                    help="LEVEL:ID=ELEMENTS, a problem's output size")
    a = ap.parse_args()
    sizes = {}
    for spec in a.numel:
        key, n = spec.split("=")
        sizes[key] = int(n)
    saved = []
    print("| answer | verdict | total s | init | fetch (n) | trials | timed calls | rest | "
          "init moved | spot fetch saved | evaluation after |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for line in open(a.results):
        r = json.loads(line)
        t = r.get("times_ms", {})
        ops = t.get("ops") or {}
        if not ops:
            continue
        g = group(ops)
        total = t.get("total", 0.0) / 1e3
        n_fetch = sum(v[0] for k, v in ops.items() if k.endswith(".fetch"))
        spot_share = 0.0
        # Each side fetches once per trial; the rest are spot checks.
        n_trial_fetch = 2 * min(a.trials, r.get("trials") or a.trials)
        if n_fetch > n_trial_fetch:
            spot_share = (n_fetch - n_trial_fetch) / n_fetch
        numel = sizes.get("%s:%s" % (r.get("level"), r.get("problem")), 0)
        frac = 1.0
        if numel > 4 * (1 << 20):
            frac = SAMPLE_ELEMENTS / numel
        spot_saved = g["fetch"] * spot_share * (1 - frac) / 1e3 if numel else 0.0
        after = total - g["init"] / 1e3 - spot_saved
        saved.append((total, after))
        print("| l%sp%s s%s | %s | %.1f | %.1f | %.1f (%d) | %.1f | %.2f | %.1f | %.1f | %.1f | %.1f |" % (
            r.get("level"), r.get("problem"), r.get("sample"), r.get("verdict"), total,
            g["init"] / 1e3, g["fetch"] / 1e3, n_fetch, g["trial"] / 1e3, g["timed"] / 1e3,
            g["rest"] / 1e3, g["init"] / 1e3, spot_saved, after))
    if saved:
        before = statistics.median(s[0] for s in saved)
        after = statistics.median(s[1] for s in saved)
        print()
        print("median evaluation: %.1f s -> %.1f s an answer (arithmetic on the measured split, "
              "%d answers)" % (before, after, len(saved)))


if __name__ == "__main__":
    main()
