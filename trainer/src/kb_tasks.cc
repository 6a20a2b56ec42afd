// KernelBench problems as the RL loop's tasks (see kb_tasks.h).
#include "kb_tasks.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <regex>

namespace skilldb::trainer::internal {
namespace kb = verify::kb;

std::string KbTaskName(int level, int id) {
  return "kernelbench/level" + std::to_string(level) + "/" + std::to_string(id);
}

namespace {

bool HasCode(const std::vector<std::string>& codes, std::string_view code) {
  return std::find(codes.begin(), codes.end(), code) != codes.end();
}

// Findings that describe an answer without voiding it.
bool Informs(std::string_view code) {
  return code == "torch_does_the_work" || code == "unsupported_format" ||
         code == "not_faster" || code == "confidence_too_low" ||
         code == "too_few_rounds";
}

}  // namespace

Result<VerificationReport> KbVerifier::Verify(const VerificationRequest& q) {
  static const std::regex kTask(R"(kernelbench/level(\d{1,6})/(\d{1,9}))");
  std::smatch m;
  if (!std::regex_match(q.task, m, kTask)) {
    return Status::InvalidArgument("'" + q.task +
                                   "' is not a KernelBench task "
                                   "(kernelbench/level<L>/<id>)");
  }
  SKILLDB_ASSIGN_OR_RETURN(
      kb::Problem p,
      store_.Get(std::atoi(m[1].str().c_str()), std::atoi(m[2].str().c_str())));
  const std::string& lang = q.candidate.language;
  const std::string declared = lang == "cuda" || lang == "triton" ? lang : "";
  SKILLDB_ASSIGN_OR_RETURN(
      kb::EvalResult r, evaluator_->Evaluate(p, q.candidate.source, declared));
  VerificationReport rep =
      kb::ToVerificationReport(q, r, evaluator_->options().clocks);
  std::lock_guard<std::mutex> lock(mu_);
  results_[q.task + '\0' + r.answer_hash] = std::move(r);
  return rep;
}

std::optional<kb::EvalResult> KbVerifier::Find(const std::string& task,
                                               const std::string& hash) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = results_.find(task + '\0' + hash);
  if (it == results_.end()) return std::nullopt;
  return it->second;
}

policy::RewardFunction MakeKbReward(const RewardConfig& c) {
  return [c](const policy::RewardInput& in) -> double {
    const std::vector<std::string> none;
    const auto& codes = in.findings ? *in.findings : none;
    if (in.verdict == policy::SampleVerdict::kHack) return c.hack_reward;
    for (const std::string& code : codes) {
      if (!Informs(code) && policy::IsHackFinding(code)) return c.hack_reward;
    }
    const bool correct = in.verdict == policy::SampleVerdict::kFaster ||
                         in.verdict == policy::SampleVerdict::kNotFaster;
    if (!correct || in.report == nullptr) return 0.0;
    double speedup = 0.0;
    // Not credited: PyTorch's kernels did the work, so the speedup is not
    // the answer's (verify/kernelbench/README.md, "Profile").
    if (!HasCode(codes, "torch_does_the_work") && !in.report->rounds.empty() &&
        std::isfinite(in.report->speedup.ratio)) {
      speedup = std::clamp(in.report->speedup.ratio, 0.0, c.speedup_cap);
    }
    return c.correct_weight + c.speedup_weight * speedup;
  };
}

Result<TaskFamily> LoadKbFamily(const KernelBenchConfig& config, int id,
                                const std::string& backend) {
  const std::string path = config.families + "/level" +
                           std::to_string(config.level) + "_" +
                           std::to_string(id) + ".json";
  SKILLDB_ASSIGN_OR_RETURN(TaskFamily f, LoadTaskFamily(path));
  const std::string want = KbTaskName(config.level, id);
  if (f.task != want) {
    return Status::InvalidArgument(path + ": 'task' must be '" + want +
                                   "', got '" + f.task + "'");
  }
  if (f.backend != backend) {
    return Status::InvalidArgument(path + ": 'backend' must be " + backend +
                                   " (the run's), got " + f.backend);
  }
  // The language is the declared backend the evaluator is told (cuda,
  // triton); cpp answers are detected (load_inline with cpp_sources).
  const std::string& language = config.format;
  if (f.language != language) {
    return Status::InvalidArgument(path + ": 'language' must be " + language +
                                   " for format " + config.format + ", got " +
                                   f.language);
  }
  return f;
}

policy::PolicyTask KbPolicyTask(const kb::Problem& problem,
                                const TaskFamily& family) {
  policy::PolicyTask t;
  t.task.name = KbTaskName(problem.level, problem.id);
  t.task.level = problem.level;
  t.task.description =
      family.description + " (KernelBench " + problem.name + ")";
  t.backend = family.backend == "cuda" ? verify::Backend::kCuda
                                       : verify::Backend::kHost;
  // The reference the answer must beat: the problem's PyTorch source.
  t.task.reference_cpp = problem.source;
  t.task.reference_cuda = problem.source;
  t.protocol =
      "KernelBench: a ModelNew with the Model's constructor whose "
      "work is done by its own kernels.";
  return t;
}

std::optional<kb::EvalResult> BestResult(KbVerifier* verifier,
                                         const policy::Trajectory& t) {
  std::optional<kb::EvalResult> best;
  auto score = [](const kb::EvalResult& r) {
    const bool counts = r.verdict == "correct";
    const double s = r.speedup_eager.value_or(0.0);
    return std::pair<int, double>(counts ? 1 : 0, counts ? s : 0.0);
  };
  for (const auto& turn : t.turns) {
    for (const auto& s : turn.samples) {
      if (!s.report) continue;
      auto r = verifier->Find(t.task, s.report->candidate_hash);
      if (!r) continue;
      if (!best || score(*r) > score(*best)) best = std::move(r);
    }
  }
  if (best) best->sample = 0;
  return best;
}

}  // namespace skilldb::trainer::internal
