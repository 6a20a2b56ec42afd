#!/usr/bin/env python3
"""Fills the runners' bytecode cache: imports what a runner imports (torch,
the profiler's set-up, torch's C++ extension builder, Triton, the runner's
own modules) with PYTHONPYCACHEPREFIX set by the caller, so each module's
bytecode is written there once.

Why: a runner is a fresh interpreter per answer, confined with everything
read-only but its scratch directory. Where the installed packages carry no
bytecode (pip's --no-compile, PYTHONDONTWRITEBYTECODE in images, a
read-only site-packages), every runner compiled torch's and sympy's sources
again: on the H100 machine (2026-12-06c) the profiler's first set-up alone
took 4.9-6.7 s of CPU per runner, most of it compiling modules it imports
(torch._dynamo, sympy, torch.distributed.fsdp).

The verifier runs this once per process and cache (Evaluator::Make),
outside the sandbox: it runs no answer's code, only the interpreter's
installed packages and this directory's modules. Runners get the cache
read-only, so no answer can change the bytecode another runner loads.

Prints one JSON line: {"ok", "modules" (loaded in all), "seconds",
"not_loaded" (the optional modules this interpreter lacks, with why)}.
"""

import importlib
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    t0 = time.perf_counter()
    sys.path.insert(0, HERE)
    import torch
    missing = []
    for name in ("kb_wire", "kb_inputs", "kb_guard", "kb_caller", "kb_load", "kb_split",
                 "kb_runner", "torch.utils.cpp_extension", "torch.utils.flop_counter",
                 "concurrent.futures", "numpy", "triton", "triton.language",
                 "triton.compiler.compiler", "triton.runtime.driver",
                 "triton.backends.nvidia.driver"):
        try:
            importlib.import_module(name)
        except Exception as e:  # optional: Triton on the CPU, numpy
            missing.append("%s (%s)" % (name, type(e).__name__))
    # The profiler's first set-up imports most of what it costs (its own
    # modules, torch._dynamo, sympy); host work only, no device touched.
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU]):
        torch.empty(1).add_(1)
    print(json.dumps({"ok": True, "modules": len(sys.modules),
                      "seconds": round(time.perf_counter() - t0, 3),
                      "not_loaded": missing}))


if __name__ == "__main__":
    main()
