// Free-form KernelBench answers in the RL loop (see kb_free.h).
#include "kb_free.h"

#include "skilldb/util/sha256.h"

namespace skilldb::trainer::internal {

std::string CpuDeviceLine() {
  return "the host CPU (CPU tensors; torch's C++ extension through "
         "load_inline, no CUDA)";
}

std::vector<ChatMessage> KbFreePromptBuilder::Build(
    const policy::PromptInput& input) const {
  policy::KernelBenchPromptInput in;
  in.problem = &problem_;
  in.format = format_;
  in.device = device_;
  // Each skill is shown once, in the first user message, which every
  // turn's chat repeats (the agent passes a turn only its new skills).
  auto add_skills = [&](const std::vector<policy::SelectedSkill>& skills) {
    for (const policy::SelectedSkill& s : skills) in.skills.push_back({s, {}});
  };
  for (const policy::PriorTurn& t : input.prior) add_skills(t.new_skills);
  add_skills(input.new_skills);
  const std::string task = input.task != nullptr ? input.task->task.name : "";
  for (const policy::PriorTurn& t : input.prior) {
    in.prior.push_back({t.completion, Feedback(task, t)});
  }
  return policy::BuildKernelBenchChat(in);
}

// The verifier's own account of the answer when it judged it (compile
// log, where outputs differ, the speedup and its interval, findings),
// else what the agent said; both bounded.
std::string KbFreePromptBuilder::Feedback(const std::string& task,
                                          const policy::PriorTurn& turn) const {
  const policy::KernelBenchExtraction e =
      policy::ExtractKernelBenchAnswer(turn.completion);
  if (verifier_ != nullptr && e.found) {
    auto r = verifier_->Find(task, util::Sha256Hex(e.source));
    if (r) return policy::FormatKernelBenchFeedback(e, &*r, feedback_);
  }
  if (!e.found) return policy::FormatKernelBenchFeedback(e, nullptr, feedback_);
  return turn.feedback.substr(0, feedback_.max_bytes);
}

Result<policy::Extraction> KbFreeExtractor::Extract(
    const policy::PolicyTask& /*task*/, std::string_view completion) const {
  const policy::KernelBenchExtraction e =
      policy::ExtractKernelBenchAnswer(completion);
  policy::Extraction out;
  out.found = e.found;
  out.language = language_;
  std::string note = "kernelbench extraction: " + e.note;
  for (const std::string& u : e.unused) note += "; unused: " + u;
  out.note = std::move(note);
  if (e.found) out.source = e.source;
  return out;
}

}  // namespace skilldb::trainer::internal
