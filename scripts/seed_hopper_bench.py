#!/usr/bin/env python3
"""Checks the Hopper seed skills' kernels against torch and times them
against the vendor library or PyTorch with the verifier's protocol; also
checks device-side facts the expert review corrected (issue 21). Run ON THE
GPU MACHINE (H100/H200, torch with CUDA, nvcc, Triton) from the repository
root:

    python3 scripts/seed_hopper_bench.py --out OUT/hopper.json [--deadline S]
        [--work DIR] [--jobs N]
    python3 scripts/seed_hopper_bench.py --compile-only [--work DIR]

The code is taken from data/seed (the skills' `code` field, byte for byte:
each row records its SHA-256), compiled with nvcc -O3 sm_90a -shared (all
kernels in parallel first, into --work, one file per code hash, so a
--compile-only run started earlier leaves nothing to do) and called through
ctypes on torch tensors. A kernel is "correct" when its output matches the
torch result within bf16 tolerance (fp8: against the fp32 product of the
same e4m3 values; the fp32 Mamba2 scan: 1e-3 of the reference's RMS). Then
it is timed beside the row's baseline with scripts/seed_bench_protocol.py:
cuBLAS (torch.matmul / torch._scaled_mm) for the GEMMs, PyTorch SDPA for the
register-A attention, cuDNN conv + PyTorch add/ReLU for the fused conv
epilogue (plus the cuDNN conv alone), the KernelBench reference in eager
PyTorch for the Mamba2 chunked scan.

Facts (rows with "fact"): fuse-online-softmax's two modes on all -inf, NaN
and +inf rows against torch.softmax; fuse-softmax-cross-entropy on
8200 x 262144 bf16 logits (rows x V > 2^31) against F.cross_entropy on the
last rows; triton-matmul-tile-config's PTX uses cp.async and no TMA.
scripts/seed_evidence_store.py --bench takes the file.
"""
import argparse
import concurrent.futures
import ctypes
import hashlib
import json
import os
import sys
import tempfile
import time
import traceback

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import seed_bench_protocol as proto  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def seed_skills():
    out = {}
    for name in sorted(os.listdir(os.path.join(ROOT, "data", "seed"))):
        if name.endswith(".jsonl"):
            for line in open(os.path.join(ROOT, "data", "seed", name), encoding="utf-8"):
                if line.strip():
                    o = json.loads(line)
                    out[o["id"]] = o
    return out


def sha(code):
    return hashlib.sha256(code.encode("utf-8")).hexdigest()


# The CUDA skills this script compiles (each skill's code, byte for byte).
CUDA_SKILLS = ["tc-wgmma-tma-pipeline-ring", "tc-wgmma-warp-specialized-pingpong",
               "tc-wgmma-mn-major-b-swizzle-modes", "mem-tma-multicast-cluster-barriers",
               "tc-wgmma-register-a-attention-pv", "fuse-conv-implicit-gemm-epilogue",
               "op-mamba2-ssd-chunked-scan", "tc-wgmma-fp8-promotion", "tc-stmatrix-tma-store-epilogue",
               "fuse-online-softmax"]


def so_path(skill, code, work):
    """The shared object of `code`, named by its hash: a file left by an
    earlier (or a concurrent --compile-only) run is the same build."""
    return os.path.join(work, "%s-%s.so" % (skill, sha(code)[:16]))


def build_so(skill, code, work, nvcc):
    out = so_path(skill, code, work)
    if os.path.exists(out):
        return True, ""
    src = out[:-3] + ".cu"
    tmp = "%s.%d.tmp" % (out, os.getpid())
    with open(src, "w", encoding="utf-8") as f:
        f.write(code)
    ok, log = proto.compile_so(nvcc, src, tmp)
    if ok:
        os.replace(tmp, out)   # atomic: a concurrent build of the same code writes the same bytes
    return ok, log


