#!/usr/bin/env python3
"""Where an evaluation's seconds go, from the results of `skilldb
kernelbench eval` (--results FILE) or the turns of `skilldb kernelbench run`
(OUT/turns.jsonl): times_ms.ops holds, per request kind ("ref.<op>",
"cand.<op>"), the calls, the wall time the evaluator measured, the time
the runner spent in its handler and (since 2026-12-06) the CPU time its
process spent meanwhile, all threads (a wait is wall without CPU); per part of the session ("part.<name>",
waits included) the wall time.

  python3 op_split.py FILE [FILE...] [--per-answer]

Prints, over the answers that reached each part: how many, the median and
the sum of seconds. The parts, in a session's order:
  evaluator_wait    the evaluator's previous answer (one at a time each)
  reference         the shared reference runner (loaded once per problem)
  take_candidate    a candidate runner, started and initialized ahead
  gate_shared_wait  the device, while another answer's timed phase holds or
                    waits for it (each request's wait, summed)
  load              the answer's module and ModelNew in the candidate runner
  static_check      KernelBench's static checker (the reference runner)
  correctness       the trials, whole outputs compared
  gate_alone_wait   the device alone: every other answer's checks and starts
  prime             both runners' allocators given a round's blocks (alone)
  timed_calls, spot_checks, round_end, statistics
                    the timed phase (device held alone), by round
  profile           the candidate's kernels profiled (device held alone)
  compile_baseline  torch.compile's baseline timed, when asked (alone)
  kb_timing         --protocol kernelbench: its timing (alone)
  end               outputs cleared, the candidate stopped
  ref_wait          another session's request to the shared reference
                    runner
gate_shared_wait and ref_wait are counted inside the parts around them
(load, correctness, end, ...): the parts do not add up to the total.
"""
import argparse
import json
import statistics

PARTS = ["evaluator_wait", "reference", "take_candidate", "gate_shared_wait", "load",
         "static_check", "correctness", "gate_alone_wait", "prime", "timed_calls", "spot_checks",
         "round_end", "statistics", "profile", "compile_baseline", "kb_timing", "end",
         "ref_wait"]


def results(path):
    for line in open(path, errors="replace"):
        try:
            j = json.loads(line)
        except ValueError:
            continue
        r = j["turn"].get("result") if isinstance(j.get("turn"), dict) else j
        if isinstance(r, dict) and isinstance(r.get("times_ms"), dict):
            yield r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--per-answer", action="store_true")
    a = ap.parse_args()
    rows = [r for f in a.files for r in results(f)]
    if not rows:
        print("no results with times_ms in", " ".join(a.files))
        return
    keys = {}
    cpu = {}  # a runner request's CPU seconds, where the line has them
    for r in rows:
        for op, v in (r["times_ms"].get("ops") or {}).items():
            keys.setdefault(op, []).append(v[1] / 1e3)
            if len(v) > 3 and not op.startswith("part."):  # parts: wall only
                cpu.setdefault(op, []).append(v[3] / 1e3)
    print("%d answers; seconds per answer where the part ran" % len(rows))
    print("| part or request | answers | median s | sum s | runner CPU s, median / sum |")
    print("|---|---|---|---|---|")
    order = ["part." + p for p in PARTS] + sorted(k for k in keys if not k.startswith("part."))
    for k in order:
        if k in keys:
            v = keys[k]
            c = cpu.get(k)
            print("| %s | %d | %.3f | %.1f | %s |" % (
                k, len(v), statistics.median(v), sum(v),
                "%.3f / %.1f" % (statistics.median(c), sum(c)) if c else ""))
    for phase in ("build", "reference", "correctness", "timing", "total"):
        v = [r["times_ms"].get(phase) for r in rows]
        v = [x / 1e3 for x in v if isinstance(x, (int, float)) and x > 0]
        if v:
            print("| phase %s | %d | %.3f | %.1f | |" % (phase, len(v), statistics.median(v),
                                                       sum(v)))
    if a.per_answer:
        print()
        # Per answer: its total, the candidate runner's start-up (its
        # interpreter and every init request) and every output fetch
        # (requests, both sides), then the parts its session reached.
        print("| answer | verdict | total | cand. start-up | fetches | " + " | ".join(PARTS) +
              " |")
        print("|---|---|---|---|---|" + "---|" * len(PARTS))
        for r in rows:
            ops = r["times_ms"].get("ops") or {}
            fetch = sum(v[1] for k, v in ops.items() if k.endswith(".fetch"))
            start_up = sum(v[1] for k, v in ops.items()
                           if k == "cand.start" or k.startswith("cand.init"))
            cells = ["%.2f" % (r["times_ms"].get("total", 0) / 1e3),
                     "%.2f" % (start_up / 1e3), "%.2f" % (fetch / 1e3)]
            cells += ["%.2f" % (ops["part." + p][1] / 1e3) if "part." + p in ops else ""
                      for p in PARTS]
            print("| l%sp%s s%s | %s | %s |" % (r.get("level"), r.get("problem"),
                                                r.get("sample"), r.get("verdict"),
                                                " | ".join(cells)))


if __name__ == "__main__":
    main()
