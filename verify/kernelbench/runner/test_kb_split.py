"""kb_split: what goes to the device part, what to the host part, how
launches are rewritten, and what is refused (the caller then compiles the
source whole). Pure Python: the compiled result is measured by
bench/build_split.py on a machine with the CUDA toolkit."""

import os
import re
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import kb_split  # noqa: E402

TYPICAL = r'''
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cub/cub.cuh>
#include <ATen/cuda/CUDAContext.h>
#define BLOCK 256
#define CHECK_CUDA(x) TORCH_CHECK(x.is_cuda(), #x " must be CUDA")

constexpr int kTile = 16;
struct Pair { float a; float b; };

__device__ __forceinline__ float twice(float x) { return 2.f * x; }
__host__ __device__ inline int ceil_div(int a, int b) { return (a + b - 1) / b; }

// a comment with a launch: k<<<1, 1>>>(x);
__global__ void __launch_bounds__(BLOCK) scale_kernel(const float* __restrict__ in,
                                                     float* out, int n, Pair p) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = twice(in[i]) * p.a + p.b + kTile * 0;
}

__global__ void zero_kernel(float* out, long n) {
  for (long i = threadIdx.x; i < n; i += blockDim.x) out[i] = 0.f;
}

torch::Tensor scale(torch::Tensor x) {
  CHECK_CUDA(x);
  auto out = torch::empty_like(x);
  int n = x.numel();
  const char* s = "not a launch: k<<<1,1>>>()";
  (void)s;
  scale_kernel<<<ceil_div(n, BLOCK), BLOCK, 0, at::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<float>(), out.data_ptr<float>(), n, Pair{1.f, 0.f});
  zero_kernel<<<1, 32>>>(out.data_ptr<float>(), 0);
  return out;
}
'''


def test_typical_answer_splits():
    s = kb_split.split(TYPICAL, "t1")
    assert s.kernels == ["scale_kernel", "zero_kernel"]
    # The device part: kernels, device helpers, macros, types, constants,
    # CUDA headers; no torch at all.
    assert not re.search(r"torch|ATen|at::", s.device)
    for want in ("__global__ void __launch_bounds__(BLOCK) scale_kernel", "twice(float x)",
                 "ceil_div", "#define BLOCK 256", "constexpr int kTile", "struct Pair",
                 "#include <cub/cub.cuh>", "#include <cuda_fp16.h>"):
        assert want in s.device, want
    assert "void skilldb_launch_t1_scale_kernel(dim3 skilldb_g, dim3 skilldb_b, size_t skilldb_s, " \
           "cudaStream_t skilldb_st, const float* __restrict__ in" in s.device
    assert "scale_kernel<<<skilldb_g, skilldb_b, skilldb_s, skilldb_st>>>(in, out, n, p);" in s.device
    assert "zero_kernel<<<skilldb_g, skilldb_b, skilldb_s, skilldb_st>>>(out, n);" in s.device
    # The host part: torch functions, shared types, launchers declared where
    # the kernels were; no kernel, no device-only helper, no cub.
    assert "torch::Tensor scale(torch::Tensor x)" in s.host
    assert "__global__" not in s.host and "twice(float" not in s.host
    assert "cub/cub.cuh" not in s.host
    assert "ceil_div" in s.host and "struct Pair" in s.host
    assert "#include <ATen/cuda/CUDAContext.h>" in s.host
    assert s.host.index("skilldb_launch_t1_scale_kernel(dim3") < s.host.index("torch::Tensor scale")
    # Launches rewritten, configuration and arguments kept; the ones in a
    # comment and a string are left alone.
    assert ("skilldb_launch_t1_scale_kernel((ceil_div(n, BLOCK)), BLOCK, 0, "
            "(at::cuda::getCurrentCUDAStream()), x.data_ptr<float>(), out.data_ptr<float>(), n, "
            "Pair{1.f, 0.f})") in s.host
    assert "skilldb_launch_t1_zero_kernel(1, 32, 0, 0, out.data_ptr<float>(), 0)" in s.host
    assert "// a comment with a launch: k<<<1, 1>>>(x);" not in s.host  # comments stay with items
    assert '"not a launch: k<<<1,1>>>()"' in s.host
    assert "scale_kernel<<<" not in s.host


