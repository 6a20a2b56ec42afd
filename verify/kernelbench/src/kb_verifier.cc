// KernelBench tasks behind the engine's Verifier interface.
#include <cstdlib>
#include <regex>

#include "kb_internal.h"
#include "skilldb/util/clock.h"

namespace skilldb::verify::kb {
namespace {

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
    return ToReport(request, r);
  }

 private:
  VerificationReport ToReport(const VerificationRequest& q, const EvalResult& r) const {
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
    for (const Finding& f : r.findings) rep.reasons.push_back(FormatFinding(f));
    bool passed = r.verdict == "correct" && r.findings.empty();
    // Verified insertion wants a reproducible speedup: every round at or
    // above tau and the interval above 1 (stats.h).
    const DecisionOptions& d = ev_->options().clocks;
    for (const RoundTiming& t : r.rounds) {
      if (t.speedup_ratio < d.min_speedup) {
        passed = false;
        rep.reasons.push_back("[not_faster] a round's speedup " +
                              std::to_string(t.speedup_ratio) + " is below tau");
        break;
      }
    }
    if (r.rounds.empty() || !(r.estimate.ci_low > 1.0)) {
      passed = false;
      if (r.verdict == "correct") {
        rep.reasons.push_back("[confidence_too_low] the speedup's lower bound is not above 1");
      }
    }
    if (!r.correct && rep.reasons.empty()) rep.reasons.push_back(r.verdict + ": " + r.error_message);
    rep.passed = passed;
    rep.finished_at_ms = util::NowUnixMs();
    return rep;
  }

  std::shared_ptr<Evaluator> ev_;
  TaskStore store_;
  std::shared_ptr<Verifier> fallback_;
};

}  // namespace

std::unique_ptr<Verifier> MakeKernelBenchVerifier(std::shared_ptr<Evaluator> evaluator,
                                                  TaskStore store,
                                                  std::shared_ptr<Verifier> fallback) {
  return std::make_unique<KernelBenchVerifier>(std::move(evaluator), std::move(store),
                                               std::move(fallback));
}

}  // namespace skilldb::verify::kb
