"""The verifier's timing protocol, in Python, for timing PyTorch/vendor calls
beside the task reference and the candidate (issue 21). Run ON THE GPU
MACHINE (needs torch with CUDA).

The protocol is the one of verify/src/worker (worker_loop.cc Round,
cuda_device.cu Call): per call, a device-wide sync, fresh inputs written
into one of 3 rotating buffer sets, outputs poisoned with NaN, the L2 flushed
(a memset of twice the L2 size), a CUDA event before and after the call on
the same stream, a device-wide sync; 5 warmup and 30 timed calls per side
per round, sides interleaved in a random order per call index; 3 rounds;
the per-round figure is the median of that round's timed calls, the overall
figure the median of the per-round figures (and the ratios likewise).
Everything timed here is timed with that same code, so "16.3x over the
reference, 0.7x of cuBLAS" compares like with like.
"""
import ctypes
import random
import statistics
import subprocess

import torch

PROTOCOL = ("skilldb verifier protocol in Python (scripts/seed_bench_protocol.py): L2 flush "
            "(memset 2x L2), fresh inputs, NaN-poisoned outputs, CUDA events around each call, "
            "device sync; 5 warmup + 30 timed calls per side per round, random interleaving, "
            "3 rounds, median of per-round medians")
WARMUP, TIMED, ROUNDS, ROTATE = 5, 30, 3, 3


class Flusher:
    def __init__(self):
        l2 = torch.cuda.get_device_properties(0).L2_cache_size
        self.buf = torch.empty(2 * max(l2, 1 << 20), dtype=torch.uint8, device="cuda")
        self.v = 0

    def __call__(self):
        self.v = (self.v + 1) % 256
        self.buf.fill_(self.v)


def fill_(t):
    """Fresh inputs: normal values (integers: small non-negative ones)."""
    if t.dtype.is_floating_point:
        t.normal_()
    else:
        t.random_(0, 8)


def time_sides(sides, make_buffers, seed=1234):
    """sides: {name: fn(buffers) -> None}, each enqueueing its work on the
    current stream. make_buffers() -> (inputs, outputs) lists of tensors.
    Returns {name: {"median_ms", "rounds_ms"}} and the per-round ratio
    lists are left to the caller (ratio of per-round medians)."""
    rng = random.Random(seed)
    flush = Flusher()
    names = list(sides)
    sets = {n: [make_buffers() for _ in range(ROTATE)] for n in names}
    ev0, ev1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    rounds = {n: [] for n in names}
    for _ in range(ROUNDS):
        ms = {n: [] for n in names}
        for j in range(WARMUP + TIMED):
            order = names[:]
            rng.shuffle(order)
            for n in order:
                ins, outs = sets[n][j % ROTATE]
                for t in ins:
                    fill_(t)
                for t in outs:
                    if t.dtype.is_floating_point:
                        t.fill_(float("nan"))
                flush()
                torch.cuda.synchronize()
                ev0.record()
                sides[n](ins, outs)
                ev1.record()
                torch.cuda.synchronize()
                if j >= WARMUP:
                    ms[n].append(ev0.elapsed_time(ev1))
        for n in names:
            rounds[n].append(statistics.median(ms[n]))
    return {n: {"median_ms": statistics.median(rounds[n]), "rounds_ms": rounds[n]} for n in names}


def ratio(rounds_num, rounds_den):
    """Median over rounds of num/den (time ratios: den faster -> < 1)."""
    return statistics.median(a / b for a, b in zip(rounds_num, rounds_den))


def compile_so(nvcc, src, out, extra=()):
    cmd = [nvcc, "-O3", "-gencode=arch=compute_90a,code=sm_90a", "-std=c++17", "-shared",
           "-Xcompiler=-fPIC", "-o", out, src] + list(extra)
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode == 0, (p.stderr + p.stdout)[-2000:]


def stream_ptr():
    return ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)


def device_info():
    p = torch.cuda.get_device_properties(0)
    return {"device": "%s (sm_%d%d)" % (p.name, p.major, p.minor), "torch": torch.__version__,
            "cuda": torch.version.cuda}
