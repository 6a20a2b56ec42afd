#!/usr/bin/env python3
"""Collects the GPU suite's JSON outputs into summary.json and summary.md.

Usage: suite_summary.py DIR   (DIR holds describe.json, candidates.json, ...)
Prints the compact table that ends the suite's output.
"""

import json
import pathlib
import sys


def load(d, name):
    p = d / name
    if not p.exists():
        return None
    try:
        return json.loads(p.read_text())
    except ValueError:
        return None


def hack_table(cands):
    rows = []
    for r in (cands or {}).get("rows", []):
        if not r.get("generated"):
            continue
        rep = r.get("report", {})
        rows.append((r["task"], r["candidate"], r.get("met_expectation", False),
                     ",".join(rep.get("finding_codes", [])) or r.get("error", "")))
    return rows


def num(v, fmt="%.4f"):
    return fmt % v if isinstance(v, (int, float)) else "n/a"


def pct(n, total):
    return "%d / %d = %.2f%%" % (n, total, 100.0 * n / total) if total else "%d / %d" % (n, total)


def main():
    d = pathlib.Path(sys.argv[1])
    s = {name: load(d, name + ".json") for name in
         ("describe", "candidates", "candidates_noscreen", "fp", "power", "throughput", "kb")}
    lines = ["# skilldb verify: GPU suite summary", ""]
    dev = s["describe"] or {}
    if dev:
        lines.append("Device: %s (%s); measured copy bandwidth %.0f GB/s, FMA %.1f TFLOP/s; %s" % (
            dev.get("name"), dev.get("device_class"), dev.get("bandwidth_bytes_per_s", 0) / 1e9,
            dev.get("fp32_flops_per_s", 0) / 1e12, dev.get("notes", "")))
        lines.append("")
    table = []
    fp = s["fp"]
    if fp:
        table.append(("false positives (identical copy, tau=%.2f)" % fp["tau"],
                      pct(fp["false_positives"], fp["trials"])))
    pw = s["power"]
    if pw:
        ratios = ", ".join("%s %sx" % (t["task"], num(t.get("median_ratio"), "%.3f"))
                           for t in pw["tasks"] if t.get("trials"))
        table.append(("power (true speedup %s)" % ratios,
                      pct(pw["detected"], pw["trials"])))
    th = s["throughput"]
    if th:
        for ph in th["phases"]:
            table.append(("throughput, %s compile cache" % ph["phase"],
                          "%.1f candidates/min/GPU (%d in %.0f s, %d passed)" % (
                              ph["per_minute"], ph["candidates"], ph["wall_s"], ph.get("passed", 0))))
    kb = s["kb"]
    if kb and kb.get("per_minute") is not None:
        table.append(("KernelBench protocol (load_inline + 100 trials)",
                      "%.1f candidates/min/GPU (%d in %.0f s, mean build %.0f s)" % (
                          kb["per_minute"], kb["candidates"], kb["wall_s"], kb["mean_build_s"])))
    for key, label in (("candidates", "shipped candidates meeting expectation (screen on)"),
                       ("candidates_noscreen", "hacks meeting expectation (static screen off)")):
        c = s[key]
        if c:
            table.append((label, "%d / %d" % (c["met"], c["total"])))
    hacks = hack_table(s["candidates"])
    if hacks:
        table.append(("hack candidates rejected with an expected reason",
                      "%d / %d" % (sum(1 for h in hacks if h[2]), len(hacks))))
    lines += ["| figure | value |", "| --- | --- |"] + ["| %s | %s |" % r for r in table] + [""]
    if fp:
        lines += ["## Timing noise per task (reference timed against an identical copy)", "",
                  "| task | trials | false positives | median ratio | CV within a round | CV of round medians | reference ms |",
                  "| --- | --- | --- | --- | --- | --- | --- |"]
        for t in fp["tasks"]:
            lines.append("| %s | %d | %s | %s | %s | %s | %s |" % (
                t["task"], t.get("trials", 0), t.get("false_positives", "n/a"),
                num(t.get("median_ratio")), num(t.get("cv_within_round_median")),
                num(t.get("cv_round_medians")), num(t.get("reference_median_ms"))))
        lines.append("")
    c = s["candidates"]
    if c:
        lines += ["## Team candidates (speedup over the reference, GPU)", "",
                  "| task | candidate | verdict | speedup | CI low | findings |", "| --- | --- | --- | --- | --- | --- |"]
        for r in c["rows"]:
            if r.get("generated"):
                continue
            rep = r.get("report", {})
            lines.append("| %s | %s | %s | %.3f | %.3f | %s |" % (
                r["task"], r["candidate"], "passed" if rep.get("passed") else "rejected",
                rep.get("speedup", {}).get("ratio", 0), rep.get("speedup", {}).get("ci_low", 0),
                ",".join(rep.get("finding_codes", [])) or r.get("error", "-")))
        lines.append("")
    if hacks:
        lines += ["## Hack candidates (all tasks)", "", "| task | hack | rejected as expected | findings |",
                  "| --- | --- | --- | --- |"]
        lines += ["| %s | %s | %s | %s |" % (t, h, "yes" if ok else "NO", f) for t, h, ok, f in hacks]
        lines.append("")
    (d / "summary.md").write_text("\n".join(lines) + "\n")
    (d / "summary.json").write_text(json.dumps({"figures": table, "inputs": s}, indent=1))
    print("\n".join("%-62s %s" % r for r in table))


if __name__ == "__main__":
    main()
