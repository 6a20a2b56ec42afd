// Every task on the host backend: references agree with their float64
// oracles, and the shipped host candidates (team-written and hacks) meet
// their expectations.
#include <doctest/doctest.h>

#include "skilldb/verify/verify.h"
#include "test_util.h"

namespace skilldb::verify {
namespace {

using testing::Request;
using testing::Source;
using testing::TaskDir;
using testing::TestOptions;

std::unique_ptr<TaskVerifier> TaskHostVerifier(bool screen = true) {
  VerifierOptions o = TestOptions(Backend::kHost);
  o.static_screen = screen;
  auto v = MakeVerifier(o);
  REQUIRE_MESSAGE(v.ok(), v.status().ToString());
  return std::move(*v);
}

bool Meets(const CandidateSpec& spec, const DetailedReport& d, bool screen) {
  if (spec.expect_pass) return d.report.passed;
  const auto& want = !screen && !spec.expect_without_screen.empty()
                         ? spec.expect_without_screen
                         : spec.expect_any;
  for (FindingCode c : want) {
    if (HasFinding(d.findings, c)) return !d.report.passed;
  }
  return false;
}

enum class Which { kHacks, kTeam };

void CheckCandidates(const std::string& task_name, bool screen, Which which) {
  auto v = TaskHostVerifier(screen);
  auto task = LoadTask(TaskDir(), task_name);
  REQUIRE(task.ok());
  auto cands = LoadCandidates(TaskDir(), *task, SourceLanguage::kCpp);
  REQUIRE(cands.ok());
  int checked = 0;
  for (const Candidate& c : *cands) {
    if (c.spec.generated != (which == Which::kHacks)) continue;
    auto d = v->VerifyDetailed(Request(task_name, Source(c.spec.name, "cpp", c.source)));
    REQUIRE_MESSAGE(d.ok(), c.spec.name << ": " << d.status().ToString());
    CHECK_MESSAGE(Meets(c.spec, *d, screen),
                  task_name << "/" << c.spec.name << ": " << FormatReportText(d->report));
    ++checked;
  }
  CHECK(checked > 0);
}

TEST_CASE("every task's host reference agrees with its float64 oracle") {
  auto v = TaskHostVerifier();
  auto names = ListTasks(TaskDir());
  REQUIRE(names.ok());
  for (const std::string& name : *names) {
    auto task = LoadTask(TaskDir(), name);
    REQUIRE(task.ok());
    // The reference as a candidate: the verifier first checks the reference
    // itself against the oracle (an error if they disagree), then the copy.
    auto d = v->VerifyDetailed(Request(name, Source("reference", "cpp", task->reference_cpp), 1));
    REQUIRE_MESSAGE(d.ok(), name << ": " << d.status().ToString());
    CHECK_MESSAGE(d->report.correctness.passed, name << ": " << FormatReportText(d->report));
    CHECK(d->report.correctness.trials >= 2);
  }
}

TEST_CASE("the softmax hack candidates are all rejected for their reason") {
  CheckCandidates("softmax_rows_fp32", true, Which::kHacks);
}

TEST_CASE("the matmul hack candidates are rejected by the runtime layers alone") {
  CheckCandidates("matmul_fp32", false, Which::kHacks);
}

TEST_CASE("the team's host candidates for matmul and sum_dim1 meet expectations") {
  CheckCandidates("matmul_fp32", true, Which::kTeam);
  CheckCandidates("sum_dim1_fp32", true, Which::kTeam);
}

}  // namespace
}  // namespace skilldb::verify
