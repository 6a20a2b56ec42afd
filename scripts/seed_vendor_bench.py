#!/usr/bin/env python3
"""Times, with one protocol, each seed evidence entry's task reference, its
candidate and the PyTorch/vendor call on the same shapes (issue 21). Run ON
THE GPU MACHINE from the repository root (torch with CUDA, nvcc):

    python3 scripts/seed_vendor_bench.py --out OUT/vendor.json [--deadline S]
        [--only skill1,skill2] [--jobs N]

For every data/evidence/map.json entry it compiles verify/tasks/T/reference.cu
and the candidate exactly as the verifier does (nvcc -O3 sm_90a -shared,
force-included verify/protocol/skilldb_candidate.h), calls their launch()
through ctypes with tensors at the task's timing shape (task.json dims), and
times them beside baselines.json's vendor_call with scripts/
seed_bench_protocol.py. It also checks the candidate's output against the
PyTorch call on one input (a sanity check; the verifier's float64 oracle is
the authority). Output rows: skill, task, reference_ms, candidate_ms,
vendor_ms, candidate_over_reference, candidate_over_vendor (speedups: >1 =
faster than that baseline), reference_over_vendor, correct, device, torch.
scripts/seed_evidence_store.py --vendor takes the file.
"""
import argparse
import concurrent.futures
import ctypes
import json
import math
import os
import sys
import tempfile
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import seed_bench_protocol as proto  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DT = {"float32": (torch.float32, 0), "bfloat16": (torch.bfloat16, 1), "int32": (torch.int32, 3),
      "int64": (torch.int64, 4)}


class Tensor(ctypes.Structure):  # verify/protocol/skilldb_candidate.h
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("shape", ctypes.c_int64 * 8), ("stride", ctypes.c_int64 * 8), ("numel", ctypes.c_int64)]


def as_struct(t, code):
    s = Tensor()
    s.data, s.dtype, s.ndim, s.numel = t.data_ptr(), code, t.dim(), t.numel()
    for i, (n, st) in enumerate(zip(t.shape, t.stride())):
        s.shape[i], s.stride[i] = n, st
    return s


def dim_value(expr, dims):
    return int(eval(str(expr), {"__builtins__": {}}, dict(dims)))  # task.json shape expressions


VENDOR = {  # task -> fn(inputs) -> outputs; the calls baselines.json names
    "attention_fp32": lambda i: [F.scaled_dot_product_attention(*i)],
    "bias_gelu_fp32": lambda i: [F.gelu(i[0] + i[1])],
    "bmm_fp32": lambda i: [torch.bmm(i[0], i[1])],
    "conv2d_fp32": lambda i: [F.conv2d(i[0], i[1], padding=1)],
    "cumsum_fp32": lambda i: [torch.cumsum(i[0], dim=-1)],
    "gemm_bias_gelu_fp32": lambda i: [F.gelu(torch.addmm(i[2], i[0], i[1].t()))],
    "layernorm_fp32": lambda i: [F.layer_norm(i[0], (i[0].shape[-1],), i[1], i[2], 1e-5)],
    "matmul_bf16": lambda i: [torch.matmul(i[0], i[1])],
    "matmul_fp32": lambda i: [torch.matmul(i[0], i[1])],
    "matvec_fp32": lambda i: [torch.mv(i[0], i[1])],
    "mse_loss_fp32": lambda i: [F.mse_loss(i[0], i[1]).reshape(1)],
    "relu_scale_residual_bf16": lambda i: [torch.relu(i[0] * i[1] + i[2])],
    "rmsnorm_fp32": lambda i: [F.rms_norm(i[0], (i[0].shape[-1],), i[1], 1e-6)],
    "softmax_rows_fp32": lambda i: [torch.softmax(i[0], dim=-1)],
    "sum_dim1_fp32": lambda i: [torch.sum(i[0], dim=1)],
    "transpose_fp32": lambda i: [i[0].t().contiguous()],
}


def build(nvcc, src, out):
    inc = os.path.join(ROOT, "verify", "protocol")
    return proto.compile_so(nvcc, src, out, ["-cudart=shared", "-I" + inc, "-include", "skilldb_candidate.h"])


def launcher(so_path, in_codes, out_codes):
    fn = ctypes.CDLL(so_path).launch
    fn.restype = ctypes.c_int

    def call(ins, outs):
        si = (Tensor * len(ins))(*[as_struct(t, c) for t, c in zip(ins, in_codes)])
        so = (Tensor * len(outs))(*[as_struct(t, c) for t, c in zip(outs, out_codes)])
        rc = fn(si, len(ins), so, len(outs), proto.stream_ptr())
        if rc != 0:
            raise RuntimeError("launch() returned %d" % rc)
    return call


def close(got, want, dtype):
    atol, rtol = (1e-2, 1e-2) if dtype == torch.bfloat16 else (1e-3, 1e-3)
    g, w = got.double(), want.double()
    rms = w.pow(2).mean().sqrt().item() or 1.0
    return bool(((g - w).abs() <= atol * rms + rtol * w.abs()).all().item())


