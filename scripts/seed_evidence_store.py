#!/usr/bin/python3
"""Stores the GPU evidence of scripts/seed_evidence_gpu.sh in the seed library.

Run HERE (not on the GPU machine) after the device run:

    scripts/seed_evidence_store.py EVIDENCE [--seed-dir data/seed]
        [--map data/evidence/map.json] [--build-dir build-evidence]
        [--skilldb PATH] [--keep-db] [--vendor vendor.json]
        [--bench hopper.json]
    scripts/seed_evidence_store.py --annotate [--vendor vendor.json]
        [--bench hopper.json]

EVIDENCE is the evidence.tgz of the device run, or a folder holding
<skill id>.json reports (directly or under evidence/). --vendor is the
vendor.json of the same run (scripts/seed_vendor_bench.py: the task
reference, the candidate and the PyTorch/vendor call timed with one
protocol); --bench its hopper.json (scripts/seed_hopper_bench.py: the Hopper
skills' kernels against cuBLAS). --annotate stores no new report: it only
rewrites the `context` of the evidence already in the seed (and the Hopper
benchmarks), e.g. after a --vendor run or a change of data/evidence/.

Every evidence element of a mapped skill gets a `context` object naming its
baseline, the vendor baseline and the candidate (scripts/
seed_evidence_context.py); every Hopper benchmark becomes the skill's
extra.benchmarks (replacing extra.speedup_evidence = "not measured ...").

Steps:
 1. builds the CLI (cmake + ninja, target skilldb_cli, in --build-dir) unless
    --skilldb names a binary;
 2. creates a temporary library from the seed files (`skilldb init`, then one
    `skilldb import` of all the seed files concatenated in file-name order);
 3. for every map entry whose report passed, checks that the report belongs
    to the entry (same task, candidate_hash = SHA-256 of the candidate file
    as committed here, device class sm_90) and runs verified insertion:
    `skilldb propose SKILL.json --verifier replay --evidence REPORT --task T
    --dedup merge --policy device-class=sm_90 --json`, where SKILL.json is the
    seed skill itself (without its evidence field: the merge keeps the
    evidence the library already holds) -- an exact duplicate of itself, so
    the merge writes a new revision of the same id carrying the report;
    reports already stored (same candidate hash and finish time) are skipped;
 4. exports the library and writes each updated skill back into the seed file
    and line it came from: only the `evidence` field changes (placed before
    `extra`, as in data/README.md); every other line stays byte-identical;
 5. prints how many seed skills carry evidence.
"""
import argparse
import glob
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import seed_evidence_context  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd, **kw):
    return subprocess.run(cmd, text=True, capture_output=True, **kw)


def build_cli(build_dir):
    binary = os.path.join(build_dir, "cli", "skilldb")
    if not os.path.exists(os.path.join(build_dir, "build.ninja")):
        r = run(["cmake", "-S", ROOT, "-B", build_dir, "-G", "Ninja",
                 "-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DSKILLDB_BUILD_BENCHMARKS=OFF"])
        if r.returncode != 0:
            sys.exit("cmake configure failed:\n" + r.stdout[-3000:] + r.stderr[-3000:])
    jobs = os.environ.get("SKILLDB_JOBS", "2")
    r = run(["cmake", "--build", build_dir, "-j", jobs, "--target", "skilldb_cli"])
    if r.returncode != 0:
        sys.exit("build failed:\n" + r.stdout[-3000:] + r.stderr[-3000:])
    return binary


def load_reports(path, tmp):
    """Returns {skill id: report file path}."""
    if os.path.isfile(path):
        with tarfile.open(path) as tf:
            for m in tf.getmembers():
                if m.isfile() and m.name.endswith(".json") and "/" in m.name and \
                        os.path.dirname(m.name).endswith("evidence"):
                    data = tf.extractfile(m).read()
                    with open(os.path.join(tmp, os.path.basename(m.name)), "wb") as f:
                        f.write(data)
        folder = tmp
    else:
        folder = os.path.join(path, "evidence") if os.path.isdir(os.path.join(path, "evidence")) else path
    return {os.path.basename(p)[:-5]: p for p in glob.glob(os.path.join(folder, "*.json"))}


