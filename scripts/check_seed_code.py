#!/usr/bin/env python3
"""Check the code patterns of seed skills.

Usage: check_seed_code.py FILE.jsonl [FILE.jsonl ...]

For every record:
  - extra.code_kind == "cuda-tu": the code is written to a temporary .cu file
    and compiled with nvcc (-std=c++17 -c, output discarded). The target is
    -arch=sm_90 unless extra.nvcc_arch names another one; an "a" target
    (e.g. sm_90a) is passed as -gencode=arch=compute_90a,code=sm_90a.
    Any error, and any output on stderr (a warning), is a failure.
    With extra.register_budget ({"threads", "min_blocks_per_sm",
    "warpgroup_registers"}: a setmaxnreg split), ptxas -v must report the
    launch register count that the budget is computed from
    (launch_registers(): 65536 / (threads x min_blocks) rounded down to a
    multiple of 8, at most 255), and the split must fit the CTA's launch
    allocation, threads x that count (not the 65536-register file).
    With extra.nvcc_rejects ({"arch", "error"}), compiling for that older
    target must fail with that text in the error (the skill says it does).
  - extra.code_kind == "triton" (or language == "triton" with no code_kind):
    the code must parse as Python (ast.parse).
Prints one line per failure and exits non-zero if there was any.
The nvcc binary is $NVCC, else /usr/local/cuda/bin/nvcc, else nvcc on PATH.
Python 3 standard library only.
"""
import ast
import json
import os
import re
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


def launch_registers(threads, min_blocks):
    """Registers per thread ptxas gives a kernel with
    __launch_bounds__(threads, min_blocks) that uses setmaxnreg: the whole
    cap, 65536 / (threads x min_blocks) rounded down to a multiple of 8
    (allocation granularity), at most 255."""
    return min(255, (65536 // (threads * min_blocks)) // 8 * 8)


def budget_error(budget, ptxas_regs):
    """None if the setmaxnreg split of `budget` fits the CTA's launch
    allocation and ptxas reported the count that allocation assumes."""
    threads = budget["threads"]
    regs = launch_registers(threads, budget.get("min_blocks_per_sm", 1))
    split = budget["warpgroup_registers"]
    if 128 * len(split) != threads:
        return "register_budget: %d warpgroups but %d threads" % (len(split), threads)
    if not ptxas_regs or any(r != regs for r in ptxas_regs):
        return ("register_budget: ptxas reports %s registers per thread, the budget "
                "assumes %d" % (ptxas_regs, regs))
    need = 128 * sum(split)
    if need > threads * regs:
        return ("register_budget: the split needs %d registers, the CTA's launch "
                "allocation is %d x %d = %d" % (need, threads, regs, threads * regs))
    return None


def compile_mode(device_only):
    """nvcc's mode flag: -c (the whole pipeline: the front end over the
    whole translation unit, device code through ptxas, and the host
    compiler's pass over the host code) or, device_only, -cubin (the same
    front end, so errors in host code are still reported, and the device
    code through ptxas; the host compiler's pass, about two thirds of
    nvcc's time here, is left out)."""
    return "-cubin" if device_only else "-c"


def check_cuda(nvcc, code, arch, tmpdir, tag, budget=None, rejects=None,
               device_only=False):
    src = os.path.join(tmpdir, "check.cu")
    with open(src, "w", encoding="utf-8") as f:
        f.write(code)
    mode = compile_mode(device_only)
    cmd = [nvcc] + arch_flags(arch) + ["-std=c++17", mode, src, "-o", os.devnull]
    if budget:
        cmd += ["-Xptxas", "-v"]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    if proc.returncode != 0:
        return "%s: nvcc failed (%s): %s" % (tag, " ".join(arch_flags(arch)),
                                             first_lines(proc.stderr + proc.stdout))
    out = (proc.stderr + proc.stdout).strip()
    if budget:
        # ptxas -v prints "ptxas info" lines (and indented detail lines);
        # anything else is still a warning.
        lines = out.splitlines()
        regs = [int(m.group(1)) for m in (re.search(r"Used (\d+) registers", l) for l in lines) if m]
        out = "\n".join(l for l in lines if not l.startswith("ptxas info")
                        and not l.startswith("    ")).strip()
        if not out:
            err = budget_error(budget, regs)
            if err:
                return "%s: %s" % (tag, err)
    if out:
        return "%s: nvcc warnings: %s" % (tag, first_lines(out))
    if rejects:
        old = [nvcc] + arch_flags(rejects["arch"]) + ["-std=c++17", mode, src, "-o", os.devnull]
        proc = subprocess.run(old, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True)
        if proc.returncode == 0:
            return "%s: compiles for %s, which the skill says is an error" % (tag, rejects["arch"])
        if rejects["error"] not in proc.stderr + proc.stdout:
            return "%s: the %s error is not the one the skill states (%s): %s" % (
                tag, rejects["arch"], rejects["error"], first_lines(proc.stderr))
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
                            err = check_cuda(nvcc, code, extra.get("nvcc_arch"), tmpdir, tag,
                                             extra.get("register_budget"), extra.get("nvcc_rejects"))
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