def compile_all(skills, work, nvcc, jobs):
    """Compiles every CUDA skill of the bench in parallel (nvcc takes 5-60 s a
    kernel; one at a time they would eat the GPU phase's budget)."""
    todo = [s for s in CUDA_SKILLS if s in skills]
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = list(pool.map(lambda s: build_so(s, skills[s]["code"], work, nvcc), todo))
    return {s: r for s, r in zip(todo, results)}


def load_so(skill, code, work, nvcc):
    ok, log = build_so(skill, code, work, nvcc)
    if not ok:
        raise RuntimeError("nvcc: " + log)
    return ctypes.CDLL(so_path(skill, code, work))


def ptr(t):
    return ctypes.c_void_p(t.data_ptr())


def close_bf16(got, want):
    g, w = got.float(), want.float()
    err = ((g - w).abs() / (w.abs() + w.pow(2).mean().sqrt())).max().item()
    return err < 2e-2, err


def gemm_case(fn, m, n, k, b_kn=False):
    """bf16 GEMM through `fn(a, b, c, m, n, k, stream)`; B [N,K] or [K,N]."""
    def call(ins, outs):
        rc = fn(ptr(ins[0]), ptr(ins[1]), ptr(outs[0]), m, n, k, proto.stream_ptr())
        if rc != 0:
            raise RuntimeError("kernel returned %d" % rc)
    bshape = (k, n) if b_kn else (n, k)
    make = lambda: ([torch.empty(m, k, dtype=torch.bfloat16, device="cuda"),
                     torch.empty(*bshape, dtype=torch.bfloat16, device="cuda")],
                    [torch.empty(m, n, dtype=torch.bfloat16, device="cuda")])
    vendor = (lambda i, o: torch.matmul(i[0], i[1])) if b_kn else (lambda i, o: torch.matmul(i[0], i[1].t()))
    return call, make, vendor


def run_case(skill, kernel, code, call, make, vendor, shape, baseline, info, check=None):
    ins, outs = make()
    for t in ins:
        proto.fill_(t)
    call(ins, outs)
    torch.cuda.synchronize()
    ok, err = (check or (lambda i, o: close_bf16(o[0], vendor(i, o))))(ins, outs)
    row = {"skill": skill, "kernel": kernel, "shape": shape, "correct": bool(ok), "max_rel_err": err,
           "candidate_sha256": sha(code), "baseline": baseline, "protocol": proto.PROTOCOL}
    row.update(info)
    if ok:
        t = proto.time_sides({"candidate": call, "vendor": vendor}, make)
        row.update(candidate_ms=t["candidate"]["median_ms"], vendor_ms=t["vendor"]["median_ms"],
                   candidate_over_vendor=proto.ratio(t["vendor"]["rounds_ms"], t["candidate"]["rounds_ms"]),
                   rounds={"candidate": t["candidate"]["rounds_ms"], "vendor": t["vendor"]["rounds_ms"]})
    return row


def cublas_gemms(skills, work, nvcc, info, cases=None):
    rows = []
    s = 4096
    cases = cases or [
        ("tc-wgmma-tma-pipeline-ring", ["gemm_ring_bf16"], False),
        ("tc-wgmma-warp-specialized-pingpong", ["gemm_ws_cooperative_bf16", "gemm_ws_pingpong_bf16"], False),
        ("tc-wgmma-mn-major-b-swizzle-modes", ["gemm_mn_major_b_sw64", "gemm_mn_major_b_sw32"], True)]
    for skill, fns, b_kn in cases:
        code = skills[skill]["code"]
        lib = load_so(skill, code, work, nvcc)
        for name in fns:
            fn = getattr(lib, name)
            fn.restype = ctypes.c_int
            call, make, vendor = gemm_case(fn, s, s, s, b_kn)
            base = "cuBLAS via torch.matmul(A, B%s) (bf16)" % ("" if b_kn else ".t()")
            rows.append(run_case(skill, name, code, call, make, vendor, [s, s, s], base, info))
    return rows


