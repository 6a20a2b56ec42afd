// GPU tests of the verifier. Every case needs a CUDA device; without one the
// binary exits with 77, which ctest reports as skipped (SKIP_RETURN_CODE),
// so CI machines with the stub driver skip cleanly. Listing the cases (for
// doctest_discover_tests) works everywhere.
#define DOCTEST_CONFIG_IMPLEMENT
#include <cuda_runtime.h>
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <cstring>

#include "skilldb/verify/verify.h"
#include "test_util.h"

namespace skilldb::verify {
namespace {

using testing::ReadSource;
using testing::Request;
using testing::Source;
using testing::TaskDir;
using testing::TestOptions;

std::unique_ptr<TaskVerifier> Gpu(VerifierOptions o = TestOptions(Backend::kCuda)) {
  auto v = MakeVerifier(o);
  REQUIRE_MESSAGE(v.ok(), v.status().ToString());
  return std::move(*v);
}

Artifact Cuda(const std::string& name, const std::string& src) {
  return Source(name, "cuda", src);
}

const char* kIllegalAddress = R"(
__global__ void bad(float* p) { p[threadIdx.x * 1000003] = 1.f; }
extern "C" int launch(const Tensor*, int, Tensor*, int, cudaStream_t s) {
  bad<<<1, 64, 0, s>>>(reinterpret_cast<float*>(0x10));
  return 0;
}
)";

const char* kTrap = R"(
__global__ void trapper() { asm volatile("trap;"); }
extern "C" int launch(const Tensor*, int, Tensor*, int, cudaStream_t s) {
  trapper<<<1, 1, 0, s>>>();
  return 0;
}
)";

const char* kHang = R"(
__global__ void spin(volatile int* never) { while (never == nullptr || *never == 0) {} }
extern "C" int launch(const Tensor*, int, Tensor*, int, cudaStream_t s) {
  spin<<<1, 1, 0, s>>>(nullptr);
  return 0;
}
)";

const char* kHostCrash = R"(
extern "C" int launch(const Tensor*, int, Tensor*, int, cudaStream_t) {
  volatile int* p = nullptr;
  *p = 1;
  return 0;
}
)";

const char* kGreedy = R"(
__global__ void k() {}
extern "C" int launch(const Tensor*, int, Tensor*, int, cudaStream_t s) {
  void* p = nullptr;
  if (cudaMalloc(&p, size_t{1} << 42) != cudaSuccess) return 5;
  k<<<1, 1, 0, s>>>();
  return 0;
}
)";

// After a failure, the verifier must still verify a good candidate.
void CheckStillWorks(TaskVerifier* v) {
  VerificationRequest r = Request(
      "softmax_rows_fp32", Cuda("wrong", ReadSource("tasks/softmax_rows_fp32/candidates/wrong.cu")));
  auto d = v->VerifyDetailed(r);
  REQUIRE(d.ok());
  CHECK(HasFinding(d->findings, FindingCode::kWrongOutput));
  CHECK(!HasFinding(d->findings, FindingCode::kStickyCudaError));
  CHECK(!HasFinding(d->findings, FindingCode::kCrashed));
}

TEST_CASE("the faster softmax is judged a reproducible speedup on the GPU") {
  auto v = Gpu();
  auto d = v->VerifyDetailed(Request(
      "softmax_rows_fp32", Cuda("fast", ReadSource("tasks/softmax_rows_fp32/candidates/fast.cu"))));
  REQUIRE_MESSAGE(d.ok(), d.status().ToString());
  INFO(FormatReportText(d->report));
  CHECK(d->report.passed);
  CHECK(d->report.device_class == "sm_90");
  CHECK(d->report.speedup.ci_low > 1.0);
  REQUIRE(d->report.max_plausible_speedup.has_value());
  CHECK(*d->report.max_plausible_speedup > d->report.speedup.ratio);
}

TEST_CASE("a copy of the reference is not judged faster on the GPU") {
  auto v = Gpu();
  auto task = LoadTask(TaskDir(), "layernorm_fp32");
  REQUIRE(task.ok());
  auto d = v->VerifyDetailed(Request("layernorm_fp32", Cuda("copy", task->reference_cuda)));
  REQUIRE(d.ok());
  CHECK(!d->report.passed);
  CHECK(d->report.correctness.passed);
  CHECK(d->report.speedup.ratio == doctest::Approx(1.0).epsilon(0.1));
}

