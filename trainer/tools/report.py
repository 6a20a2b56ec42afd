#!/usr/bin/env python3
"""Charts and an HTML page of training runs (`skilldb train report`).

  report.py RUN_DIR
      RUN_DIR/steps.jsonl -> reward.png, speedup.png, skills.png,
      library.png, run_skills.png, utility.png and report.html in RUN_DIR.
  report.py --ablation OUT_DIR ARM=RUN_DIR[,RUN_DIR...] [ARM=...]
      the arms' mean policy reward per step side by side (mean over the
      seeds' runs, the band their min..max) -> OUT_DIR/ablation.png,
      ablation.html and ablation.json (the figures the README quotes).

Plots are matplotlib's (Agg, no display). Everything quoted from a run
(agent names, skill ids, reasons, the step lines) is HTML-escaped.
Lines of steps.jsonl that are not step objects (a torn last line, garbage)
are left out and listed ("dropped" in the printed JSON, and on the page);
exit status 1 with a message for a missing steps.jsonl or one without any
step object.
"""
import base64
import html
import io
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402


def fail(msg):
    print(f"report: {msg}", file=sys.stderr)
    sys.exit(1)


def read_steps(run_dir, dropped=None):
    """The step objects of RUN_DIR/steps.jsonl. A line that is not one (a
    torn last line of a run killed while writing, garbage) is left out and
    named in `dropped` ("line N: why"); no step object at all fails."""
    path = os.path.join(run_dir, "steps.jsonl")
    if not os.path.exists(path):
        fail(f"{path}: no such file")
    steps = []
    dropped = [] if dropped is None else dropped
    with open(path, "rb") as f:
        raw = f.read()
    lines = raw.decode("utf-8", errors="replace").split("\n")
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        last = n == len(lines)  # no newline after it
        try:
            j = json.loads(line)
        except json.JSONDecodeError:
            dropped.append(f"line {n}: torn last line ({len(line)} bytes without a newline)"
                           if last else f"line {n}: not JSON")
            continue
        if not isinstance(j, dict) or not isinstance(j.get("step"), (int, float)) \
                or isinstance(j.get("step"), bool):
            dropped.append(f'line {n}: not a step object (needs a numeric "step")')
            continue
        steps.append(j)
    if not steps:
        fail(f"{path}: no step object in {len(dropped)} line(s)"
             + (f" ({dropped[0]})" if dropped else ""))
    return steps


def get(d, *keys, default=None):
    for k in keys:
        if not isinstance(d, dict) or k not in d:
            return default
        d = d[k]
    return d