def fp8_gemm(skills, work, nvcc, info):
    skill = "tc-wgmma-fp8-promotion"
    code = skills[skill]["code"]
    fn = load_so(skill, code, work, nvcc).gemm_fp8_e4m3_promoted
    fn.restype = ctypes.c_int
    m = n = 4096
    k = 8192
    one = torch.ones((), device="cuda")

    def make():
        a = torch.empty(m, k, device="cuda").normal_().to(torch.float8_e4m3fn)
        b = torch.empty(n, k, device="cuda").normal_().to(torch.float8_e4m3fn)
        return [a, b], [torch.empty(m, n, dtype=torch.bfloat16, device="cuda")]

    def call(ins, outs):
        if fn(ptr(ins[0]), ptr(ins[1]), ptr(outs[0]), m, n, k, ctypes.c_float(0.5), proto.stream_ptr()):
            raise RuntimeError("kernel failed")
    vendor = lambda i, o: torch._scaled_mm(i[0], i[1].t(), one * 0.5, one, out_dtype=torch.bfloat16)

    def check(ins, outs):
        want = (ins[0].float() @ ins[1].float().t()) * 0.5
        return close_bf16(outs[0], want)
    # fp8 inputs cannot be refilled with normal_(): keep each set's values.
    proto_fill = proto.fill_
    proto.fill_ = lambda t: None if t.dtype == torch.float8_e4m3fn else proto_fill(t)
    try:
        return [run_case(skill, "gemm_fp8_e4m3_promoted", code, call, make, vendor, [m, n, k],
                         "cuBLASLt FP8 via torch._scaled_mm (bf16 out)", info, check)]
    finally:
        proto.fill_ = proto_fill


def epilogue(skills, work, nvcc, info):
    skill = "tc-stmatrix-tma-store-epilogue"
    code = skills[skill]["code"]
    fn = load_so(skill, code, work, nvcc).epilogue_stmatrix_tma_store
    fn.restype = ctypes.c_int
    m = n = 8192
    make = lambda: ([torch.empty(m, n, device="cuda")], [torch.empty(m, n, dtype=torch.bfloat16, device="cuda")])

    def call(ins, outs):
        if fn(ptr(ins[0]), ptr(outs[0]), m, n, proto.stream_ptr()):
            raise RuntimeError("kernel failed")
    vendor = lambda i, o: i[0].to(torch.bfloat16)
    check = lambda i, o: (bool(torch.equal(o[0], i[0].to(torch.bfloat16))), 0.0)
    return [run_case(skill, "epilogue_stmatrix_tma_store", code, call, make, vendor, [m, n],
                     "PyTorch x.to(torch.bfloat16) (native cast kernel)", info, check)]


def triton_ws(skills, info):
    skill = "triton-hopper-warp-specialize"
    code = skills[skill]["code"]
    path = os.path.join(ROOT, ".hopper-bench-%s.py" % skill)   # Triton needs source on disk
    open(path, "w").write(code)
    ns = {"__name__": "seed_" + skill.replace("-", "_"), "__file__": path}
    exec(compile(code, path, "exec"), ns)
    rows = []
    s = 4096
    for ws in (True, False):
        make = lambda: ([torch.empty(s, s, dtype=torch.bfloat16, device="cuda"),
                         torch.empty(s, s, dtype=torch.bfloat16, device="cuda")], [])
        call = lambda i, o, ws=ws: ns["matmul"](i[0], i[1], warp_specialize=ws)
        vendor = lambda i, o: torch.matmul(i[0], i[1].t())
        check = lambda i, o, ws=ws: close_bf16(ns["matmul"](i[0], i[1], warp_specialize=ws), vendor(i, o))
        rows.append(run_case(skill, "matmul(warp_specialize=%s)" % ws, code, call, make, vendor, [s, s, s],
                             "cuBLAS via torch.matmul(A, B.t()) (bf16)", info, check))
    return rows


def multicast_gemm(skills, work, nvcc, info):
    """The 2-CTA cluster GEMM with B multicast, same shape and baseline as the
    ring (tc-wgmma-tma-pipeline-ring is the run without multicast)."""
    return cublas_gemms(skills, work, nvcc, info,
                        [("mem-tma-multicast-cluster-barriers", ["gemm_multicast_bf16"], False)])


