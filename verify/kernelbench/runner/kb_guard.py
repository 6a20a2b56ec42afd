"""What a runner watches in the candidate's process, and its sandbox.

Everything here runs in the process the candidate controls, so each check is
evidence, not proof: a candidate can patch this module too. The verifier
therefore also checks what it can from outside (its own clock on every
request, the reference computed in another process, outputs of timed calls
fetched after the fact); see kernelbench_evaluate.cc.
"""

import ctypes
import os
import sys
import threading
import types

import torch

# Functions a candidate could patch to fake a timing or a comparison, or to
# run work while inputs are made. Names are resolved from these roots.
WATCHED = [
    "time.perf_counter", "time.perf_counter_ns", "time.time", "time.monotonic",
    "torch.allclose", "torch.equal", "torch.rand", "torch.randn", "torch.randint",
    "torch.manual_seed", "torch.no_grad", "torch.empty", "torch.zeros",
    "torch.Tensor.clone", "torch.Tensor.to", "torch.Tensor.copy_", "torch.Tensor.cpu",
    "torch.Tensor.contiguous", "torch.Tensor.fill_", "torch.Tensor.__eq__",
    "torch.Tensor.numpy", "torch.Generator.manual_seed",
    "torch.nn.Module.__call__", "torch.nn.Module._call_impl", "torch.nn.Module.to",
    "torch.cuda.synchronize", "torch.cuda.Event", "torch.cuda.Event.record",
    "torch.cuda.Event.elapsed_time", "torch.cuda.Event.synchronize",
    "torch.cuda.current_stream", "torch.cuda.Stream", "torch.cuda.empty_cache",
    "torch.profiler.profile", "torch.autograd.profiler.profile",
]

# Settings that lower the precision of PyTorch's own float32 arithmetic.
def precision_settings():
    s = {"float32_matmul_precision": torch.get_float32_matmul_precision()
         if hasattr(torch, "get_float32_matmul_precision") else "n/a"}
    # Each read alone: older PyTorch lacks some (torch 1.13's matmul
    # settings object raises AssertionError for unknown names).
    for name, owner, attr in (
            ("cuda.matmul.allow_tf32", "matmul", "allow_tf32"),
            ("cudnn.allow_tf32", "cudnn", "allow_tf32"),
            ("cuda.matmul.allow_fp16_reduced_precision_reduction", "matmul",
             "allow_fp16_reduced_precision_reduction"),
            ("cuda.matmul.allow_bf16_reduced_precision_reduction", "matmul",
             "allow_bf16_reduced_precision_reduction")):
        try:
            obj = torch.backends.cuda.matmul if owner == "matmul" else torch.backends.cudnn
            s[name] = bool(getattr(obj, attr))
        except (AttributeError, AssertionError):
            pass
    return s


def _resolve(path):
    parts = path.split(".")
    obj = sys.modules.get(parts[0])
    for p in parts[1:]:
        if obj is None:
            return None
        obj = getattr(obj, p, None)
    return obj


class Watch:
    """Identities of the watched functions and of the runner's own code,
    taken before the candidate's code runs; check() names what changed."""

    def __init__(self, runner_modules):
        self.refs = {}
        for path in WATCHED:
            obj = _resolve(path)
            if obj is not None:
                self.refs[path] = obj
        for mod in runner_modules:
            for name, obj in list(vars(mod).items()):
                if isinstance(obj, types.FunctionType):
                    self.refs[mod.__name__ + "." + name] = obj
                elif isinstance(obj, type) and obj.__module__ == mod.__name__:
                    for attr, fn in list(vars(obj).items()):
                        if isinstance(fn, types.FunctionType):
                            self.refs["%s.%s.%s" % (mod.__name__, name, attr)] = fn
        self.modules = {m.__name__: m for m in runner_modules}
        self.settings = precision_settings()
        self.threads = set(threading.enumerate())
        self.idents = set(sys._current_frames())

    def _current(self, path):
        head = path.split(".")[0]
        if head in self.modules and head not in sys.modules:
            return None
        parts = path.split(".")
        if parts[0] in self.modules:
            obj = self.modules[parts[0]]
            for p in parts[1:]:
                obj = getattr(obj, p, None)
            return obj
        return _resolve(path)

    def patched(self):
        return sorted(p for p, obj in self.refs.items() if self._current(p) is not obj)

    def changed_settings(self):
        now = precision_settings()
        return sorted("%s: %s -> %s" % (k, self.settings[k], now.get(k))
                      for k in self.settings if now.get(k) != self.settings[k])

    def new_threads(self):
        """Threads started since the watch began and still alive: those of
        `threading`, and Python threads started without it (_thread), which
        only the interpreter's list of frames shows."""
        known = set()
        names = []
        for t in threading.enumerate():
            known.add(t.ident)
            if t not in self.threads and t.is_alive():
                names.append(t.name)
        for ident in sys._current_frames():
            if ident not in known and ident not in self.idents:
                names.append("thread %d (started outside threading)" % ident)
        return sorted(names)


