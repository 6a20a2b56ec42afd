#!/usr/bin/env python3
"""Merges one benchmark run's per-engine JSON files into results.json, a
markdown table (results.md) and a plot (results.png).

  report.py RUN_DIR

RUN_DIR holds machine.json, run.json, and per corpus C and engine E:
C/E.build.json, C/E.search.json, C/E.top10.tsv, C/E.status (when a phase
failed or was skipped: one line saying why), and optionally C/ref.top10.tsv,
C/exact_check.json and, from run.sh --search-reps, more search runs
C/E.search.rN.json with their dumps C/E.top10.rN.tsv. With several runs,
each latency and QPS figure is the median over the runs (the table's notes
list every run's p50), and the dumps are checked to be identical. Overlap@10 of every engine is measured against
skilldb's top-10 (our exact ranking); if skilldb did not run on a corpus,
against the Python reference (marked "ref").
"""
import json
import os
import sys
from collections import defaultdict

ENGINE_ORDER = ["skilldb", "lucene", "tantivy", "pisa", "xapian",
                "sqlite-fts5", "lucene++", "bm25s"]


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def read_dump(path):
    out = defaultdict(list)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        for line in f:
            qid, _, doc_id, _ = line.rstrip("\n").split("\t")
            out[qid].append(doc_id)
    return out


def overlap(got, ref):
    """Mean over queries with reference hits of |got ∩ ref| / |ref|."""
    vals = []
    for qid, r in ref.items():
        if r:
            vals.append(len(set(got.get(qid, [])) & set(r)) / len(r))
    return sum(vals) / len(vals) if vals else None


def collect(run_dir):
    rows = []
    for corpus in sorted(os.listdir(run_dir)):
        cdir = os.path.join(run_dir, corpus)
        if not os.path.isdir(cdir):
            continue
        meta = load_json(os.path.join(cdir, "corpus.json")) or {}
        engines = {f.split(".")[0] for f in os.listdir(cdir)
                   if f.endswith((".build.json", ".status"))}
        engines.discard("ref")
        base, base_name = read_dump(os.path.join(cdir, "skilldb.top10.tsv")), \
            "skilldb"
        if base is None:
            base, base_name = read_dump(os.path.join(cdir, "ref.top10.tsv")), \
                "ref"
        for e in sorted(engines, key=lambda x: (
                ENGINE_ORDER.index(x) if x in ENGINE_ORDER else 99, x)):
            b = load_json(os.path.join(cdir, f"{e}.build.json")) or {}
            s, _ = combine_searches(cdir, e)
            status = None
            sp = os.path.join(cdir, f"{e}.status")
            if os.path.exists(sp):
                status = open(sp).read().strip()
            load = {}
            lp = os.path.join(cdir, f"{e}.load")
            if os.path.exists(lp):
                for line in open(lp):
                    ph, before, after = line.split()
                    load[ph] = [float(before), float(after)]
            dump = read_dump(os.path.join(cdir, f"{e}.top10.tsv"))
            ov = overlap(dump, base) if dump is not None and base else None
            rows.append({"corpus": corpus, "engine": e,
                         "n_docs": b.get("n_docs", meta.get("n_docs")),
                         "build": b, "search": s, "status": status,
                         "load": load,
                         "overlap10": ov, "overlap_vs": base_name})
    return rows


def median(xs):
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None
    m = len(xs) // 2
    return xs[m] if len(xs) % 2 else (xs[m - 1] + xs[m]) / 2


