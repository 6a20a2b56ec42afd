#!/usr/bin/env python3
"""The skill-library ablation's summary (trainer/bench/coevolution_ablation.sh).

  ablation_summary.py OUT_DIR "SEEDS" "ARMS"

reads OUT_DIR/seed-<seed>.<arm>.jsonl (the step lines each run printed) and
prints, per arm and seed: the mean policy reward over all steps, over the
first and the last quarter, skills added per step, rejected and invalid
distillations, the library's size at the end, the rollouts that selected a
skill this run's Summary Agent wrote and their mean policy return against
the other rollouts of the same steps, and seconds per step; then per arm
the mean and min..max over seeds, over the runs that have the most steps
(a run cut short by a time limit is listed but left out of them, and named).
"""
import json, statistics, sys
out, seeds, arms = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
agg = {}
for arm in arms:
    for seed in seeds:
        try:
            steps = [json.loads(l) for l in open(f"{out}/seed-{seed}.{arm}.jsonl") if '"step"' in l]
        except OSError:
            steps = []
        if not steps:
            print(f"{arm:9s} seed {seed}: no step lines (see seed-{seed}.{arm}.err)")
            continue
        r = [s["reward"].get("policy", {}).get("mean", 0.0) for s in steps]
        k = max(1, len(r) // 4)
        sk = [s.get("skills", {}) for s in steps]
        added = [x.get("added", 0) for x in sk]
        rejected = sum(x.get("rejected", 0) for x in sk)
        invalid = sum(x.get("invalid", 0) for x in sk)
        rs = [s.get("run_skills", {}) for s in steps]
        used = sum(x.get("rollouts_with", 0) for x in rs)
        rollouts = sum(s.get("rollouts", 0) for s in steps)
        w = [(x["return_with"], x["rollouts_with"]) for x in rs if x.get("rollouts_with", 0) > 0]
        wo = [(x["return_without"], x["rollouts_without"]) for x in rs
              if x.get("rollouts_with", 0) > 0 and x.get("rollouts_without", 0) > 0]
        mean_w = sum(a * n for a, n in w) / max(1, sum(n for _, n in w)) if w else float("nan")
        mean_wo = sum(a * n for a, n in wo) / max(1, sum(n for _, n in wo)) if wo else float("nan")
        t = [s["time_s"]["total"] for s in steps]
        mean_all = sum(r) / len(r)
        agg.setdefault(arm, []).append((mean_all, sum(r[-k:]) / k, len(r), seed))
        print(f"{arm:9s} seed {seed}: steps {len(steps)} reward mean {mean_all:.3f} "
              f"first{k} {sum(r[:k])/k:.3f} last{k} {sum(r[-k:])/k:.3f} "
              f"skills added {sum(added)} (per step {' '.join(map(str, added))}) "
              f"rejected {rejected} invalid {invalid} lib {steps[-1]['library']['size']} "
              f"rollouts with a run skill {used}/{rollouts} return with {mean_w:.3f} "
              f"without (same steps) {mean_wo:.3f} s/step {sum(t)/len(t):.2f}")
        print(f"{'':9s} per-step reward {' '.join(f'{x:.2f}' for x in r)}")
most = max((n for v in agg.values() for _, _, n, _ in v), default=0)
print(f"per arm over seeds (runs of {most} steps): mean policy reward over all steps "
      "(mean, min..max); over the last quarter (mean, min..max)")
for arm, runs in agg.items():
    v = [x for x in runs if x[2] == most]
    cut = [f"seed {x[3]} ({x[2]} steps)" for x in runs if x[2] != most]
    note = f"; left out, cut short: {', '.join(cut)}" if cut else ""
    if not v:
        print(f"{arm:9s} no run of {most} steps{note}")
        continue
    a = [x[0] for x in v]
    l = [x[1] for x in v]
    print(f"{arm:9s} n={len(v)} all {statistics.mean(a):.3f} ({min(a):.3f}..{max(a):.3f}) "
          f"last {statistics.mean(l):.3f} ({min(l):.3f}..{max(l):.3f}){note}")