def attention_rs(skills, work, nvcc, info):
    """FlashAttention-3-style forward (P.V with A from registers) against
    PyTorch SDPA on bf16 [B, H, S, 128]."""
    skill = "tc-wgmma-register-a-attention-pv"
    code = skills[skill]["code"]
    fn = load_so(skill, code, work, nvcc).attention_fwd_rs_bf16
    fn.restype = ctypes.c_int
    b, h, s, d = 2, 16, 4096, 128
    make = lambda: ([torch.empty(b, h, s, d, dtype=torch.bfloat16, device="cuda") for _ in range(3)],
                    [torch.empty(b, h, s, d, dtype=torch.bfloat16, device="cuda")])

    def call(ins, outs):
        if fn(ptr(ins[0]), ptr(ins[1]), ptr(ins[2]), ptr(outs[0]), b * h, s, ctypes.c_float(d ** -0.5),
              proto.stream_ptr()):
            raise RuntimeError("kernel failed")
    vendor = lambda i, o: F.scaled_dot_product_attention(i[0], i[1], i[2])
    return [run_case(skill, "attention_fwd_rs_bf16", code, call, make, vendor, [b, h, s, d],
                     "PyTorch SDPA F.scaled_dot_product_attention (bf16, non-causal; the flash or cuDNN "
                     "backend PyTorch selects)", info)]


def conv_epilogue(skills, work, nvcc, info):
    """Implicit-GEMM conv with bias + residual + ReLU in the epilogue against
    cuDNN conv (with bias) followed by PyTorch's add and ReLU kernels; the
    row also times the cuDNN conv alone (what the separate ops cost)."""
    skill = "fuse-conv-implicit-gemm-epilogue"
    code = skills[skill]["code"]
    fn = load_so(skill, code, work, nvcc).conv2d_bias_act_residual_bf16
    fn.restype = ctypes.c_int
    n, c, hw, k = 32, 256, 28, 256
    cl = torch.channels_last
    bf = torch.bfloat16

    def make():
        x = torch.empty(n, c, hw, hw, dtype=bf, device="cuda").to(memory_format=cl)
        w = torch.empty(k, c, 3, 3, dtype=bf, device="cuda").to(memory_format=cl)
        res = torch.empty(n, k, hw, hw, dtype=bf, device="cuda").to(memory_format=cl)
        bias = torch.empty(k, dtype=bf, device="cuda")
        return [x, w, bias, res], [torch.empty(n, k, hw, hw, dtype=bf, device="cuda").to(memory_format=cl)]

    def call(ins, outs):
        if fn(ptr(ins[0]), ptr(ins[1]), ptr(ins[2]), ptr(ins[3]), ptr(outs[0]), n, hw, hw, c, k, 3, 3, 1, 1, 1,
              proto.stream_ptr()):
            raise RuntimeError("kernel failed")
    vendor = lambda i, o: torch.relu(F.conv2d(i[0], i[1], i[2], padding=1) + i[3])
    row = run_case(skill, "conv2d_bias_act_residual_bf16(relu)", code, call, make, vendor, [n, c, hw, hw, k, 3, 3],
                   "cuDNN via F.conv2d(x, w, bias, padding=1) (channels_last bf16), then PyTorch's residual add "
                   "and ReLU kernels", info)
    if row["correct"]:
        t = proto.time_sides({"conv_only": lambda i, o: F.conv2d(i[0], i[1], i[2], padding=1)}, make)
        row["vendor_conv_only_ms"] = t["conv_only"]["median_ms"]
    return [row]