def native_threads():
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return -1


def enter_run_sandbox():
    """Installs the run stage's system-call filter (no processes, no exec,
    no sockets but AF_UNIX) through the verifier's own code. Returns a note
    for the report; raises if the filter was asked for and failed."""
    lib = os.environ.get("SKILLDB_KB_SANDBOX_LIB", "")
    if not lib:
        return "seccomp(run): not asked for"
    writes_ok = 1 if os.environ.get("SKILLDB_KB_MNTNS") == "1" else 0
    _name_process_starts()
    dll = ctypes.CDLL(lib)
    fn = dll.skdb_kb_enter_run_sandbox
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
    fn.restype = ctypes.c_int
    buf = ctypes.create_string_buffer(512)
    rc = fn(writes_ok, buf, 512)
    note = buf.value.decode("utf-8", "replace")
    if rc != 0:
        raise RuntimeError("the run sandbox could not be entered: " + note)
    return note


def _name_process_starts():
    """After the run stage a process start traps; through subprocess (vfork,
    with every signal blocked) the trap kills outright, so the command is
    written to the log first, where the verifier's report picks it up."""
    import subprocess
    original = subprocess.Popen._execute_child

    def execute_child(self, args, executable, *rest, **kwargs):
        try:
            what = args if isinstance(args, (str, bytes)) else " ".join(map(str, args))
            os.write(2, ("\nskilldb-sandbox: process start: %s\n" % str(what)[:200]).encode(
                "utf-8", "replace"))
        except Exception:
            pass
        return original(self, args, executable, *rest, **kwargs)

    subprocess.Popen._execute_child = execute_child


def child_processes():
    """The pids of this process's live children (all its threads')."""
    kids = []
    try:
        for tid in os.listdir("/proc/self/task"):
            with open("/proc/self/task/%s/children" % tid) as f:
                kids.extend(int(x) for x in f.read().split())
    except OSError:
        pass
    return kids


def _cuda_device_type():
    dt = getattr(torch.autograd, "DeviceType", None)
    if dt is None:
        dt = torch._C._autograd.DeviceType
    return dt.CUDA


def kineto_profile(cuda, cpu=True):
    """A profiler of PyTorch's operators (`cpu`) and, with `cuda`, its
    kernels: torch.autograd.profiler.profile with Kineto, the object
    torch.profiler.profile makes and reads its events from, taken when
    this module was imported (before any answer ran). Not
    torch.profiler.profile itself: starting a trace, it asks
    hasattr(torch, "_inductor"), which imports torch._inductor and with it
    torch._dynamo, sympy and more: on the H100 machine, with the bytecode
    cached, a candidate's profiler set-up (init_profiler_host) took 1.22 s,
    and 0.028 s this way (medians, RL step pieces of 2026-12-06c and d).
    Its keywords differ by version (_DEVICE_KEYWORD)."""
    kw = {"use_kineto": True, "use_cpu": cpu}
    if _DEVICE_KEYWORD == "use_device":
        kw["use_device"] = "cuda" if cuda else None
    else:
        kw["use_cuda"] = cuda
    return _AUTOGRAD_PROFILE(**kw)


def _kineto_profile(device):
    return kineto_profile(device.type == "cuda")


