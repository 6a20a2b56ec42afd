"""Where a Triton answer dies in the candidate runner (issue 35: SIGSEGV
while loading l1p12_triton_correct under the confined runner on the H200).

Runs the answer in fresh interpreters (python -X faulthandler), adding one
piece of the candidate runner's start-up at a time, and prints each one's
exit status and the tail of its stderr (faulthandler's stack on a crash):

  plain      the problem and the answer as KernelBench loads them, one call
  tritonwarm + the runner's Triton warm-up (target, backend hash, libcuda)
  profwarm   + kb_guard.warm_profiler (Kineto/CUPTI started before the call)
  profile    + the runner's profiling pass over two calls
  runner     the whole candidate start-up order (device, Triton, profiler,
             Watch), the answer imported from a scratch file, warm call,
             then the profile pass

  python3 triton_diag.py --problem P.py --answer A.py [--only NAME,...]
"""
import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "..", "runner")

CHILD = r'''
import os, sys, importlib.util
sys.path.insert(0, RUNNER)
import torch
step = STEP
dev = torch.device("cuda", 0)
src = open(PROBLEM).read()
ctx = {}
exec(compile(src, "<problem>", "exec"), ctx)
torch.manual_seed(0)
inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in ctx["get_inputs"]()]
ref = ctx["Model"](*ctx["get_init_inputs"]()).cuda()
expected = ref(*inputs)
torch.cuda.synchronize()
print("reference ok", flush=True)
if step >= 1:
    import kb_guard
    from triton.runtime.driver import driver
    target = driver.active.get_current_target()
    from triton.compiler.compiler import make_backend
    make_backend(target).hash()
    from triton.backends.nvidia import driver as nvdriver
    nvdriver.libcuda_dirs()
    print("triton warm ok", flush=True)
if step >= 2:
    kb_guard.warm_profiler(dev)
    print("profiler warm ok", flush=True)
if step >= 4:
    import kb_load, kb_inputs, kb_wire
    importlib.import_module("torch.utils.cpp_extension")
    watch = kb_guard.Watch([kb_guard, kb_inputs, kb_load, kb_wire])
    scratch = os.getcwd()
    ModelNew = kb_load.load_answer(open(ANSWER).read(), "triton", dict(ctx), scratch)
else:
    spec = importlib.util.spec_from_file_location("temp_module", ANSWER)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["temp_module"] = mod
    spec.loader.exec_module(mod)
    ModelNew = mod.ModelNew
print("answer imported", flush=True)
model = ModelNew(*ctx["get_init_inputs"]()).cuda()
with torch.no_grad():
    out = model(*inputs)
torch.cuda.synchronize()
print("first call ok, max diff %.3g" % (out - expected).abs().max().item(), flush=True)
if step >= 3:
    res = kb_guard.profile(lambda *a: model(*a), [inputs, inputs], dev, lambda: torch.cuda.synchronize())
    print("profile ok: %d kernels" % len(res["kernels"]), flush=True)
print("DONE", flush=True)
'''

STEPS = {"plain": 0, "tritonwarm": 1, "profwarm": 2, "profile": 3, "runner": 4}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--problem", required=True)
    ap.add_argument("--answer", required=True)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    names = [n for n in STEPS if not a.only or n in a.only.split(",")]
    for name in names:
        code = (CHILD.replace("RUNNER", repr(os.path.abspath(RUNNER)))
                .replace("STEP", str(STEPS[name]))
                .replace("PROBLEM", repr(os.path.abspath(a.problem)))
                .replace("ANSWER", repr(os.path.abspath(a.answer))))
        with tempfile.TemporaryDirectory(prefix="triton-diag-") as d:
            env = dict(os.environ, TRITON_CACHE_DIR=os.path.join(d, "triton"))
            try:
                p = subprocess.run([sys.executable, "-X", "faulthandler", "-c", code], cwd=d,
                                   env=env, capture_output=True, text=True, timeout=180)
                rc, out, err = p.returncode, p.stdout, p.stderr
            except subprocess.TimeoutExpired as e:
                rc, out, err = "timeout", str(e.stdout), str(e.stderr)
        print("=== %s: rc=%s" % (name, rc))
        print(out.strip()[-1500:])
        if rc != 0:
            print("--- stderr tail:\n" + err.strip()[-3000:])
        sys.stdout.flush()


if __name__ == "__main__":
    main()