def mamba2_reference(x, a, b, c, block_len=64):
    """KernelBench level 3 Mamba2ReturnY / Mamba2ReturnFinalState forward
    (einops rearranges written as reshape/permute): (Y, final state)."""
    bb, t, h, p = x.shape
    nc = t // block_len

    def segsum(v):
        n = v.size(-1)
        cs = torch.cumsum(v, dim=-1)
        ss = cs[..., :, None] - cs[..., None, :]
        mask = torch.tril(torch.ones(n, n, device=v.device, dtype=bool), diagonal=0)
        return ss.masked_fill(~mask, -torch.inf)
    xb = x.reshape(bb, nc, block_len, h, p)
    bbk = b.reshape(bb, nc, block_len, h, -1)
    cb = c.reshape(bb, nc, block_len, h, -1)
    ab = a.reshape(bb, nc, block_len, h).permute(0, 3, 1, 2)
    a_cumsum = torch.cumsum(ab, dim=-1)
    l_mat = torch.exp(segsum(ab))
    y_diag = torch.einsum("bclhn,bcshn,bhcls,bcshp->bclhp", cb, bbk, l_mat, xb)
    decay_states = torch.exp(a_cumsum[:, :, :, -1:] - a_cumsum)
    states = torch.einsum("bclhn,bhcl,bclhp->bchpn", bbk, decay_states, xb)
    states = torch.cat([torch.zeros_like(states[:, :1]), states], dim=1)
    decay_chunk = torch.exp(segsum(F.pad(a_cumsum[:, :, :, -1], (1, 0))))
    new_states = torch.einsum("bhzc,bchpn->bzhpn", decay_chunk, states)
    y_off = torch.einsum("bclhn,bchpn,bhcl->bclhp", cb, new_states[:, :-1], torch.exp(a_cumsum))
    return (y_diag + y_off).reshape(bb, t, h, p), new_states[:, -1]


def mamba2_ssd(skills, work, nvcc, info):
    """The fused chunked SSD kernel against the KernelBench reference in
    PyTorch eager: KernelBench's shape (randn A, as its parameters) and a
    long sequence with Mamba2-like negative A*dt (randn A would overflow exp
    over 2048 tokens in the reference too)."""
    skill = "op-mamba2-ssd-chunked-scan"
    code = skills[skill]["code"]
    fn = load_so(skill, code, work, nvcc).mamba2_ssd_chunked
    fn.restype = ctypes.c_int
    rows = []
    for bsz, t, h, n, negative in ((16, 128, 8, 16, False), (4, 2048, 32, 128, True)):
        p = 64
        f32 = dict(dtype=torch.float32, device="cuda")
        make = lambda bsz=bsz, t=t, h=h, n=n: (
            [torch.empty(bsz, t, h, p, **f32), torch.empty(bsz, t, h, **f32), torch.empty(bsz, t, h, n, **f32),
             torch.empty(bsz, t, h, n, **f32)],
            [torch.empty(bsz, t, h, p, **f32), torch.empty(bsz, h, p, n, **f32)])

        def call(ins, outs, bsz=bsz, t=t, h=h, n=n):
            if fn(ptr(ins[0]), ptr(ins[1]), ptr(ins[2]), ptr(ins[3]), None, ptr(outs[0]), ptr(outs[1]),
                  bsz, t, h, p, n, proto.stream_ptr()):
                raise RuntimeError("kernel failed")
        vendor = lambda i, o: mamba2_reference(*i)

        def check(ins, outs):
            y, st = mamba2_reference(*ins)
            e_y = ((outs[0] - y).abs().max() / y.pow(2).mean().sqrt()).item()
            e_s = ((outs[1] - st).abs().max() / st.pow(2).mean().sqrt()).item()
            return max(e_y, e_s) < 1e-3, max(e_y, e_s)
        fill = proto.fill_
        if negative:   # A*dt < 0 as in Mamba2 (A = -exp(A_log), dt > 0)
            proto.fill_ = lambda x: x.uniform_(-0.1, -0.001) if x.dim() == 3 else fill(x)
        try:
            rows.append(run_case(skill, "mamba2_ssd_chunked(d_state=%d)" % n, code, call, make, vendor,
                                 [bsz, t, h, p, n],
                                 "KernelBench level 3 Mamba2 reference (segsum + einsum) in PyTorch eager, fp32",
                                 info, check))
        finally:
            proto.fill_ = fill
    return rows


