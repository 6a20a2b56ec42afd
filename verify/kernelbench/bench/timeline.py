#!/usr/bin/env python3
"""Where a run's wall time went, from the spans of `skilldb kernelbench
eval`'s results (JSON lines; "times_ms"."spans": [name, start ms, end ms] on
the process's clock, one clock for every answer of the run).

  python3 timeline.py FILE [--per-answer] [--json OUT]

FILE: eval's results, or `kernelbench run`'s turns.jsonl.

Prints, over the run (its first span to its last):
  - when the verdicts came: the first, the median, the last;
  - the builds: the time at least one ran, their mean concurrency, when the
    last one ended;
  - the device: the time some answer held it alone (its timed phase:
    prime, timed calls, spot checks, round ends, statistics, profile), the
    time some answer was checked on it with the device shared (load,
    static check, correctness) and no answer held it alone, and the time
    neither happened ("idle"), split into before the first check and
    after it;
  - what the answers waited for: the build (an answer's evaluation began
    before its build ended), the device (gate waits), the reference;
  - the last verdict's chain: its parts in order.
Answers without spans (records from before 2026-12-07, cached builds have
spans for their evaluation only) are counted and left out.
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import op_split  # noqa: E402  (its reader: eval's lines and kernelbench run's turns.jsonl)

ALONE = {"prime", "timed_calls", "spot_checks", "round_end", "statistics", "profile",
         "compile_baseline", "kb_timing"}
SHARED = {"load", "static_check", "correctness"}
WAITS = {"gate_shared_wait": "device, shared", "gate_alone_wait": "device, alone",
         "ref_wait": "reference", "evaluator_wait": "evaluator"}


def union(intervals):
    """Sorted, merged [start, end] intervals."""
    out = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def length(intervals):
    return sum(e - s for s, e in intervals)


def minus(a, b):
    """The parts of the merged intervals `a` outside the merged `b`."""
    out = []
    for s, e in a:
        cur = s
        for bs, be in b:
            if be <= cur or bs >= e:
                continue
            if bs > cur:
                out.append([cur, bs])
            cur = max(cur, be)
        if cur < e:
            out.append([cur, e])
    return out


def load(path):
    answers, without = [], 0
    for r in op_split.results(path):
        spans = [(str(n), float(s), float(e)) for n, s, e in r["times_ms"].get("spans") or []]
        if not spans:
            without += 1
            continue
        answers.append({"label": "level%s/%s sample %s" % (r.get("level"), r.get("problem"),
                                                           r.get("sample")),
                        "verdict": r.get("verdict", ""), "spans": spans})
    return answers, without


def analyse(answers):
    t0 = min(s for a in answers for _, s, _ in a["spans"])
    t1 = max(e for a in answers for _, _, e in a["spans"])
    ends = sorted(max(e for _, _, e in a["spans"]) - t0 for a in answers)
    builds = [[s, e] for a in answers for n, s, e in a["spans"] if n == "build"]
    alone = union([[s, e] for a in answers for n, s, e in a["spans"] if n in ALONE])
    shared = union([[s, e] for a in answers for n, s, e in a["spans"] if n in SHARED])
    checks_only = minus(shared, alone)
    busy = union(alone + shared)
    idle = minus([[t0, t1]], busy)
    first_check = busy[0][0] if busy else t1
    waits = {label: 0.0 for label in WAITS.values()}
    build_wait = 0.0
    for a in answers:
        for n, s, e in a["spans"]:
            if n in WAITS:
                waits[WAITS[n]] += e - s
        start = [s for n, s, _ in a["spans"] if n == "answer"]
        built = [e for n, _, e in a["spans"] if n == "build"]
        if start and built:
            build_wait += max(0.0, built[0] - start[0])
    last = max(answers, key=lambda a: max(e for _, _, e in a["spans"]))
    wall = t1 - t0
    return {
        "answers": len(answers),
        "wall_s": wall / 1e3,
        "verdicts_s": {"first": ends[0] / 1e3, "median": statistics.median(ends) / 1e3,
                       "last": ends[-1] / 1e3},
        "builds": {"count": len(builds), "any_running_s": length(union(builds)) / 1e3,
                   "mean_concurrency": (sum(e - s for s, e in builds) / length(union(builds))
                                        if builds else 0.0),
                   "last_end_s": (max(e for _, e in builds) - t0) / 1e3 if builds else None},
        "device": {"alone_s": length(alone) / 1e3, "alone_fraction": length(alone) / wall,
                   "checks_only_s": length(checks_only) / 1e3,
                   "idle_s": length(idle) / 1e3,
                   "idle_before_first_check_s": (first_check - t0) / 1e3,
                   "idle_after_first_check_s": (length(idle) - (first_check - t0)) / 1e3},
        "waits_s": dict({k: v / 1e3 for k, v in waits.items()},
                        build=build_wait / 1e3),
        "last": {"label": last["label"], "verdict": last["verdict"],
                 "chain": [[n, round((s - t0) / 1e3, 3), round((e - t0) / 1e3, 3)]
                           for n, s, e in sorted(last["spans"], key=lambda x: (x[1], x[2]))
                           if n not in ("gate_shared_wait", "ref_wait")]},
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file")
    ap.add_argument("--per-answer", action="store_true")
    ap.add_argument("--json", help="write the figures as JSON here too")
    a = ap.parse_args()
    answers, without = load(a.file)
    if not answers:
        print("%s: no answer with spans (%d without)" % (a.file, without))
        return 1
    t = analyse(answers)
    print("%s: %d answers with spans (%d without), %.1f s from the first span to the last" % (
        a.file, t["answers"], without, t["wall_s"]))
    v = t["verdicts_s"]
    print("  verdicts at %.1f s (first), %.1f s (median), %.1f s (last)" % (
        v["first"], v["median"], v["last"]))
    b = t["builds"]
    if b["count"]:
        print("  builds: %d, some running %.1f s, %.2f at once on average, the last ending "
              "at %.1f s" % (b["count"], b["any_running_s"], b["mean_concurrency"],
                            b["last_end_s"]))
    d = t["device"]
    print("  device: held alone %.1f s (%.0f%% of the wall), checks only %.1f s, idle %.1f s "
          "(%.1f s before the first check, %.1f s after)" % (
              d["alone_s"], 100 * d["alone_fraction"], d["checks_only_s"], d["idle_s"],
              d["idle_before_first_check_s"], d["idle_after_first_check_s"]))
    print("  waits summed over answers: " + ", ".join(
        "%s %.1f s" % (k, w) for k, w in sorted(t["waits_s"].items())))
    print("  the last verdict, %s (%s):" % (t["last"]["label"], t["last"]["verdict"]))
    for n, s, e in t["last"]["chain"]:
        print("    %-16s %7.3f .. %7.3f s" % (n, s, e))
    if a.per_answer:
        t0 = min(s for x in answers for _, s, _ in x["spans"])
        for x in sorted(answers, key=lambda x: max(e for _, _, e in x["spans"])):
            parts = {}
            for n, s, e in x["spans"]:
                parts.setdefault(n, [s, e])
                parts[n][1] = e
            def at(n, i):
                return "%6.1f" % ((parts[n][i] - t0) / 1e3) if n in parts else "     -"
            print("  %-26s %-14s build %s..%s answer %s..%s correctness %s..%s timed %s..%s" % (
                x["label"], x["verdict"], at("build", 0), at("build", 1), at("answer", 0),
                at("answer", 1), at("correctness", 0), at("correctness", 1),
                at("timed_calls", 0), at("timed_calls", 1)))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(t, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