def test_kernel_without_parameters_and_extern_c():
    src = ('extern "C" __global__ void k() {}\n'
           'void run() { k<<<dim3(1, 1), dim3(32)>>>(); }\n')
    s = kb_split.split(src, "t2")
    assert "void skilldb_launch_t2_k(dim3 skilldb_g, dim3 skilldb_b, size_t skilldb_s, " \
           "cudaStream_t skilldb_st) {" in s.device
    assert "k<<<skilldb_g, skilldb_b, skilldb_s, skilldb_st>>>();" in s.device
    assert "skilldb_launch_t2_k((dim3(1, 1)), (dim3(32)), 0, 0)" in s.host


@pytest.mark.parametrize("src,why", [
    ("template <typename T> __global__ void k(T* x) {}\nvoid f(float* x) { k<float><<<1,1>>>(x); }",
     "template kernel"),
    ("__global__ void k(float* x) {}\nvoid f(float* x) { k<<<1,1>>>(x); }\n"
     "void g(float* x) { other<<<1,1>>>(x); }", "not a kernel of this source"),
    ("__global__ void k(float* x, int n = 4) {}\nvoid f(float* x) { k<<<1,1>>>(x); }",
     "default argument"),
    ("__global__ void k(float*) {}\nvoid f(float* x) { k<<<1,1>>>(x); }", "without a name"),
    ("__global__ void k(float* x) { x[0] = at::native::foo(); }\nvoid f(float* x) { k<<<1,1>>>(x); }",
     "uses torch"),
    ("__constant__ float c[4];\n__global__ void k(float* x) { x[0] = c[0]; }\n"
     "void f(float* x, float* h) { cudaMemcpyToSymbol(c, h, 16); k<<<1,1>>>(x); }",
     "device symbol"),
    ("namespace n { __global__ void k(float* x) {} }\nvoid f(float* x) { n::k<<<1,1>>>(x); }",
     "namespace"),
    ("__global__ void k(float* x) {}\nvoid f(float* x) { k<<<1>>>(x); }", "1 parts"),
    ("void f() {}", "no kernel launch"),
    ("__global__ void k(float* x) {}\nvoid f(float* x) { k<<<1,1>>>(x); }\n/* open", "not closed"),
    ("__device__ void d(float* x);\n__global__ void k(float* x) { d<<<1,1>>>(x); }\n"
     "void f(float* x) { k<<<1,1>>>(x); }", "a launch from device code"),
    ("__global__ void k(float* x) {}\n__global__ void k(float* x, int n) {}\n"
     "void f(float* x) { k<<<1,1>>>(x); }", "defined twice"),
    ("__managed__ int m;\n__global__ void k(int* x) { x[0] = m; }\nvoid f(int* x) { k<<<1,1>>>(x); }",
     "__managed__"),
])
def test_what_is_not_split(src, why):
    with pytest.raises(kb_split.Unsplittable, match=re.escape(why)):
        kb_split.split(src, "t3")


def test_launch_from_device_code_is_refused():
    src = ("__global__ void child(float* x) {}\n"
           "__global__ void parent(float* x) { child<<<1, 1>>>(x); }\n"
           "void f(float* x) { parent<<<1, 1>>>(x); }\n")
    with pytest.raises(kb_split.Unsplittable, match="a launch from device code"):
        kb_split.split(src, "t4")


def test_tag_must_be_an_identifier_fragment():
    with pytest.raises(ValueError):
        kb_split.split(TYPICAL, "a-b")


def test_study_answers_split(tmp_path):
    # Every CUDA answer of the GPU study (bench/answers) is plain enough to
    # split, except the one that does not compile; each launch is rewritten.
    answers = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench", "answers")
    done = 0
    for name in sorted(os.listdir(answers)):
        text = open(os.path.join(answers, name)).read() if name.endswith(".py") else ""
        if "load_inline" not in text or "compile_error" in name:
            continue
        sources = re.findall(r'r?"""(.*?)"""', text, re.S)
        cuda = [src for src in sources if "<<<" in src]
        assert cuda, name
        s = kb_split.split("\n".join(cuda), "study")
        assert s.kernels and "<<<" not in s.host and "torch" not in s.device, name
        done += 1
    assert done >= 10