def read_seed(seed_dir):
    """[(file, [(line text, parsed object)])] in file-name order."""
    files = []
    for f in sorted(glob.glob(os.path.join(seed_dir, "*.jsonl"))):
        lines = []
        with open(f, encoding="utf-8") as fh:
            for line in fh.read().split("\n"):
                if line.strip():
                    lines.append((line, json.loads(line)))
        files.append((f, lines))
    return files


def with_evidence(obj, evidence):
    """obj with `evidence` replaced, placed before `extra` (README order)."""
    out = {}
    for k, v in obj.items():
        if k == "evidence":
            continue
        if k == "extra":
            out["evidence"] = evidence
        out[k] = v
    if "evidence" not in out:
        out["evidence"] = evidence
    return out


def annotate(obj, evidence, entries, baselines, vendor):
    """evidence with a fresh `context` on every element of a mapped entry
    (matched by candidate hash). Elements no entry describes are kept as
    they are (the seed test reports them)."""
    out = []
    for ev in evidence:
        ev = dict(ev)
        for e in entries:
            if e["skill"] != obj["id"] or e["task"] != ev.get("task"):
                continue
            try:
                ev["context"] = seed_evidence_context.build(e, ev, baselines, vendor.get(obj["id"]))
            except ValueError as why:
                print("note: %s: %s" % (obj["id"], why), file=sys.stderr)
                continue
            break
        out.append(ev)
    return out


def with_benchmarks(obj, bench_rows):
    """obj with extra.benchmarks from the Hopper run (correct rows only)."""
    rows = [r for r in bench_rows if r.get("skill") == obj["id"] and r.get("correct")]
    if not rows:
        return obj
    extra = dict(obj.get("extra") or {})
    extra["benchmarks"] = rows
    extra.pop("speedup_evidence", None)
    out = dict(obj)
    out["extra"] = extra
    return out


def load_json(path, default):
    return json.load(open(path)) if path else default


