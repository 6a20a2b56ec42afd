// End-to-end tests of the verifier on the host backend: the same pipeline
// the GPU uses (compile, worker, correctness, timing, decision), run on the
// CPU so CI exercises it.
#include <doctest/doctest.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "skilldb/verify/verify.h"
#include "test_util.h"

namespace skilldb::verify {
namespace {

using testing::ReadSource;
using testing::Request;
using testing::Source;
using testing::TestOptions;

std::unique_ptr<TaskVerifier> HostVerifier(VerifierOptions o = TestOptions(Backend::kHost)) {
  auto v = MakeVerifier(o);
  REQUIRE_MESSAGE(v.ok(), v.status().ToString());
  return std::move(*v);
}

// Candidates whose only interesting property is how they fail.
const char* kCrash = R"(
extern "C" int launch(const Tensor*, int, Tensor*, int, void*) {
  volatile int* p = nullptr;
  *p = 1;
  return 0;
}
)";

const char* kHang = R"(
extern "C" int launch(const Tensor*, int, Tensor*, int, void*) {
  volatile unsigned long spin = 0;
  while (true) ++spin;
  return 0;
}
)";

TEST_CASE("a much faster host candidate is judged a reproducible speedup") {
  auto v = HostVerifier();
  auto r = v->VerifyDetailed(Request(
      "matmul_fp32", Source("fast.cc", "cpp", ReadSource("tasks/matmul_fp32/candidates/fast.cc"))));
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  INFO(FormatReportText(r->report));
  CHECK(r->report.passed);
  CHECK(r->findings.empty());
  CHECK(r->report.compiled);
  CHECK(r->report.correctness.checked);
  CHECK(r->report.correctness.passed);
  CHECK(r->report.correctness.trials >= 8);
  REQUIRE(r->report.rounds.size() == 3);
  for (const RoundTiming& t : r->report.rounds) {
    CHECK(t.candidate_ms.size() == 30);
    CHECK(t.baseline_ms.size() == 30);
    CHECK(t.speedup_ratio >= 1.05);
  }
  CHECK(r->report.speedup.ci_low > 1.0);
  CHECK(r->report.device_class == "host");
  CHECK(r->report.verifier == "host");
  CHECK(r->report.candidate_hash.size() == 64);
  REQUIRE(r->report.max_plausible_speedup.has_value());
  CHECK(*r->report.max_plausible_speedup > r->report.speedup.ratio);
  // The engine's policy agrees with the verifier's verdict.
  CHECK(PolicyViolations(VerificationPolicy{}, r->report).empty());
}

TEST_CASE("a verification report survives the JSON round trip") {
  auto v = HostVerifier();
  auto r = v->Verify(Request(
      "matmul_fp32", Source("wrong.cc", "cpp", ReadSource("tasks/matmul_fp32/candidates/wrong.cc"))));
  REQUIRE(r.ok());
  auto back = ReportFromJson(ReportToJson(*r));
  REQUIRE(back.ok());
  CHECK(back->passed == r->passed);
  CHECK(back->reasons == r->reasons);
  CHECK(back->correctness.errors == r->correctness.errors);
  CHECK(back->candidate_hash == r->candidate_hash);
}

TEST_CASE("a wrong host candidate is rejected with mismatch examples") {
  auto v = HostVerifier();
  auto r = v->VerifyDetailed(Request(
      "softmax_rows_fp32",
      Source("wrong.cc", "cpp", ReadSource("tasks/softmax_rows_fp32/candidates/wrong.cc"))));
  REQUIRE(r.ok());
  CHECK(!r->report.passed);
  CHECK(HasFinding(r->findings, FindingCode::kWrongOutput));
  CHECK(r->report.correctness.checked);
  CHECK(!r->report.correctness.passed);
  CHECK(!r->report.correctness.errors.empty());
  CHECK(r->report.rounds.empty());  // no timing for a wrong candidate
  REQUIRE(!r->report.reasons.empty());
  CHECK(r->report.reasons[0].rfind("[wrong_output]", 0) == 0);
}

