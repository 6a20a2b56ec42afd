#!/usr/bin/env python3
"""Check the code patterns of seed skills.

Usage: check_seed_code.py FILE.jsonl [FILE.jsonl ...]

For every record:
  - extra.code_kind == "cuda-tu": the code is written to a temporary .cu file
    and compiled with nvcc (-std=c++17 -c, output discarded). The target is
    -arch=sm_90 unless extra.nvcc_arch names another one; an "a" target
    (e.g. sm_90a) is passed as -gencode=arch=compute_90a,code=sm_90a.
    Any error, and any output on stderr (a warning), is a failure.
  - extra.code_kind == "triton" (or language == "triton" with no code_kind):
    the code must parse as Python (ast.parse).
Prints one line per failure and exits non-zero if there was any.
The nvcc binary is $NVCC, else /usr/local/cuda/bin/nvcc, else nvcc on PATH.
Python 3 standard library only.
"""
import ast
import json
import os
import shutil
import subprocess
import sys
import tempfile


def find_nvcc():
    env = os.environ.get("NVCC")
    if env:
        return env
    default = "/usr/local/cuda/bin/nvcc"
    if os.path.exists(default):
        return default
    return shutil.which("nvcc")


def arch_flags(arch):
    arch = (arch or "sm_90").strip()
    if not arch.startswith("sm_"):
        raise ValueError("bad nvcc_arch %r" % arch)
    num = arch[3:]
    if num.endswith("a") or num.endswith("f"):
        return ["-gencode=arch=compute_%s,code=sm_%s" % (num, num)]
    return ["-arch=" + arch]


def first_lines(text, n=3):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return " | ".join(lines[:n])


def check_cuda(nvcc, code, arch, tmpdir, tag):
    src = os.path.join(tmpdir, "check.cu")
    with open(src, "w", encoding="utf-8") as f:
        f.write(code)
    cmd = [nvcc] + arch_flags(arch) + ["-std=c++17", "-c", src, "-o", os.devnull]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    if proc.returncode != 0:
        return "%s: nvcc failed (%s): %s" % (tag, " ".join(arch_flags(arch)),
                                             first_lines(proc.stderr + proc.stdout))
    out = (proc.stderr + proc.stdout).strip()
    if out:
        return "%s: nvcc warnings: %s" % (tag, first_lines(out))
    return None


def main(argv):
    if len(argv) < 2:
        print("usage: check_seed_code.py FILE.jsonl [...]", file=sys.stderr)
        return 2
    nvcc = find_nvcc()
    failures = 0
    counts = {"cuda-tu": 0, "triton": 0}
    with tempfile.TemporaryDirectory(prefix="seedcheck") as tmpdir:
        for path in argv[1:]:
            try:
                fh = open(path, encoding="utf-8")
            except OSError as e:
                print("%s: cannot open: %s" % (path, e))
                failures += 1
                continue
            with fh:
                for lineno, line in enumerate(fh, 1):
                    if not line.strip():
                        continue
                    try:
                        rec = json.loads(line)
                    except ValueError as e:
                        print("%s:%d: invalid JSON: %s" % (path, lineno, e))
                        failures += 1
                        continue
                    if not isinstance(rec, dict):
                        print("%s:%d: not a JSON object" % (path, lineno))
                        failures += 1
                        continue
                    tag = "%s:%d:%s" % (path, lineno, rec.get("id", "?"))
                    extra = rec.get("extra") or {}
                    kind = extra.get("code_kind")
                    if kind is None and rec.get("language") == "triton":
                        kind = "triton"
                    code = rec.get("code") or ""
                    if kind == "cuda-tu":
                        counts["cuda-tu"] += 1
                        if nvcc is None:
                            print("%s: nvcc not found" % tag)
                            failures += 1
                            continue
                        try:
                            err = check_cuda(nvcc, code, extra.get("nvcc_arch"), tmpdir, tag)
                        except ValueError as e:
                            err = "%s: %s" % (tag, e)
                        if err:
                            print(err)
                            failures += 1
                    elif kind == "triton":
                        counts["triton"] += 1
                        try:
                            ast.parse(code)
                        except SyntaxError as e:
                            print("%s: triton code does not parse: line %s: %s"
                                  % (tag, e.lineno, e.msg))
                            failures += 1
    print("checked %d cuda-tu, %d triton; %d failure(s)"
          % (counts["cuda-tu"], counts["triton"], failures), file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
