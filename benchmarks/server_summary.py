"""Summarises benchmarks/server_bench.sh's runs.jsonl as Markdown tables:
per concurrency, the medians over the reps of HTTP and in-process QPS and
p50/p99 latency, and their ratios (in-process / HTTP for QPS, HTTP /
in-process for latency); then the proposal queue and the binding overhead.

usage: python3 benchmarks/server_summary.py RUNS.jsonl
"""

import json
import statistics
import sys


def main():
    runs = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    med = statistics.median
    print("| concurrency | HTTP QPS | in-process QPS | QPS ratio (in-process / HTTP) "
          "| HTTP p50 us | in-process p50 us | p50 ratio | HTTP p99 us "
          "| in-process p99 us | commits in a run (HTTP / in-process) | reps |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    levels = sorted({r["clients"] for r in runs if r["mode"] == "http"})
    for n in levels:
        h = [r for r in runs if r["mode"] == "http" and r["clients"] == n]
        p = [r for r in runs if r["mode"] == "inprocess" and r["threads"] == n]
        if not h or not p:
            continue
        hq, pq = med(r["qps"] for r in h), med(r["query_qps"] for r in p)
        h50, p50 = med(r["p50_us"] for r in h), med(r["p50_us"] for r in p)
        h99, p99 = med(r["p99_us"] for r in h), med(r["p99_us"] for r in p)
        hc = med(r["versions_committed"] or 0 for r in h)
        pc = med(r["versions_committed"] for r in p)
        errors = sum(r["errors"] for r in h + p)
        print(f"| {n} | {hq:,.0f} | {pq:,.0f} | {pq / hq:.2f} | {h50:,.0f} | {p50:,.0f} "
              f"| {h50 / p50:.2f} | {h99:,.0f} | {p99:,.0f} | {hc:.0f} / {pc:.0f} "
              f"| {len(h)}{'' if not errors else f', {errors} errors'} |")
    batch = [r for r in runs if r["mode"] == "inprocess"]
    if batch:
        print()
        print("In-process QueryBatch (medians over reps): " + ", ".join(
            f"{n} threads {med(r['batch_qps'] for r in batch if r['threads'] == n):,.0f} QPS"
            for n in sorted({r["threads"] for r in batch})))
    for r in runs:
        if r["mode"] == "proposals":
            print()
            print(f"Proposal queue: {r['proposals']} proposals from {r['clients']} clients, "
                  f"accepted (202) at {r['submitted_per_s']:,.0f}/s, all decided at "
                  f"{r['decided_per_s']:,.0f}/s ({r['errors']} errors, "
                  f"{r['committed_total']} committed in all)")
        if r["mode"] == "python":
            print()
            print(f"Python binding: {r['python_us_per_query']:.1f} us per query through "
                  f"skilldb.Library.query against {r['cpp_us_per_query']:.1f} us in a C++ loop "
                  f"in the module: {r['overhead_us_per_query']:.1f} us overhead "
                  f"({r['n']} calls x 3 queries)")


if __name__ == "__main__":
    main()
