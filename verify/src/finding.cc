#include "skilldb/verify/finding.h"

#include <utility>

namespace skilldb::verify {
namespace {

constexpr std::pair<FindingCode, std::string_view> kNames[] = {
    {FindingCode::kCompileError, "compile_error"},
    {FindingCode::kForbiddenImport, "forbidden_import"},
    {FindingCode::kForbiddenExport, "forbidden_export"},
    {FindingCode::kLoadError, "load_error"},
    {FindingCode::kLaunchError, "launch_error"},
    {FindingCode::kCrashed, "crashed"},
    {FindingCode::kTimeout, "timeout"},
    {FindingCode::kStickyCudaError, "sticky_cuda_error"},
    {FindingCode::kResourceLimit, "resource_limit"},
    {FindingCode::kSandboxViolation, "sandbox_violation"},
    {FindingCode::kUnwrittenOutput, "unwritten_output"},
    {FindingCode::kWrongOutput, "wrong_output"},
    {FindingCode::kOutOfBoundsWrite, "out_of_bounds_write"},
    {FindingCode::kInputsModified, "inputs_modified"},
    {FindingCode::kNoKernelLaunched, "no_kernel_launched"},
    {FindingCode::kForeignStream, "foreign_stream"},
    {FindingCode::kLateWork, "late_work"},
    {FindingCode::kHiddenWork, "hidden_work"},
    {FindingCode::kTimerMismatch, "timer_mismatch"},
    {FindingCode::kInconsistentResults, "inconsistent_results"},
    {FindingCode::kNotFaster, "not_faster"},
    {FindingCode::kConfidenceTooLow, "confidence_too_low"},
    {FindingCode::kTooFewRounds, "too_few_rounds"},
    {FindingCode::kImplausibleSpeedup, "implausible_speedup"},
    {FindingCode::kReferenceFailed, "reference_failed"},
    {FindingCode::kHiddenThread, "hidden_thread"},
    {FindingCode::kCachedOutput, "cached_output"},
    {FindingCode::kUntimedWork, "untimed_work"},
    {FindingCode::kPatchedFunction, "patched_function"},
    {FindingCode::kPrecisionLowered, "precision_lowered"},
    {FindingCode::kLazyOutput, "lazy_output"},
    {FindingCode::kTorchDoesTheWork, "torch_does_the_work"},
    {FindingCode::kUnsupportedFormat, "unsupported_format"},
    {FindingCode::kStaticCheck, "static_check"},
};

}  // namespace

std::string_view FindingCodeName(FindingCode code) {
  for (const auto& [c, name] : kNames) {
    if (c == code) return name;
  }
  return "unknown";
}

std::optional<FindingCode> ParseFindingCode(std::string_view name) {
  for (const auto& [c, n] : kNames) {
    if (n == name) return c;
  }
  return std::nullopt;
}

std::string FormatFinding(const Finding& finding) {
  std::string out = "[";
  out += FindingCodeName(finding.code);
  out += "] ";
  out += finding.message;
  return out;
}

bool HasFinding(const std::vector<Finding>& findings, FindingCode code) {
  for (const Finding& f : findings) {
    if (f.code == code) return true;
  }
  return false;
}

bool IsHackFinding(FindingCode code) {
  switch (code) {
    case FindingCode::kForbiddenImport:
    case FindingCode::kForbiddenExport:
    case FindingCode::kSandboxViolation:
    case FindingCode::kInputsModified:
    case FindingCode::kOutOfBoundsWrite:
    case FindingCode::kNoKernelLaunched:
    case FindingCode::kForeignStream:
    case FindingCode::kLateWork:
    case FindingCode::kHiddenWork:
    case FindingCode::kTimerMismatch:
    case FindingCode::kInconsistentResults:
    case FindingCode::kImplausibleSpeedup:
    // KernelBench answers' (verify/kernelbench/README.md, "Findings").
    case FindingCode::kHiddenThread:
    case FindingCode::kCachedOutput:
    case FindingCode::kUntimedWork:
    case FindingCode::kPatchedFunction:
    case FindingCode::kPrecisionLowered:
    case FindingCode::kLazyOutput:
      return true;
    default:
      return false;
  }
}

}  // namespace skilldb::verify
