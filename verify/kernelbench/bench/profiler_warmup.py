#!/usr/bin/env python3
"""Where a candidate runner's profiler warm-up goes (host work, 7.2 s median
per runner in the H100 step of 2026-12-06b, the largest host cost after the
builds).

Fresh processes (forked from a parent that imported torch and never touched
CUDA) each create their CUDA context (kb_runner.start_context), then time:
  import     importing torch.profiler
  host       a profile around host work only, with the variant's activities
             (kb_guard.warm_profiler_host does this with cpu+cuda), split
             into its steps: prepare (Kineto's and CUPTI's set-up), start,
             stop (the trace's end and its parse); each with the process's
             CPU seconds meanwhile (_cpu: all threads; is it work or a wait?)
  kernel     then a profile around one 32x32 matmul, same activities
             (kb_guard.warm_profiler's work)
  again      a second profile around the matmul (what a warm profiler costs)
for each variant of activities (cpu, cuda, cpu+cuda), AT_ONCE processes at a
time (default 8, as the step's workers start them) and then one alone,
until --budget seconds are spent. Variant "cpu+cuda@first" profiles the host
work before the context is made (does the set-up cost less before CUDA?).
Variant "cpu+cuda/autograd" profiles with torch.autograd.profiler.profile
(Kineto, the object torch.profiler.profile wraps) instead of
torch.profiler.profile, whose trace start asks hasattr(torch, "_inductor"),
which imports torch._inductor (and _dynamo, sympy, ...). --variants picks.
The first lone process's host profile also runs under cProfile: its top
functions by cumulative time go to the JSON (where in Python the seconds
go, if they are Python's). Medians per variant and concurrency to
OUT/profiler_warmup.json and .md. --device cpu runs the same on the CPU
(the script's own check).

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
import kb_guard  # noqa: E402
import kb_runner  # noqa: E402

VARIANTS = ("cpu+cuda", "cpu+cuda/autograd", "cpu+cuda@first", "cuda", "cpu", "cpu/autograd")
STEPS = ("prepare", "start", "stop")
PARTS = ("context", "import", "host", "host_cpu") + tuple(
    x for st in STEPS for x in (st, st + "_cpu")) + ("kernel", "again")
DEVICE = "cuda"


def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def autograd_profile(acts):
    """torch.autograd.profiler.profile with Kineto for these activities, as
    the runners make it (kb_guard.kineto_profile)."""
    from torch.profiler import ProfilerActivity
    return kb_guard.kineto_profile(ProfilerActivity.CUDA in acts,
                                   cpu=ProfilerActivity.CPU in acts)


def new_profile(acts, api):
    if api == "autograd":
        return autograd_profile(acts)
    from torch.profiler import profile as torch_profile
    return torch_profile(activities=acts)


def host_profile(acts, took, api="profiler"):
    """A profile around host work only, step by step (what torch's
    profile.__enter__ and __exit__ do: prepare_trace, start_trace,
    stop_trace), each step's wall and CPU seconds into `took`."""
    prof = new_profile(acts, api)
    t, cpu = time.perf_counter(), cpu_seconds()
    t0, cpu0 = t, cpu
    for step in STEPS:
        if step == "stop":
            torch.empty(1).add_(1)
        if api == "autograd":
            if step == "stop":
                prof.__exit__(None, None, None)
            else:
                getattr(prof, "_%s_trace" % step)()
        else:
            getattr(prof, step + "_trace")()
        now, cpu_now = time.perf_counter(), cpu_seconds()
        took[step], took[step + "_cpu"] = now - t, cpu_now - cpu
        t, cpu = now, cpu_now
    took["host"], took["host_cpu"] = t - t0, cpu - cpu0
    len(prof.function_events if api == "autograd" else prof.events())  # as the runner reads them


