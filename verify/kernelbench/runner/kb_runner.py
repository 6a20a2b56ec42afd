#!/usr/bin/env python3
"""skilldb's KernelBench runner: one process of the torch side of the
verifier, started and confined by the C++ verifier (skilldb_kb_launch) and
driven over a socket with the verifier's own frames (kb_wire.py).

Roles, one per process:
  reference  the problem's Model (trusted: the user's checkout); also times
             the eager and torch.compile baselines and the device's ceilings
  candidate  an answer's ModelNew; enters the run sandbox (no processes, no
             exec) before any of the answer's code runs
  build      runs an answer's module once so that its load_inline calls
             build (compilers may run here) and, for Triton, its kernels
             compile on one call
  inspect    imports problems: input specs, degenerate-problem screen

The protocol (which requests, in which order, what is compared where) is
the verifier's: kernelbench_evaluate.cc. This file only does what it is
asked and reports what it saw; it decides nothing.
"""

import argparse
import copy
import faulthandler
import gc
import math
import importlib
import os
import resource
import socket
import sys
import time
import traceback

# A native crash (the driver, a candidate's kernel) leaves the Python stack
# in the runner's log, which the verifier's report quotes.
faulthandler.enable()
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

import kb_caller  # noqa: E402
import kb_guard  # noqa: E402
import kb_inputs  # noqa: E402
import kb_load  # noqa: E402
import kb_wire  # noqa: E402

# The runner's own clock, bound before any answer code runs: an answer that
# replaces time.perf_counter (a patched_function finding) does not change
# what the runner measures.
_perf_counter = time.perf_counter
_process_time = time.process_time  # the process's CPU time, all threads
_getrusage = resource.getrusage
_torch_empty = torch.empty  # the allocator's priming (op_prime), unpatched


def _cpu_s():
    """CPU seconds of the process (all threads) and of the children it has
    waited for (a build's compilers: ninja, nvcc, cicc, ptxas, g++)."""
    kids = _getrusage(resource.RUSAGE_CHILDREN)
    return _process_time() + kids.ru_utime + kids.ru_stime

PRECISIONS = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16,
              "float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
KB_FLUSH_SHAPE = (32, 1024, 1024)  # KernelBench's clear_l2_cache: 256 MB of int64


