#!/usr/bin/env python3
"""Build time of KernelBench CUDA answers, split (kb_split) against whole.

Builds every answer given through the torch runner's build shim (the code
`kernelbench eval` runs in its build process), once per way, each in a
fresh directory with the cache off, one build at a time:
  split   the kernels through nvcc without torch's headers, the rest with
          the C++ sources (the default of the shim)
  light   the CUDA source whole, torch/extension.h replaced by torch/types.h
          (the shim's default before the split)
  whole   as written (--whole; about 60 s an answer)
The precompiled torch headers (torch/extension.h, torch/types.h) are made first and used by every way.
Needs a torch with CUDA headers and the CUDA toolkit; no GPU (nothing runs:
importing the built module is the end of a build). Prints a table and, with
--json, one object per answer and way.

  python3 build_split.py [--whole] [--json] ANSWER.py...
  (TORCH_CUDA_ARCH_LIST picks the target, 9.0 for the H100/H200 if unset)
"""

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "runner"))
os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "9.0")

import kb_load  # noqa: E402


def build(path, way, root, pch, cache=None):
    shim = kb_load.ExtensionShim("build", os.path.join(root, way), light_cuda_include=(way != "whole"),
                                 pch=pch, cache=cache, split=(way == "split"))
    kb_load.install_shim(shim)
    source = open(path).read()
    t0 = time.time()
    error = None
    try:
        exec(compile(source, path, "exec"), {"__name__": "answer"})
    except Exception as e:  # the table says so
        error = "%s: %s" % (type(e).__name__, str(e)[-300:])
    return {"answer": os.path.basename(path), "way": way, "seconds": round(time.time() - t0, 2),
            "error": error, "extensions": shim.records}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("answers", nargs="+")
    ap.add_argument("--whole", action="store_true", help="also build each answer as written")
    ap.add_argument("--split-only", action="store_true",
                    help="build split only (does it split, does it build; no ratio)")
    ap.add_argument("--generic-caller", action="store_true",
                    help="functions called through the generic caller's thunks (built first), "
                         "as `kernelbench eval` calls them, not a pybind11 binding per answer")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the build directories (printed)")
    args = ap.parse_args()
    root = tempfile.mkdtemp(prefix="skilldb_build_split_")
    try:
        t0 = time.time()
        pch = os.path.join(root, "pch")  # the headers' root, each in its directory
        for header, sub in kb_load.PCH_DIRS.items():
            kb_load.make_pch(os.path.join(pch, sub), headers=[header])
        print("precompiled torch headers in %.1f s" % (time.time() - t0), file=sys.stderr)
        cache = None
        if args.generic_caller:
            import kb_caller
            import torch.utils.cpp_extension as cpp_ext
            cache = os.path.join(root, "cache")
            t0 = time.time()
            kb_caller.build_caller(cache, cpp_ext.load_inline)
            print("generic caller in %.1f s" % (time.time() - t0), file=sys.stderr)
        ways = ["split"] if args.split_only else ["split", "light"] + (
            ["whole"] if args.whole else [])
        rows = []
        for path in args.answers:
            for way in ways:
                r = build(path, way, root, pch, cache)
                rows.append(r)
                print("%-32s %-6s %6.1f s %s" % (r["answer"], way, r["seconds"],
                      r["error"] or "; ".join("%s %s %s" % (e.get("split", ""), e.get("binding", ""),
                                                            e.get("split_error", ""))
                                      for e in r["extensions"])),
                      file=sys.stderr)
        if args.json:
            print(json.dumps(rows, indent=1))
            return
        built = [r["seconds"] for r in rows if r["way"] == "split" and not r["error"]]
        if built:  # the figure compared across changes (with --split-only too)
            print("median split build: %.2f s over %d answers" % (statistics.median(built),
                                                                 len(built)))
        print("| answer | " + " | ".join("%s s" % w for w in ways) + " | split / light | split says |")
        print("|---|" + "---|" * (len(ways) + 2))
        ratios = []
        for path in args.answers:
            name = os.path.basename(path)
            by = {r["way"]: r for r in rows if r["answer"] == name}
            cells = [("%.1f" % by[w]["seconds"]) if not by[w]["error"] else "failed" for w in ways]
            ok = "light" in by and not by["split"]["error"] and not by["light"]["error"]
            ratio = by["light"]["seconds"] / by["split"]["seconds"] if ok else None
            if ratio:
                ratios.append(ratio)
            says = "; ".join(str(e.get("split", "")) for e in by["split"]["extensions"])
            print("| %s | %s | %s | %s |" % (name, " | ".join(cells),
                  ("%.1fx" % ratio) if ratio else "-", says.replace("|", "/")))
        if ratios:
            print("\nmedian light/split: %.1fx over %d answers" % (statistics.median(ratios), len(ratios)))
    finally:
        if args.keep:
            print("build directories kept in %s" % root, file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
