// KernelBench tasks behind the engine's Verifier interface.
#include <algorithm>
#include <cstdlib>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "kb_internal.h"
#include "skilldb/util/clock.h"

namespace skilldb::verify::kb {
namespace {

bool HasCode(const std::vector<std::string>& codes, std::string_view code) {
  return std::find(codes.begin(), codes.end(), code) != codes.end();
}

// The failure's class as a finding code the Policy Agent's verdicts read
// (policy/reward.h VerdictFor): the KernelBench verdict alone has none.
std::string FailureCode(const EvalResult& r) {
  if (r.verdict == "compile_error" || !r.compiled) return "compile_error";
  if (r.verdict == "incorrect") return "wrong_output";
  if (r.verdict == "runtime_error") return "crashed";
  if (r.verdict == "timeout") return "timeout";
  if (r.verdict == "error") return "reference_failed";
  return "";
}

// The findings as codes and sentences (ToVerificationReport's contract).
void AddFindings(const EvalResult& r, VerificationReport* rep) {
  for (const Finding& f : r.findings) {
    rep->reasons.push_back(FormatFinding(f));
    // A finding that voids only a passing answer (precision_lowered on a
    // wrong one) says why in the reasons; as a code it would make an
    // honest failure a hack.
    if (r.verdict != "hack" && IsHackFinding(f.code)) continue;
    rep->findings.emplace_back(FindingCodeName(f.code));
  }
  if (r.verdict == "not_credited" &&
      !HasCode(rep->findings, "torch_does_the_work")) {
    rep->findings.push_back("torch_does_the_work");
    rep->reasons.push_back("[torch_does_the_work] correct, not credited");
  }
  const std::string failure = FailureCode(r);
  if (!failure.empty() && r.verdict != "hack" &&
      !HasCode(rep->findings, failure)) {
    rep->findings.push_back(failure);
    rep->reasons.push_back("[" + failure + "] " + r.verdict + ": " +
                           r.error_message);
  }
}

class KernelBenchVerifier final : public Verifier {
 public:
  KernelBenchVerifier(std::shared_ptr<Evaluator> ev, TaskStore store,
                      std::shared_ptr<Verifier> fallback)
      : ev_(std::move(ev)), store_(std::move(store)), fallback_(std::move(fallback)) {}

  std::string_view Name() const override { return "kernelbench"; }

  Result<VerificationReport> Verify(const VerificationRequest& request) override {
    static const std::regex kTask(R"(kernelbench/level(\d+)/(\d+))");
    std::smatch m;
    if (!std::regex_match(request.task, m, kTask)) {
      if (fallback_) return fallback_->Verify(request);
      return Status::InvalidArgument("'" + request.task +
                                     "' is not a KernelBench task (kernelbench/level<L>/<id>)");
    }
    SKILLDB_ASSIGN_OR_RETURN(Problem p, store_.Get(std::atoi(m[1].str().c_str()),
                                                   std::atoi(m[2].str().c_str())));
    const std::string& lang = request.candidate.language;
    const std::string declared = lang == "cuda" || lang == "triton" ? lang : "";
    SKILLDB_ASSIGN_OR_RETURN(EvalResult r,
                             ev_->Evaluate(p, request.candidate.source, declared));
    return ToVerificationReport(request, r, ev_->options().clocks);
  }

 private:
  std::shared_ptr<Evaluator> ev_;
  TaskStore store_;
  std::shared_ptr<Verifier> fallback_;
};

}  // namespace

VerificationReport ToVerificationReport(const VerificationRequest& q,
                                        const EvalResult& r,
                                        const DecisionOptions& clocks) {
  VerificationReport rep;
  rep.verifier = "kernelbench";
  rep.verifier_version = std::string("skilldb-kb/1 (") +
                         std::string(ProtocolName(r.protocol)) + " protocol)";
  rep.device = r.device;
  rep.device_class = r.device == "host" || r.device.empty() ? "host" : r.device;
  rep.task = q.task;
  rep.candidate_hash = r.answer_hash;
  rep.compiled = r.compiled;
  rep.compile_log = r.compile_log;
  rep.correctness.checked = r.trials > 0;
  rep.correctness.passed = r.trials > 0 && r.trials == r.trials_passed;
  rep.correctness.trials = r.trials;
  rep.correctness.max_abs_error = r.max_abs_diff;
  rep.correctness.errors = r.mismatches;
  rep.rounds = r.rounds;
  rep.speedup = r.estimate;
  rep.max_plausible_speedup = r.max_plausible_speedup;
  rep.isolation = r.isolation;
  AddFindings(r, &rep);
  bool passed = r.verdict == "correct" && r.findings.empty();
  // Verified insertion wants a reproducible speedup: every round at or
  // above tau and the interval above 1 (stats.h).
  for (const RoundTiming& t : r.rounds) {
    if (t.speedup_ratio < clocks.min_speedup) {
      passed = false;
      rep.reasons.push_back("[not_faster] a round's speedup " +
                            std::to_string(t.speedup_ratio) + " is below tau");
      break;
    }
  }
  if (r.rounds.empty() || !(r.estimate.ci_low > 1.0)) {
    passed = false;
    if (r.verdict == "correct") {
      rep.reasons.push_back(
          "[confidence_too_low] the speedup's lower bound is not above 1");
    }
  }
  if (!r.correct && rep.reasons.empty()) {
    rep.reasons.push_back(r.verdict + ": " + r.error_message);
  }
  rep.passed = passed;
  rep.times.compile_ms = r.times.build_ms;
  rep.times.correctness_ms = r.times.correctness_ms;
  rep.times.timing_ms = r.times.timing_ms;
  rep.times.total_ms = r.times.total_ms;
  rep.times.compile_cache_hit = r.times.build_cached;
  rep.finished_at_ms = util::NowUnixMs();
  return rep;
}

std::unique_ptr<Verifier> MakeKernelBenchVerifier(std::shared_ptr<Evaluator> evaluator,
                                                  TaskStore store,
                                                  std::shared_ptr<Verifier> fallback) {
  return std::make_unique<KernelBenchVerifier>(std::move(evaluator), std::move(store),
                                               std::move(fallback));
}

}  // namespace skilldb::verify::kb
