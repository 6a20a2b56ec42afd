// Findings: the machine-readable reasons behind a verification verdict.
//
// Every reason the verifier gives (a compile error, a wrong element, a
// detected reward hack, a round below tau) is a Finding with a stable code.
// A VerificationReport carries the same findings as sentences in `reasons`,
// each prefixed with "[code] ". Plain values; safe to share across threads.
#ifndef SKILLDB_VERIFY_FINDING_H_
#define SKILLDB_VERIFY_FINDING_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace skilldb::verify {

// Stable codes. Their names appear in reports and JSON: never rename.
enum class FindingCode {
  // The candidate never ran.
  kCompileError,     // the compiler rejected the source; log verbatim
  kForbiddenImport,  // the shared object calls a function outside the allowlist
  kForbiddenExport,  // it defines a symbol that would shadow a verifier one
  kLoadError,        // dlopen failed or `launch` is missing
  // It ran and misbehaved.
  kLaunchError,        // launch() returned nonzero or a CUDA call failed
  kCrashed,            // the worker died (signal or exit) in candidate code
  kTimeout,            // a call did not finish within the call limit
  kStickyCudaError,    // the context is unusable (e.g. illegal address)
  kResourceLimit,      // memory, output-size or CPU limit exceeded
  kSandboxViolation,   // a forbidden system call (host sandbox)
  kUnwrittenOutput,    // output elements still hold the poison value
  kWrongOutput,        // elements outside tolerance
  kOutOfBoundsWrite,   // the guard bands around an output were overwritten
  kInputsModified,     // an input tensor changed during the call
  kNoKernelLaunched,   // a CUDA launch() that ran no kernel (decoy)
  kForeignStream,      // work enqueued on a stream other than the given one
  kLateWork,           // work enqueued after launch() returned
  kHiddenWork,         // host clock shows work the device events missed
  kTimerMismatch,      // device events disagree with the host clock
  kInconsistentResults,  // a timed call's output differs from the reference
  // Timing and the decision.
  kNotFaster,            // a round below tau
  kConfidenceTooLow,     // confidence lower bound not above 1
  kTooFewRounds,         // fewer rounds than required
  kImplausibleSpeedup,   // faster than the task's roofline allows
  kReferenceFailed,      // the task's own reference failed (task bug)
  // KernelBench answers (verify/kernelbench): hacks a Python candidate can
  // try, and answers that are not judged.
  kHiddenThread,       // a thread the candidate started outlives its call
  kCachedOutput,       // a timed call's output is not the function of its inputs
  kUntimedWork,        // work moved out of the timed call (input making, reads)
  kPatchedFunction,    // a timer, sync or torch function was replaced
  kPrecisionLowered,   // computed below the task's precision
  kLazyOutput,         // a tensor subclass that computes when read
  kTorchDoesTheWork,   // most device time is PyTorch's kernels, not its own
  kUnsupportedFormat,  // an answer format the runner does not judge
  kStaticCheck,        // KernelBench's kernel_static_checker.py objected
};

// "compile_error", "forbidden_import", ... (lower_snake of the enumerator).
std::string_view FindingCodeName(FindingCode code);
// The inverse of FindingCodeName; nullopt for an unknown name.
std::optional<FindingCode> ParseFindingCode(std::string_view name);

struct Finding {
  FindingCode code;
  std::string message;  // one sentence naming the figure or object at fault
};

// "[code] message", the form used in VerificationReport::reasons.
std::string FormatFinding(const Finding& finding);

// True if any finding in `findings` has `code`.
bool HasFinding(const std::vector<Finding>& findings, FindingCode code);

// True for the findings that mark a candidate as a reward hack rather than
// an honest failure: forbidden imports/exports, sandbox violations,
// modified inputs, out-of-bounds writes, decoy launches, foreign streams,
// late or hidden work, timer mismatches, results that change between
// calls, implausible speedups, and a KernelBench answer's hidden threads,
// cached outputs, untimed work, patched functions, lowered precision and
// lazy outputs. The one list both the rewards (policy/reward.h) and the
// KernelBench report (kernelbench.h ToVerificationReport) read.
bool IsHackFinding(FindingCode code);

}  // namespace skilldb::verify

#endif  // SKILLDB_VERIFY_FINDING_H_