TEST_CASE("a compile error comes back verbatim in the report") {
  auto v = HostVerifier();
  auto r = v->VerifyDetailed(Request(
      "softmax_rows_fp32",
      Source("bad.cc", "cpp", "extern \"C\" int launch() { return no_such_symbol_77; }\n")));
  REQUIRE(r.ok());
  CHECK(!r->report.compiled);
  CHECK(!r->report.passed);
  CHECK(HasFinding(r->findings, FindingCode::kCompileError));
  CHECK(r->report.compile_log.find("no_such_symbol_77") != std::string::npos);
  CHECK(r->report.compile_log.find("error") != std::string::npos);
}

TEST_CASE("a candidate that never ran reports no isolation, not a weak one") {
  auto v = HostVerifier();
  // A verification that ran first: its worker's layers must not be
  // borrowed by the report of a candidate that never reached a worker.
  REQUIRE(v->VerifyDetailed(Request("sum_dim1_fp32",
                                    Source("ref.cc", "cpp", ReadSource(
                                        "tasks/sum_dim1_fp32/candidates/"
                                        "wrong.cc"))))
              .ok());
  auto r = v->VerifyDetailed(
      Request("sum_dim1_fp32", Source("bad.cc", "cpp", "int x = ;")));
  REQUIRE(r.ok());
  CHECK_FALSE(r->report.compiled);
  CHECK_FALSE(r->report.isolation.applied);
  const std::string text = FormatReportText(r->report);
  CHECK(text.find("isolation: not applicable") != std::string::npos);
  CHECK(text.find("REACHABLE") == std::string::npos);
  auto back = ReportFromJson(ReportToJson(r->report));
  REQUIRE(back.ok());
  CHECK_FALSE(back->isolation.applied);
}

TEST_CASE("host worker counts past the bound are refused, not allocated") {
  VerifierOptions o = TestOptions(Backend::kHost);
  o.host_workers = 1 << 30;
  auto v = MakeVerifier(o);
  REQUIRE_FALSE(v.ok());
  CHECK(v.status().code() == StatusCode::kInvalidArgument);
  CHECK(v.status().message().find("host_workers") != std::string::npos);
}

TEST_CASE("a crashing candidate yields a verdict and the next verification works") {
  auto v = HostVerifier();
  auto r = v->VerifyDetailed(Request("softmax_rows_fp32", Source("crash.cc", "cpp", kCrash)));
  REQUIRE(r.ok());
  CHECK(!r->report.passed);
  CHECK(HasFinding(r->findings, FindingCode::kCrashed));
  auto next = v->VerifyDetailed(Request(
      "softmax_rows_fp32",
      Source("wrong.cc", "cpp", ReadSource("tasks/softmax_rows_fp32/candidates/wrong.cc"))));
  REQUIRE(next.ok());
  CHECK(HasFinding(next->findings, FindingCode::kWrongOutput));
  CHECK(!HasFinding(next->findings, FindingCode::kCrashed));
}

TEST_CASE("a hanging candidate is killed at the call timeout") {
  VerifierOptions o = TestOptions(Backend::kHost);
  o.limits.call_timeout_s = 1;
  auto v = HostVerifier(o);
  const auto t0 = std::chrono::steady_clock::now();
  auto r = v->VerifyDetailed(Request("softmax_rows_fp32", Source("hang.cc", "cpp", kHang)));
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  REQUIRE(r.ok());
  CHECK(HasFinding(r->findings, FindingCode::kTimeout));
  CHECK(s < 60);
  auto next = v->VerifyDetailed(Request("softmax_rows_fp32", Source("crash.cc", "cpp", kCrash)));
  REQUIRE(next.ok());
  CHECK(HasFinding(next->findings, FindingCode::kCrashed));
}

