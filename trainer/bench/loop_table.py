#!/usr/bin/env python3
"""Figures of an ablation run from its step lines (trainer/README.md, "On the H200").

    python3 trainer/bench/loop_table.py ABLATION_DIR

ABLATION_DIR holds seed-N/RUN.jsonl (train_loop_gpu.sh's layout). Per run:
mean policy reward over the first and last five steps, rollouts solved in
them, best verified speedup, median seconds per step and its split, median
training and generation tokens/s, skills added, the reward cache, failed
rollouts; then each run's time summed over its steps.
"""
import glob
import json
import os
import statistics
import sys

PARTS = ("total", "generation", "verification", "training", "library")


def steps_of(path):
    with open(path) as f:
        return [json.loads(x) for x in f if '"step"' in x]


def main(root):
    runs = []
    for path in sorted(glob.glob(os.path.join(root, "seed-*", "*.jsonl"))):
        seed = os.path.basename(os.path.dirname(path))
        name = os.path.basename(path)[: -len(".jsonl")]
        steps = steps_of(path)
        if steps:
            runs.append((seed, name, steps))
    if not runs:
        sys.exit(f"loop_table.py: no step lines under {root}/seed-*/")
    med = statistics.median
    for seed, name, l in runs:
        r = [s["reward"].get("policy", {}).get("mean", 0.0) for s in l]
        t = {k: med([s["time_s"][k] for s in l]) for k in PARTS}
        solved = lambda part: f"{sum(s['solved'] for s in part)}/{sum(s['rollouts'] for s in part)}"
        print(f"{seed} {name:16s} steps {len(l)} r-first5 {sum(r[:5]) / len(r[:5]):.3f} "
              f"r-last5 {sum(r[-5:]) / len(r[-5:]):.3f} solved first5 {solved(l[:5])} "
              f"last5 {solved(l[-5:])} best-speedup "
              f"{max(s['speedup'].get('best', 0) for s in l):.2f} s/step median {t['total']:.3f} "
              f"(gen {t['generation']:.3f} verify {t['verification']:.3f} "
              f"train {t['training']:.3f} lib {t['library']:.3f}) train tok/s "
              f"{med([s['train_tokens_per_s'] for s in l]):.0f} gen tok/s "
              f"{med([s['generation_tokens_per_s'] for s in l]):.0f} skills added "
              f"{sum(s['skills_added'] for s in l)} distilled {sum(s['distilled'] for s in l)} "
              f"lib {l[-1]['library']['size']} v{l[-1]['library']['version']} cache hits "
              f"{l[-1]['reward_cache']['hits']} misses {l[-1]['reward_cache']['misses']} "
              f"failed {sum(s.get('failed_rollouts', 0) for s in l)}")
    print("summed over the steps (s): " + " ".join(PARTS))
    for seed, name, l in runs:
        sums = [sum(s["time_s"][k] for s in l) for k in PARTS]
        print(f"{seed} {name:16s} " + " ".join(f"{x:.1f}" for x in sums))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
