#!/usr/bin/env python3
"""What a runner's start-up does to an answer timed beside it on the same GPU.

Since 2026-12-06 the verifier starts a runner's CUDA context without holding
the device (verify/kernelbench/src/kb_runner.cc, Runner::Start): only the
start-up's kernels ("init_kernels", "init_profiler") wait for timed phases.
This measures whether that is safe. One process times two workloads, call
by call, the way a timed phase does (CUDA events around each call, then a
synchronize): a 2048^3 fp32 matmul and a 4M-element add. Meanwhile CHURN
processes repeat a start-up step in fresh processes (forked from a parent
that imported torch and never touched CUDA), one phase per step:

  quiet      nothing beside the timer
  context        kb_runner.start_context: CUDA context, device facts, BLAS
                 handle, flush buffer (runs without the device's hold)
  profiler_host  the same, then kb_guard.warm_profiler_host: Kineto and
                 CUPTI around host work (runs without the device's hold)
  kernels        context, then kb_runner.first_kernels (held shared): a
                 reference's start-up
  profiler       context, profiler_host, first_kernels, then
                 kb_guard.warm_profiler (held shared): a candidate's

Quiet phases alternate with the others, so drift over the run shows. Per
phase and workload: calls, median, p90 and p99 of the event times (us), and
their ratios to the quiet phases' pooled median and to the quiet phases
just before and after (drift moves those as it moves the phase), each
quiet phase's median in order; starts per second reached
by the churn, and the median seconds of each part of a start-up. Written to OUT/init_interference.json and .md.

    python3 verify/kernelbench/bench/init_interference.py --out DIR \
        [--churn 8] [--seconds 8]
"""

import argparse
import json
import multiprocessing as mp
import os
import queue
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "runner"))

import torch  # noqa: E402

import forked  # noqa: E402
import kb_guard  # noqa: E402
import kb_runner  # noqa: E402

STEPS = ("context", "profiler_host", "kernels", "profiler")
# Each step's start-up: the functions a candidate runner's requests call,
# in Runner::Start's order, as far as the step.
SEQUENCE = (("context", lambda dev: kb_runner.start_context(dev, 0)),
            ("profiler_host", kb_guard.warm_profiler_host),
            ("kernels", kb_runner.first_kernels),
            ("profiler", kb_guard.warm_profiler))


def start_up(step):
    """One fresh process's start-up, as far as `step`; the seconds of each
    part."""
    dev = torch.device("cuda", 0)
    took = {}
    for name, f in SEQUENCE:
        if name == "profiler_host" and step in ("context", "kernels"):
            continue  # a reference's start-up has no profiler
        t0 = time.perf_counter()
        f(dev)
        took[name] = time.perf_counter() - t0
        if name == step:
            break
    return took


def churn(step, stop_at, counter, parts):
    """Until `stop_at` (CLOCK_MONOTONIC): fork a process that starts up as
    far as `step` and exits; count the starts; each start's parts' seconds
    go to the queue `parts`."""
    while time.monotonic() < stop_at:
        took = forked.finish(forked.start(start_up, step))
        if took is not None:
            with counter.get_lock():
                counter.value += 1
            parts.put((step, took))


def timer(stop, path, ready):
    """Times both workloads alternately until `stop` is set; writes
    [monotonic, workload, event us, wall us] rows to `path`."""
    dev = torch.device("cuda", 0)
    a = torch.randn(2048, 2048, device=dev)
    b = torch.randn(2048, 2048, device=dev)
    x = torch.randn(1 << 22, device=dev)
    y = torch.randn(1 << 22, device=dev)
    work = {"matmul_2048": lambda: a @ b, "add_4m": lambda: x + y}
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    for _ in range(50):
        for f in work.values():
            f()
    torch.cuda.synchronize()
    ready.set()
    rows = []
    while not stop.is_set():
        for name, f in work.items():
            t0 = time.perf_counter()
            start.record()
            f()
            end.record()
            end.synchronize()
            wall = (time.perf_counter() - t0) * 1e6
            rows.append([time.monotonic(), name, start.elapsed_time(end) * 1e3, wall])
    with open(path, "w") as fh:
        json.dump(rows, fh)


def pct(values, q):
    s = sorted(values)
    return s[min(len(s) - 1, int(q * (len(s) - 1) + 0.5))]