def fact_online_softmax(skills, work, nvcc):
    skill = "fuse-online-softmax"
    lib = load_so(skill, skills[skill]["code"], work, nvcc)
    rows, cols = 4, 1000
    x = torch.randn(rows, cols, device="cuda")
    x[1] = float("-inf")
    x[2, 17] = float("nan")
    x[3, 5] = float("inf")
    out = {}
    for torch_mode in (False, True):
        y = torch.empty_like(x)
        lib.launch_online_softmax(ptr(x), ptr(y), rows, cols, ctypes.c_bool(torch_mode), proto.stream_ptr())
        torch.cuda.synchronize()
        out[torch_mode] = y
    want = torch.softmax(x, dim=-1)
    masked = out[False]
    ok_torch = bool(torch.allclose(out[True], want, rtol=1e-5, atol=1e-6, equal_nan=True))
    ok_masked = bool(torch.allclose(masked[0], want[0], rtol=1e-5, atol=1e-6)) and \
        bool((masked[1] == 0).all()) and bool(torch.isnan(masked[2, 17])) and \
        abs(masked[2].nan_to_num(0).sum().item() - 1) < 1e-4
    return {"fact": "online softmax: torch mode equals torch.softmax on -inf/NaN/+inf rows; masked mode "
                    "gives zeros for an all -inf row and skips NaN", "skill": skill,
            "ok": ok_torch and ok_masked, "torch_mode_ok": ok_torch, "masked_mode_ok": ok_masked}


def fact_cross_entropy(skills):
    skill = "fuse-softmax-cross-entropy"
    code = skills[skill]["code"]
    path = os.path.join(ROOT, ".hopper-bench-xent.py")
    open(path, "w").write(code)
    ns = {"__name__": "seed_xent", "__file__": path}
    exec(compile(code, path, "exec"), ns)
    n, v = 8200, 262144                          # n * v > 2**31
    logits = torch.randn(n, v, device="cuda", dtype=torch.bfloat16)
    targets = torch.randint(0, v, (n,), device="cuda")
    tail = logits[-4:].float().clone().requires_grad_(True)
    loss = ns["cross_entropy_inplace_grad"](logits, targets)
    ref = F.cross_entropy(tail, targets[-4:], reduction="none")
    (ref.sum() / n).backward()
    ok_loss = bool(torch.allclose(loss[-4:], ref.detach(), rtol=1e-3, atol=1e-3))
    ok_grad = bool(torch.allclose(logits[-4:].float(), tail.grad, rtol=2e-2, atol=1e-6))
    del logits
    return {"fact": "cross-entropy with rows x V > 2^31: last rows' loss and gradient match torch", "skill": skill,
            "ok": ok_loss and ok_grad, "loss_ok": ok_loss, "grad_ok": ok_grad, "shape": [n, v]}


