#!/usr/bin/env python3
"""Prints the table of bench_gpu.sh from OUT/skilldb.json and
OUT/transformers.json (either may be missing after a failure)."""
import json
import os
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def main():
    out = sys.argv[1]
    ours = load(os.path.join(out, "skilldb.json"))
    hf = load(os.path.join(out, "transformers.json"))
    print("| measure | skilldb | transformers | ratio |")
    print("|---|---|---|---|")

    def row(name, a, b, unit, higher_better=True):
        if a is None and b is None:
            return
        ratio = ""
        if a and b:
            ratio = f"{(a / b) if higher_better else (b / a):.2f}x"
        fa = f"{a:,.1f} {unit}" if a is not None else "-"
        fb = f"{b:,.1f} {unit}" if b is not None else "-"
        print(f"| {name} | {fa} | {fb} | {ratio} |")

    gens = {g["batch"]: g for g in ours.get("generate", [])}
    hgens = {g["batch"]: g for g in hf.get("generate", [])}
    for batch in sorted(set(gens) | set(hgens)):
        a, b = gens.get(batch, {}), hgens.get(batch, {})
        row(f"generation, batch {batch}", a.get("tokens_per_s"), b.get("tokens_per_s"), "tok/s")
        row(f"  peak memory, batch {batch}", a.get("peak_gib"), b.get("peak_gib"), "GiB", False)
    a, b = ours.get("train", {}), hf.get("train", {})
    row("training step (fwd+bwd)", a.get("tokens_per_s"), b.get("tokens_per_s"), "tok/s")
    row("  peak memory, training", a.get("peak_gib"), b.get("peak_gib"), "GiB", False)
    for k, v in ours.get("check", {}).items():
        print(f"| {k} | {v} | | |")
    print()
    print("skilldb:", ours.get("implementation", "missing"), "|",
          "transformers:", hf.get("implementation", "missing"))
    if gens:
        g = next(iter(gens.values()))
        print(f"prompt {g['prompt_tokens']} tokens, {g['new_tokens']} new tokens (greedy, EOS "
              "ignored), best of the timed runs; ratio > 1 means skilldb is better "
              "(for memory: uses less)")


if __name__ == "__main__":
    main()