def summarize(timed):
    """(table rows, each quiet phase's median by workload) from `timed`:
    [(phase, {workload: [event us]})] in the run's order."""
    table = []
    drift = {}  # each quiet phase's median, in order: drift shows there
    for name in ("matmul_2048", "add_4m"):
        pooled = [t for phase, by in timed if phase == "quiet" for t in by[name]]
        if not pooled:
            continue
        drift[name] = [statistics.median(by[name]) for phase, by in timed
                       if phase == "quiet" and by[name]]
        table.append({"phase": "quiet", "workload": name, "calls": len(pooled),
                      "median_us": statistics.median(pooled), "p90_us": pct(pooled, 0.9),
                      "p99_us": pct(pooled, 0.99), "median_ratio": 1.0,
                      "median_ratio_near": 1.0, "p90_ratio": 1.0, "p99_ratio": 1.0})
        for i, (phase, by) in enumerate(timed):
            ev = by[name]
            if not ev or phase == "quiet":
                continue
            # The quiet phases just before and after: drift over the run
            # moves them as it moves this one.
            near = [t for j in (i - 1, i + 1) if 0 <= j < len(timed) and
                    timed[j][0] == "quiet" for t in timed[j][1][name]]
            row = {"phase": phase, "workload": name, "calls": len(ev),
                   "median_us": statistics.median(ev), "p90_us": pct(ev, 0.9),
                   "p99_us": pct(ev, 0.99)}
            row["median_ratio"] = row["median_us"] / statistics.median(pooled)
            row["median_ratio_near"] = row["median_us"] / statistics.median(near) if near else 0
            row["p90_ratio"] = row["p90_us"] / pct(pooled, 0.9)
            row["p99_ratio"] = row["p99_us"] / pct(pooled, 0.99)
            table.append(row)
    return table, drift


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--churn", type=int, default=8, help="start-ups at once")
    ap.add_argument("--seconds", type=float, default=8.0, help="per phase")
    args = ap.parse_args()
    # NVML's count, not the runtime's: the parent must not initialize CUDA
    # before it forks the timer and the churn.
    os.environ["PYTORCH_NVML_BASED_CUDA_CHECK"] = "1"
    if not torch.cuda.is_available():
        sys.exit("init_interference: needs a CUDA device")
    os.makedirs(args.out, exist_ok=True)
    phases = ["quiet"]
    for step in STEPS:
        phases += [step, "quiet"]
    ctx = mp.get_context("fork")
    ready, stop = ctx.Event(), ctx.Event()
    rows_path = os.path.join(args.out, "init_interference_rows.json")
    tp = ctx.Process(target=timer, args=(stop, rows_path, ready))
    tp.start()
    if not ready.wait(120):
        tp.kill()
        sys.exit("init_interference: the timer did not start in 120 s")
    bounds = []
    starts = {}
    parts = ctx.Queue()
    part_times = {}  # step -> part -> [seconds]
    for phase in phases:
        t = time.monotonic()
        stop_at = t + args.seconds
        if phase != "quiet":
            counter = ctx.Value("i", 0)
            procs = [ctx.Process(target=churn, args=(phase, stop_at, counter, parts))
                     for _ in range(args.churn)]
            for p in procs:
                p.start()
            while any(p.is_alive() for p in procs) or not parts.empty():
                try:
                    step, took = parts.get(timeout=0.2)
                except queue.Empty:
                    continue
                for name, sec in took.items():
                    part_times.setdefault(step, {}).setdefault(name, []).append(sec)
            for p in procs:
                p.join()
            starts[phase] = counter.value / args.seconds
        while time.monotonic() < stop_at:
            time.sleep(0.05)
        # A phase's first second is left out (churn processes starting, or
        # the last phase's ending).
        bounds.append((phase, t + 1.0, time.monotonic()))
        sys.stderr.write("init_interference: %s done (%s starts/s)\n"
                         % (phase, "%.1f" % starts[phase] if phase in starts else "-"))
    stop.set()
    tp.join(60)
    with open(rows_path) as fh:
        rows = json.load(fh)
    result = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
              "churn": args.churn, "seconds": args.seconds, "starts_per_s": starts,
              "phases": {}}
    # Each phase's event times, in order (quiet phases between the others).
    timed = []
    for phase, lo, hi in bounds:
        timed.append((phase, {name: [r[2] for r in rows if r[1] == name and lo <= r[0] < hi]
                              for name in ("matmul_2048", "add_4m")}))
    table, drift = summarize(timed)
    result["phases"] = [[phase, {k: len(v) for k, v in by.items()}] for phase, by in timed]
    result["table"] = table
    result["quiet_medians_us"] = drift
    # Each part's median seconds in a start-up, CHURN at once.
    result["start_up_median_s"] = {
        step: {name: statistics.median(v) for name, v in by.items()}
        for step, by in part_times.items()}
    with open(os.path.join(args.out, "init_interference.json"), "w") as fh:
        json.dump(result, fh, indent=1)
    lines = ["%s, torch %s: %d start-ups at once, %.0f s a phase" % (
                 result["device"], result["torch"], args.churn, args.seconds), "",
             "| phase | workload | calls | median us | p90 us | p99 us | median / quiet "
             "| median / quiet before and after | p90 / quiet | p99 / quiet | starts/s |",
             "|" + "---|" * 11]
    for r in table:
        lines.append("| %s | %s | %d | %.1f | %.1f | %.1f | %.3f | %.3f | %.3f | %.3f | %s |" % (
            r["phase"], r["workload"], r["calls"], r["median_us"], r["p90_us"], r["p99_us"],
            r["median_ratio"], r["median_ratio_near"], r["p90_ratio"], r["p99_ratio"],
            "%.1f" % starts[r["phase"]] if r["phase"] in starts else "-"))
    lines += ["", "Quiet phases' medians in order, us (drift over the run): " + "; ".join(
        "%s %s" % (name, ", ".join("%.1f" % m for m in ms)) for name, ms in drift.items())]
    lines += ["", "Start-up parts, median seconds (%d at once):" % args.churn, "",
              "| step | " + " | ".join(n for n, _ in SEQUENCE) + " |",
              "|" + "---|" * (len(SEQUENCE) + 1)]
    for step, by in result["start_up_median_s"].items():
        lines.append("| %s | " % step + " | ".join(
            "%.3f" % by[n] if n in by else "-" for n, _ in SEQUENCE) + " |")
    with open(os.path.join(args.out, "init_interference.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
