#!/usr/bin/env python3
"""Where the host's CPU goes during a run, by kind of process: samples
every process's CPU time (/proc/PID/stat: utime + stime, its own threads,
not its children's) every INTERVAL seconds until SIGTERM or SIGINT, then
writes per kind the CPU seconds, the processes seen and the total of
/proc/stat's busy time over the same span, as JSON to OUT.

Kinds: the runners by role (python ... kb_runner.py --role R), the
compilers (nvcc, cicc, ptxas, cc1plus, ld, ninja, ...), the verifier
(skilldb), the scripted server, and "other". A process that lives and dies
between two samples is not seen (a short cicc or as); what it used shows
as the gap between the kinds' sum and the host's busy time.

    python3 proc_cpu.py OUT [INTERVAL]      (step_bench.sh runs it)
"""

import json
import os
import signal
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")
COMPILERS = {"nvcc", "cicc", "ptxas", "fatbinary", "nvlink", "cudafe++", "cc1plus",
             "cc1", "as", "ld", "collect2", "ninja", "c++", "g++", "gcc", "x86_64-linux-gnu-g++-13",
             "x86_64-linux-gnu-g++-12", "x86_64-linux-gnu-gcc-13"}


def kind_of(pid):
    try:
        with open("/proc/%s/cmdline" % pid, "rb") as fh:
            argv = fh.read().split(b"\0")
        with open("/proc/%s/comm" % pid) as fh:
            comm = fh.read().strip()
    except OSError:
        return None
    args = [a.decode(errors="replace") for a in argv if a]
    if any(a.endswith("kb_runner.py") for a in args):
        role = args[args.index("--role") + 1] if "--role" in args[:-1] else "?"
        return "runner:" + role
    if any(a.endswith("kb_bytecode.py") for a in args):
        return "bytecode_fill"
    if comm in COMPILERS or comm.startswith("cc1"):
        return "compiler:" + comm
    if comm == "skilldb":
        return "verifier (skilldb)"
    if comm.startswith("scripted_llm"):
        return "scripted server"
    if comm.startswith("skilldb_kb_laun"):
        return "launcher"
    return "other:" + comm


def busy_ticks():
    with open("/proc/stat") as fh:
        f = fh.readline().split()
    vals = [int(x) for x in f[1:]]
    return sum(vals) - vals[3] - vals[4], sum(vals)  # busy, total


def main():
    out = sys.argv[1]
    interval = float(sys.argv[2]) if len(sys.argv) > 2 else 0.5
    me = str(os.getpid())
    # (pid, start time) -> [kind, CPU ticks last seen, ticks at the first
    # scan (processes already running count from there)]
    seen = {}
    first = True
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    b0, t0 = busy_ticks()
    w0 = time.time()
    while not stop:
        for pid in os.listdir("/proc"):
            if not pid.isdigit() or pid == me:
                continue
            try:
                with open("/proc/%s/stat" % pid) as fh:
                    f = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            ticks = int(f[11]) + int(f[12])
            key = (pid, f[19])  # pid and start time
            if key not in seen:
                k = kind_of(pid)
                if k is None:
                    continue
                seen[key] = [k, 0, ticks if first else 0]
            seen[key][1] = max(seen[key][1], ticks)
        first = False
        time.sleep(interval)
    b1, t1 = busy_ticks()
    by = {}
    for (k, ticks, base) in seen.values():
        e = by.setdefault(k, {"cpu_s": 0.0, "processes": 0})
        e["cpu_s"] += (ticks - base) / TICK
        e["processes"] += 1
    ncpu = os.cpu_count() or 1
    report = {
        "wall_s": round(time.time() - w0, 1),
        "host_busy_cpu_s": round((b1 - b0) / TICK, 1),
        "host_cores": ncpu,
        "kinds_cpu_s": round(sum(e["cpu_s"] for e in by.values()), 1),
        "note": "CPU seconds per kind of process (utime+stime of each process "
                "seen, sampled); host_busy_cpu_s is /proc/stat's busy time over "
                "the span; the gap is processes too short to be sampled",
        "by_kind": {k: {"cpu_s": round(v["cpu_s"], 1), "processes": v["processes"]}
                    for k, v in sorted(by.items(), key=lambda kv: -kv[1]["cpu_s"])
                    if v["cpu_s"] >= 0.05},
    }
    with open(out, "w") as fh:
        json.dump(report, fh, indent=1)


if __name__ == "__main__":
    main()