def start_context(device, flush_bytes):
    """What the device's start-up does without a kernel: the CUDA context,
    the device's facts, the BLAS handle and the L2 flush buffer (allocations
    only). Returns (facts, flush buffer or None). The verifier runs it
    without holding the device, beside timed phases of other answers;
    bench/init_interference.py measures what it does to their timings."""
    info = {}
    buf = None
    if device.type == "cuda":
        torch.cuda.init()
        torch.cuda.set_device(device)
        props = torch.cuda.get_device_properties(device)
        info["gpu"] = props.name
        info["capability"] = "%d.%d" % (props.major, props.minor)
        torch.cuda.current_blas_handle()
        # The caching host allocator's first use (kb_wire.host_copy), before
        # the run sandbox: later fetches only ask the driver for pages.
        try:
            torch.empty(1, pin_memory=True)
        except RuntimeError as e:
            info["pinned"] = str(e)[:200]
        buf = torch.empty(KB_FLUSH_SHAPE, dtype=torch.int64, device=device)
    elif flush_bytes > 0:
        buf = torch.empty(flush_bytes // 8, dtype=torch.int64)
    return info, buf


def first_kernels(device):
    """The start-up's first kernels: what PyTorch starts lazily at a first
    matmul (thread pools, the BLAS library's kernels, the random
    generator's), so that it is started before anything is watched."""
    x = torch.randn(64, 64, device=device)
    (x @ x).sum().item()
    if device.type == "cuda":
        torch.cuda.synchronize()


class CandidateError(Exception):
    """An exception raised by problem or answer code, with where it happened."""

    def __init__(self, kind, exc):
        super().__init__(str(exc))
        self.kind = kind
        self.exc = exc


def error_reply(kind, exc):
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return {"ok": False, "error": {
        "kind": kind, "name": "%s.%s" % (type(exc).__module__, type(exc).__name__),
        "message": str(exc)[-20000:], "traceback": tb[-8000:],
        # An OSError (a missing program, a full disk) may be the machine's,
        # not the answer's: the verifier does not cache such a failure.
        "os_error": isinstance(exc, OSError)}}


def _timed(fn, *args):
    """(fn(*args), {"seconds": its time}), or (None, {"error": what it
    raised})."""
    t0 = time.time()
    try:
        return fn(*args), {"seconds": time.time() - t0}
    except Exception as e:
        return None, {"error": "%s: %s" % (type(e).__name__, str(e)[-600:])}


def _build_caller_if_missing(ext_root, ext_cache, load_inline):
    """The key of the generic caller built into ext_root, or None if
    `ext_cache` has it."""
    if kb_caller.caller_built(ext_cache):
        return None
    return kb_caller.build_caller(ext_root, load_inline)


def set_seed(seed):
    # KernelBench's set_seed: torch's CPU and current-CUDA-device generators.
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed(seed)


def _real(t):
    """A complex output as the view of its (real, imaginary) pairs (shape
    [..., 2], the real dtype of its precision): what the verifier compares,
    samples and keeps; any other tensor as it is."""
    return torch.view_as_real(t.resolve_conj()) if t.is_complex() else t


def complex_outputs(out):
    """Which of a forward's output tensors are complex (flatten_output
    makes them real pairs, whose shape and dtype alone would not tell a
    complex output from a real one of shape [..., 2])."""
    if isinstance(out, torch.Tensor):
        return [out.is_complex()]
    if isinstance(out, (tuple, list)):
        return [isinstance(o, torch.Tensor) and o.is_complex() for o in out]
    return []


def flatten_output(out):
    """(tensors, kind): kind is "tensor", "tuple", "subclass" (one tensor of a
    subclass), "subclass_tuple" or "other"."""
    if isinstance(out, torch.Tensor):
        exact = type(out) is torch.Tensor or isinstance(out, torch.nn.Parameter)
        return [_real(out)], ("tensor" if exact else "subclass")
    if isinstance(out, (tuple, list)) and out and all(isinstance(o, torch.Tensor) for o in out):
        exact = all(type(o) is torch.Tensor for o in out)
        return [_real(o) for o in out], ("tuple" if exact else "subclass_tuple")
    return [], "other"


_BITS = {8: torch.int64, 4: torch.int32, 2: torch.int16, 1: torch.uint8}


def same_values(a, b):
    """`b` is `a` unchanged: the same shape, dtype and bits (torch.equal calls
    NaN different from itself: an input with NaN would always look changed)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if torch.equal(a, b):
        return True
    if not (a.is_floating_point() or a.is_complex()):
        return False
    if a.is_complex():
        a, b = torch.view_as_real(a.resolve_conj()), torch.view_as_real(b.resolve_conj())
    bits = _BITS[a.element_size()]
    return torch.equal(a.contiguous().view(bits), b.contiguous().view(bits))


def plain(t):
    if type(t) is not torch.Tensor and not isinstance(t, torch.nn.Parameter):
        t = t.as_subclass(torch.Tensor)
    return t


class Runner:
    def __init__(self, role, sock, scratch, device_arg, flush_bytes):
        self.role = role
        self.sock = sock
        self.scratch = scratch
        self.device = self._pick_device(device_arg)
        self.on_gpu = self.device.type == "cuda"
        self.flush_bytes = flush_bytes
        self.flush_buf = None
        self.context_ready = False  # "init" done
        self.device_ready = False  # "init_kernels" done
        self.profiler_ready = False
        self.ctx = None
        self.model = None
        self.get_inputs = None
        self.get_init_inputs = None
        self.Model = None
        self.protocol = "skilldb"
        self.dtype = torch.float32
        self.specs = None
        self.kept = {}         # id -> (inputs, outputs)
        self.order = []        # kept ids, oldest first
        self.pending = {}      # id -> prepared inputs
        self.call_blocks = []  # bytes of each storage a trial's call held
        self.watch = None
        self.shim = None
        self.sandbox_note = None  # the run stage's, once entered
        self.notes = []

    # --- start-up -----------------------------------------------------------
    def _pick_device(self, arg):
        if arg != "cpu" and torch.cuda.is_available():
            return torch.device("cuda", 0)
        return torch.device("cpu")

    def start(self):
        """Greets the verifier once PyTorch is imported, before the device is
        touched: a runner may be started while an answer is timed there. Its
        start-up then comes as requests, each held by the verifier as it
        needs (verify/kernelbench/src/kb_runner.cc, Runner::Start): "init"
        (the CUDA context and handles, no kernels), a candidate's
        "init_profiler_host" (Kineto and CUPTI, no kernels), "init_kernels"
        (the first kernels), a candidate's "init_profiler" (a profiled
        kernel), and "init_host" (Triton's facts, the watch)."""
        hello = {"op": "hello", "role": self.role, "torch": torch.__version__,
                 "python": sys.version.split()[0], "device": str(self.device),
                 "isolation": os.environ.get("SKILLDB_KB_ISOLATION", "")}
        try:
            import triton  # noqa: F401
            hello["triton"] = triton.__version__
        except Exception:
            hello["triton"] = None
        # The interpreter's and the imports' CPU time (the "start" op).
        hello["start_cpu_ms"] = _process_time() * 1e3
        kb_wire.send_frame(self.sock, hello)

    def _warm_profiler(self, warm, what):
        """A candidate's profiler machinery (Kineto, CUPTI), started before
        the run sandbox by `warm` (kb_guard's); a failure is a note, and
        profiling will say it is unavailable."""
        if self.role != "candidate" or self.profiler_ready:
            return
        try:
            warm(self.device)
        except Exception as e:
            self.notes.append("%s: %s" % (what, e))

    def op_init_profiler_host(self, h, blob):
        # Around host work only: the verifier holds nothing for it.
        self._warm_profiler(kb_guard.warm_profiler_host, "profiler host warm-up")
        return {"ok": True}

    def op_init_profiler(self, h, blob):
        # One profiled kernel: the verifier holds the device shared.
        self._warm_profiler(kb_guard.warm_profiler, "profiler warm-up")
        self.profiler_ready = True
        return {"ok": True}

    def init_host(self):
        """The host's part, after the device's (no kernels: the verifier does
        not hold the device for it): Triton's facts, cpp_extension's probes,
        and for a candidate the watch over the runner's own functions."""
        info = {}
        if self.on_gpu:
            try:
                import triton  # noqa: F401
                self._warm_triton()
            except ImportError:
                pass
        if self.role == "candidate":
            # Importing cpp_extension starts programs (ROCm and CUDA probes:
            # hipconfig, `which hipcc`), which the run stage forbids: import
            # it now, as the answer's build did.
            importlib.import_module("torch.utils.cpp_extension")
            self.watch = kb_guard.Watch([kb_caller, kb_guard, kb_inputs, kb_load, kb_wire,
                                         sys.modules[__name__]])
            # The run stage comes with "load": the answer's module, its
            # constructor and (Triton) a first call run under the build
            # stage, where Triton's JIT may start its compilers.
        info["native_threads"] = kb_guard.native_threads()
        return info

    def op_init(self, h, blob):
        # The device's start-up that runs no kernel (start_context): the
        # verifier holds nothing on a GPU for it.
        if self.context_ready:
            return {"ok": True, "already": True}
        info, self.flush_buf = start_context(self.device, self.flush_bytes)
        self.context_ready = True
        return dict(info, ok=True)

    def op_init_kernels(self, h, blob):
        # The first kernels (first_kernels): the verifier holds the device
        # shared.
        if not self.context_ready:
            raise RuntimeError("init_kernels before init")
        if not self.device_ready:
            first_kernels(self.device)
            self.device_ready = True
        return {"ok": True}

    def op_init_host(self, h, blob):
        if self.watch is not None:
            return {"ok": True, "already": True}
        r = {"ok": True}
        r.update(self.init_host())
        return r

    def _warm_triton(self):
        # Triton asks ldconfig and ptxas for facts it caches; after the run
        # sandbox is entered no process can be started, so ask now.
        try:
            from triton.runtime.driver import driver
            target = driver.active.get_current_target()
            from triton.compiler.compiler import make_backend
            make_backend(target).hash()
        except Exception as e:  # an older or newer Triton: noted, not fatal
            self.notes.append("triton warm-up: %s" % e)
        try:
            from triton.backends.nvidia import driver as nvdriver
            nvdriver.libcuda_dirs()
        except Exception:
            pass

    # --- helpers ------------------------------------------------------------
    def sync(self):
        if self.on_gpu:
            torch.cuda.synchronize(self.device)

    def flush(self):
        if self.flush_buf is not None:
            self.flush_buf.fill_(42)

    def process(self, values):
        """KernelBench's _process_input_tensor, or ours: under the
        kernelbench protocol every tensor (integer ones too, as 423217d does)
        is cast to the precision; under ours only floating-point ones."""
        out = []
        for v in values:
            if isinstance(v, torch.Tensor):
                if self.protocol == "kernelbench" or v.is_floating_point():
                    v = v.to(dtype=self.dtype)
                v = v.to(device=self.device)
            out.append(v)
        return out

    def keep(self, key, inputs, outputs, keep_last):
        """Keeps a call's inputs and outputs under `key`; with keep_last,
        only the newest keep_last of the keys of its session (the prefix up
        to the first "/": a reference runner is shared) stay."""
        self.kept[key] = (inputs, outputs)
        self.order.append(key)
        if keep_last <= 0:
            return
        cut = key.find("/")
        prefix = key[:cut + 1] if cut >= 0 else ""
        mine = [k for k in self.order if k.startswith(prefix) and (prefix or "/" not in k)]
        for old in mine[:max(0, len(mine) - keep_last)]:
            self.order.remove(old)
            self.kept.pop(old, None)

    def describe_outputs(self, outs, complex_flags=()):
        """Each output's dtype, shape, size and address; "complex" for one
        that was complex (described as its real pairs)."""
        described = [{"dtype": str(t.dtype).replace("torch.", ""), "shape": list(t.shape),
                      "numel": t.numel(), "ptr": t.data_ptr() if t.numel() else 0} for t in outs]
        for d, was in zip(described, complex_flags):
            if was:
                d["complex"] = True
        return described

    def guard(self):
        if self.watch is None:
            return {}
        return {"patched": self.watch.patched(), "settings": self.watch.changed_settings(),
                "threads": self.watch.new_threads(), "native_threads": kb_guard.native_threads()}

    def forward(self, inputs):
        with torch.no_grad():
            return self.model(*inputs)

    # --- requests -----------------------------------------------------------
    def op_load(self, h, blob):
        self.protocol = h.get("protocol", "skilldb")
        self.dtype = PRECISIONS[h.get("precision", "fp32")]
        init_seed = int(h.get("init_seed", 42))
        if self.role == "candidate":
            self.shim = kb_load.ExtensionShim("run", h.get("ext_root", ""),
                                              split=h.get("split", True), arch=h.get("arch"),
                                              built=h.get("built"))
            kb_load.install_shim(self.shim)
        try:
            private = None
            if self.role == "candidate" and self.protocol != "kernelbench":
                # The answer runs in the problem's globals (as KernelBench
                # runs it); the inputs come from the runner's own copy, whose
                # names (sizes, torch) the answer cannot rebind. Made first,
                # with the random state put back, so that both copies'
                # module-level draws are the ones a single load makes.
                with torch.random.fork_rng(devices=[]):
                    private = kb_load.load_problem(h["problem"])
            self.ctx, self.Model, self.get_inputs, self.get_init_inputs = kb_load.load_problem(h["problem"])
            if private is not None:
                _, _, self.get_inputs, self.get_init_inputs = private
        except Exception as e:
            raise CandidateError("problem", e)
        set_seed(init_seed)
        init = self.get_init_inputs()
        if self.protocol == "kernelbench":
            init = [x.to(dtype=self.dtype).to(device=self.device) if isinstance(x, torch.Tensor) else x
                    for x in init]
        else:
            init = self.process(init)
        reply = {"ok": True}
        if self.role == "reference":
            try:
                with torch.no_grad():
                    set_seed(init_seed)
                    model = self.Model(*init)
                    self.model = model.to(device=self.device, dtype=self.dtype)
            except Exception as e:
                raise CandidateError("problem", e)
            return reply
        backend = h.get("backend", "cuda")
        try:
            ModelNew = kb_load.load_answer(h["answer"], backend, self.ctx, self.scratch)
        except kb_load.VerifierError as e:  # the cache's, not the answer's
            raise CandidateError("system", e)
        except Exception as e:
            raise CandidateError("compile", e)
        if ModelNew is None:
            raise CandidateError("compile", NameError("the answer defines no ModelNew"))
        try:
            with torch.no_grad():
                set_seed(init_seed)
                model = ModelNew(*init)
                self.model = model.to(device=self.device, dtype=self.dtype)
        except Exception as e:
            raise CandidateError("init", e)
        if h.get("warm_call"):
            # Triton compiles a kernel (ptxas, its launcher's C) at its first
            # call: made here, before the run stage forbids processes.
            try:
                set_seed(init_seed)
                warm = self.process(self.get_inputs())
                with torch.no_grad():
                    self.model(*warm)
                self.sync()
                del warm
            except Exception as e:
                raise CandidateError("runtime", e)
        kids = kb_guard.child_processes()
        if kids:
            for pid in kids:
                try:
                    os.kill(pid, 9)
                except OSError:
                    pass
            raise CandidateError("runtime", RuntimeError(
                "the answer left %d process(es) running after loading (killed): %s" % (
                    len(kids), kids[:8])))
        if self.sandbox_note is None:
            self.sandbox_note = kb_guard.enter_run_sandbox()
        reply["sandbox"] = self.sandbox_note
        reply["extensions"] = self.shim.records
        reply.update(self.guard())
        return reply

    def op_kb_seeds(self, h, blob):
        # run_and_check_correctness's trial seeds.
        torch.manual_seed(int(h.get("seed", 42)))
        return {"ok": True, "seeds": [torch.randint(0, 2 ** 32 - 1, (1,)).item()
                                      for _ in range(int(h["count"]))]}

    def op_trial(self, h, blob):
        seed = int(h["seed"])
        key = h["id"]
        parts = []
        reply = {"ok": True}
        if "inputs" in h:
            raw = kb_wire.decode_values(h["inputs"], blob)
        elif h.get("spec") and not kb_inputs.replay_needed(h["spec"]):
            # Drawn here, on the device, from the problem's input spec (as
            # the timed calls' inputs are): both sides from one seed.
            try:
                raw = kb_inputs.generate(h["spec"], seed, self.device)
            except Exception as e:
                raise CandidateError("problem", e)
        else:
            set_seed(seed)
            try:
                raw = self.get_inputs()
            except Exception as e:
                raise CandidateError("problem", e)
        if self.role == "reference":
            if self.specs is None:
                self.specs = kb_inputs.describe(raw)
            reply["spec"] = self.specs
            reply["input_bytes"] = kb_inputs.nbytes(raw)
            if h.get("ship_inputs"):
                w = kb_wire.BlobWriter()
                reply["inputs"] = kb_wire.encode_values(raw, w)
                parts = w.parts
        inputs = self.process(raw)
        before = None
        if self.role == "candidate":
            before = [t.clone() if isinstance(t, torch.Tensor) else None for t in inputs]
        set_seed(seed)  # KernelBench seeds again before each model's forward
        try:
            out = self.forward(inputs)
            self.sync()
        except Exception as e:
            raise CandidateError("runtime", e)
        outs, kind = flatten_output(out)
        was_complex = complex_outputs(out)
        reply["output_kind"] = kind
        outs = [plain(t) for t in outs]
        if before is not None:
            reply["inputs_modified"] = [i for i, (b, t) in enumerate(zip(before, inputs))
                                        if b is not None and not same_values(b, t)]
            reply.update(self.guard())
        reply["outputs"] = self.describe_outputs(outs, was_complex)
        self.call_blocks = storage_bytes(list(inputs) + outs)
        self.keep(key, inputs, outs, 0)
        if self.role == "reference" and h.get("want_f64"):
            try:
                m64 = copy.deepcopy(self.model).to(torch.float64)
                x64 = [t.to(torch.float64) if isinstance(t, torch.Tensor) and t.is_floating_point()
                       else t for t in inputs]
                with torch.no_grad():
                    o64, _ = flatten_output(m64(*x64))
                self.keep(key + "/f64", x64, [plain(t) for t in o64], 0)
                reply["f64"] = True
                del m64
            except Exception as e:
                reply["f64_error"] = "%s: %s" % (type(e).__name__, str(e)[:300])
        return reply, parts

    def op_fetch(self, h, blob):
        key = h["id"]
        if key not in self.kept:
            return {"ok": True, "missing": True}
        _, outs = self.kept[key]
        which = int(h.get("output", 0))
        if which >= len(outs):
            return {"ok": True, "missing": True}
        t = outs[which]
        # The shape of what was kept: the verifier holds it against the
        # reference's (a sample's indices say nothing of it).
        shape = list(t.shape)
        w = kb_wire.BlobWriter()
        if h.get("mode") == "sample":
            idx = torch.frombuffer(bytearray(blob), dtype=torch.int64) if len(blob) else \
                torch.empty(0, dtype=torch.int64)
            flat = t.reshape(-1)
            if idx.numel() and (int(idx.max()) >= flat.numel() or int(idx.min()) < 0):
                return {"ok": True, "shape": shape, "out_of_range": True}
            vals = flat[idx.to(flat.device)] if idx.numel() else flat[:0]
            d = w.add(vals)
        else:
            d = w.add(t)
        return {"ok": True, "tensor": d, "shape": shape}, w.parts

    def op_clear(self, h, blob):
        # A reference runner serves the sessions of several evaluators: each
        # clears only its own ids (their prefix).
        prefix = h.get("prefix")
        if isinstance(prefix, str) and prefix:
            for key in [k for k in self.kept if k.startswith(prefix)]:
                del self.kept[key]
            self.order = [k for k in self.order if not k.startswith(prefix)]
            for key in [k for k in self.pending if k.startswith(prefix)]:
                del self.pending[key]
            return {"ok": True}
        self.kept.clear()
        self.order.clear()
        self.pending.clear()
        if self.on_gpu and h.get("empty_cache"):
            torch.cuda.empty_cache()
        return {"ok": True}

    def make_inputs(self, seed):
        if kb_inputs.replay_needed(self.specs):
            set_seed(seed)
            return self.process(self.get_inputs())
        return self.process(kb_inputs.generate(self.specs, seed, self.device))

    def op_prepare(self, h, blob):
        if self.specs is None:
            self.specs = h["spec"]
        try:
            self.pending[h["id"]] = self.make_inputs(int(h["seed"]))
        except Exception as e:
            raise CandidateError("problem", e)
        return {"ok": True}

    def op_prime(self, h, blob):
        """Fills the caching allocator, before the timed rounds, with the
        blocks one round holds at once: `count` sets of the storages the last
        trial's call held (its inputs and outputs), made and freed, within
        `max_bytes`. A round keeps its calls' buffers alive, so a fresh
        runner would otherwise cudaMalloc each call's output inside its timed
        window through its first round (the H100 study of 2026-12-06g,
        bench/round_drift.py: the candidates' first-round medians 1.55 and
        2.18 times their later ones, cold and warm, up to 8.9; the long-lived
        references' 1.09 and 1.06). On a CPU it only answers the plan."""
        count = max(0, min(int(h.get("count", 0)), 10000))
        cap = int(h.get("max_bytes", 0))
        per = sum(self.call_blocks)
        if cap > 0 and per > 0:
            count = min(count, cap // per)
        reply = {"ok": True, "sets": count, "bytes": count * per, "allocated": 0}
        if not self.on_gpu or count == 0 or per == 0:
            return reply
        held = []
        try:
            for _ in range(count):
                for n in self.call_blocks:
                    held.append(_torch_empty(n, dtype=torch.uint8, device=self.device))
        except RuntimeError as e:  # out of memory: what was made still helps
            reply["short"] = "%s: %s" % (type(e).__name__, str(e)[:200])
        reply["allocated"] = sum(t.numel() for t in held)
        del held
        return reply

    def op_check_inputs(self, h, blob):
        """Which of a kept call's inputs differ from the same inputs made
        again (its seed): a timed call's check of unchanged inputs."""
        key = h["id"]
        if key not in self.kept:
            return {"ok": True, "missing": True}
        inputs, _ = self.kept[key]
        if kb_inputs.replay_needed(self.specs):
            # get_inputs() made them: the same seed need not give the same
            # values (torch.empty, other generators); the trials checked.
            return {"ok": True, "modified": [], "skipped": "inputs replayed"}
        try:
            again = self.make_inputs(int(h["seed"]))
        except Exception as e:
            raise CandidateError("problem", e)
        return {"ok": True, "modified": [
            i for i, (a, b) in enumerate(zip(again, inputs))
            if isinstance(a, torch.Tensor) and not (isinstance(b, torch.Tensor) and
                                                    same_values(a, b))]}

    def op_call(self, h, blob):
        key = h["id"]
        inputs = self.pending.pop(key)
        self.sync()
        self.flush()
        self.sync()
        if self.on_gpu:
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
        t0 = _perf_counter()
        try:
            if self.on_gpu:
                start.record()
            out = self.forward(inputs)
            if self.on_gpu:
                end.record()
            self.sync()
        except Exception as e:
            raise CandidateError("runtime", e)
        host_ms = (_perf_counter() - t0) * 1e3
        device_ms = start.elapsed_time(end) if self.on_gpu else host_ms
        outs, kind = flatten_output(out)
        outs = [plain(t) for t in outs]
        self.keep(key, inputs, outs, int(h.get("keep_last", 0)))
        reply = {"ok": True, "device_ms": device_ms, "host_ms": host_ms, "output_kind": kind,
                 "ptrs": [t.data_ptr() if t.numel() else 0 for t in outs]}
        if self.watch is not None:
            reply["threads"] = self.watch.new_threads()
        return reply

    def op_guard(self, h, blob):
        r = {"ok": True}
        r.update(self.guard())
        return r

    def op_profile(self, h, blob):
        seeds = h["seeds"]
        arg_sets = [self.make_inputs(int(s)) for s in seeds]

        def marker():
            self.flush()

        try:
            prof = kb_guard.profile(lambda *a: self.forward(list(a)), arg_sets, self.device, marker)
        except CandidateError:
            raise
        except Exception as e:
            if self.role == "candidate" and isinstance(e, (RuntimeError, ValueError)):
                raise CandidateError("runtime", e)
            return {"ok": True, "unavailable": "%s: %s" % (type(e).__name__, str(e)[:300])}
        prof["ok"] = True
        return prof

    # KernelBench's timing loop (timing.py time_execution_with_cuda_event).
    def _kb_time(self, fn, args, trials, warmup, discard):
        times = []
        if self.on_gpu:
            with torch.cuda.device(self.device):
                for _ in range(warmup):
                    fn(*args)
                    torch.cuda.synchronize(device=self.device)
                torch.cuda.empty_cache()
                for trial in range(trials + discard):
                    torch.cuda.synchronize(device=self.device)
                    s = torch.cuda.Event(enable_timing=True)
                    e = torch.cuda.Event(enable_timing=True)
                    dummy = torch.empty(KB_FLUSH_SHAPE, dtype=torch.int64, device=self.device)
                    dummy.fill_(42)
                    del dummy
                    s.record()
                    fn(*args)
                    e.record()
                    torch.cuda.synchronize(device=self.device)
                    if trial >= discard:
                        times.append(s.elapsed_time(e))
            return times
        # No device: the same loop on the host clock (CPU tests only).
        for _ in range(warmup):
            fn(*args)
        for trial in range(trials + discard):
            self.flush()
            t0 = _perf_counter()
            fn(*args)
            if trial >= discard:
                times.append((_perf_counter() - t0) * 1e3)
        return times

    def op_time_kb(self, h, blob):
        trials = int(h.get("trials", 100))
        discard = int(h.get("discard", 1))
        seed = int(h.get("seed", 42))
        if self.role == "candidate":
            # eval.py: set_seed(seed_num); inputs = get_inputs(); timed with
            # the same inputs every trial, outside torch.no_grad().
            set_seed(seed)
            inputs = self.process(self.get_inputs())
            self.sync()
            try:
                times = self._kb_time(self.model, inputs, trials, int(h.get("warmup", 3)), discard)
            except Exception as e:
                raise CandidateError("runtime", e)
            return {"ok": True, "times_ms": times}
        # measure_ref_program_time: a fresh Model, inputs and init inputs
        # cast to the precision (integers too), inside torch.no_grad().
        with torch.no_grad():
            set_seed(seed)
            inputs = self.get_inputs()
            set_seed(seed)
            init = self.get_init_inputs()
            inputs = [x.to(device=self.device, dtype=self.dtype) if isinstance(x, torch.Tensor) else x
                      for x in inputs]
            init = [x.to(device=self.device, dtype=self.dtype) if isinstance(x, torch.Tensor) else x
                    for x in init]
            model = self.Model(*init).to(device=self.device, dtype=self.dtype)
            if h.get("compile"):
                if not hasattr(torch, "compile"):
                    return {"ok": True, "unavailable": "torch %s has no torch.compile" % torch.__version__}
                torch._dynamo.reset()
                model = torch.compile(model, backend="inductor", mode="default")
            self.sync()
            times = self._kb_time(model, inputs, trials, int(h.get("warmup", 5)), discard)
        return {"ok": True, "times_ms": times}

    def op_time_baseline(self, h, blob):
        """This verifier's baseline timing of the reference (eager or
        torch.compile), outside the interleaved rounds: `calls` timed calls,
        each on fresh inputs, as op_call times them."""
        model = self.model
        if h.get("compile"):
            if not hasattr(torch, "compile"):
                return {"ok": True, "unavailable": "torch %s has no torch.compile" % torch.__version__}
            torch._dynamo.reset()
            model = torch.compile(self.model, backend="inductor", mode="default")
        saved = self.model
        self.model = model
        times = []
        try:
            seeds = h["seeds"]
            for i, s in enumerate(seeds):
                self.pending["b"] = self.make_inputs(int(s))
                r = self.op_call({"id": "b", "keep_last": 1}, b"")
                if i >= int(h.get("warmup", 3)):
                    times.append(r["device_ms"])
        finally:
            self.model = saved
            self.kept.pop("b", None)
            self.order = [k for k in self.order if k != "b"]
            self.pending.pop("b", None)
        return {"ok": True, "times_ms": times}

    def op_static_check(self, h, blob):
        """KernelBench's kernel_static_checker.py (from the user's checkout)
        on the answer's source: its errors and warnings, as it gives them."""
        import importlib.util as iu
        spec = iu.spec_from_file_location("kb_static_checker", h["path"])
        mod = iu.module_from_spec(spec)
        spec.loader.exec_module(mod)
        valid, errors, warnings = mod.validate_kernel_static(
            h["code"], backend=h.get("backend", "cuda"), precision=h.get("precision", "fp32"))
        return {"ok": True, "valid": bool(valid), "errors": list(errors), "warnings": list(warnings)}

    def op_describe(self, h, blob):
        r = {"ok": True, "device": str(self.device), "torch": torch.__version__}
        if not self.on_gpu:
            r["name"] = "host"
            return r
        props = torch.cuda.get_device_properties(self.device)
        r["name"] = props.name
        r["capability"] = "%d.%d" % (props.major, props.minor)
        r["sm_count"] = props.multi_processor_count
        r["l2_bytes"] = getattr(props, "L2_cache_size", 0)
        r["memory_bytes"] = props.total_memory
        # Ceilings, measured: a device-to-device copy (bytes read + written)
        # and an fp32 matrix product (TF32 off), best of a few.
        n = 1 << 28
        a = torch.empty(n, dtype=torch.float32, device=self.device).fill_(1)
        b = torch.empty_like(a)
        best = float("inf")
        for _ in range(5):
            s = torch.cuda.Event(enable_timing=True)
            e = torch.cuda.Event(enable_timing=True)
            s.record()
            b.copy_(a)
            e.record()
            torch.cuda.synchronize()
            best = min(best, s.elapsed_time(e))
        r["bandwidth_bytes_per_s"] = 2 * 4 * n / (best / 1e3)
        del a, b
        m = 8192
        old = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = False
        x = torch.randn(m, m, device=self.device)
        y = torch.randn(m, m, device=self.device)
        best = float("inf")
        for _ in range(3):
            s = torch.cuda.Event(enable_timing=True)
            e = torch.cuda.Event(enable_timing=True)
            s.record()
            x @ y
            e.record()
            torch.cuda.synchronize()
            best = min(best, s.elapsed_time(e))
        torch.backends.cuda.matmul.allow_tf32 = old
        r["fp32_flops_per_s"] = 2 * m ** 3 / (best / 1e3)
        del x, y
        torch.cuda.empty_cache()
        return r

    def op_make_once(self, h, blob):
        """Makes what a cache gets once, in a process that runs no answer's
        code (one that did could change them before the builder moves them
        into the cache, for every later build and run): with `make_pch`, the
        precompiled headers there (kb_load.make_pch; `pch_headers`, if given,
        names which: kb_load.PCH_TYPES, PCH_EXTENSION); with `make_caller`,
        the generic caller (kb_caller) into `ext_root` if `ext_cache` lacks
        it. Side by side. The reply's "pch" has the headers' time or an
        error; its "caller" the caller's key and time, an error, or neither
        (it was there)."""
        from concurrent.futures import ThreadPoolExecutor
        ext_root = h["ext_root"]
        os.makedirs(ext_root, exist_ok=True)
        reply = {"ok": True}
        with ThreadPoolExecutor(max_workers=2) as pool:
            made = pool.submit(_timed, kb_load.make_pch, h["make_pch"], h.get("pch_variants"),
                               h.get("pch_headers")) if h.get("make_pch") else None
            caller = pool.submit(_timed, _build_caller_if_missing, ext_root, h.get("ext_cache"),
                                 kb_load.ExtensionShim("build", ext_root).real) if h.get(
                                     "make_caller") else None
            if made is not None:
                reply["pch"] = made.result()[1]
            if caller is not None:
                key, reply["caller"] = caller.result()
                if key:
                    reply["caller"]["key"] = key
        return reply

    def op_build(self, h, blob):
        """Runs the answer's module so that its extensions build into
        `ext_root` (and, with `warm`, calls its ModelNew once so Triton
        compiles)."""
        ext_root = h["ext_root"]
        os.makedirs(ext_root, exist_ok=True)
        self.shim = kb_load.ExtensionShim("build", ext_root, h.get("light_include", True),
                                          h.get("pch") or None, h.get("ext_cache") or None,
                                          h.get("split", True),
                                          generic_caller=h.get("generic_caller", True))
        kb_load.install_shim(self.shim)
        self.protocol = h.get("protocol", "skilldb")
        self.dtype = PRECISIONS[h.get("precision", "fp32")]
        t0 = time.time()
        try:
            ctx, Model, get_inputs, get_init_inputs = kb_load.load_problem(h["problem"])
        except Exception as e:
            raise CandidateError("problem", e)
        try:
            ModelNew = kb_load.load_answer(h["answer"], h.get("backend", "cuda"), ctx, self.scratch)
        except Exception as e:
            # kb_load.VerifierError: the cache's or the caller's failure, not
            # the answer's (as in "load"): never cached as a compile error.
            err = error_reply("system" if isinstance(e, kb_load.VerifierError) else "compile", e)
            err["extensions"] = self.shim.records
            return err
        reply = {"ok": True, "extensions": self.shim.records, "has_model_new": ModelNew is not None,
                 "module_seconds": time.time() - t0}
        if h.get("warm") and ModelNew is not None:
            t1 = time.time()
            try:
                seed = int(h.get("init_seed", 42))
                set_seed(seed)
                init = get_init_inputs()
                init = self.process(init) if self.protocol != "kernelbench" else [
                    x.to(dtype=self.dtype).to(device=self.device) if isinstance(x, torch.Tensor) else x
                    for x in init]
                with torch.no_grad():
                    set_seed(seed)
                    model = ModelNew(*init).to(device=self.device, dtype=self.dtype)
                    set_seed(seed)
                    model(*self.process(get_inputs()))
                self.sync()
                reply["warm_seconds"] = time.time() - t1
            except Exception as e:  # the run judges it; the build only warms
                reply["warm_error"] = "%s: %s" % (type(e).__name__, str(e)[-2000:])
        return reply

    def op_inspect(self, h, blob):
        try:
            return self._inspect(h, blob)
        finally:
            # Other problems' runners may share the device: what this one
            # cached for its tensors goes back (a level-1 problem's inputs
            # and outputs are tens of GB).
            if self.on_gpu:
                gc.collect()
                torch.cuda.empty_cache()

    def _inspect(self, h, blob):
        t0 = time.time()
        source = h["problem"]
        seed = int(h.get("seed", 42))
        r = {"ok": True, "code_hash": code_hash(source)}
        try:
            ctx, Model, get_inputs, get_init_inputs = kb_load.load_problem(source)
        except Exception as e:
            return error_reply("problem", e)
        self.protocol = "skilldb"
        self.dtype = PRECISIONS[h.get("precision", "fp32")]
        try:
            set_seed(seed)
            init = get_init_inputs()
            w = kb_wire.BlobWriter()
            r["init_inputs"] = kb_wire.encode_values(init, w)
        except Exception as e:
            return error_reply("problem", e)
        # Shapes first, without memory, where PyTorch can (torch >= 2.0).
        footprint = None
        if hasattr(torch, "device") and hasattr(torch.device("meta"), "__enter__"):
            try:
                with torch.device("meta"):
                    set_seed(seed)
                    meta = get_inputs()
                r["spec"] = kb_inputs.describe(meta, classify_values=False)
                footprint = kb_inputs.nbytes(meta)
            except Exception:
                footprint = None
        cap = int(h.get("max_screen_bytes", 2 << 30))
        if footprint is not None and footprint > cap:
            r["input_bytes"] = footprint
            r["screen"] = {"skipped": "inputs of %.2f GB exceed the screen limit of %.2f GB on %s"
                           % (footprint / 1e9, cap / 1e9, self.device)}
            r["seconds"] = time.time() - t0
            return r, w.parts
        try:
            set_seed(seed)
            raw1 = get_inputs()
            r["spec"] = kb_inputs.describe(raw1)
            r["input_bytes"] = kb_inputs.nbytes(raw1)
            if r["input_bytes"] > cap:
                r["screen"] = {"skipped": "inputs of %.2f GB exceed the screen limit of %.2f GB"
                               % (r["input_bytes"] / 1e9, cap / 1e9)}
                return r, w.parts
            set_seed(seed + 1)
            raw2 = get_inputs()
            with torch.no_grad():
                init_p = self.process(init)
                set_seed(seed)
                model = Model(*init_p).to(device=self.device, dtype=self.dtype)
                o1, k1 = flatten_output(model(*self.process(raw1)))
                o2, _ = flatten_output(model(*self.process(raw2)))
                self.sync()
            r["output"] = self.describe_outputs(o1)
            r["output_kind"] = k1
            r["screen"] = screen(raw1, raw2, o1, o2)
            try:
                from torch.utils.flop_counter import FlopCounterMode
                with torch.no_grad(), FlopCounterMode(display=False) as fc:
                    model(*self.process(raw1))
                r["flops"] = int(fc.get_total_flops())
            except Exception:
                pass
        except Exception as e:
            return error_reply("problem", e)
        r["seconds"] = time.time() - t0
        return r, w.parts

    def serve(self):
        handlers = {
            "load": self.op_load, "kb_seeds": self.op_kb_seeds, "trial": self.op_trial,
            "fetch": self.op_fetch, "clear": self.op_clear, "prepare": self.op_prepare,
            "call": self.op_call, "guard": self.op_guard, "profile": self.op_profile,
            "time_kb": self.op_time_kb, "time_baseline": self.op_time_baseline,
            "describe": self.op_describe, "build": self.op_build, "inspect": self.op_inspect,
            "make_once": self.op_make_once,
            "init": self.op_init, "static_check": self.op_static_check,
            "check_inputs": self.op_check_inputs, "prime": self.op_prime,
            "init_host": self.op_init_host,
            "init_profiler": self.op_init_profiler, "init_kernels": self.op_init_kernels,
            "init_profiler_host": self.op_init_profiler_host,
        }
        while True:
            try:
                h, blob = kb_wire.read_frame(self.sock)
            except kb_wire.ChannelClosed:
                return
            op = h.get("op", "")
            if op == "quit":
                kb_wire.send_frame(self.sock, {"ok": True})
                return
            fn = handlers.get(op)
            parts = ()
            t0 = _perf_counter()
            cpu0 = _cpu_s()
            if fn is None:
                reply = {"ok": False, "error": {"kind": "internal", "name": "protocol",
                                                "message": "unknown op %r" % op}}
            else:
                try:
                    reply = fn(h, blob)
                    if isinstance(reply, tuple):
                        reply, parts = reply
                except CandidateError as e:
                    reply = error_reply(e.kind, e.exc)
                except Exception as e:
                    reply = error_reply("internal", e)
            if self.notes:
                reply["notes"] = self.notes
                self.notes = []
            reply["op_ms"] = (_perf_counter() - t0) * 1e3
            reply["op_cpu_ms"] = (_cpu_s() - cpu0) * 1e3
            kb_wire.send_frame(self.sock, reply, parts)


def storage_bytes(values):
    """The size of each distinct storage under the tensors in `values` (a
    view counts its whole storage, a storage shared by two counts once)."""
    seen = {}
    for t in values:
        if isinstance(t, torch.Tensor) and t.numel():
            s = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
            seen[s.data_ptr()] = s.nbytes() if hasattr(s, "nbytes") else s.size() * t.element_size()
    return list(seen.values())


def code_hash(code):
    """KernelBench's get_code_hash (src/kernelbench/dataset.py): md5 of the
    source without docstrings, comments and whitespace."""
    import hashlib
    import re
    code = re.sub(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'', "", code)
    cleaned = re.sub(r"#.*$|\s+", "", code, flags=re.MULTILINE)
    return hashlib.md5(cleaned.encode()).hexdigest()


def screen(raw1, raw2, outs1, outs2):
    """The degenerate-problem screen: is the output constant, or (nearly)
    the same for two different random inputs?"""
    inputs_differ = any(isinstance(a, torch.Tensor) and a.numel() and not torch.equal(a, b)
                        for a, b in zip(raw1, raw2))
    if not inputs_differ:
        return {"degenerate": False, "note": "get_inputs() returned the same inputs under two seeds"}
    for i, (a, b) in enumerate(zip(outs1, outs2)):
        if a.numel() == 0:
            continue
        a64 = a.detach().to(torch.float64)
        b64 = b.detach().to(torch.float64)
        if not torch.isfinite(a64).all():
            continue
        scale = float(a64.abs().max())
        if float(a64.max()) == float(a64.min()):
            return {"degenerate": True, "reason": "output %d is constant (every element is %g)"
                    % (i, float(a64.reshape(-1)[0]))}
        if a.shape != b.shape:
            continue  # its size depends on the inputs' values: so does it
        if torch.equal(a, b):
            return {"degenerate": True,
                    "reason": "output %d is the same for two different random inputs" % i}
        diff = float((a64 - b64).abs().max())
        if scale > 0 and diff <= 1e-5 * scale:
            return {"degenerate": True, "reason": "output %d is nearly independent of the inputs "
                    "(largest change %.3g against a magnitude of %.3g)" % (i, diff, scale)}
        spread = float(a64.std()) if a64.numel() > 1 else 0.0
        mean_abs = float(a64.abs().mean())
        if mean_abs > 0 and spread <= 1e-6 * mean_abs:
            return {"degenerate": True, "reason": "output %d is nearly constant (spread %.3g "
                    "against a mean magnitude of %.3g)" % (i, spread, mean_abs)}
    return {"degenerate": False}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fd", type=int, required=True)
    ap.add_argument("--scratch", required=True)
    ap.add_argument("--role", required=True,
                    choices=["reference", "candidate", "build", "inspect"])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--flush-bytes", type=int, default=8 << 20)
    args = ap.parse_args()
    sock = socket.socket(fileno=args.fd)
    os.chdir(args.scratch)
    runner = Runner(args.role, sock, args.scratch, args.device, args.flush_bytes)
    try:
        runner.start()
    except Exception as e:
        kb_wire.send_frame(sock, error_reply("startup", e))
        return 3
    runner.serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