def combine_searches(cdir, e):
    """The first search run, with its latency and QPS figures replaced by
    the medians over every run of E on this corpus (see --search-reps), and
    the per-run figures under "runs"."""
    first = load_json(os.path.join(cdir, f"{e}.search.json"))
    if not first:
        return {}, None
    runs = [("", first)]
    for f in sorted(os.listdir(cdir)):
        if f.startswith(f"{e}.search.r") and f.endswith(".json"):
            sfx = f[len(f"{e}.search"):-len(".json")]
            js = load_json(os.path.join(cdir, f))
            if js:
                runs.append((sfx, js))
    if len(runs) == 1:
        return first, None
    out = dict(first)
    lat = {}
    for k in ("10", "100"):
        per = [r.get("latency", {}).get(k, {}) for _, r in runs]
        lat[k] = {m: median(p.get(m) for p in per)
                  for m in ("p50_us", "p99_us", "mean_us", "max_us")}
        lat[k]["n"] = per[0].get("n")
    out["latency"] = lat
    out["qps"] = median(r.get("qps") for _, r in runs)
    out["runs"] = [{"p50_us_k10": r.get("latency", {}).get("10", {}).get("p50_us"),
                    "p99_us_k10": r.get("latency", {}).get("10", {}).get("p99_us"),
                    "qps": r.get("qps")} for _, r in runs]
    base = os.path.join(cdir, f"{e}.top10.tsv")
    same = all(os.path.exists(os.path.join(cdir, f"{e}.top10{sfx}.tsv")) and
               open(base).read() == open(os.path.join(cdir, f"{e}.top10{sfx}.tsv")).read()
               for sfx, _ in runs[1:]) if os.path.exists(base) else None
    out["runs_same_top10"] = same
    return out, len(runs)


def fmt(v, digits=0):
    if v is None:
        return "–"
    if isinstance(v, float) and digits == 0 and abs(v) < 10:
        return f"{v:.1f}" if abs(v) >= 1 else f"{v:.2f}"
    return f"{v:,.{digits}f}"


def mb(v):
    return None if v is None else v / 2**20


def index_bytes(b):
    """What search reads: skilldb's index tables (postings, doc tables, dfs)
    when the driver reports them apart from the records (the text, which
    skilldb stores in the same RocksDB; Lucene's column likewise leaves its
    stored text out)."""
    return b.get("index_table_bytes", b.get("index_bytes"))