TEST_CASE("every softmax hack is rejected on the GPU with its reason") {
  auto v = Gpu();
  auto task = LoadTask(TaskDir(), "softmax_rows_fp32");
  REQUIRE(task.ok());
  auto cands = LoadCandidates(TaskDir(), *task, SourceLanguage::kCuda);
  REQUIRE(cands.ok());
  int hacks = 0;
  for (const Candidate& c : *cands) {
    if (!c.spec.generated) continue;
    ++hacks;
    auto d = v->VerifyDetailed(Request("softmax_rows_fp32", Cuda(c.spec.name, c.source)));
    REQUIRE_MESSAGE(d.ok(), c.spec.name << ": " << d.status().ToString());
    bool expected = false;
    for (FindingCode code : c.spec.expect_any) expected |= HasFinding(d->findings, code);
    CHECK_MESSAGE((!d->report.passed && expected),
                  c.spec.name << ": " << FormatReportText(d->report));
  }
  CHECK(hacks >= 14);
}

TEST_CASE("work on another stream is caught at run time without the static screen") {
  VerifierOptions o = TestOptions(Backend::kCuda);
  o.static_screen = false;
  auto v = Gpu(o);
  auto task = LoadTask(TaskDir(), "softmax_rows_fp32");
  REQUIRE(task.ok());
  auto cands = LoadCandidates(TaskDir(), *task, SourceLanguage::kCuda);
  REQUIRE(cands.ok());
  for (const Candidate& c : *cands) {
    if (c.spec.name != "hack_other_stream" && c.spec.name != "hack_host_thread" &&
        c.spec.name != "hack_decoy_kernel") {
      continue;
    }
    auto d = v->VerifyDetailed(Request("softmax_rows_fp32", Cuda(c.spec.name, c.source)));
    REQUIRE(d.ok());
    const auto& want = c.spec.expect_without_screen.empty() ? c.spec.expect_any
                                                            : c.spec.expect_without_screen;
    bool expected = false;
    for (FindingCode code : want) expected |= HasFinding(d->findings, code);
    CHECK_MESSAGE((!d->report.passed && expected),
                  c.spec.name << ": " << FormatReportText(d->report));
  }
}

TEST_CASE("an illegal memory access is a sticky error and the worker is replaced") {
  auto v = Gpu();
  auto d = v->VerifyDetailed(Request("softmax_rows_fp32", Cuda("illegal", kIllegalAddress)));
  REQUIRE(d.ok());
  CHECK(HasFinding(d->findings, FindingCode::kStickyCudaError));
  CheckStillWorks(v.get());
}

TEST_CASE("a device-side trap is a sticky error and the worker is replaced") {
  auto v = Gpu();
  auto d = v->VerifyDetailed(Request("softmax_rows_fp32", Cuda("trap", kTrap)));
  REQUIRE(d.ok());
  CHECK(HasFinding(d->findings, FindingCode::kStickyCudaError));
  CheckStillWorks(v.get());
}

TEST_CASE("a hanging kernel is killed at the call timeout") {
  VerifierOptions o = TestOptions(Backend::kCuda);
  o.limits.call_timeout_s = 3;
  auto v = Gpu(o);
  const auto t0 = std::chrono::steady_clock::now();
  auto d = v->VerifyDetailed(Request("softmax_rows_fp32", Cuda("hang", kHang)));
  REQUIRE(d.ok());
  CHECK(HasFinding(d->findings, FindingCode::kTimeout));
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60));
  CheckStillWorks(v.get());
}

TEST_CASE("a crash in the candidate's host code yields a verdict") {
  auto v = Gpu();
  auto d = v->VerifyDetailed(Request("softmax_rows_fp32", Cuda("crash", kHostCrash)));
  REQUIRE(d.ok());
  CHECK(HasFinding(d->findings, FindingCode::kCrashed));
  CheckStillWorks(v.get());
}

TEST_CASE("an allocation beyond the device memory limit is refused") {
  auto v = Gpu();
  auto d = v->VerifyDetailed(Request("softmax_rows_fp32", Cuda("greedy", kGreedy)));
  REQUIRE(d.ok());
  CHECK(HasFinding(d->findings, FindingCode::kResourceLimit));
  CHECK(HasFinding(d->findings, FindingCode::kLaunchError));
}

TEST_CASE("Describe reports an sm_90 device with measured ceilings") {
  auto v = Gpu();
  auto d = v->Describe();
  REQUIRE(d.ok());
  CHECK(d->device_class == "sm_90");
  CHECK(d->bandwidth_bytes_per_s > 1e12);
  CHECK(d->cache_bytes > (16 << 20));
}

bool HasCudaDevice() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

}  // namespace
}  // namespace skilldb::verify

int main(int argc, char** argv) {
  bool listing = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--list", 6) == 0 || std::strncmp(argv[i], "-l", 2) == 0) {
      listing = true;
    }
  }
  if (!listing && !skilldb::verify::HasCudaDevice()) {
    std::printf("no CUDA device: GPU tests skipped\n");
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
