// KernelBench on a GPU: the CUDA (load_inline) and Triton paths, a kernel
// hidden on another stream, and PyTorch doing the work, through the
// confined runner with this verifier's protocol and KernelBench's. Exits 77
// (skipped) where Python has no torch with a CUDA device.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "file_util.h"
#include "kb_internal.h"
#include "kb_test_util.h"
#include "subprocess.h"

namespace skilldb::verify::kb {
namespace {

std::string Python() {
  const char* v = std::getenv("SKILLDB_KB_PYTHON");
  return v != nullptr && v[0] != '\0' ? v : "python3";
}

constexpr char kProblem[] = R"PY(import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return A.unsqueeze(1) * B

N = 4096
M = 4096

def get_inputs():
    return [torch.rand(N), torch.rand(N, M)]

def get_init_inputs():
    return []
)PY";

constexpr char kCudaPrefix[] = R"PY(import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void scale_rows_kernel(const float* a, const float* b, float* out, long n, long m) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n * m;
       i += (long)gridDim.x * blockDim.x) {
    out[i] = a[i / m] * b[i];
  }
}

torch::Tensor scale_rows(torch::Tensor a, torch::Tensor b) {
  auto out = torch::empty_like(b);
  const long n = b.size(0), m = b.size(1);
  scale_rows_kernel<<<4096, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
      a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), n, m);
  return out;
}
"""
ext = load_inline(name="kbgpu_scale_rows", cpp_sources="torch::Tensor scale_rows(torch::Tensor a, torch::Tensor b);",
                  cuda_sources=source, functions=["scale_rows"], verbose=False)

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.side = None
)PY";

const std::string kCuda = std::string(kCudaPrefix) + R"PY(
    def forward(self, A, B):
        return ext.scale_rows(A, B)
)PY";

const std::string kSideStream = std::string(kCudaPrefix) + R"PY(
    def forward(self, A, B):
        if self.side is None:
            self.side = torch.cuda.Stream()
        with torch.cuda.stream(self.side):
            return ext.scale_rows(A, B)
)PY";

constexpr char kTriton[] = R"PY(import torch
import torch.nn as nn
import triton
import triton.language as tl

@triton.jit
def scale_rows_kernel(a_ptr, b_ptr, out_ptr, M, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < M
    a = tl.load(a_ptr + row)
    b = tl.load(b_ptr + row * M + cols, mask=mask)
    tl.store(out_ptr + row * M + cols, a * b, mask=mask)

class ModelNew(nn.Module):
    def forward(self, A, B):
        out = torch.empty_like(B)
        N, M = B.shape
        scale_rows_kernel[(N, triton.cdiv(M, 1024))](A, B, out, M, BLOCK=1024)
        return out
)PY";

constexpr char kTorchOnly[] = R"PY(import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, A, B):
        return (A.unsqueeze(1) * B).contiguous()
)PY";

struct Gpu {
  std::string root;
  Problem problem;
  std::unique_ptr<Evaluator> ours, kernelbench;
  Gpu() {
    const char* tmp = std::getenv("TMPDIR");
    root = *verify::internal::MakeTempDir(tmp ? tmp : "/tmp", "skilldb-kb-gpu-test-");
    problem.level = 1;
    problem.id = 1;
    problem.name = "1_Scale_rows.py";
    problem.source = kProblem;
    problem.code_hash = "gpu-test";
    RunnerOptions r;
    r.python = Python();
    r.device = "cuda";
    EvalOptions o;
    o.cache_dir = verify::internal::JoinPath(root, "cache");
    o.compile_baseline = false;
    o.kb_perf_trials = 30;
    for (auto* e : {&ours, &kernelbench}) {
      auto made = Evaluator::Make(r, o);
      REQUIRE_MESSAGE(made.ok(), made.status().message());
      *e = std::move(*made);
      o.protocol = Protocol::kKernelBench;
    }
    for (const std::string& a : {kCuda, kSideStream, std::string(kTriton)}) {
      ours->Prebuild(problem, a);
    }
  }
  ~Gpu() {
    ours.reset();
    kernelbench.reset();
    verify::internal::RemoveTree(root);
  }
};

Gpu& G() {
  static Gpu* g = new Gpu();
  return *g;
}

std::string Codes(const EvalResult& r) {
  std::string s = r.verdict + ":";
  for (const Finding& f : r.findings) s += " " + FormatFinding(f);
  for (const std::string& n : r.notes) s += " | note: " + n;
  return s + " | " + r.error_message + " | " + r.compile_log.substr(0, 2000);
}

TEST_CASE("a CUDA answer through load_inline is built, confined, correct and profiled") {
  auto r = G().ours->Evaluate(G().problem, kCuda);
  REQUIRE(r.ok());
  INFO(Codes(*r));
  CHECK(r->verdict == "correct");
  CHECK(r->own_kernels >= 1);
  CHECK(r->own_share() > 0.9);
  CHECK(r->speedup_eager.has_value());
  CHECK(r->isolation.seccomp);
  CHECK(r->isolation.namespaces);
  std::printf("cuda: %s\n", FormatResultText(*r).c_str());
}

TEST_CASE("a Triton answer is compiled in the build step and judged") {
  auto r = G().ours->Evaluate(G().problem, kTriton);
  REQUIRE(r.ok());
  INFO(Codes(*r));
  CHECK(r->verdict == "correct");
  CHECK(r->format.format == AnswerFormat::kTriton);
  CHECK(r->own_share() > 0.9);
  std::printf("triton: %s\n", FormatResultText(*r).c_str());
}

TEST_CASE("work hidden on another stream is caught here and missed by KernelBench's timing") {
  auto r = G().ours->Evaluate(G().problem, kSideStream);
  REQUIRE(r.ok());
  INFO(Codes(*r));
  CHECK(r->verdict == "hack");
  const bool seen = HasFinding(r->findings, FindingCode::kForeignStream) ||
                    HasFinding(r->findings, FindingCode::kHiddenWork);
  CHECK(seen);
  auto k = G().kernelbench->Evaluate(G().problem, kSideStream);
  REQUIRE(k.ok());
  INFO(Codes(*k));
  CHECK(k->verdict == "correct");
  std::printf("side stream: ours %s; kernelbench %s\n", r->verdict.c_str(),
              FormatResultText(*k).c_str());
}

TEST_CASE("PyTorch doing the work is not credited on the GPU") {
  auto r = G().ours->Evaluate(G().problem, kTorchOnly);
  REQUIRE(r.ok());
  INFO(Codes(*r));
  CHECK(r->verdict == "not_credited");
  CHECK(r->own_kernels == 0);
}

}  // namespace
}  // namespace skilldb::verify::kb

int main(int argc, char** argv) {
  return skilldb::verify::kb::testing::RunUnlessSkipped(
      argc, argv, skilldb::verify::kb::Python(),
      "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)",
      "no Python with a CUDA device: KernelBench GPU tests skipped");
}