def test_where_the_host_part_goes_follows_the_flags():
    # kb_load decides from the answer's flags: the host functions were
    # compiled at nvcc's host level (-O<n> among the CUDA flags, none by
    # default); flags that reach the host compiler, or change what stream 0
    # means, leave the source whole. (kb_load imports torch, which the
    # test command's Python has: a missing torch fails here, never skips.)
    import kb_load
    assert kb_load.host_opt_level([], cuda=True) == "0"
    assert kb_load.host_opt_level(["-O3", "--use_fast_math"], cuda=True) == "3"
    assert kb_load.host_opt_level([""]) == "0"
    assert kb_load.host_opt_level(["-O2", "-O3"]) == "3"
    for flags in (["-Xcompiler", "-O3"], ["--compiler-options=-fopenmp"],
                  ["--default-stream", "per-thread"], ["-ccbin=/usr/bin/g++-12"]):
        assert kb_load.host_opt_level(flags, cuda=True) is None, flags
    # The precompiled header's variants: KernelBench's example passes [""].
    assert kb_load.pch_variant([""]) == ""
    assert kb_load.pch_variant(None) == ""
    assert kb_load.pch_variant(["-O3"]) == "O3"
    assert kb_load.pch_variant(["-O3", "-g"]) is None
    assert kb_load._user_cflags(["-O3", "-include", "/x/skilldb_torch_extension.h",
                                 "-Winvalid-pch"]) == ["-O3"]
    # an answer's own -include is its own
    assert kb_load._user_cflags(["-include", "mine.h", "-O3", "-include",
                                 "/x/skilldb_torch_types.h"]) == ["-include", "mine.h", "-O3"]


COND = r'''
#include <torch/extension.h>
#ifdef TORCH_API
#define SCALE 2.f
#else
#define SCALE 3.f
#endif
__global__ void k(float* x, int n) { int i = threadIdx.x; if (i < n) x[i] = SCALE; }
torch::Tensor f(torch::Tensor x) { k<<<1, 32>>>(x.data_ptr<float>(), x.numel()); return x; }
'''


def test_conditions_on_torch_macros_are_refused():
    # In the device part torch's headers are absent: a condition on one of
    # their macros would choose otherwise, silently (split_ptx.py showed the
    # kernel's PTX differ before this was refused).
    with pytest.raises(kb_split.Unsplittable, match="TORCH_API"):
        kb_split.split(COND, "c")
    with pytest.raises(kb_split.Unsplittable, match="TORCH_API"):
        kb_split.split(COND, "c", torch_macros={"TORCH_API"})
    # Also inside a kernel, and through a macro of the source.
    inner = COND.replace("#ifdef TORCH_API", "#if 1").replace(
        "x[i] = SCALE;", "x[i] = SCALE;\n#ifdef USE_ROCM\n x[i] = 0;\n#endif\n")
    with pytest.raises(kb_split.Unsplittable, match="USE_ROCM"):
        kb_split.split(inner, "c", torch_macros={"USE_ROCM"})
    via = "#define MINE (USE_ROCM + 1)\n#if MINE\n#endif\n" + COND.replace("#ifdef TORCH_API", "#if 1")
    with pytest.raises(kb_split.Unsplittable, match="MINE"):
        kb_split.split(via, "c", torch_macros={"USE_ROCM"})
    # Conditions on CUDA's macros, on the source's own, or (knowing torch's
    # macros) on names torch does not define, split.
    ok = ("#ifndef BLOCK\n#define BLOCK 256\n#endif\n#if __CUDA_ARCH__ >= 800\n#endif\n" +
          COND.replace("#ifdef TORCH_API", "#if BLOCK > 128"))
    with pytest.raises(kb_split.Unsplittable, match="BLOCK"):
        kb_split.split(ok, "c")  # without torch's macros BLOCK's first test is unknown
    assert kb_split.split(ok, "c", torch_macros={"TORCH_API", "USE_ROCM"}).kernels == ["k"]
    assert kb_split.has_conditions(ok) and not kb_split.has_conditions("// #if\nint x;")


