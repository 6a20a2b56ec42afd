#!/usr/bin/env python3
"""KernelBench's own harness on a set of answers, the way its scripts run it.

Phase 1 builds every answer in parallel (scripts/eval_from_generations.py
with build_cache: compile.batch_compile, `--workers` spawn processes each
calling eval.build_compile_cache into the answer's build directory). Phase 2
evaluates each answer in a fresh spawned process (eval_from_generations'
mp.Pool per GPU batch) with scripts/run_and_check.py's settings:
eval_kernel_against_ref(num_correct_trials=5, num_perf_trials=100,
measure_performance=True, timing_method="cuda_event", precision=fp32,
backend=the answer's), the static checker's verdict recorded beside it (run_and_check
asserts on it; here it is reported, not applied), then the reference's eager
time as run_and_check measures it (measure_ref_program_time). The reference
timings (eager and torch.compile) are measured once per problem, after the
answers, and are not counted in the answers-per-minute figure.

The KernelBench checkout is the user's (`--kb-root`, src/ importable); its
LLM-client imports in utils.py (openai, litellm, dotenv) are not used here
and may be stubbed on PYTHONPATH where they are not installed.

Usage: kb_harness.py --kb-root DIR --manifest FILE --answers DIR --out FILE
                     [--workers 12] [--gpu-arch Hopper] [--only a.py,b.py]
                     [--no-ref-times] [--partial FILE]
"""

import argparse
import json
import multiprocessing as mp
import os
import sys
import time


def _setup(kb_root, arch):
    sys.path.insert(0, os.path.join(kb_root, "src"))
    from kernelbench import utils as kutils
    kutils.set_gpu_arch(arch)


def compile_one(args):
    kb_root, src, build_dir, arch = args
    _setup(kb_root, arch)
    from kernelbench.eval import build_compile_cache
    t0 = time.time()
    try:
        ok, _, err = build_compile_cache(custom_model_src=src, verbose=False, build_dir=build_dir)
    except Exception as e:  # compile.py's last-level catch
        ok, err = None, repr(e)
    return {"compiled_in_cache": ok, "build_seconds": time.time() - t0,
            "build_error": (str(err) if err else "")[-3000:]}


def _jsonable(v):
    try:
        json.dumps(v)
        return v
    except TypeError:
        return str(v)


def eval_one(args):
    kb_root, ref_src, src, build_dir, backend, arch = args
    _setup(kb_root, arch)
    import torch
    from kernelbench.eval import eval_kernel_against_ref
    from kernelbench.kernel_static_checker import validate_kernel_static
    out = {}
    try:
        valid, errors, warnings = validate_kernel_static(src, backend=backend, precision="fp32")
        out["static"] = {"valid": valid, "errors": errors, "warnings": warnings}
    except Exception as e:
        out["static"] = {"error": repr(e)}
    t0 = time.time()
    try:
        r = eval_kernel_against_ref(ref_src, src, seed_num=42, num_correct_trials=5,
                                    num_perf_trials=100, measure_performance=True,
                                    timing_method="cuda_event", verbose=False,
                                    build_dir=build_dir, device=torch.device("cuda:0"),
                                    backend=backend, precision=torch.float32)
        if r is None:
            out["result"] = None
            out["error"] = "eval_kernel_against_ref returned None (lock or file error: retry)"
        else:
            out["result"] = {"compiled": r.compiled, "correctness": r.correctness,
                             "runtime": r.runtime, "runtime_stats": r.runtime_stats,
                             "ref_runtime": r.ref_runtime,
                             "metadata": {k: _jsonable(v) for k, v in r.metadata.items()}}
    except Exception as e:  # run_and_check's last-level catch: compiled=False
        key = "cuda_error" if "CUDA error" in str(e) else "other_error"
        out["result"] = {"compiled": False, "correctness": False, "runtime": -1.0,
                         "metadata": {key: str(e)[-2000:]}}
    out["eval_seconds"] = time.time() - t0
    return out


