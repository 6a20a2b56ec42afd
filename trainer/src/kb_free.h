// Free-form KernelBench answers in the RL loop (internal to trainer/;
// config.h KernelBenchConfig::answers "free"): the Policy Agent's
// KernelBench prompt (policy/kernelbench_answer.h BuildKernelBenchChat)
// behind the PromptBuilder interface, and its answer extractor
// (ExtractKernelBenchAnswer) behind the CompletionExtractor interface, so
// the loop's Policy Agent asks for and reads a whole ModelNew instead of a
// template's parameters.
//
// Both are stateless after construction and safe from any thread (the
// verifier they read is).
#ifndef SKILLDB_TRAINER_KB_FREE_H_
#define SKILLDB_TRAINER_KB_FREE_H_

#include <string>
#include <string_view>
#include <vector>

#include "kb_tasks.h"
#include "skilldb/policy/extract.h"
#include "skilldb/policy/kernelbench_answer.h"
#include "skilldb/policy/prompt.h"
#include "skilldb/verify/kernelbench.h"

namespace skilldb::trainer::internal {

// The chat of one turn for `problem`: the system message with the role,
// `format` and `device`; the problem's source and every skill selected so
// far (earlier turns' and this one's) in the first user message; then per
// earlier turn the answer and the verifier's feedback on it. The feedback
// is FormatKernelBenchFeedback of the answer's extraction and its result
// (found in `verifier` by the answer's hash), bounded by
// `feedback.max_bytes`; the agent's own feedback text, cut to that bound,
// when the verifier did not judge it (nothing extracted, a verifier error).
// `verifier` may be null (the agent's feedback only); it must outlive the
// builder, as must nothing else (the problem is copied).
class KbFreePromptBuilder final : public policy::PromptBuilder {
 public:
  KbFreePromptBuilder(verify::kb::Problem problem,
                      policy::KernelBenchFormat format, std::string device,
                      KbVerifier* verifier,
                      policy::KernelBenchFeedbackOptions feedback = {})
      : problem_(std::move(problem)),
        format_(format),
        device_(std::move(device)),
        verifier_(verifier),
        feedback_(feedback) {}
  std::vector<ChatMessage> Build(
      const policy::PromptInput& input) const override;

 private:
  std::string Feedback(const std::string& task,
                       const policy::PriorTurn& turn) const;

  verify::kb::Problem problem_;
  policy::KernelBenchFormat format_;
  std::string device_;
  KbVerifier* verifier_;
  policy::KernelBenchFeedbackOptions feedback_;
};

// Reads a ModelNew out of a completion (ExtractKernelBenchAnswer). Found:
// the source, in `language` (the run's format: "cuda" and "triton" are the
// backend the verifier is told, "cpp" is detected), and a note saying how
// it was found and what was left unused. Nothing usable: found == false
// and the note says why ("kernelbench extraction: ..."), so the sample is
// kNoCode, earns reward 0 and keeps the reason in its rollout. Never fails.
class KbFreeExtractor final : public policy::CompletionExtractor {
 public:
  explicit KbFreeExtractor(std::string language)
      : language_(std::move(language)) {}
  Result<policy::Extraction> Extract(
      const policy::PolicyTask& task,
      std::string_view completion) const override;

 private:
  std::string language_;
};

// The device line of a free-form prompt on the CPU ("cpp" answers), where
// the loop does not ask the runner to describe itself.
std::string CpuDeviceLine();

}  // namespace skilldb::trainer::internal

#endif  // SKILLDB_TRAINER_KB_FREE_H_
