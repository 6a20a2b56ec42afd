"""What a call costs through the generic caller against load_inline's own
binding of the same C++ functions (kb_caller): the conversions run inside
every timed call of an answer, so their cost is part of its speedup.

    PYTHONPATH=... python3 verify/kernelbench/bench/caller_overhead.py [--calls N] [--rounds R]

Builds (in a temporary directory) the caller, a binding with load_inline
and the thunks of the same sources, then times R interleaved rounds of N
calls of each function both ways (tiny tensors: the call is the cost) and
prints the median time per call of each, and their ratio, per function.
Needs a torch with its C++ headers and a compiler (the CPU is enough)."""

import argparse
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "runner"))

import torch  # noqa: E402
import torch.utils.cpp_extension as cpp_ext  # noqa: E402

import kb_caller  # noqa: E402
import kb_load  # noqa: E402

SOURCE = r'''
#include <torch/extension.h>
torch::Tensor same(torch::Tensor a) { return a; }
torch::Tensor pair(const torch::Tensor& a, const torch::Tensor& b) { return b; }
torch::Tensor scale(const torch::Tensor& a, double s, int64_t k, bool flag) { return a; }
torch::Tensor shape(torch::Tensor a, std::vector<int64_t> s) { return a; }
'''
FUNCTIONS = ["same", "pair", "scale", "shape"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=7)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="kb-caller-overhead-")
    root = os.path.join(work, "ext")
    os.makedirs(root)
    t0 = time.time()
    kb_caller.build_caller(root, cpp_ext.load_inline)
    print("caller built in %.1f s" % (time.time() - t0))
    binding = cpp_ext.load_inline("overhead_binding", [SOURCE], functions=FUNCTIONS,
                                  extra_cflags=["-O3"],
                                  build_directory=tempfile.mkdtemp(dir=work))
    shim = kb_load.ExtensionShim("build", os.path.join(work, "build"), cache=root)
    thunks = shim("overhead_thunks", [SOURCE], functions=FUNCTIONS, extra_cflags=["-O3"])
    assert shim.records[-1]["binding"].startswith("generic caller"), shim.records
    x = torch.ones(4)
    args = {"same": (x,), "pair": (x, x), "scale": (x, 2.0, 3, True), "shape": (x, [2, 2])}
    print("%-6s %14s %14s %8s" % ("call", "binding ns", "caller ns", "ratio"))
    for name in FUNCTIONS:
        f_b, f_t, arg = getattr(binding, name), getattr(thunks, name), args[name]
        times = {"b": [], "t": []}
        for _ in range(a.rounds):
            for which, f in (("b", f_b), ("t", f_t)):
                start = time.perf_counter_ns()
                for _ in range(a.calls):
                    f(*arg)
                times[which].append((time.perf_counter_ns() - start) / a.calls)
        mb, mt = statistics.median(times["b"]), statistics.median(times["t"])
        print("%-6s %14.0f %14.0f %8.2f" % (name, mb, mt, mt / mb))
    print("torch %s, medians of %d rounds of %d calls each, interleaved" % (
        torch.__version__, a.rounds, a.calls))


if __name__ == "__main__":
    main()
