#!/usr/bin/env python3
"""The agreement table: KernelBench's harness (kb_harness.py) beside
`skilldb_kernelbench eval` (this verifier's protocol, and KernelBench's
protocol reproduced), answer by answer, with what each answer is and why a
difference is expected; and the throughput of each on the same answers.

Usage: kb_agreement.py --manifest FILE --map FILE --kb FILE --ours FILE|JSONL
                       [--ours-kb FILE] [--ours-wall S] [--ours-kb-wall S]
                       --out-md FILE --out-json FILE
The map file lists {"file", "level", "problem", "sample"} per answer (the
run directory gen_rundir wrote).
"""

import argparse
import json
import math


def kb_verdict(r):
    res = r.get("result") or {}
    if not res:
        return "error"
    if not res.get("compiled"):
        return "compile_error"
    return "correct" if res.get("correctness") else "incorrect"


def kb_speedup(r):
    res = r.get("result") or {}
    rt, ref = res.get("runtime", -1), res.get("ref_runtime", -1)
    if res.get("correctness") and rt and rt > 0 and ref and ref > 0:
        return ref / rt
    return None


def load_report(path):
    """An eval report (--json), or the --results file a stopped run leaves
    (one result per line; a line cut by the stop is skipped)."""
    if not path.endswith(".jsonl"):
        return json.load(open(path))
    results = []
    for line in open(path):
        try:
            results.append(json.loads(line))
        except ValueError:
            pass
    return {"results": results}


def ours_index(report):
    out = {}
    for r in (report or {}).get("results", []):
        out[(r["level"], r["problem"], r["sample"])] = r
    return out


