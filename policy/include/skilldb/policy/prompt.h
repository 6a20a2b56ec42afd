// The Policy Agent's prompts: what the model is told each turn (the
// protocol, the selected skills with their fields, the task, and the
// earlier turns with their feedback), and the feedback text made from a
// verifier report (compiler errors verbatim, the first wrong elements, or
// the timings with the speedup and its interval).
//
// PromptBuilder is an interface so that another task family (e.g.
// completions that are template parameters) can phrase its own turns.
// KernelPromptBuilder and the functions here are stateless; safe from any
// thread.
#ifndef SKILLDB_POLICY_PROMPT_H_
#define SKILLDB_POLICY_PROMPT_H_

#include <cstddef>
#include <string>
#include <vector>

#include "skilldb/generation.h"
#include "skilldb/policy/selection.h"
#include "skilldb/policy/task_context.h"
#include "skilldb/policy/trajectory.h"

namespace skilldb::policy {

// One earlier turn as a later prompt shows it: the skills first shown in
// that turn, what the model answered (the sample that continues the
// trajectory) and what it was told about it.
struct PriorTurn {
  std::vector<SelectedSkill> new_skills;
  std::string completion;
  std::string feedback;
};

struct PromptInput {
  const PolicyTask* task = nullptr;  // required
  std::vector<PriorTurn> prior;      // oldest first
  // This turn's selected skills not shown in an earlier turn (the agent
  // leaves out the ones already shown, so each skill appears once).
  std::vector<SelectedSkill> new_skills;
  // The device class candidates are verified on (the Verifier's
  // DeviceClass(), e.g. "sm_90"), which a CUDA task's prompt names; "" when
  // not known: the prompt then names kDefaultCudaArch. Default: "".
  std::string device_class;
};

// What a CUDA prompt names when the device class is not known: sm_90a
// (Hopper: H100/H200), the verifier's default code generation target
// (verify::CompilerOptions::cuda_gencode).
inline constexpr char kDefaultCudaArch[] = "sm_90a";

class PromptBuilder {
 public:
  virtual ~PromptBuilder() = default;
  // The chat for one turn. REQUIRES: input.task is set.
  virtual std::vector<ChatMessage> Build(const PromptInput& input) const = 0;
};

struct KernelPromptOptions {
  // Per-skill limits in the prompt (bytes; longer text is cut at a line
  // with a marker). Defaults: body 4000, code 3000.
  size_t skill_body_bytes = 4000;
  size_t skill_code_bytes = 3000;
  // Earlier completions shown back to the model are cut to this (the code
  // is what matters; prose is dropped first). Default: 24000.
  size_t prior_completion_bytes = 24000;
};

// system: the role, the protocol verbatim and the answer format;
// user (turn 1): the task (description, family, inputs and outputs with
// shapes and dtypes, timing and check shapes, tolerances, the reference
// source) and the selected skills; then, per earlier turn, the assistant's
// answer and a user message with its feedback (and any newly selected
// skills) asking for a better kernel.
class KernelPromptBuilder : public PromptBuilder {
 public:
  explicit KernelPromptBuilder(KernelPromptOptions options = {})
      : options_(options) {}
  std::vector<ChatMessage> Build(const PromptInput& input) const override;

 private:
  KernelPromptOptions options_;
};

// The task section of a prompt (also used by the Skill Summary Agent).
std::string FormatTask(const PolicyTask& task);
// The skills section: each skill's title, id, summary, body, code pattern
// and pitfall notes (flagged as unverified), within the byte limits.
std::string FormatSkills(const std::vector<SelectedSkill>& skills,
                         const KernelPromptOptions& options);

struct FeedbackOptions {
  // Compiler logs longer than this keep their head and tail. Default: 8000.
  size_t compile_log_bytes = 8000;
  size_t wrong_elements = 8;  // mismatch lines shown. Default: 8.
};

// What the model is told about one sample: by verdict, the compiler output
// verbatim; the reasons (entry point, crash, hack); the first wrong
// elements with the largest errors; or the per-round timings with the
// speedup, its confidence interval and the verdict.
std::string FormatFeedback(const SampleRecord& sample,
                           const FeedbackOptions& options = {});

// Cuts `text` to at most `max_bytes`, at a line boundary where possible,
// marking the cut; never splits a UTF-8 sequence.
std::string Truncate(const std::string& text, size_t max_bytes);

}  // namespace skilldb::policy

#endif  // SKILLDB_POLICY_PROMPT_H_