def table(rows, machine, threads):
    head = ("| corpus | engine | build s | index MiB | open ms | peak RSS MiB "
            "build / search | p50 µs k10 | p99 µs k10 | p50 µs k100 | "
            f"p99 µs k100 | QPS k10 ({threads} thr) | overlap@10 | load "
            "during search | notes |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        b, s = r["build"], r["search"]
        lat = s.get("latency", {})
        l10, l100 = lat.get("10", {}), lat.get("100", {})
        notes = []
        if r["engine"] == "lucene++":
            notes.append("TF-IDF, speed reference only")
        if s.get("overhead_us") is not None:
            notes.append(f"incl. ~{s['overhead_us']:.1f} µs Python binding")
        if r["engine"] == "bm25s":
            notes.append("pure Python/numba library")
        if b.get("index_bytes_with_positions"):
            notes.append(f"with positions {mb(b['index_bytes_with_positions']):.1f} MiB"
                         f", with stored text {mb(b['index_bytes_with_stored_text']):.1f} MiB")
        if b.get("index_table_bytes") is not None:
            notes.append(f"with the records (text) {mb(b['index_bytes']):.1f} MiB")
        if s.get("runs"):
            p50s = " / ".join(fmt(x["p50_us_k10"], 1) for x in s["runs"])
            notes.append(f"median of {len(s['runs'])} search runs (p50 k10 "
                         f"each: {p50s} µs"
                         + ("" if s.get("runs_same_top10") else
                            "; TOP-10 DIFFERED BETWEEN RUNS") + ")")
        if r["status"]:
            notes.append(r["status"])
        ov = r["overlap10"]
        ov_s = "–" if ov is None else (f"{ov:.3f}" + (" (vs ref)" if r["overlap_vs"] == "ref" else ""))
        corpus = f"{r['corpus']} ({fmt(r['n_docs'])} docs)" if r["n_docs"] else r["corpus"]
        ld = r.get("load", {}).get("search")
        ld_s = f"{ld[0]:.1f}→{ld[1]:.1f}" if ld else "–"
        rss = f"{fmt(mb(b.get('peak_rss_bytes')))} / {fmt(mb(s.get('peak_rss_bytes')))}"
        lines.append(
            f"| {corpus} | {r['engine']} | {fmt(b.get('build_s'), 1)} | "
            f"{fmt(mb(index_bytes(b)), 1)} | {fmt(s.get('open_ms'), 1)} | "
            f"{rss} | {fmt(l10.get('p50_us'), 1)} | {fmt(l10.get('p99_us'), 0)} | "
            f"{fmt(l100.get('p50_us'), 1)} | {fmt(l100.get('p99_us'), 0)} | "
            f"{fmt(s.get('qps'), 0)} | {ov_s} | {ld_s} | {'; '.join(notes)} |")
    return "\n".join(lines)


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    corpora = list(dict.fromkeys(r["corpus"] for r in rows))
    engines = [e for e in ENGINE_ORDER if any(r["engine"] == e for r in rows)]
    metrics = [("p50 latency, top-10 (µs, log)", lambda r: r["search"].get("latency", {}).get("10", {}).get("p50_us"), True),
               ("p99 latency, top-10 (µs, log)", lambda r: r["search"].get("latency", {}).get("10", {}).get("p99_us"), True),
               ("QPS top-10, all cores (log)", lambda r: r["search"].get("qps"), True),
               ("build time (s, log)", lambda r: r["build"].get("build_s"), True),
               ("index size (MiB, log)", lambda r: mb(index_bytes(r["build"])), True),
               ("overlap@10 with skilldb", lambda r: r["overlap10"], False)]
    fig, axes = plt.subplots(3, 2, figsize=(14, 13))
    width = 0.8 / max(1, len(engines))
    cmap = plt.get_cmap("tab10")
    for ax, (title, get, log) in zip(axes.flat, metrics):
        for j, e in enumerate(engines):
            xs, ys = [], []
            for i, c in enumerate(corpora):
                for r in rows:
                    if r["corpus"] == c and r["engine"] == e and get(r):
                        xs.append(i + (j - (len(engines) - 1) / 2) * width)
                        ys.append(get(r))
            ax.bar(xs, ys, width, label=e, color=cmap(j))
        ax.set_title(title)
        ax.set_xticks(range(len(corpora)))
        ax.set_xticklabels(corpora, rotation=15)
        if log:
            ax.set_yscale("log")
        ax.grid(axis="y", alpha=0.3)
    axes.flat[0].legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def main():
    run_dir = sys.argv[1]
    machine = load_json(os.path.join(run_dir, "machine.json")) or {}
    run = load_json(os.path.join(run_dir, "run.json")) or {}
    rows = collect(run_dir)
    checks = {c: load_json(os.path.join(run_dir, c, "exact_check.json"))
              for c in os.listdir(run_dir)
              if os.path.exists(os.path.join(run_dir, c, "exact_check.json"))}
    with open(os.path.join(run_dir, "results.json"), "w") as f:
        json.dump({"machine": machine, "run": run, "rows": rows,
                   "exact_checks": checks}, f, indent=1)
    threads = machine.get("nproc", "?")
    md = [f"# Benchmark results ({run.get('date', '?')})", "",
          f"Command: `{run.get('command', '?')}`  ",
          f"Machine: {machine.get('cpu', '?')}, {machine.get('nproc', '?')} "
          f"cores, {machine.get('mem_gb', '?')} GB RAM, "
          f"{machine.get('os', '?')}, kernel {machine.get('kernel', '?')}  ",
          f"Versions: {machine.get('versions', '?')}", "",
          table(rows, machine, threads), ""]
    for c, chk in sorted(checks.items()):
        if chk:
            md.append(f"Exact check of skilldb against the Python reference "
                      f"on {c}: {chk['queries'] - chk['mismatched_queries']}/"
                      f"{chk['queries']} queries agree (relative tolerance "
                      f"{chk['rel_tolerance']}).")
            md += [f"- {x}" for x in chk["examples"]]
    md.append("")
    with open(os.path.join(run_dir, "results.md"), "w") as f:
        f.write("\n".join(md))
    try:
        plot(rows, os.path.join(run_dir, "results.png"))
    except Exception as e:  # the table still stands without the plot
        print(f"plot failed: {e}", file=sys.stderr)
    print("\n".join(md))


if __name__ == "__main__":
    main()
