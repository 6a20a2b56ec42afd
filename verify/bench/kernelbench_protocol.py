#!/usr/bin/env python3
"""KernelBench's evaluation protocol, run on skilldb's candidates for comparison.

For each task this builds the task's team candidate as a PyTorch extension
with torch.utils.cpp_extension.load_inline (a fresh build directory, so the
build is cold), checks it against the PyTorch operator on 5 random inputs
and times it as KernelBench 423217d's eval.py and timing.py do:
torch.allclose with atol = rtol = 1e-4 (its fp32 tolerance; KernelBench used
1e-2 before 2c3dbda, Nov 2025, and KernelGYM still does), then 3 synced
warm-up calls, torch.cuda.empty_cache(), and 101 trials with the first
discarded, each: synchronize, a 256 MB L2 flush (KernelBench's
clear_l2_cache), CUDA events around one call on the current stream,
synchronize; statistics rounded to 3 significant digits. The reference is
timed the same way (5 warm-ups, under torch.no_grad, as
measure_ref_program_time). The wall time of the whole per-candidate
procedure (build + check + timing) gives candidates per minute.

KernelBench's own answers (a ModelNew module) are judged by
verify/kernelbench (skilldb kernelbench eval --protocol kernelbench); this
script stays for the C ABI candidates of skilldb's own tasks.

Usage: kernelbench_protocol.py --tasks softmax_rows_fp32,layernorm_fp32 --out FILE
"""

import argparse
import json
import math
import os
import pathlib
import sys
import tempfile
import time

import torch
from torch.utils.cpp_extension import load_inline

VERIFY = pathlib.Path(__file__).resolve().parents[1]

# The PyTorch operator each supported task stands for, and how to make its
# inputs (float32 on the GPU, at the task's timing dims).
TORCH_OPS = {
    "softmax_rows_fp32": (lambda x: torch.softmax(x, dim=-1),
                          lambda d: [torch.randn(d["N"], d["D"])]),
    "layernorm_fp32": (lambda x, g, b: torch.nn.functional.layer_norm(x, (x.shape[-1],), g, b, 1e-5),
                       lambda d: [torch.randn(d["N"], d["D"]), torch.randn(d["D"]), torch.randn(d["D"])]),
    "rmsnorm_fp32": (lambda x, w: x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w,
                     lambda d: [torch.randn(d["N"], d["D"]), torch.randn(d["D"])]),
    "matmul_fp32": (lambda a, b: torch.matmul(a, b),
                    lambda d: [torch.randn(d["M"], d["K"]), torch.randn(d["K"], d["N"])]),
    "transpose_fp32": (lambda x: x.t().contiguous(),
                       lambda d: [torch.randn(d["R"], d["C"])]),
    "bias_gelu_fp32": (lambda x, b: torch.nn.functional.gelu(x + b),
                       lambda d: [torch.randn(d["N"], d["D"]), torch.randn(d["D"])]),
    "attention_fp32": (lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(q, k, v),
                       lambda d: [torch.randn(d["B"], d["H"], d["S"], d["D"]) for _ in range(3)]),
}

WRAPPER = r"""
#include <cstring>
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

static Tensor skdb_make(const torch::Tensor& t) {
  Tensor out;
  std::memset(&out, 0, sizeof(out));
  out.data = t.data_ptr();
  out.dtype = SKDB_FLOAT32;
  out.ndim = static_cast<int32_t>(t.dim());
  for (int i = 0; i < out.ndim; ++i) {
    out.shape[i] = t.size(i);
    out.stride[i] = t.stride(i);
  }
  out.numel = t.numel();
  return out;
}

torch::Tensor run(std::vector<torch::Tensor> inputs, std::vector<int64_t> out_shape) {
  auto y = torch::empty(out_shape, inputs[0].options());
  std::vector<Tensor> in;
  for (auto& t : inputs) in.push_back(skdb_make(t));
  Tensor out = skdb_make(y);
  const int rc = launch(in.data(), static_cast<int>(in.size()), &out, 1,
                        c10::cuda::getCurrentCUDAStream().stream());
  TORCH_CHECK(rc == 0, "launch() returned ", rc);
  return y;
}
"""


# KernelBench 423217d (src/kernelbench/eval.py PRECISION_TOLERANCES).
TOLERANCE_FP32 = 1e-4