def bench_entry(e, task, base, so_ref, so_cand, info):
    dims = task["dims"]
    ins_spec = [(DT[t["dtype"]], [dim_value(x, dims) for x in t["shape"]]) for t in task["inputs"]]
    outs_spec = [(DT[t["dtype"]], [dim_value(x, dims) for x in t["shape"]]) for t in task["outputs"]]

    def make():
        return ([torch.empty(s, dtype=d, device="cuda") for (d, _), s in ins_spec],
                [torch.empty(s, dtype=d, device="cuda") for (d, _), s in outs_spec])
    in_codes = [c for (_, c), _ in ins_spec]
    out_codes = [c for (_, c), _ in outs_spec]
    ref = launcher(so_ref, in_codes, out_codes)
    cand = launcher(so_cand, in_codes, out_codes)
    vendor_fn = VENDOR[e["task"]]
    # One sanity check of the candidate against PyTorch.
    ins, outs = make()
    for t in ins:
        proto.fill_(t)
    cand(ins, outs)
    torch.cuda.synchronize()
    correct = all(close(o, v, o.dtype) for o, v in zip(outs, vendor_fn(ins)))
    # The vendor side is timed as PyTorch runs it (its own output buffers).
    sides = {"reference": ref, "candidate": cand, "vendor": lambda i, o: vendor_fn(i)}
    t = proto.time_sides(sides, make)
    r, c, v = (t[k]["rounds_ms"] for k in ("reference", "candidate", "vendor"))
    row = {"skill": e["skill"], "task": e["task"], "candidate": e["candidate"], "correct": correct,
           "reference_ms": t["reference"]["median_ms"], "candidate_ms": t["candidate"]["median_ms"],
           "vendor_ms": t["vendor"]["median_ms"], "rounds": {"reference": r, "candidate": c, "vendor": v},
           "candidate_over_reference": proto.ratio(r, c), "candidate_over_vendor": proto.ratio(v, c),
           "reference_over_vendor": proto.ratio(v, r), "vendor_call": base["vendor_call"],
           "protocol": proto.PROTOCOL}
    row.update(info)
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="")
    ap.add_argument("--deadline", type=float, default=150.0, help="start no entry after S seconds")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 4)
    ap.add_argument("--nvcc", default="/usr/local/cuda/bin/nvcc")
    ap.add_argument("--work", default="", help="where the compiled .so files go (default: a temporary "
                    "folder; never beside --out, whose folder the device tool returns)")
    args = ap.parse_args()
    t0 = time.time()
    torch.backends.cuda.matmul.allow_tf32 = False   # the fp32 tasks are fp32, not TF32
    torch.backends.cudnn.allow_tf32 = False
    entries = json.load(open(os.path.join(ROOT, "data", "evidence", "map.json")))
    only = {s for s in args.only.split(",") if s}
    entries = [e for e in entries if not only or e["skill"] in only]
    baselines = json.load(open(os.path.join(ROOT, "data", "evidence", "baselines.json")))
    work = args.work or tempfile.mkdtemp(prefix="skilldb-vendor-build-")
    os.makedirs(work, exist_ok=True)
    sources = sorted({os.path.join(ROOT, "verify", "tasks", e["task"], "reference.cu") for e in entries} |
                     {os.path.join(ROOT, e["candidate"]) for e in entries})
    so = {s: os.path.join(work, "%03d.so" % i) for i, s in enumerate(sources)}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        built = dict(zip(sources, pool.map(lambda s: build(args.nvcc, s, so[s]), sources)))
    info = proto.device_info()
    info["run"] = time.strftime("%Y-%m-%dT%H:%M:%S")
    rows = []
    for e in entries:
        row = {"skill": e["skill"], "task": e["task"], "correct": False}
        ref_src = os.path.join(ROOT, "verify", "tasks", e["task"], "reference.cu")
        cand_src = os.path.join(ROOT, e["candidate"])
        if time.time() - t0 > args.deadline:
            row["error"] = "skipped (deadline)"
        elif not built[ref_src][0] or not built[cand_src][0]:
            row["error"] = "compile failed: " + (built[ref_src][1] + built[cand_src][1])[-500:]
        else:
            try:
                task = json.load(open(os.path.join(ROOT, "verify", "tasks", e["task"], "task.json")))
                row = bench_entry(e, task, baselines[e["task"]], so[ref_src], so[cand_src], info)
            except Exception as ex:  # noqa: BLE001  (record and go on)
                row["error"] = "%s: %s" % (type(ex).__name__, ex)
        rows.append(row)
        json.dump({"rows": rows}, open(args.out, "w"), indent=1)
    print("%-42s %-24s %9s %9s %9s %8s %8s %s" % ("skill", "task", "ref ms", "cand ms", "torch ms",
                                                 "x ref", "x torch", "ok"))
    for r in rows:
        if "candidate_ms" in r:
            print("%-42s %-24s %9.4f %9.4f %9.4f %8.2f %8.2f %s" % (
                r["skill"], r["task"], r["reference_ms"], r["candidate_ms"], r["vendor_ms"],
                r["candidate_over_reference"], r["candidate_over_vendor"], "yes" if r["correct"] else "NO"))
        else:
            print("%-42s %-24s %s" % (r["skill"], r["task"], r.get("error", "")[:80]))
    return 0 if all(math.isfinite(r.get("candidate_ms", 0.0)) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