def child(variant, profiled):
    took = {}
    dev = torch.device(DEVICE, 0) if DEVICE == "cuda" else torch.device("cpu")
    t = time.perf_counter()
    from torch.profiler import ProfilerActivity
    took["import"] = time.perf_counter() - t
    api = "autograd" if variant.endswith("/autograd") else "profiler"
    kinds = variant.split("/")[0].split("@")[0].split("+")
    acts = []
    if "cpu" in kinds:
        acts.append(ProfilerActivity.CPU)
    if "cuda" in kinds and DEVICE == "cuda":
        acts.append(ProfilerActivity.CUDA)
    first = variant.endswith("@first")
    if first:
        host_profile(acts, took, api)
    t = time.perf_counter()
    if DEVICE == "cuda":
        kb_runner.start_context(dev, 0)
    took["context"] = time.perf_counter() - t
    if not first:
        if profiled:
            import cProfile
            import io
            import pstats
            pr = cProfile.Profile()
            pr.enable()
            host_profile(acts, took, api)
            pr.disable()
            text = io.StringIO()
            pstats.Stats(pr, stream=text).sort_stats("cumulative").print_stats(25)
            took["cprofile"] = text.getvalue()[-6000:]
        else:
            host_profile(acts, took, api)
    x = torch.randn(32, 32, device=dev)
    for part in ("kernel", "again"):
        t = time.perf_counter()
        with new_profile(acts, api) as prof:
            (x @ x).sum().item()
        names = [e.name for e in (prof.function_events if api == "autograd" else prof.events())]
        took[part] = time.perf_counter() - t
        took[part + "_events"] = len(names)
    return took


def run_batch(variant, n, profiled=False):
    """n fresh processes at once; their parts' seconds."""
    kids = [forked.start(child, variant, profiled and i == 0) for i in range(n)]
    return [t for t in (forked.finish(k) for k in kids) if t is not None]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget", type=float, default=60.0, help="seconds to spend")
    ap.add_argument("--at-once", type=int, default=8)
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--variants", default=",".join(VARIANTS),
                    help="comma-separated, of: " + ", ".join(VARIANTS))
    args = ap.parse_args()
    variants = [v for v in args.variants.split(",") if v]
    bad = [v for v in variants if v not in VARIANTS]
    if bad:
        sys.exit("profiler_warmup: unknown variant(s) %s; known: %s" % (bad, ", ".join(VARIANTS)))
    global DEVICE
    DEVICE = args.device
    # NVML's count: the parent must not initialize CUDA before it forks.
    os.environ["PYTORCH_NVML_BASED_CUDA_CHECK"] = "1"
    if DEVICE == "cuda" and not torch.cuda.is_available():
        sys.exit("profiler_warmup: needs a CUDA device")
    os.makedirs(args.out, exist_ok=True)
    deadline = time.monotonic() + args.budget
    plan = [(v, 1) for v in variants[:1]] + [(v, args.at_once) for v in variants] + \
        [(v, 1) for v in variants[1:]]
    results = {}
    for variant, n in plan:
        if time.monotonic() > deadline:
            break
        rows = run_batch(variant, n, profiled=not results)
        key = "%s x%d" % (variant, n)
        results[key] = {"processes": len(rows)}
        if rows and "cprofile" in rows[0]:
            results[key]["cprofile"] = rows[0]["cprofile"]
        for part in PARTS + ("kernel_events", "again_events"):
            vals = [r[part] for r in rows if part in r]
            if vals:
                results[key][part] = statistics.median(vals)
        with open(os.path.join(args.out, "profiler_warmup.json"), "w") as fh:
            json.dump(results, fh, indent=1)
        sys.stderr.write("profiler_warmup: %s %s\n" % (key, json.dumps(
            {k: v for k, v in results[key].items() if k != "cprofile"})))
    lines = ["Profiler warm-up, median seconds per process (%s)" % torch.__version__, "",
             "| variant x at once | processes | " + " | ".join(PARTS) + " | events |",
             "|" + "---|" * (len(PARTS) + 3)]
    for key, r in results.items():
        lines.append("| %s | %d | " % (key, r["processes"]) + " | ".join(
            "%.3f" % r[p] if p in r else "-" for p in PARTS) +
            " | %s |" % r.get("again_events", "-"))
    for key, r in results.items():
        if "cprofile" in r:
            lines += ["", "cProfile of %s's host profile (its times include cProfile's "
                      "own overhead):" % key, "", "```", r["cprofile"].strip(), "```"]
    with open(os.path.join(args.out, "profiler_warmup.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
