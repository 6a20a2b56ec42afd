// The Verifier interface: how the engine asks for execution-based evidence
// that a candidate skill's code is correct and reproducibly faster.
//
// The engine only calls out through this interface; implementations live in
// consumers (verify/ has the GPU and host verifiers; the CLI has one that
// replays a recorded report). The value types here are plain structs, safe to
// copy and to share read-only across threads. A Verifier implementation
// states its own thread safety.
#ifndef SKILLDB_VERIFIER_H_
#define SKILLDB_VERIFIER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/status.h"

namespace skilldb {

// A piece of code to verify: a kernel source plus the entry point the
// verifier's task protocol expects.
struct Artifact {
  std::string name;      // human label, e.g. "reference" or a file name
  std::string language;  // "cuda" | "cpp" | "triton"
  std::string source;    // full source text; "" = the task's reference
  bool operator==(const Artifact&) const = default;
};

// What the engine asks a verifier to establish.
struct VerificationRequest {
  std::string task;    // a task the verifier knows, e.g. "softmax_rows_fp32"
  Artifact baseline;   // what the candidate must beat ("" source: reference)
  Artifact candidate;  // the code under test
  int rounds = 3;      // independent timing rounds wanted. Default: 3.
  int timed_calls_per_round = 30;  // timed calls per side per round.
  bool check_correctness = true;   // compare against the float64 reference
  // Device class the evidence must come from ("sm_90", "host"); "" = any.
  std::string device_class;
  // Seed for input generation; 0 = the verifier draws one the candidate
  // cannot predict. Fixed seeds are for tests only.
  uint64_t seed = 0;
  bool operator==(const VerificationRequest&) const = default;
};

// The correctness half of a report.
struct CorrectnessResult {
  bool checked = false;  // false when correctness was not asked for
  bool passed = false;
  int trials = 0;              // fresh-input trials run
  double max_abs_error = 0.0;  // over all trials and elements
  double max_rel_error = 0.0;
  std::vector<std::string> errors;  // first few mismatches, in words
  bool operator==(const CorrectnessResult&) const = default;
};

// One independent timing round: baseline and candidate interleaved.
struct RoundTiming {
  std::vector<double> baseline_ms;  // per timed call, device-event time
  std::vector<double> candidate_ms;
  double baseline_median_ms = 0.0;
  double candidate_median_ms = 0.0;
  double speedup_ratio = 0.0;  // baseline_median_ms / candidate_median_ms
  bool operator==(const RoundTiming&) const = default;
};

// The combined speedup estimate with its confidence interval.
struct SpeedupEstimate {
  double ratio = 0.0;    // point estimate (median of per-round ratios)
  double ci_low = 0.0;   // lower bound of the confidence interval
  double ci_high = 0.0;  // upper bound
  double confidence = 0.95;
  bool operator==(const SpeedupEstimate&) const = default;
};

// Which confinement held while the candidate was compiled and run, so that a
// trainer can refuse to learn from an unconfined verifier. Each field is
// true only if that layer was in place (network: true means the candidate
// could reach a network; a report without the object, from an older
// verifier, reads as no isolation at all).
struct IsolationInfo {
  // false when the candidate never ran (it did not compile, or the request
  // failed before a worker took it): no layer applied, and the fields below
  // say nothing about confinement. Reports without it (older verifiers)
  // read as true.
  bool applied = true;
  bool namespaces = false;     // the worker runs in its own mount namespace
  bool seccomp = false;        // a system-call filter held on the worker
  bool network = true;         // false: no network interface but a down lo
  bool pid_namespace = false;  // nothing the candidate starts outlives it
  bool compiler_confined = false;  // the compiler saw only the toolchain
  std::string notes;  // the layers in words ("sandbox: netns mntns ...")
  bool operator==(const IsolationInfo&) const = default;
};

// Time spent per phase of one verification, for throughput accounting.
// All zero for a report answered from a cache (nothing ran).
struct VerificationTimes {
  double compile_ms = 0;
  double correctness_ms = 0;
  double timing_ms = 0;
  double total_ms = 0;
  bool compile_cache_hit = false;
  bool operator==(const VerificationTimes&) const = default;
};

// Everything a verifier found out about one request. Expected outcomes
// (a compile error, a wrong answer, a hack) are reports with passed == false,
// not errors.
struct VerificationReport {
  std::string verifier;          // implementation name, e.g. "cuda"
  std::string verifier_version;  // bumps whenever the protocol changes
  std::string device;            // e.g. "NVIDIA H200 (sm_90)"
  std::string device_class;      // e.g. "sm_90" or "host"
  std::string task;
  std::string candidate_hash;  // hex digest of the candidate source
  bool compiled = false;
  std::string compile_log;  // compiler output, verbatim
  CorrectnessResult correctness;
  std::vector<RoundTiming> rounds;
  SpeedupEstimate speedup;
  // Largest speedup the task's roofline allows on this device, if known.
  std::optional<double> max_plausible_speedup;
  bool passed = false;               // the verifier's own verdict
  std::vector<std::string> reasons;  // why it failed, or notes if it passed
  int64_t finished_at_ms = 0;        // Unix time in milliseconds
  IsolationInfo isolation;
  // Coded findings, one per reason, as the verifier names them (verify/'s
  // "wrong_output", "hack_timer_patch", ...): what an agent's reward and
  // feedback read. Empty when passed, and from verifiers without codes.
  std::vector<std::string> findings;
  VerificationTimes times;
  bool operator==(const VerificationReport&) const = default;
};

// The acceptance bar every verifier and the engine share: a candidate is
// faster when every one of at least kDefaultMinRounds independent rounds
// measures a speedup of at least kDefaultMinSpeedup (5 %: below that, the
// rounds' noise on a shared GPU can make a tie look like a win). verify's
// DecisionOptions and VerificationPolicy both default to these.
inline constexpr double kDefaultMinSpeedup = 1.05;
inline constexpr int kDefaultMinRounds = 3;

// What the engine requires before a candidate may enter the library.
struct VerificationPolicy {
  // Independent rounds at least. Default: kDefaultMinRounds.
  int min_rounds = kDefaultMinRounds;
  // Every round at or above. Default: kDefaultMinSpeedup.
  double min_speedup = kDefaultMinSpeedup;
  double min_ci_low = 1.0;          // confidence lower bound must exceed this.
  bool require_correctness = true;  // Default: true.
  // Reports claiming more than this are implausible. Default: 50.
  double max_plausible_speedup = 50.0;
  std::string device_class;  // required device class; "" = any.
  bool operator==(const VerificationPolicy&) const = default;
};

// Returns the reasons `report` does not satisfy `policy` (empty: it does).
// Reasons are sentences naming the figure and the bound it missed.
std::vector<std::string> PolicyViolations(const VerificationPolicy& policy,
                                          const VerificationReport& report);

// Serializes a report as one line of compact JSON; ReportFromJson reads it
// back. Timings are kept in full.
std::string ReportToJson(const VerificationReport& report);
// Returns InvalidArgument naming the field on malformed input.
Result<VerificationReport> ReportFromJson(std::string_view json);

// The interface the engine calls to obtain evidence.
class Verifier {
 public:
  virtual ~Verifier() = default;

  // Name used in reports and audit entries ("cuda", "host", "replay").
  virtual std::string_view Name() const = 0;

  // Verifies `request`. A candidate that fails to compile, is wrong, is not
  // faster or tries to cheat yields OK with report.passed == false and the
  // reasons. Errors are for the verifier itself: InvalidArgument for an
  // unknown task or malformed request, Unavailable when the device or worker
  // cannot be had, DeadlineExceeded when verification itself timed out.
  virtual Result<VerificationReport> Verify(
      const VerificationRequest& request) = 0;

  // The device class this verifier's evidence comes from ("sm_90",
  // "host"), for filters that depend on it (a skill's arch). May start a
  // worker to find out. Default: Unavailable (the verifier cannot say).
  virtual Result<std::string> DeviceClass() {
    return Status::Unavailable(std::string(Name()) +
                               " verifier does not report its device class");
  }

  // The largest candidate source it accepts (bytes); larger ones are
  // refused without running. Default: 1 MiB.
  virtual int64_t MaxSourceBytes() const { return int64_t{1} << 20; }
};

}  // namespace skilldb

#endif  // SKILLDB_VERIFIER_H_