def time_like_kernelbench(fn, trials, warmup, discard_first=1, no_grad=False):
    """timing.py time_execution_with_cuda_event at 423217d."""
    ctx = torch.no_grad() if no_grad else torch.enable_grad()
    times = []
    with ctx:
        for _ in range(warmup):
            fn()
            torch.cuda.synchronize()
        torch.cuda.empty_cache()
        for trial in range(trials + discard_first):
            torch.cuda.synchronize()
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            dummy = torch.empty((32, 1024, 1024), dtype=torch.int64, device="cuda")
            dummy.fill_(42)  # clear_l2_cache: 256 MB
            del dummy
            start.record()
            fn()
            end.record()
            torch.cuda.synchronize()
            if trial >= discard_first:
                times.append(start.elapsed_time(end))
    return times


def output_shape(task, dims):
    shape = []
    for e in task["outputs"][0]["shape"]:
        shape.append(int(eval(str(e), {}, dict(dims))))  # dims only: trusted task data
    return shape


def evaluate(task_name, trials=100, warmup=3):
    task = json.loads((VERIFY / "tasks" / task_name / "task.json").read_text())
    dims = task["dims"]
    op, make_inputs = TORCH_OPS[task_name]
    header = (VERIFY / "protocol" / "skilldb_candidate.h").read_text()
    source = (VERIFY / "tasks" / task_name / "candidates" / "fast.cu").read_text()
    cuda_src = header + "\n" + source + "\n" + WRAPPER
    t0 = time.time()
    build_dir = tempfile.mkdtemp(prefix="kb-" + task_name + "-")
    module = load_inline(
        name="kb_" + task_name + "_" + str(os.getpid()),
        cpp_sources="torch::Tensor run(std::vector<torch::Tensor> inputs, "
                    "std::vector<int64_t> out_shape);",
        cuda_sources=cuda_src,
        functions=["run"],
        extra_cuda_cflags=["-O3", "-gencode=arch=compute_90a,code=sm_90a"],
        build_directory=build_dir,
        verbose=False)
    build_s = time.time() - t0
    shape = output_shape(task, dims)
    correct = True
    for _ in range(5):
        inputs = [t.cuda() for t in make_inputs(dims)]
        with torch.no_grad():
            want = op(*inputs)
        torch.cuda.synchronize()
        got = module.run(inputs, shape)
        torch.cuda.synchronize()
        # eval.py: torch.allclose(output, output_new, atol=tol, rtol=tol).
        if not torch.allclose(want, got, atol=TOLERANCE_FP32, rtol=TOLERANCE_FP32):
            correct = False
    inputs = [t.cuda() for t in make_inputs(dims)]
    ref_times = time_like_kernelbench(lambda: op(*inputs), trials, warmup=5, no_grad=True)
    cand_times = time_like_kernelbench(lambda: module.run(inputs, shape), trials, warmup=warmup)
    total_s = time.time() - t0

    def stats(v):
        m = sum(v) / len(v)
        sd = math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1))
        return {"mean_ms": float("%.3g" % m), "std_ms": float("%.3g" % sd), "cv": sd / m,
                "median_ms": sorted(v)[len(v) // 2]}

    return {"task": task_name, "build_s": build_s, "total_s": total_s, "correct": correct,
            "torch_reference": stats(ref_times), "candidate": stats(cand_times),
            "speedup_vs_torch": stats(ref_times)["mean_ms"] / stats(cand_times)["mean_ms"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", default="softmax_rows_fp32,layernorm_fp32")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    results = []
    t0 = time.time()
    for name in args.tasks.split(","):
        try:
            r = evaluate(name)
        except Exception as e:  # report and go on: one failed build must not stop the suite
            r = {"task": name, "error": repr(e)[:2000]}
        print(json.dumps(r), flush=True)
        results.append(r)
    wall = time.time() - t0
    ok = [r for r in results if "error" not in r]
    summary = {"mode": "kernelbench_protocol", "kernelbench_commit": "423217d",
               "candidates": len(ok), "wall_s": wall,
               "per_minute": (len(ok) / wall * 60.0) if wall > 0 and ok else None,
               "mean_build_s": (sum(r["build_s"] for r in ok) / len(ok)) if ok else None,
               "torch": torch.__version__, "results": results}
    pathlib.Path(args.out).write_text(json.dumps(summary, indent=1))
    print("kernelbench protocol: %d candidates in %.1f s: %s candidates/min" %
          (len(ok), wall, summary["per_minute"]))


if __name__ == "__main__":
    sys.exit(main())
