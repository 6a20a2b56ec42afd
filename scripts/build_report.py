#!/usr/bin/python3
"""What a build cost, from ninja's own log: the seconds of its compile and
link jobs and the heaviest of them.

Usage: build_report.py [--top N] [--json] BUILD_DIR [BUILD_DIR ...]

Reads BUILD_DIR/.ninja_log (the newest entry per output, as ninja does) and
prints per build directory: jobs, the sum of their wall seconds (what 1 core
would have spent; on N cores the build takes about sum / N), and the N
heaviest outputs (default 10). Python 3 standard library only.
"""
import argparse
import json
import os
import sys


def read_log(path):
    """{output: seconds} from a .ninja_log (format v5: start end mtime output hash)."""
    jobs = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("#"):
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 4:
                continue
            try:
                start, end = int(parts[0]), int(parts[1])
            except ValueError:
                continue
            jobs[parts[3]] = (end - start) / 1000.0
    return jobs


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("build_dirs", nargs="+")
    args = ap.parse_args(argv)
    report = []
    for d in args.build_dirs:
        log = os.path.join(d, ".ninja_log")
        if not os.path.isfile(log):
            print("build_report: %s has no .ninja_log" % d, file=sys.stderr)
            return 1
        jobs = read_log(log)
        heaviest = sorted(jobs.items(), key=lambda kv: -kv[1])[: args.top]
        report.append({"build_dir": d, "jobs": len(jobs),
                       "job_seconds": round(sum(jobs.values()), 1),
                       "heaviest": [{"output": o, "seconds": s} for o, s in heaviest]})
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        print()
        return 0
    for r in report:
        print("%s: %d jobs, %.1f job-seconds" % (r["build_dir"], r["jobs"], r["job_seconds"]))
        for h in r["heaviest"]:
            print("  %7.1f s  %s" % (h["seconds"], h["output"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