def fmt(v, spec="%.3g"):
    return "-" if v is None else spec % v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--map", required=True)
    ap.add_argument("--kb", required=True)
    ap.add_argument("--ours", required=True)
    ap.add_argument("--ours-kb", default="")
    ap.add_argument("--ours-wall", type=float, default=0)
    ap.add_argument("--ours-kb-wall", type=float, default=0)
    ap.add_argument("--out-md", required=True)
    ap.add_argument("--out-json", required=True)
    a = ap.parse_args()
    manifest = {x["file"]: x for x in json.load(open(a.manifest))["answers"]}
    mapping = {m["file"]: m for m in json.load(open(a.map))}
    kb = json.load(open(a.kb))
    kb_by_file = {r["file"]: r for r in kb["results"]}
    ours = ours_index(load_report(a.ours))
    ours_kb = ours_index(load_report(a.ours_kb)) if a.ours_kb else {}
    rows = []
    for f, m in mapping.items():
        key = (m["level"], m["problem"], m["sample"])
        o = ours.get(key, {})
        okb = ours_kb.get(key, {})
        k = kb_by_file.get(f, {})
        man = manifest.get(f, {})
        row = {
            "file": f, "class": man.get("class", ""), "problem": "level%d/%d" % key[:2],
            "kb_verdict": kb_verdict(k), "kb_speedup": kb_speedup(k),
            "kb_excessive": bool(((k.get("result") or {}).get("metadata") or {}).get("excessive_speedup")),
            "kb_static_valid": (k.get("static") or {}).get("valid"),
            "ours_kbprotocol_verdict": okb.get("verdict"), "ours_kbprotocol_speedup": okb.get("speedup_eager"),
            "ours_verdict": o.get("verdict"), "ours_speedup": o.get("speedup_eager"),
            "ours_ci": (o.get("speedup_ci") or {}),
            "ours_compile_speedup": o.get("speedup_compile"),
            "ours_findings": [x["code"] for x in o.get("findings", [])],
            "ours_own_share": (o["custom_kernel_cuda_time_in_profiling_us"] /
                               o["total_kernel_run_time_in_profiling_us"])
            if o.get("total_kernel_run_time_in_profiling_us", -1) > 0 else None,
            "expect": man.get("expect", {}), "why": man.get("why", ""),
        }
        kb_correct = row["kb_verdict"] == "correct"
        ours_correct = row["ours_verdict"] in ("correct", "not_credited")
        row["agree_correctness"] = kb_correct == ours_correct
        row["kbprotocol_reproduces_kb"] = (row["ours_kbprotocol_verdict"] == row["kb_verdict"]) \
            if okb else None
        rows.append(row)
    honest = [r for r in rows if r["class"] in ("correct", "fast", "slow") and r["kb_speedup"]
              and r["ours_speedup"]]
    for r in honest:
        r["speedup_ratio_ours_over_kb"] = r["ours_speedup"] / r["kb_speedup"]
    # A harness stopped by its time bound leaves kb_harness.py's --partial
    # file: the answers it evaluated and the time so far.
    kb_eval = kb.get("eval_wall_s", kb.get("eval_wall_s_so_far", 0.0))
    kb_done = len(kb["results"])
    kb_wall = kb.get("wall_s", kb["build_wall_s"] + kb_eval)
    tp = {"kernelbench": {"answers": kb_done, "of": kb["answers"], "wall_s": kb_wall,
                          "build_wall_s": kb["build_wall_s"], "eval_wall_s": kb_eval,
                          "answers_per_minute": kb_done / kb_wall * 60.0 if kb_wall > 0 else None}}
    if a.ours_wall > 0:
        tp["skilldb"] = {"answers": len(ours), "wall_s": a.ours_wall,
                         "answers_per_minute": len(ours) / a.ours_wall * 60.0}
        split = {"build": 0.0, "reference": 0.0, "correctness": 0.0, "timing": 0.0}
        for r in ours.values():
            t = r.get("times_ms", {})
            for k in split:
                split[k] += t.get(k, 0.0) / 1000.0
        tp["skilldb"]["split_s"] = split
        if tp["kernelbench"]["answers_per_minute"]:
            tp["ratio"] = (tp["skilldb"]["answers_per_minute"] /
                           tp["kernelbench"]["answers_per_minute"])
    if a.ours_kb_wall > 0:
        tp["skilldb_kernelbench_protocol"] = {
            "answers": len(ours_kb), "wall_s": a.ours_kb_wall,
            "answers_per_minute": len(ours_kb) / a.ours_kb_wall * 60.0}
    json.dump({"rows": rows, "throughput": tp}, open(a.out_json, "w"), indent=1)
    lines = ["| answer | class | KernelBench | KB speedup | ours (kb protocol) | ours | ours speedup (95% CI) | findings | expected / why |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ci = r["ours_ci"]
        ours_sp = fmt(r["ours_speedup"])
        if ci.get("high"):
            ours_sp += " (%s-%s)" % (fmt(ci.get("low")), fmt(ci.get("high")))
        lines.append("| %s | %s | %s%s%s | %s | %s %s | %s | %s | %s | %s |" % (
            r["file"], r["class"], r["kb_verdict"], " (excessive)" if r["kb_excessive"] else "",
            "" if r["kb_static_valid"] in (None, True) else " (static check: rejected)",
            fmt(r["kb_speedup"]), r["ours_kbprotocol_verdict"] or "-",
            fmt(r["ours_kbprotocol_speedup"]), r["ours_verdict"], ours_sp,
            ", ".join(r["ours_findings"]) or "-",
            "%s / %s; %s" % (r["expect"].get("kernelbench", ""), r["expect"].get("skilldb", ""),
                             r["why"])))
    lines.append("")
    agree = sum(1 for r in rows if r["agree_correctness"])
    lines.append("Correctness agreement (KernelBench correct vs ours correct or not credited): "
                 "%d of %d answers." % (agree, len(rows)))
    if honest:
        ratios = [r["speedup_ratio_ours_over_kb"] for r in honest]
        lines.append("Honest answers' speedups, ours / KernelBench's: " +
                     ", ".join("%s %.3f" % (r["file"], r["speedup_ratio_ours_over_kb"])
                               for r in honest) +
                     " (geomean %.3f)." % math.exp(sum(math.log(x) for x in ratios) / len(ratios)))
    lines.append("")
    lines.append("Throughput (same answers, same GPU, same run): " + json.dumps(tp))
    open(a.out_md, "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
