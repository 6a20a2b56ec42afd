#!/usr/bin/env python3
"""Compile time of a thunk file (kb_caller.thunk_source) after each header
the build may start it with, each precompiled as a cold burst makes it
(kb_load.make_pch): torch/types.h (every thunk file until 2026-12-06) and
ATen/core/Tensor.h (the thunks of C++ sources that only declare their
functions, kb_caller.light_eligible). Also an empty file after each, the
headers' own cost, and a file whose C++ sources define a host function
(a split's host part joined to them) after torch/types.h. Where torch
has CUDA, also an empty file that includes ATen/cuda/CUDAContext.h after
torch/types.h (what KernelBench answers include for the current stream: a
header the precompiled one does not hold), and that file again after a
header precompiled with it (torch/types.h then ATen/cuda/CUDAContext.h,
under the CUDA build's flags): what holding it in the precompiled header
would save each CUDA answer's host part. Runs on this machine's torch
(CPU is enough but for that case: nothing is linked or run); the compiler
and flags are torch's own for a load_inline build
(kb_load._torch_build_vars).

  python3 thunk_headers.py [--runs N] [--flags=-O3] [--json]

Prints the median wall of N compiles per case and the ratio to
torch/types.h's.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "runner"))

import kb_caller  # noqa: E402
import kb_load  # noqa: E402

# What KernelBench answers' cpp_sources usually are: declarations of the
# functions their .cu defines.
DECLARED = ("#include <torch/extension.h>\n"
            "torch::Tensor forward(torch::Tensor a, torch::Tensor b, double s);\n"
            "std::vector<torch::Tensor> two(torch::Tensor a, int64_t k);\n")
FUNCTIONS = ["forward", "two"]
# A split build whose host part joins the C++ sources (kb_load._build_split:
# C++ and CUDA flags at one -O level): the host functions defined, the
# kernels' launchers declared. Such a file starts with torch/types.h.
JOINED = ("#include <torch/extension.h>\n"
          "void launch_scaled(const float* a, const float* b, float* out, double s,"
          " int64_t n);\n"
          "torch::Tensor forward(torch::Tensor a, torch::Tensor b, double s) {\n"
          "  TORCH_CHECK(a.sizes() == b.sizes(), \"shapes differ\");\n"
          "  auto out = torch::empty_like(a);\n"
          "  launch_scaled(a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), s,"
          " a.numel());\n"
          "  return out;\n"
          "}\n"
          "std::vector<torch::Tensor> two(torch::Tensor a, int64_t k) { return {a, a * k}; }\n")


def timed(v, src, pch, runs, what):
    """The median wall of `runs` compiles of `src` after the precompiled
    header `pch` with the build variables `v`; exits naming `what` if one
    fails."""
    cmd = kb_load._cxx_command(v, "thunk_headers", src, src + ".o", pch,
                               ["-I", kb_caller.HERE, "-Werror=invalid-pch"])
    walls = []
    for _ in range(runs):
        t = time.time()
        done = subprocess.run(cmd, capture_output=True, text=True)
        walls.append(time.time() - t)
        if done.returncode != 0:
            sys.exit("%s did not compile:\n%s" % (what, done.stderr[-2000:]))
    return statistics.median(walls)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--flags", default="", help="the answer's extra_cflags, e.g. --flags=-O3 (a value that starts with a dash needs the =)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if a.runs < 1:
        ap.error("--runs must be at least 1")
    user = a.flags.split()
    sub = kb_load.pch_variant(user)
    if sub is None:
        ap.error("--flags: no precompiled variant suits %r (kb_load.PCH_VARIANTS)" % a.flags)
    assert kb_caller.light_eligible(DECLARED)
    root = tempfile.mkdtemp(prefix="thunk_headers_")
    t0 = time.time()
    kb_load.make_pch(os.path.join(root, "types"), variants=[sub] if sub else [],
                     headers=[kb_load.PCH_TYPES, kb_load.PCH_TENSOR])
    made_s = time.time() - t0
    v = kb_load._torch_build_vars(os.path.join(root, "probe"), False, user)
    import torch
    v_cuda = None
    if torch.version.cuda and torch.cuda.is_available():
        v_cuda = kb_load._torch_build_vars(os.path.join(root, "probe_cuda"), True, user)
    cases = []
    for header, light in ((kb_load.PCH_TYPES, False), (kb_load.PCH_TENSOR, True)):
        pch = os.path.join(root, "types", sub, header)
        files = [("thunks", kb_caller.thunk_source(DECLARED, FUNCTIONS, light)),
                 ("empty", kb_caller.thunk_source("", [], light))]
        if not light:
            files.append(("joined", kb_caller.thunk_source(JOINED, FUNCTIONS)))
            if v_cuda:
                files.append(("cuda_context", kb_caller.thunk_source(
                    "#include <ATen/cuda/CUDAContext.h>\n", [], light)))
        for what, text in files:
            src = os.path.join(root, "%s_%s.cpp" % (what, light))
            with open(src, "w") as f:
                f.write(text)
            median = timed(v_cuda if what == "cuda_context" else v, src, pch, a.runs,
                           "%s after %s" % (what, header))
            cases.append({"file": what, "header": kb_load.PCH_INCLUDES[header],
                          "median_s": median, "runs": a.runs})
    if v_cuda:
        # torch/types.h and CUDAContext.h precompiled together with the CUDA
        # build's C++ flags (as make_pch makes its headers with the C++
        # build's), then the cuda_context file after it.
        import shlex
        flags = [f for f in shlex.split(v_cuda["cflags"]) + shlex.split(v_cuda.get("post_cflags", ""))
                 if not f.startswith("-DTORCH_EXTENSION_NAME=")] + user
        header = os.path.join(root, "cuda_pch", "skilldb_torch_types_cuda.h")
        os.makedirs(os.path.dirname(header), exist_ok=True)
        with open(header, "w") as f:
            f.write("#include <torch/types.h>\n#include <ATen/cuda/CUDAContext.h>\n")
        t = time.time()
        done = subprocess.run([v_cuda["cxx"]] + flags + ["-x", "c++-header", header, "-o",
                                                        header + ".gch"],
                              capture_output=True, text=True)
        made_cuda_s = time.time() - t
        if done.returncode != 0:
            sys.exit("the CUDAContext.h header did not precompile:\n" + done.stderr[-2000:])
        src = os.path.join(root, "cuda_context_held.cpp")
        with open(src, "w") as f:
            f.write(kb_caller.thunk_source("#include <ATen/cuda/CUDAContext.h>\n", [], False))
        median = timed(v_cuda, src, header, a.runs, "cuda_context after its own header")
        cases.append({"file": "cuda_context", "header": "torch/types.h + ATen/cuda/CUDAContext.h",
                      "median_s": median, "runs": a.runs, "pch_made_s": made_cuda_s})
    base = {c["file"]: c["median_s"] for c in cases if c["header"] == "torch/types.h"}
    for c in cases:
        b = base.get(c["file"])
        c["vs_types_h"] = c["median_s"] / b if b else None
    out = {"torch": torch.__version__, "flags": a.flags, "pch_made_s": made_s, "cases": cases}
    if a.json:
        print(json.dumps(out))
        return
    print("torch %s, flags %r; both headers precompiled in %.1f s" % (
        torch.__version__, a.flags, made_s))
    print("| file | after | median s | vs torch/types.h |")
    print("|---|---|---:|---:|")
    for c in cases:
        print("| %s | %s | %.2f | %.2f |" % (c["file"], c["header"], c["median_s"],
                                            c["vs_types_h"] or 0))


if __name__ == "__main__":
    main()