def png(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def plottable(v):
    """A value matplotlib can place: not a number -> NaN (a gap); beyond
    +-1e300 drawn at that bound (a span wider than a double overflows its
    tick arithmetic)."""
    try:
        v = float(v)
    except (TypeError, ValueError):
        return float("nan")
    if v != v:
        return v
    return max(-1e300, min(1e300, v))


def chart(title, xlabel, ylabel, series, kind="line"):
    """series: [(label, xs, ys)]; returns PNG bytes."""
    series = [(label, xs, [plottable(y) for y in ys]) for label, xs, ys in series]
    fig, ax = plt.subplots(figsize=(7, 3.6))
    width = 0.8 / max(1, len(series))
    for i, (label, xs, ys) in enumerate(series):
        if kind == "bar":
            ax.bar([x + (i - (len(series) - 1) / 2) * width for x in xs], ys,
                   width=width, label=label)
        else:
            ax.plot(xs, ys, marker="o", markersize=3, label=label)
    ax.set_title(title)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # steps are whole
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    if series:
        ax.legend(fontsize=8)
    return png(fig)


def run_charts(steps):
    xs = [s["step"] for s in steps]
    agents = sorted({a for s in steps for a in (get(s, "reward") or {})})
    charts = []
    charts.append(("reward.png", "Mean reward per agent", chart(
        "Mean reward per agent and step", "RL step", "mean reward (unitless)",
        [(a, [s["step"] for s in steps if get(s, "reward", a, "mean") is not None],
          [get(s, "reward", a, "mean") for s in steps if get(s, "reward", a, "mean") is not None])
         for a in agents])))
    charts.append(("speedup.png", "Verified speedups", chart(
        "Speedups of the policy's correct samples", "RL step",
        "speedup (x, reference time / candidate time)",
        [("mean", xs, [get(s, "speedup", "mean", default=0) for s in steps]),
         ("best", xs, [get(s, "speedup", "best", default=0) for s in steps])])))
    charts.append(("skills.png", "Summary Agent", chart(
        "Skills proposed, rejected and added by the Summary Agent", "RL step",
        "skills per step (count)",
        [(k, xs, [get(s, "skills", k, default=0) for s in steps])
         for k in ("proposed", "rejected", "added")], kind="bar")))
    charts.append(("library.png", "Library", chart(
        "Library size after each step", "RL step", "skills in the library (count)",
        [("size", xs, [get(s, "library", "size", default=0) for s in steps]),
         ("run-written", xs, [get(s, "run_skills", "count", default=0) for s in steps])])))
    with_x = [s["step"] for s in steps if get(s, "run_skills", "rollouts_with", default=0)]
    charts.append(("run_skills.png", "Rollouts with a run-written skill", chart(
        "Policy return of rollouts with and without a run-written skill",
        "RL step", "mean policy return (unitless)",
        [("with a run-written skill", with_x,
          [get(s, "run_skills", "return_with") for s in steps
           if get(s, "run_skills", "rollouts_with", default=0)]),
         # A step in which every rollout used one has no "without" point.
         ("without",
          [s["step"] for s in steps if get(s, "run_skills", "rollouts_without", default=1)],
          [get(s, "run_skills", "return_without", default=0) for s in steps
           if get(s, "run_skills", "rollouts_without", default=1)])])))
    ids = sorted({i for s in steps for i in (get(s, "run_skills", "utility") or {})})
    series = []
    for i in ids[:8]:
        pts = [(s["step"], get(s, "run_skills", "utility", i, "succeeded"))
               for s in steps if get(s, "run_skills", "utility", i) is not None]
        series.append((i[:40], [p[0] for p in pts], [p[1] for p in pts]))
    charts.append(("utility.png", "Per-skill utility", chart(
        "Run-written skills: successful uses so far (at most 8 skills)", "RL step",
        "successful applications (count, cumulative)", series)))
    return charts


def page(title, intro_rows, charts, steps_rows):
    out = ["<!doctype html><html><head><meta charset=\"utf-8\"><title>",
           html.escape(title), "</title><style>body{font-family:sans-serif;margin:2em}"
           "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;"
           "font-size:12px;vertical-align:top}</style></head><body><h1>",
           html.escape(title), "</h1><table>"]
    for k, v in intro_rows:
        out.append(f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>")
    out.append("</table>")
    for _, caption, data in charts:
        b64 = base64.b64encode(data).decode()
        out.append(f"<h2>{html.escape(caption)}</h2><img alt=\"{html.escape(caption, quote=True)}\" "
                   f"src=\"data:image/png;base64,{b64}\">")
    if steps_rows:
        out.append("<h2>Steps</h2><table><tr><th>step</th><th>line</th></tr>")
        for step, text in steps_rows:
            out.append(f"<tr><td>{html.escape(str(step))}</td><td><code>{html.escape(text)}</code></td></tr>")
        out.append("</table>")
    out.append("</body></html>\n")
    return "".join(out)


def report_run(run_dir):
    dropped = []
    steps = read_steps(run_dir, dropped)
    charts = run_charts(steps)
    files = []
    for name, _, data in charts:
        path = os.path.join(run_dir, name)
        with open(path, "wb") as f:
            f.write(data)
        files.append(path)
    reasons = {}
    for s in steps:
        for r, n in (get(s, "skills", "rejected_reasons") or {}).items():
            reasons[r] = reasons.get(r, 0) + n
    intro = [("steps", len(steps)),
             ("skills added", sum(get(s, "skills", "added", default=0) for s in steps)),
             ("library size at the end", get(steps[-1], "library", "size") if steps else "")]
    intro += [(f"rejected: {r}", n) for r, n in sorted(reasons.items())]
    intro += [("left out of steps.jsonl", d) for d in dropped]
    html_path = os.path.join(run_dir, "report.html")
    with open(html_path, "w", encoding="utf-8") as f:
        f.write(page("Training run", intro, charts,
                     [(s["step"], json.dumps(s, sort_keys=True)) for s in steps]))
    files.append(html_path)
    return {"steps": len(steps), "files": files, "html": html_path, "dropped": dropped}


def policy_curve(run_dir):
    return [get(s, "reward", "policy", "mean", default=0.0) for s in read_steps(run_dir)]


def report_ablation(out_dir, arms):
    os.makedirs(out_dir, exist_ok=True)
    fig, ax = plt.subplots(figsize=(8, 4.2))
    summary = {}
    for name, runs in arms:
        curves = [policy_curve(r) for r in runs]
        n = min(len(c) for c in curves)
        if n == 0:
            fail(f"arm {name}: a run has no steps")
        xs = list(range(1, n + 1))
        mean = [sum(c[i] for c in curves) / len(curves) for i in range(n)]
        lo = [min(c[i] for c in curves) for i in range(n)]
        hi = [max(c[i] for c in curves) for i in range(n)]
        line, = ax.plot(xs, mean, marker="o", markersize=3,
                        label=f"{name} (mean of {len(curves)} seeds)")
        ax.fill_between(xs, lo, hi, alpha=0.2, color=line.get_color())
        k = max(1, n // 4)
        firsts = [sum(c[:k]) / k for c in curves]
        lasts = [sum(c[n - k:n]) / k for c in curves]
        summary[name] = {"runs": runs, "steps": n, "window": k,
                         "first": firsts, "last": lasts,
                         "first_mean": sum(firsts) / len(firsts),
                         "last_mean": sum(lasts) / len(lasts),
                         "mean_curve": mean}
    ax.set_title("Mean policy reward per step, by skill-library arm")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("RL step")
    ax.set_ylabel("mean policy reward (unitless)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    data = png(fig)
    with open(os.path.join(out_dir, "ablation.png"), "wb") as f:
        f.write(data)
    with open(os.path.join(out_dir, "ablation.json"), "w") as f:
        json.dump(summary, f, indent=1)
    rows = []
    for name, s in summary.items():
        rows.append((f"{name}: steps 1-{s['window']} per seed",
                     " ".join(f"{v:.3f}" for v in s["first"])))
        rows.append((f"{name}: last {s['window']} steps per seed",
                     " ".join(f"{v:.3f}" for v in s["last"])))
    with open(os.path.join(out_dir, "ablation.html"), "w", encoding="utf-8") as f:
        f.write(page("Skill library ablation", rows,
                     [("ablation.png", "Mean policy reward (band: min..max over seeds)", data)], []))
    return summary


def main(argv):
    if len(argv) >= 2 and argv[0] == "--ablation":
        arms = []
        for a in argv[2:]:
            if "=" not in a:
                fail(f"'{a}': expected ARM=RUN_DIR[,RUN_DIR...]")
            name, runs = a.split("=", 1)
            arms.append((name, [r for r in runs.split(",") if r]))
        if not arms:
            fail("--ablation needs at least one ARM=RUN_DIR")
        s = report_ablation(argv[1], arms)
        print(json.dumps({k: {"first_mean": v["first_mean"], "last_mean": v["last_mean"],
                              "steps": v["steps"]} for k, v in s.items()}))
        return 0
    if len(argv) != 1:
        fail(__doc__.strip().splitlines()[2].strip())
    print(json.dumps(report_run(argv[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
