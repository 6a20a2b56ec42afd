#!/usr/bin/env python3
"""Where a candidate runner's profiler warm-up goes (host work, 7.2 s median
per runner in the H100 step of 2026-12-06b, the largest host cost after the
builds).

Fresh processes (forked from a parent that imported torch and never touched
CUDA) each create their CUDA context (kb_runner.start_context), then time:
  import     importing torch.profiler
  host       a profile around host work only, with the variant's activities
             (kb_guard.warm_profiler_host does this with cpu+cuda); and
             host_cpu, the process's CPU seconds meanwhile (is it work or
             a wait?)
  kernel     then a profile around one 32x32 matmul, same activities
             (kb_guard.warm_profiler's work)
  again      a second profile around the matmul (what a warm profiler costs)
for each variant of activities (cpu, cuda, cpu+cuda), AT_ONCE processes at a
time (default 8, as the step's workers start them) and then one alone,
until --budget seconds are spent. Medians per variant and concurrency to
OUT/profiler_warmup.json and .md.

    python3 verify/kernelbench/bench/profiler_warmup.py --out DIR [--budget 60]
"""

import argparse
import json
import os
import resource
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "runner"))

import torch  # noqa: E402

import forked  # noqa: E402
import kb_runner  # noqa: E402

VARIANTS = ("cpu+cuda", "cuda", "cpu")
PARTS = ("context", "import", "host", "host_cpu", "kernel", "again")


def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def child(variant):
    took = {}
    dev = torch.device("cuda", 0)
    t = time.perf_counter()
    kb_runner.start_context(dev, 0)
    took["context"] = time.perf_counter() - t
    t = time.perf_counter()
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile
    took["import"] = time.perf_counter() - t
    acts = []
    if "cpu" in variant.split("+"):
        acts.append(ProfilerActivity.CPU)
    if "cuda" in variant.split("+"):
        acts.append(ProfilerActivity.CUDA)
    t = time.perf_counter()
    cpu = cpu_seconds()
    with torch_profile(activities=acts):
        torch.empty(1).add_(1)
    took["host"] = time.perf_counter() - t
    took["host_cpu"] = cpu_seconds() - cpu  # all its threads
    x = torch.randn(32, 32, device=dev)
    for part in ("kernel", "again"):
        t = time.perf_counter()
        with torch_profile(activities=acts) as prof:
            (x @ x).sum().item()
        names = [e.name for e in prof.events()]
        took[part] = time.perf_counter() - t
        took[part + "_events"] = len(names)
    return took


def run_batch(variant, n):
    """n fresh processes at once; their parts' seconds."""
    kids = [forked.start(child, variant) for _ in range(n)]
    return [t for t in (forked.finish(k) for k in kids) if t is not None]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget", type=float, default=60.0, help="seconds to spend")
    ap.add_argument("--at-once", type=int, default=8)
    args = ap.parse_args()
    # NVML's count: the parent must not initialize CUDA before it forks.
    os.environ["PYTORCH_NVML_BASED_CUDA_CHECK"] = "1"
    if not torch.cuda.is_available():
        sys.exit("profiler_warmup: needs a CUDA device")
    os.makedirs(args.out, exist_ok=True)
    deadline = time.monotonic() + args.budget
    plan = [(v, args.at_once) for v in VARIANTS] + [(v, 1) for v in VARIANTS]
    results = {}
    for variant, n in plan:
        if time.monotonic() > deadline:
            break
        rows = run_batch(variant, n)
        key = "%s x%d" % (variant, n)
        results[key] = {"processes": len(rows)}
        for part in PARTS + ("kernel_events", "again_events"):
            vals = [r[part] for r in rows if part in r]
            if vals:
                results[key][part] = statistics.median(vals)
        with open(os.path.join(args.out, "profiler_warmup.json"), "w") as fh:
            json.dump(results, fh, indent=1)
        sys.stderr.write("profiler_warmup: %s %s\n" % (key, json.dumps(results[key])))
    lines = ["Profiler warm-up, median seconds per process (%s)" % torch.__version__, "",
             "| variant x at once | processes | " + " | ".join(PARTS) + " | events |",
             "|" + "---|" * (len(PARTS) + 3)]
    for key, r in results.items():
        lines.append("| %s | %d | " % (key, r["processes"]) + " | ".join(
            "%.3f" % r[p] if p in r else "-" for p in PARTS) +
            " | %s |" % r.get("again_events", "-"))
    with open(os.path.join(args.out, "profiler_warmup.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
