#!/usr/bin/env python3
"""Is a split answer's device code the device code of the answer built
whole? For each load_inline call with CUDA sources in the answers given,
compiles to PTX, with the nvcc flags torch's build of that call would use:
  whole   the CUDA sources as torch's load_inline writes its .cu (torch/types.h,
          cuda.h, cuda_runtime.h on top; torch/extension.h replaced by
          torch/types.h, as the shim's whole build does)
  split   kb_split's device part (kernels, device functions, launchers)
and compares every kernel (.entry) the whole build has, by name and body
(comments and debug lines left out). The launchers are host code: they
are not in the PTX; their call sites are kb_split's tests' business.
No GPU (nvcc -ptx); a torch with CUDA headers for the whole build.

  python3 split_ptx.py [--json] ANSWER.py...
"""

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "runner"))
os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "9.0")

import kb_load  # noqa: E402
import kb_split  # noqa: E402


class _Anything:
    """What the capturing load_inline returns: any attribute, any call."""

    def __getattr__(self, name):
        return _Anything()

    def __call__(self, *a, **k):
        return _Anything()


def captured_calls(path):
    """The load_inline calls the answer's module makes (nothing is built)."""
    import torch.utils.cpp_extension as cpp_ext
    calls = []

    def capture(name, cpp_sources, cuda_sources=None, functions=None, **kwargs):
        calls.append({"name": name, "cuda": kb_load._as_list(cuda_sources), "kwargs": kwargs})
        return _Anything()

    cpp_ext.load_inline = capture
    try:
        exec(compile(open(path).read(), path, "exec"), {"__name__": "answer"})
    except Exception:  # the calls made before the error are what is compared
        pass
    return calls


def entries(ptx):
    """{kernel name: its body} of a PTX file, comments and debug lines out."""
    out = {}
    for m in re.finditer(r"\.entry\s+(\w+)\s*\((.*?)\n\}", ptx, re.S):
        body = "\n".join(l for l in m.group(2).splitlines()
                         if l.strip() and not l.strip().startswith(("//", ".loc", ".file")))
        out[m.group(1)] = body
    return out


def ptx_of(source, workdir, tag, kwargs):
    v = kb_load._torch_build_vars(os.path.join(workdir, "probe"), True,
                                  kb_load._as_list(kwargs.get("extra_cflags")),
                                  kb_load._as_list(kwargs.get("extra_cuda_cflags")),
                                  kb_load._as_list(kwargs.get("extra_include_paths")))
    src = os.path.join(workdir, tag + ".cu")
    out = os.path.join(workdir, tag + ".ptx")
    with open(src, "w") as f:
        f.write(source)
    flags = [f for f in shlex.split(v.get("cuda_cflags", "")) if not f.startswith("-gencode")]
    arch = os.environ["TORCH_CUDA_ARCH_LIST"].split(";")[0].replace(".", "").replace("+PTX", "")
    done = subprocess.run(shlex.split(v["nvcc"]) + flags + ["-arch=compute_" + arch, "-ptx", src,
                          "-o", out] + shlex.split(v.get("cuda_post_cflags", "")),
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError((done.stderr or done.stdout)[-600:])
    return open(out).read()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("answers", nargs="+")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="skilldb_split_ptx_") as work:
        for path in args.answers:
            for i, call in enumerate(captured_calls(path)):
                row = {"answer": os.path.basename(path), "call": call["name"], "kernels": 0,
                       "same": 0, "differ": [], "missing": [], "status": ""}
                rows.append(row)
                if not call["cuda"]:
                    row["status"] = "no CUDA sources"
                    continue
                joined = "\n".join(call["cuda"])
                d = os.path.join(work, "%s_%d" % (os.path.basename(path), i))
                os.makedirs(d)
                try:  # as the build shim splits it
                    macros = kb_load.torch_macros(d, call["kwargs"]) \
                        if kb_split.has_conditions(joined) else None
                    parts = kb_split.split(joined, "ptx", macros)
                except kb_split.Unsplittable as e:
                    row["status"] = "not split: %s" % e
                    continue
                whole_src = "#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n" + \
                    kb_load._EXT_INCLUDE.sub("", joined)
                try:
                    whole = entries(ptx_of(whole_src, d, "whole", call["kwargs"]))
                    split = entries(ptx_of(parts.device, d, "split", call["kwargs"]))
                except RuntimeError as e:
                    row["status"] = "nvcc failed: %s" % str(e).strip().splitlines()[-1][:200]
                    continue
                row["kernels"] = len(whole)
                for name, body in whole.items():
                    if name not in split:
                        row["missing"].append(name)
                    elif split[name] != body:
                        row["differ"].append(name)
                    else:
                        row["same"] += 1
                row["status"] = "same" if row["same"] == len(whole) and whole else "DIFFERENT"
                print("%-36s %-24s %s (%d of %d kernels identical)" % (
                    row["answer"], row["call"][:24], row["status"], row["same"], row["kernels"]),
                    file=sys.stderr)
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        compared = [r for r in rows if r["kernels"]]
        print("%d load_inline calls compared, %d with identical PTX for every kernel; %d kernels, "
              "%d identical" % (len(compared), sum(r["status"] == "same" for r in compared),
                                sum(r["kernels"] for r in compared), sum(r["same"] for r in compared)))
        for r in rows:
            if r["status"] != "same":
                print("  %s %s: %s %s" % (r["answer"], r["call"], r["status"],
                                          ("differ %s missing %s" % (r["differ"], r["missing"]))
                                          if r["kernels"] else ""))


if __name__ == "__main__":
    main()