@pytest.mark.parametrize("src,why", [
    # From the review of 2026-12-05: each compiled split and behaved
    # otherwise, or crashed the splitter, before it was refused.
    ("__global__ void k(float*x){}\n__global__ void k2(float*x){}\n"
     "#define RUN(k) k<<<1,32>>>(x)\nvoid f(float*x){ RUN(k2); }", "launches a kernel"),
    ("__global__ void k(float*x){}\n__global__ void k2(float*x){}\n#define k k2\n"
     "void f(float*x){ k<<<1,32>>>(x); }", "named like a kernel"),
    ("__global__ void k(float*x){\n#define BLOCK 128\n}\n#ifndef BLOCK\n#define BLOCK 256\n#endif\n"
     "void f(float*x){ k<<<1,BLOCK>>>(x); }", "inside a function"),
    ("#define SCALE 1.0f\n// C:\\tmp\\\n#undef SCALE\n__global__ void k(float*x){}\n"
     "void f(float*x){ k<<<1,1>>>(x); }", "continued by a backslash"),
    ("__global__ void k(float*x){}\nvoid f(float*x){ cudaFuncSetCacheConfig(k, cudaFuncCachePreferL1); "
     "k<<<1,1>>>(x); }", "names kernel k other than to launch it"),
    ("__global__ void k(float*x){}\nvoid g(){ void* p = (void*)&k; (void)p; }\n"
     "void f(float*x){ k<<<1,1>>>(x); }", "names kernel k"),
    ("__global__ void k(float*x){}\nnamespace ns { void k(int); void run(float* x){ k<<<1,1>>>(x); } }",
     "inside a namespace"),
    ("inline namespace v1 { __device__ float d(float x){ return x; } }\n"
     "__global__ void k(float*x){ x[0] = d(1.f); }\nvoid f(float*x){ k<<<1,1>>>(x); }",
     "namespace or extern block"),
    ("struct S{int a;};\n__global__ void k(S s = S{1}){}\nvoid f(){ k<<<1,1>>>(); }",
     "parameters could not be read"),
    ("#ifdef __CUDACC__\n#define T 256\n#else\n#define T 128\n#endif\n__global__ void k(float*x){}\n"
     "void f(float*x){ k<<<1,T>>>(x); }", "only nvcc defines"),
    ("#include <cuda_fp16.h>\n__global__ void k(__half* y, __half v){ y[0] = v; }\n"
     "void f(__half* y){ k<<<1,32>>>(y, 2.5f); }", "half-precision"),
    ("__global__ void k(float*x){}\r\nvoid f(float*x){ k<<<1,1>>>(x); }\r\n", "carriage returns"),
])
def test_review_findings_are_refused(src, why):
    with pytest.raises(kb_split.Unsplittable, match=re.escape(why)):
        kb_split.split(src, "r")


def test_a_comment_inside_a_launch_does_not_swallow_it():
    src = ("__global__ void k(float* x, int n) {}\n"
           "void f(float* x, int n) {\n  k<<<1, 256 /* threads */>>>(x,\n      n  // count\n  );\n}\n")
    s = kb_split.split(src, "c")
    call = s.host[s.host.index("skilldb_launch_c_k(1"):]
    assert "//" not in call.split(";")[0] and "/*" not in call.split(";")[0]
    assert re.search(r"skilldb_launch_c_k\(1, 256, 0, 0, x,\s+n\s*\);", s.host), s.host


def test_literal_suffixes_are_not_macro_names():
    src = ("#if 1.0f > 0 && 0x1Fu\n#endif\n__global__ void k(float*x){}\n"
           "void f(float*x){ k<<<1,1>>>(x); }")
    assert kb_split.split(src, "n").kernels == ["k"]