def ref_times(args):
    kb_root, name, ref_src, arch = args
    _setup(kb_root, arch)
    import torch
    from kernelbench.timing import measure_ref_program_time
    out = {}
    for compile_ in (False, True):
        t0 = time.time()
        s = measure_ref_program_time(name, ref_src, num_trials=100, use_torch_compile=compile_,
                                     timing_method="cuda_event", device=torch.device("cuda:0"),
                                     precision="fp32")
        out["compile" if compile_ else "eager"] = {"stats": s, "seconds": time.time() - t0}
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kb-root", required=True)
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--answers", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--workers", type=int, default=12)
    ap.add_argument("--gpu-arch", default="Hopper")
    ap.add_argument("--build-root", default="/tmp/kb-harness-build")
    ap.add_argument("--only", default="")
    ap.add_argument("--no-ref-times", action="store_true")
    ap.add_argument("--partial", default="",
                    help="rewrite this file with the results so far after each answer")
    args = ap.parse_args()
    mp.set_start_method("spawn")
    manifest = json.load(open(args.manifest))["answers"]
    if args.only:
        keep = set(args.only.split(","))
        manifest = [a for a in manifest if a["file"] in keep]
    problems = {}
    for a in manifest:
        level, pid = a["level"], a["problem"]
        d = os.path.join(args.kb_root, "KernelBench", "level%d" % level)
        name = next(f for f in os.listdir(d) if f.split("_")[0] == str(pid))
        problems[(level, pid)] = (name, open(os.path.join(d, name)).read())
    work = []
    for i, a in enumerate(manifest):
        src = open(os.path.join(args.answers, a["file"])).read()
        build_dir = os.path.join(args.build_root, str(i))
        work.append((a, src, build_dir))
    t0 = time.time()
    with mp.Pool(args.workers) as pool:
        builds = pool.map(compile_one, [(args.kb_root, src, bd, [args.gpu_arch])
                                        for _, src, bd in work])
    t_build = time.time() - t0
    results = []
    t1 = time.time()
    for (a, src, bd), b in zip(work, builds):
        ref_src = problems[(a["level"], a["problem"])][1]
        with mp.Pool(1) as pool:
            async_r = pool.apply_async(eval_one, ((args.kb_root, ref_src, src, bd, a["backend"],
                                                   [args.gpu_arch]),))
            try:
                r = async_r.get(timeout=600)
            except mp.TimeoutError:
                r = {"result": {"compiled": False, "correctness": False, "runtime": -1.0,
                                "metadata": {"error": "Evaluation timed out"}}}
        r.update(b)
        r["file"] = a["file"]
        results.append(r)
        res = r.get("result") or {}
        if args.partial:
            json.dump({"answers": len(work), "build_wall_s": t_build,
                       "eval_wall_s_so_far": time.time() - t1, "results": results},
                      open(args.partial, "w"), indent=1, default=str)
        print("[kb] %s: compiled=%s correct=%s runtime=%s ref=%s (%.1f s)" % (
            a["file"], res.get("compiled"), res.get("correctness"), res.get("runtime"),
            res.get("ref_runtime"), r.get("eval_seconds", -1)), flush=True)
    t_eval = time.time() - t1
    refs = {}
    if not args.no_ref_times:
        for key, (name, src) in problems.items():
            with mp.Pool(1) as pool:
                refs["level%d/%d" % key] = pool.apply(ref_times, ((args.kb_root, name, src,
                                                                   [args.gpu_arch]),))
    summary = {"answers": len(work), "build_wall_s": t_build, "eval_wall_s": t_eval,
               "wall_s": t_build + t_eval,
               "answers_per_minute": len(work) / (t_build + t_eval) * 60.0,
               "workers": args.workers, "results": results, "reference_times": refs}
    json.dump(summary, open(args.out, "w"), indent=1, default=str)
    print("[kb] %d answers: build %.1f s, eval %.1f s: %.2f answers/min" % (
        len(work), t_build, t_eval, summary["answers_per_minute"]), flush=True)


if __name__ == "__main__":
    main()