_AUTOGRAD_PROFILE = torch.autograd.profiler.profile


def _device_keyword():
    import inspect
    params = inspect.signature(_AUTOGRAD_PROFILE).parameters
    return "use_device" if "use_device" in params else "use_cuda"


_DEVICE_KEYWORD = _device_keyword()  # torch 2.x: use_device; 1.13: use_cuda


def warm_profiler_host(device):
    """The profiler's start-up without a kernel: Kineto and CUPTI started
    and stopped around host work only, so the verifier runs it without
    holding the device (bench/init_interference.py, step profiler_host,
    measures what it does beside a timed answer)."""
    with _kineto_profile(device):
        torch.empty(1).add_(1)


def warm_profiler(device):
    """Starts the profiler's machinery (Kineto, CUPTI) once, before the run
    sandbox: what it sets up the first time is then done."""
    x = torch.randn(32, 32, device=device)
    with _kineto_profile(device):
        (x @ x).sum().item()


ALLOCATION_OPS = {
    "aten::empty", "aten::empty_like", "aten::empty_strided", "aten::zeros",
    "aten::zeros_like", "aten::ones", "aten::ones_like", "aten::full",
    "aten::full_like", "aten::new_empty", "aten::new_zeros", "aten::resize_",
    "aten::contiguous", "aten::to", "aten::_to_copy", "aten::view", "aten::reshape",
    "aten::detach", "aten::size", "aten::stride", "aten::numel",
}


def profile(call, arg_sets, device, marker):
    """Profiles call(*args) for each of `arg_sets`. On a GPU: the kernels
    that ran (name, device microseconds, stream) and the stream the runner's
    own `marker()` ran on; on the CPU: PyTorch's top-level operators and
    their time against the calls' CPU time on the calling thread (cpu_us:
    time spent waiting for a core on a loaded machine counts for no one;
    the calling thread takes part in PyTorch's parallel operators, so their
    time is not counted once per thread)."""
    import time
    on_gpu = device.type == "cuda"
    result = {"kernels": [], "ops": [], "wall_us": 0.0, "cpu_us": 0.0}
    if on_gpu:
        with _kineto_profile(device) as prof:
            marker()
            torch.cuda.synchronize()
        result["runner_streams"] = sorted({
            e.device_resource_id() for e in prof.kineto_results.events()
            if e.device_type() == _cuda_device_type()})
    # One call outside the profile: what a first call does once (lazy
    # initialization in the answer or in PyTorch, first-touch allocations)
    # is not the steady state the share describes.
    if arg_sets:
        call(*arg_sets[0])
        if on_gpu:
            torch.cuda.synchronize()
    with _kineto_profile(device) as prof:
        for args in arg_sets:
            if on_gpu:
                torch.cuda.synchronize()
            t0, c0 = time.perf_counter(), time.thread_time()
            call(*args)
            if on_gpu:
                torch.cuda.synchronize()
            result["wall_us"] += (time.perf_counter() - t0) * 1e6
            result["cpu_us"] += (time.thread_time() - c0) * 1e6
    if on_gpu:
        agg = {}
        for e in prof.kineto_results.events():
            if e.device_type() != _cuda_device_type():
                continue
            name = e.name()
            if name.startswith("Memcpy") or name.startswith("Memset"):
                kind = "memory"
            else:
                kind = "kernel"
            key = (name, e.device_resource_id(), kind)
            a = agg.setdefault(key, [0, 0.0])
            a[0] += 1
            a[1] += e.duration_ns() / 1000.0
        result["kernels"] = [{"name": k[0][:400], "stream": k[1], "kind": k[2],
                              "count": v[0], "us": v[1]} for k, v in agg.items()]
    else:
        agg = {}
        for e in prof.function_events:
            if getattr(e, "cpu_parent", None) is not None:
                continue
            if not e.name.startswith("aten::"):
                continue
            a = agg.setdefault(e.name, [0, 0.0])
            a[0] += 1
            a[1] += e.cpu_time_total
        result["ops"] = [{"name": n, "count": v[0], "us": v[1],
                          "allocation": n in ALLOCATION_OPS} for n, v in agg.items()]
    return result
