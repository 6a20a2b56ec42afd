// The Policy Agent on KernelBench problems: the prompt for a problem
// imported by `skilldb kernelbench import` (its source, the selected skills
// with their evidence, the answer format, the device the verifier runs on,
// and from the second turn the verifier's feedback, quoted), the feedback
// text made from a verifier result, and the extractor that reads a
// `ModelNew` answer out of what a model wrote.
//
// Everything here is a pure function of its arguments: safe from any
// thread.
#ifndef SKILLDB_POLICY_KERNELBENCH_ANSWER_H_
#define SKILLDB_POLICY_KERNELBENCH_ANSWER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/generation.h"
#include "skilldb/policy/selection.h"
#include "skilldb/status.h"
#include "skilldb/verify/kernelbench.h"

namespace skilldb::policy {

// ---- Answer formats
// ----------------------------------------------------------

// What the model is asked to write. Never renumber (trajectories name it).
enum class KernelBenchFormat {
  kCuda,    // ModelNew + inline CUDA through load_inline (cuda_sources)
  kTriton,  // ModelNew + @triton.jit kernels
  kCpp,     // ModelNew + C++ through load_inline, cpp_sources only (CPU)
};
std::string_view KernelBenchFormatName(
    KernelBenchFormat format);  // cuda|triton|cpp
// InvalidArgument naming the value for anything but cuda, triton, cpp.
Result<KernelBenchFormat> ParseKernelBenchFormat(std::string_view name);

// ---- Extraction
// ------------------------------------------------------------------

struct KernelBenchExtractOptions {
  // Longer completions are cut to this before reading (model output is
  // untrusted). Default: 1 MiB.
  size_t max_completion_bytes = size_t{1} << 20;
  // Code blocks read at most; later ones are listed as unused. Default: 64.
  size_t max_blocks = 64;
};

struct KernelBenchExtraction {
  bool found = false;  // false: nothing the verifier could run
  std::string source;  // the answer (Python) when found
  // DetectFormat's backend of the source ("cuda" | "triton" | "" when the
  // format is not one the verifier runs).
  std::string backend;
  std::vector<int> blocks_used;  // 1-based indices of the fenced blocks used
  int blocks = 0;                // fenced blocks seen
  bool unclosed_fence = false;   // the last block ran to the end of the text
  std::string note;              // how the answer was found, or why nothing was
  // What could not be used, each with the reason ("block 2 (bash): not
  // Python", "a <think> section", "prose after the code").
  std::vector<std::string> unused;
};

// Reads a KernelBench answer out of `completion`:
//  - reasoning before a closing </think> is set aside;
//  - among fenced blocks (``` or ~~~, any info string; an unclosed last
//    fence runs to the end), the last Python block defining
//    `class ModelNew` is the answer; earlier Python blocks that define a
//    name it uses (imports, sources, helper functions) are put before it
//    in their order, so a ModelNew split over blocks is whole; a source
//    name passed to load_inline (`cuda_sources=NAME`, `cpp_sources=NAME`)
//    that no used block defines is bound to a CUDA or C++ block of the
//    answer (`NAME = r'''...'''`);
//  - with no fence, the text from the first line that starts like Python
//    before `class ModelNew` up to the first prose line after it;
//  - otherwise nothing (found == false, note says what was there).
// Never fails: every outcome is a value.
KernelBenchExtraction ExtractKernelBenchAnswer(
    std::string_view completion, const KernelBenchExtractOptions& options = {});

// ---- Prompt
// ------------------------------------------------------------------------

// A selected skill with the evidence the library keeps for it (verification
// reports, JSON, as Skill::evidence_json).
struct KernelBenchSkill {
  SelectedSkill skill;
  std::vector<std::string> evidence_json;
};

// One earlier turn: the model's answer and what it was told about it.
struct KernelBenchTurn {
  std::string completion;
  std::string feedback;
};

struct KernelBenchPromptInput {
  const verify::kb::Problem* problem = nullptr;  // required
  KernelBenchFormat format = KernelBenchFormat::kCuda;
  // The device the verifier runs on, in words (from Evaluator::Describe:
  // "NVIDIA H200 (compute capability 9.0), torch 2.5.1"). Required.
  std::string device;
  std::vector<KernelBenchSkill> skills;  // shown in the first user message
  std::vector<KernelBenchTurn> prior;    // oldest first
};

struct KernelBenchPromptOptions {
  size_t problem_source_bytes = 32000;  // Default: 32000.
  size_t skill_body_bytes = 4000;       // per skill. Default: 4000.
  size_t skill_code_bytes = 3000;       // per skill. Default: 3000.
  size_t evidence_bytes = 800;          // per evidence report. Default: 800.
  size_t evidence_reports = 2;          // per skill, newest last. Default: 2.
  // Earlier answers shown back are cut to this. Default: 24000.
  size_t prior_completion_bytes = 24000;
};

// system: the role, the answer format, the device; user (turn 1): the
// problem's source (quoted) and the skills (quoted, with evidence); then
// per earlier turn the assistant's answer and a user message with its
// feedback asking for an improved ModelNew.
// REQUIRES: input.problem is set.
std::vector<ChatMessage> BuildKernelBenchChat(
    const KernelBenchPromptInput& input,
    const KernelBenchPromptOptions& options = {});

struct KernelBenchFeedbackOptions {
  size_t compile_log_bytes = 8000;  // head and tail kept. Default: 8000.
  size_t mismatches = 8;            // lines shown. Default: 8.
  size_t line_bytes = 400;          // per mismatch or finding. Default: 400.
  size_t max_bytes = 16000;         // the whole feedback. Default: 16000.
};

// What the model is told about one answer: nothing found (and what was
// seen), the compiler or exception output, the trials and where the output
// differs, the timings with the speedup and its interval, the findings of
// a hack. Text from the verifier that quotes the answer (logs, mismatches,
// findings) is escaped and fenced so that it cannot close its quotation
// and act as instructions. `result` is null when nothing was extracted.
std::string FormatKernelBenchFeedback(
    const KernelBenchExtraction& extraction,
    const verify::kb::EvalResult* result,
    const KernelBenchFeedbackOptions& options = {});

// The device line for the prompt from the verifier's description.
std::string DescribeKernelBenchDevice(const verify::kb::DeviceInfo& device);

}  // namespace skilldb::policy

#endif  // SKILLDB_POLICY_KERNELBENCH_ANSWER_H_