def fact_pointer_loads(skills):
    skill = "triton-matmul-tile-config"
    code = skills[skill]["code"]
    path = os.path.join(ROOT, ".hopper-bench-tile.py")
    open(path, "w").write(code)
    ns = {"__name__": "seed_tile", "__file__": path}
    exec(compile(code, path, "exec"), ns)
    a = torch.randn(1024, 1024, device="cuda", dtype=torch.float16)
    c = torch.empty_like(a)
    cfg = ns["pick_config"](1024, 1024, 1024, a.dtype)
    grid = (1024 // cfg["BLOCK_M"], 1024 // cfg["BLOCK_N"])
    compiled = ns["matmul_kernel"][grid](a, a, c, 1024, 1024, 1024, a.stride(0), a.stride(1),
                                         a.stride(0), a.stride(1), c.stride(0), c.stride(1), **cfg)
    ptx = compiled.asm["ptx"]
    return {"fact": "pointer tl.load lowers to cp.async on Hopper, not TMA", "skill": skill,
            "ok": "cp.async" in ptx and "cp.async.bulk.tensor" not in ptx,
            "has_cp_async": "cp.async" in ptx, "has_tma": "cp.async.bulk.tensor" in ptx}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="result JSON (required unless --compile-only)")
    ap.add_argument("--deadline", type=float, default=150.0,
                    help="seconds after which no further step starts")
    ap.add_argument("--nvcc", default="/usr/local/cuda/bin/nvcc")
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "skilldb-hopper-build"),
                    help="build directory for the kernels' shared objects (reused across runs)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel nvcc processes")
    ap.add_argument("--compile-only", action="store_true",
                    help="build every kernel into --work and exit (no GPU needed)")
    args = ap.parse_args()
    t0 = time.time()
    skills = seed_skills()
    os.makedirs(args.work, exist_ok=True)
    built = compile_all(skills, args.work, args.nvcc, args.jobs)
    failed = {s: log for s, (ok, log) in built.items() if not ok}
    print("compiled %d kernels in %.0f s (%d failed)" % (len(built), time.time() - t0, len(failed)), file=sys.stderr)
    for s, log in failed.items():
        print("nvcc failed for %s: %s" % (s, log[-500:]), file=sys.stderr)
    if args.compile_only:
        return 1 if failed else 0
    if not args.out:
        ap.error("--out is required")
    work = args.work
    info = proto.device_info()
    info["run"] = time.strftime("%Y-%m-%dT%H:%M:%S")
    result = {"rows": [], "facts": [], "errors": []}
    # Kernels that synchronize through mbarriers and clusters run last: a
    # deadlock there (the caller's timeout kills the run) loses nothing else.
    steps = [("rows", lambda: cublas_gemms(skills, work, args.nvcc, info)),
             ("rows", lambda: fp8_gemm(skills, work, args.nvcc, info)),
             ("rows", lambda: epilogue(skills, work, args.nvcc, info)),
             ("rows", lambda: mamba2_ssd(skills, work, args.nvcc, info)),
             ("rows", lambda: conv_epilogue(skills, work, args.nvcc, info)),
             ("rows", lambda: triton_ws(skills, info)),
             ("facts", lambda: [fact_online_softmax(skills, work, args.nvcc)]),
             ("facts", lambda: [fact_pointer_loads(skills)]),
             ("facts", lambda: [fact_cross_entropy(skills)]),
             ("rows", lambda: attention_rs(skills, work, args.nvcc, info)),
             ("rows", lambda: multicast_gemm(skills, work, args.nvcc, info))]
    print("%-36s %-38s %7s %10s %10s %9s" % ("skill", "kernel", "correct", "ms", "vendor ms", "x vendor"))
    print("(x vendor = vendor time / kernel time: > 1 is faster than the row's baseline)", flush=True)
    for index, (key, step) in enumerate(steps):
        if time.time() - t0 > args.deadline:
            result["errors"].append("deadline: step %d of %d skipped" % (index + 1, len(steps)))
            continue
        t_step = time.time()
        try:
            got = step()
            result[key].extend(got)
        except Exception:  # noqa: BLE001  (a failing kernel must not stop the others)
            got = []
            result["errors"].append(traceback.format_exc()[-1500:])
            print("error:", result["errors"][-1].strip().splitlines()[-1], flush=True)
        print("step done in %.1f s" % (time.time() - t_step), file=sys.stderr)
        torch.cuda.empty_cache()
        json.dump(result, open(args.out, "w"), indent=1)
        for r in got:   # printed as each step ends, so a run cut short keeps its table
            if key == "facts":
                print("fact %-4s %s" % ("ok" if r["ok"] else "FAIL", r["fact"]), flush=True)
            else:
                print("%-36s %-38s %7s %10.4f %10.4f %9.2f" % (
                    r["skill"], r["kernel"], "yes" if r["correct"] else "NO", r.get("candidate_ms", float("nan")),
                    r.get("vendor_ms", float("nan")), r.get("candidate_over_vendor", float("nan"))), flush=True)
    for e in result["errors"]:
        if e.startswith("deadline"):
            print("error:", e)
    print("hopper bench: %.0f s" % (time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