def test_host_device_functions_are_inline_in_both_parts():
    src = ("__host__ __device__ int cdiv(int a, int b) { return (a + b - 1) / b; }\n"
           "__host__ __device__ inline int twice(int a) { return 2 * a; }\n"
           "__global__ void k(float* x, int n) { x[0] = cdiv(n, 2) + twice(n); }\n"
           "void f(float* x, int n) { k<<<cdiv(n, 256), 256>>>(x, n); }\n")
    s = kb_split.split(src, "i")
    for part in (s.device, s.host):
        assert "inline __host__ __device__ int cdiv" in part
        assert "inline inline" not in part and "__host__ __device__ inline int twice" in part


def test_launches_with_side_effects_are_refused():
    base = "__global__ void k(float* x, int n) {}\nvoid f(float* x, int i) { %s }\n"
    for launch in ("k<<<i++, 32>>>(x, i);", "k<<<1, 32>>>(x, i += 2);", "k<<<1, 32>>>(x, --i);"):
        with pytest.raises(kb_split.Unsplittable, match="assign"):
            kb_split.split(base % launch, "e")
    # Comparisons and member access are not assignments.
    s = kb_split.split(base % "k<<<(i >= 2) + (i == 3), 32>>>(x, i <= 4 ? i : 0);", "e")
    assert "skilldb_launch_e_k(((i >= 2) + (i == 3)), 32, 0, 0, x, i <= 4 ? i : 0)" in s.host


def test_the_run_step_finds_a_build_by_the_build_s_arch(tmp_path, monkeypatch):
    # The build runs with TORCH_CUDA_ARCH_LIST set to the device's
    # capability, the run step in the caller's environment (on the H200,
    # 2026-12-05, without it): the run step is told the build's value, and
    # an extension's key is the same on both sides.
    import torch.utils.cpp_extension as cpp_ext
    import kb_load
    call = ("ext", "torch::Tensor f(torch::Tensor x);", "__global__ void k() {}", ["f"])
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0")
    key = kb_load.extension_key(*call, {"extra_cuda_cflags": ["-O3"]}, split=True)
    assert key == kb_load.extension_key(*call, {"extra_cuda_cflags": ["-O3"]}, split=True,
                                        arch="9.0")
    (tmp_path / key).mkdir()
    (tmp_path / key / "ext.so").write_bytes(b"")
    monkeypatch.delenv("TORCH_CUDA_ARCH_LIST")
    monkeypatch.setattr(cpp_ext, "_import_module_from_library",
                        lambda name, directory, is_module: (name, directory))
    told = kb_load.ExtensionShim("run", str(tmp_path), split=True, arch="9.0")
    assert told(*call, extra_cuda_cflags=["-O3"]) == ("ext", str(tmp_path / key))
    untold = kb_load.ExtensionShim("run", str(tmp_path), split=True)
    with pytest.raises(RuntimeError, match="TORCH_CUDA_ARCH_LIST ''"):
        untold(*call, extra_cuda_cflags=["-O3"])


@pytest.mark.parametrize("split_record, tried", [
    # A part of the split that did not compile: the build as written only.
    ("split, a part did not build (RuntimeError); built whole", ["as written"]),
    # Sources the split does not handle: the light build first, as before.
    ("not split: a launch inside a macro", ["light", "as written"]),
])
def test_after_a_split_part_fails_the_build_as_written_comes_next(tmp_path, monkeypatch,
                                                                   split_record, tried):
    import kb_load

    def split(self, name, cpp, cuda, functions, kwargs, directory, key, record):
        record["split"] = split_record
        return None

    monkeypatch.setattr(kb_load.ExtensionShim, "_build_split", split)
    src = "#include <torch/extension.h>\n__global__ void k() { undefined_thing; }\n"
    calls = []

    def real(name, cpp_sources, cuda_sources=None, functions=None, **kwargs):
        calls.append("as written" if cuda_sources == [src] or cuda_sources == src else "light")
        raise RuntimeError('error: identifier "undefined_thing" is undefined')

    shim = kb_load.ExtensionShim("build", str(tmp_path), split=True, generic_caller=False)
    shim.real = real
    with pytest.raises(RuntimeError, match="undefined_thing"):
        shim("ext", "torch::Tensor f(torch::Tensor x);", src, ["f"])
    assert calls == tried
    assert ("light_include_skipped" in shim.records[-1]) == (tried == ["as written"])
