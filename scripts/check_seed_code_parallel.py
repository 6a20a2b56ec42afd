#!/usr/bin/python3
"""Check the code patterns of seed skills on a small process pool (for ctest).

Usage: check_seed_code_parallel.py [--jobs N] [--only cuda|triton]
                                   [--skip-without-nvcc] [--device-only]
                                   [--cache FILE] FILE.jsonl|DIR [...]

A directory stands for the *.jsonl files in it.

The checks are exactly those of check_seed_code.py (same directory), whose
functions this script reuses: every `cuda-tu` pattern compiles with nvcc for
its target (sm_90 unless extra.nvcc_arch says otherwise) without errors or
warnings, and every `triton` pattern parses as Python. Only the scheduling
differs: the ~140 nvcc runs (about 1 s of CPU each) are spread over N worker
processes, so the check stays within a couple of minutes on a 2-core machine.

--jobs N              worker processes (default: min(2, CPUs))
--only cuda|triton    check one kind only (ctest runs them as two tests)
--skip-without-nvcc   exit 77 (ctest's skip code) when nvcc is not found
                      instead of failing every cuda-tu pattern
--device-only         nvcc -cubin instead of -c: the front end over the whole
                      file (host code errors included) and device code
                      generation through ptxas, without the host compiler's
                      pass over the host code (about 3x faster; ctest's mode)
--cache FILE          remember patterns that compiled cleanly (keyed by a
                      SHA-256 of nvcc's version, the target and the code) and
                      skip them next time, so a rerun after editing one skill
                      compiles one file; failures are never cached

Exit status: 0 all good, 1 a failure, 2 usage, 77 skipped.
Python 3 standard library only; run it with /usr/bin/python3.
"""
import argparse
import ast
import concurrent.futures
import hashlib
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_seed_code  # noqa: E402  (the checks themselves)

SKIP = 77


def expand(paths):
    """Directories stand for the *.jsonl files in them, in name order."""
    for path in paths:
        if os.path.isdir(path):
            for name in sorted(os.listdir(path)):
                if name.endswith(".jsonl"):
                    yield os.path.join(path, name)
        else:
            yield path


def read_records(paths):
    """Yields (tag, kind, code, nvcc_arch, register_budget, nvcc_rejects) per record; kind "error" for a
    line that is not a JSON object (tag is then the message)."""
    for path in expand(paths):
        try:
            fh = open(path, encoding="utf-8")
        except OSError as e:
            yield ("%s: cannot open: %s" % (path, e), "error", None, None, None, None)
            continue
        with fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except ValueError as e:
                    yield ("%s:%d: invalid JSON: %s" % (path, lineno, e),
                           "error", None, None, None, None)
                    continue
                if not isinstance(rec, dict):
                    yield ("%s:%d: not a JSON object" % (path, lineno),
                           "error", None, None, None, None)
                    continue
                extra = rec.get("extra") or {}
                kind = extra.get("code_kind")
                if kind is None and rec.get("language") == "triton":
                    kind = "triton"
                tag = "%s:%d:%s" % (path, lineno, rec.get("id", "?"))
                yield (tag, kind, rec.get("code") or "", extra.get("nvcc_arch"),
                       extra.get("register_budget"), extra.get("nvcc_rejects"))


def compile_one(nvcc, tag, code, arch, budget, rejects, device_only):
    # Each task gets its own directory: check_cuda writes check.cu there.
    with tempfile.TemporaryDirectory(prefix="seedcheck") as tmpdir:
        try:
            return check_seed_code.check_cuda(nvcc, code, arch, tmpdir, tag, budget, rejects,
                                              device_only)
        except ValueError as e:
            return "%s: %s" % (tag, e)


def parse_one(tag, code):
    try:
        ast.parse(code)
    except SyntaxError as e:
        return "%s: triton code does not parse: line %s: %s" % (tag, e.lineno,
                                                                e.msg)
    return None


def nvcc_version(nvcc):
    try:
        return subprocess.run([nvcc, "--version"], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT,
                              universal_newlines=True).stdout
    except OSError:
        return ""


def cache_key(version, mode, code, arch, budget, rejects):
    h = hashlib.sha256()
    for part in (version, mode, arch or "sm_90", code, json.dumps(budget, sort_keys=True),
                 json.dumps(rejects, sort_keys=True)):
        h.update(part.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()


def load_cache(path):
    if not path:
        return set()
    try:
        with open(path, encoding="utf-8") as f:
            return set(json.load(f))
    except (OSError, ValueError, TypeError):
        return set()


def save_cache(path, keys):
    """Writes the cache whole (a temporary file renamed over it, so a reader
    or a second writer never sees half of one); a cache that cannot be
    written only costs the next run its compiles."""
    if not path:
        return
    tmp = "%s.%d.tmp" % (path, os.getpid())
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(sorted(keys | load_cache(path)), f)
        os.replace(tmp, path)
    except OSError as e:
        print("note: cache %s not written: %s" % (path, e), file=sys.stderr)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int,
                        default=min(2, os.cpu_count() or 1))
    parser.add_argument("--only", choices=("cuda", "triton"))
    parser.add_argument("--skip-without-nvcc", action="store_true")
    parser.add_argument("--device-only", action="store_true")
    parser.add_argument("--cache")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args(argv[1:])
    want_cuda = args.only in (None, "cuda")
    want_triton = args.only in (None, "triton")

    nvcc = check_seed_code.find_nvcc() if want_cuda else None
    if want_cuda and (nvcc is None or not os.path.exists(nvcc)):
        if args.skip_without_nvcc:
            print("nvcc not found (%s): skipping the CUDA compile check"
                  % (nvcc or "$NVCC, /usr/local/cuda/bin/nvcc, PATH"))
            return SKIP
        print("nvcc not found")
        return 1

    failures = []
    counts = {"cuda-tu": 0, "triton": 0}
    pending = []  # (cache key, future)
    version = nvcc_version(nvcc) if want_cuda else ""
    passed = load_cache(args.cache)
    cached = set()
    jobs = max(1, args.jobs)
    with concurrent.futures.ProcessPoolExecutor(max_workers=jobs) as pool:
        for tag, kind, code, arch, budget, rejects in read_records(args.files):
            if kind == "error":
                failures.append(tag)
            elif kind == "cuda-tu" and want_cuda:
                counts["cuda-tu"] += 1
                key = cache_key(version, check_seed_code.compile_mode(args.device_only),
                                code, arch, budget, rejects)
                if key in passed:
                    cached.add(key)
                    continue
                pending.append((key, pool.submit(compile_one, nvcc, tag, code,
                                                 arch, budget, rejects,
                                                 args.device_only)))
            elif kind == "triton" and want_triton:
                counts["triton"] += 1
                err = parse_one(tag, code)
                if err:
                    failures.append(err)
        for key, future in pending:
            err = future.result()
            if err:
                failures.append(err)
            else:
                cached.add(key)
    if want_cuda:
        save_cache(args.cache, cached)
    for line in failures:
        print(line)
    print("checked %d cuda-tu (nvcc %s; %d compiled, the rest unchanged since a clean"
          " compile), %d triton with %d job(s); %d failure(s)"
          % (counts["cuda-tu"], check_seed_code.compile_mode(args.device_only),
             len(pending), counts["triton"], jobs,
             len(failures)))
    if counts["cuda-tu"] + counts["triton"] == 0:
        print("no pattern of the requested kind: wrong files?")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
