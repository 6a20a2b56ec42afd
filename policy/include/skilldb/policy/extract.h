// Turning a model's completion into a candidate for the verifier.
//
// Completions are untrusted: prose around the code, several code blocks,
// a fence left open, no fence at all, or no code. CodeExtractor handles all
// of these for kernel sources; the interface (CompletionExtractor) lets
// another task family plug in its own reading, e.g. completions that are
// template parameters to be instantiated into a kernel.
//
// Extractors are stateless after construction and safe from any thread.
#ifndef SKILLDB_POLICY_EXTRACT_H_
#define SKILLDB_POLICY_EXTRACT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "skilldb/policy/task_context.h"
#include "skilldb/status.h"

namespace skilldb::policy {

struct Extraction {
  bool found = false;    // false: no candidate (the verdict is kNoCode)
  std::string source;    // the candidate source when found
  std::string language;  // "cuda" | "cpp"
  std::string note;      // how it was found, or why nothing was
};

class CompletionExtractor {
 public:
  virtual ~CompletionExtractor() = default;
  // Reads `completion` for `task`. Nothing found is a value (found ==
  // false with the reason in note); errors are for the extractor itself.
  virtual Result<Extraction> Extract(const PolicyTask& task,
                                     std::string_view completion) const = 0;
};

struct CodeExtractorOptions {
  // Longer completions are cut to this before reading (model output is
  // untrusted). Default: 1 MiB.
  int64_t max_completion_bytes = int64_t{1} << 20;
};

// Kernel sources, in this order of preference:
//  1. fenced blocks (``` with any info string, or ~~~); an unclosed last
//     fence runs to the end. Among blocks that define the protocol's entry
//     point (`extern "C"` ... `launch(`) the last one wins (models restate,
//     then revise); with none, the longest block, so the verifier can judge
//     the entry point (a missing one is a load error, not a missing code).
//  2. no fence: from the first line that starts like code (#include,
//     extern, template, __global__, a comment, ...) before the entry point,
//     to the last closing brace.
//  3. otherwise nothing (found == false).
class CodeExtractor : public CompletionExtractor {
 public:
  explicit CodeExtractor(CodeExtractorOptions options = {})
      : options_(options) {}
  Result<Extraction> Extract(const PolicyTask& task,
                             std::string_view completion) const override;

 private:
  CodeExtractorOptions options_;
};

// True if `source` defines the protocol's entry point (`extern "C"` before
// `launch(` on one declaration).
bool DefinesEntryPoint(std::string_view source);

}  // namespace skilldb::policy

#endif  // SKILLDB_POLICY_EXTRACT_H_