def rewrite_seed(seed, exported, entries, baselines, vendor, bench_rows):
    """Writes back every seed line whose evidence or benchmarks changed;
    returns the number of files rewritten."""
    changed_files = 0
    for f, lines in seed:
        new_lines, changed = [], False
        for text, obj in lines:
            ex = exported.get(obj["id"]) if exported is not None else obj
            ev = ex.get("evidence", []) if ex else []
            if ex is not None and exported is not None:
                diff = [k for k in obj if k not in ("evidence", "status") and ex.get(k) != obj[k]]
                if diff and ev != obj.get("evidence", []):
                    print("note: %s: exported %s differ from the seed line; only evidence is written"
                          % (obj["id"], ", ".join(diff)), file=sys.stderr)
            ev = annotate(obj, ev, entries, baselines, vendor)
            new = with_benchmarks(obj, bench_rows)
            if ev or "evidence" in obj:
                new = with_evidence(new, ev) if ev else new
            if new != obj:
                new_lines.append(json.dumps(new, ensure_ascii=False))
                changed = True
            else:
                new_lines.append(text)
        if changed:
            with open(f, "w", encoding="utf-8") as fh:
                fh.write("\n".join(new_lines) + "\n")
            changed_files += 1
    return changed_files


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("evidence", nargs="?",
                    help="evidence.tgz from the device run, or a folder of <skill>.json reports")
    ap.add_argument("--annotate", action="store_true",
                    help="store no report; rewrite the contexts (and benchmarks) only")
    ap.add_argument("--vendor", help="vendor.json of the device run (same-protocol PyTorch/vendor timings)")
    ap.add_argument("--bench", help="hopper.json of the device run (Hopper kernels against cuBLAS)")
    ap.add_argument("--baselines", default=os.path.join(ROOT, "data", "evidence", "baselines.json"))
    ap.add_argument("--seed-dir", default=os.path.join(ROOT, "data", "seed"))
    ap.add_argument("--map", default=os.path.join(ROOT, "data", "evidence", "map.json"))
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build-evidence"))
    ap.add_argument("--skilldb", help="use this skilldb binary instead of building one")
    ap.add_argument("--keep-db", action="store_true", help="keep the temporary library")
    args = ap.parse_args()
    entries = json.load(open(args.map))
    baselines = json.load(open(args.baselines))
    vendor = {r["skill"]: r for r in load_json(args.vendor, {"rows": []})["rows"]}
    bench_rows = load_json(args.bench, {"rows": []})["rows"]
    if args.annotate:
        n = rewrite_seed(read_seed(args.seed_dir), None, entries, baselines, vendor, bench_rows)
        print("%d seed file(s) rewritten" % n)
        return
    if not args.evidence:
        sys.exit("EVIDENCE is required unless --annotate is given")

    skilldb = args.skilldb or build_cli(args.build_dir)
    tmp = tempfile.mkdtemp(prefix="skilldb-evidence-")
    db = os.path.join(tmp, "library")
    try:
        reports = load_reports(args.evidence, tmp)
        seed = read_seed(args.seed_dir)
        by_id = {}
        for f, lines in seed:
            for i, (_, obj) in enumerate(lines):
                by_id[obj["id"]] = (f, i, obj)

        def cli(*a, stdin=None):
            return run([skilldb, "--db", db, "--json"] + list(a), input=stdin)

        r = cli("init")
        if r.returncode != 0:
            sys.exit("skilldb init failed: " + r.stderr)
        blob = "".join(open(f, encoding="utf-8").read() for f, _ in seed)
        r = cli("import", "-", "-m", "seed library", stdin=blob)
        if r.returncode != 0:
            sys.exit("skilldb import failed: " + r.stderr)

        stored, skipped = [], []
        for e in entries:
            sid, task, cand = e["skill"], e["task"], e["candidate"]
            rep_path = reports.get(sid)
            if rep_path is None:
                skipped.append((sid, "no report"))
                continue
            rep = json.load(open(rep_path))
            if not rep.get("passed"):
                skipped.append((sid, "verifier verdict: not passed"))
                continue
            if sid not in by_id:
                skipped.append((sid, "not a seed skill"))
                continue
            if rep.get("task") != task:
                skipped.append((sid, "report is for task %s" % rep.get("task")))
                continue
            src = open(os.path.join(ROOT, cand), "rb").read()
            if rep.get("candidate_hash") != hashlib.sha256(src).hexdigest():
                skipped.append((sid, "candidate_hash differs from %s as committed" % cand))
                continue
            if rep.get("device_class") != "sm_90":
                skipped.append((sid, "device class %s" % rep.get("device_class")))
                continue
            _, _, obj = by_id[sid]
            if any(ev.get("candidate_hash") == rep.get("candidate_hash") and
                   ev.get("finished_at_ms") == rep.get("finished_at_ms") for ev in obj.get("evidence", [])):
                skipped.append((sid, "already stored"))
                continue
            skill_json = os.path.join(tmp, sid + ".skill.json")
            with open(skill_json, "w", encoding="utf-8") as fh:
                json.dump({k: v for k, v in obj.items() if k != "evidence"}, fh, ensure_ascii=False)
            r = cli("propose", skill_json, "--verifier", "replay", "--evidence", rep_path, "--task", task,
                    "--dedup", "merge", "--policy", "device-class=sm_90",
                    "-m", "GPU evidence: %s on %s" % (os.path.basename(cand), task))
            try:
                out = json.loads(r.stdout)
            except ValueError:
                out = {}
            if r.returncode != 0 or out.get("outcome") != "accepted" or out.get("id") != sid:
                skipped.append((sid, "propose: %s %s" % (out.get("reasons") or r.stderr.strip(), out.get("id"))))
                continue
            stored.append((sid, rep["speedup"]["ratio"], rep["speedup"]["ci_low"], rep["speedup"]["ci_high"]))

        r = run([skilldb, "--db", db, "export"])
        if r.returncode != 0:
            sys.exit("skilldb export failed: " + r.stderr)
        exported = {}
        for line in r.stdout.splitlines():
            if line.strip():
                o = json.loads(line)
                exported[o["id"]] = o

        # Write back: only skills whose evidence (or benchmarks) changed.
        changed_files = rewrite_seed(seed, exported, entries, baselines, vendor, bench_rows)

        for sid, ratio, lo, hi in stored:
            print("stored   %-44s speedup %.3f  95%% CI [%.3f, %.3f]" % (sid, ratio, lo, hi))
        for sid, why in skipped:
            print("skipped  %-44s %s" % (sid, why))
        carrying = sum(1 for _, lines in read_seed(args.seed_dir) for _, o in lines if o.get("evidence"))
        print("%d report(s) stored, %d seed file(s) rewritten; %d seed skills now carry evidence"
              % (len(stored), changed_files, carrying))
    finally:
        if args.keep_db:
            print("temporary library kept at", db)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