TEST_CASE("writes just past the output tensor are caught by the guard bands") {
  auto v = HostVerifier();
  const char* overrun = R"(
#include <cmath>
extern "C" int launch(const Tensor* in, int, Tensor* out, int, void*) {
  const int64_t d = in[0].shape[in[0].ndim - 1];
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < in[0].numel / d; ++i) {
    float m = -INFINITY, s = 0.f;
    for (int64_t j = 0; j < d; ++j) m = std::fmax(m, x[i * d + j]);
    for (int64_t j = 0; j < d; ++j) s += std::exp(x[i * d + j] - m);
    for (int64_t j = 0; j < d; ++j) y[i * d + j] = std::exp(x[i * d + j] - m) / s;
  }
  y[out[0].numel + 5] = 0.f;  // five elements past the end
  return 0;
}
)";
  auto r = v->VerifyDetailed(Request("softmax_rows_fp32", Source("overrun.cc", "cpp", overrun)));
  REQUIRE(r.ok());
  CHECK(HasFinding(r->findings, FindingCode::kOutOfBoundsWrite));
  CHECK(!HasFinding(r->findings, FindingCode::kWrongOutput));
}

TEST_CASE("launch() returning nonzero is a launch error") {
  auto v = HostVerifier();
  auto r = v->VerifyDetailed(Request(
      "softmax_rows_fp32",
      Source("fail.cc", "cpp", "extern \"C\" int launch(const Tensor*, int, Tensor*, int, void*) { return 7; }\n")));
  REQUIRE(r.ok());
  CHECK(HasFinding(r->findings, FindingCode::kLaunchError));
}

TEST_CASE("requests the verifier cannot serve are errors, not verdicts") {
  auto v = HostVerifier();
  const Artifact ok = Source("c.cc", "cpp", "int x;\n");
  CHECK(v->Verify(Request("no_such_task", ok)).status().code() == StatusCode::kInvalidArgument);
  CHECK(v->Verify(Request("softmax_rows_fp32", Source("c.cu", "cuda", "int x;")))
            .status().code() == StatusCode::kInvalidArgument);
  VerificationRequest few = Request("softmax_rows_fp32", ok);
  few.timed_calls_per_round = 5;
  CHECK(v->Verify(few).status().code() == StatusCode::kInvalidArgument);
  VerificationRequest sm90 = Request("softmax_rows_fp32", ok);
  sm90.device_class = "sm_90";
  sm90.candidate = Source("fast.cc", "cpp", ReadSource("tasks/softmax_rows_fp32/candidates/fast.cc"));
  CHECK(v->Verify(sm90).status().code() == StatusCode::kUnavailable);
}

TEST_CASE("a custom baseline is what the candidate is timed against") {
  auto v = HostVerifier();
  VerificationRequest r = Request(
      "matmul_fp32", Source("ref.cc", "cpp", ReadSource("tasks/matmul_fp32/reference.cc")));
  r.baseline = Source("fast.cc", "cpp", ReadSource("tasks/matmul_fp32/candidates/fast.cc"));
  auto d = v->VerifyDetailed(r);
  REQUIRE(d.ok());
  CHECK(!d->report.passed);
  CHECK(HasFinding(d->findings, FindingCode::kNotFaster));
  CHECK(d->report.speedup.ratio < 0.5);  // the naive loop is slower
}

TEST_CASE("two host workers serve two verifications at once") {
  VerifierOptions o = TestOptions(Backend::kHost);
  o.host_workers = 2;
  auto v = HostVerifier(o);
  const Artifact wrong =
      Source("wrong.cc", "cpp", ReadSource("tasks/matmul_fp32/candidates/wrong.cc"));
  Result<DetailedReport> a = Status::Internal("unset"), b = Status::Internal("unset");
  std::thread t1([&] { a = v->VerifyDetailed(Request("matmul_fp32", wrong)); });
  std::thread t2([&] { b = v->VerifyDetailed(Request("matmul_fp32", wrong)); });
  t1.join();
  t2.join();
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(HasFinding(a->findings, FindingCode::kWrongOutput));
  CHECK(HasFinding(b->findings, FindingCode::kWrongOutput));
}

TEST_CASE("Describe reports the host device and its measured ceilings") {
  auto v = HostVerifier();
  auto d = v->Describe();
  REQUIRE(d.ok());
  CHECK(d->device_class == "host");
  CHECK(d->bandwidth_bytes_per_s > 1e8);
  CHECK(d->fp32_flops_per_s > 1e8);
  CHECK(d->notes.find("seccomp") != std::string::npos);
}

}  // namespace
}  // namespace skilldb::verify
