#include "skilldb/policy/reward.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "skilldb/verify/finding.h"

namespace skilldb::policy {
namespace {

bool Has(const std::vector<std::string>& findings, std::string_view code) {
  return std::find(findings.begin(), findings.end(), code) != findings.end();
}

bool AnyOf(const std::vector<std::string>& findings,
           std::initializer_list<std::string_view> codes) {
  for (std::string_view c : codes) {
    if (Has(findings, c)) return true;
  }
  return false;
}

}  // namespace

bool IsHackFinding(std::string_view code) {
  // verify/'s list (finding.h), so the rewards and the reports agree.
  const std::optional<verify::FindingCode> c = verify::ParseFindingCode(code);
  return c.has_value() && verify::IsHackFinding(*c);
}

SampleVerdict VerdictFor(const VerificationReport& report,
                         const std::vector<std::string>& findings) {
  if (report.passed) return SampleVerdict::kFaster;
  for (const std::string& f : findings) {
    if (IsHackFinding(f)) return SampleVerdict::kHack;
  }
  if (!report.compiled || Has(findings, "compile_error"))
    return SampleVerdict::kCompileError;
  if (Has(findings, "load_error")) return SampleVerdict::kLoadError;
  if (AnyOf(findings, {"crashed", "timeout", "launch_error",
                       "sticky_cuda_error", "resource_limit"})) {
    return SampleVerdict::kRuntimeError;
  }
  if (AnyOf(findings, {"wrong_output", "unwritten_output"}) ||
      (report.correctness.checked && !report.correctness.passed)) {
    return SampleVerdict::kWrong;
  }
  if (Has(findings, "reference_failed")) return SampleVerdict::kVerifierError;
  return SampleVerdict::kNotFaster;
}

double DefaultReward(const RewardInput& input,
                     const DefaultRewardOptions& options) {
  if (input.verdict == SampleVerdict::kHack) return options.hack_reward;
  const bool correct = input.verdict == SampleVerdict::kFaster ||
                       input.verdict == SampleVerdict::kNotFaster;
  if (!correct || input.report == nullptr) return 0.0;
  double speedup = 0.0;
  if (!input.report->rounds.empty() &&
      std::isfinite(input.report->speedup.ratio)) {
    speedup = std::clamp(input.report->speedup.ratio, 0.0, options.speedup_cap);
  }
  return options.correct_weight + options.speedup_weight * speedup;
}

RewardFunction MakeDefaultReward(DefaultRewardOptions options) {
  return [options](const RewardInput& input) {
    return DefaultReward(input, options);
  };
}

}  // namespace skilldb::policy
