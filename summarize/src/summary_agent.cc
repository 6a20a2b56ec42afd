#include "skilldb/summarize/summary_agent.h"

namespace skilldb::summarize {

llm::SamplingOptions SummaryOptions::DefaultSampling() {
  llm::SamplingOptions s;
  s.temperature = 0.2;
  s.max_tokens = 3000;
  return s;
}

Result<std::unique_ptr<SummaryAgent>> SummaryAgent::Make(
    SummaryAgentDeps deps, SummaryOptions options) {
  if (deps.backbone == nullptr || deps.library == nullptr ||
      deps.verifier == nullptr) {
    return Status::InvalidArgument(
        "a SummaryAgent needs a backbone, a library and a verifier");
  }
  if (options.max_attempts < 1 || options.max_commit_attempts < 1) {
    return Status::InvalidArgument(
        "max_attempts and max_commit_attempts must be at least 1");
  }
  return std::unique_ptr<SummaryAgent>(
      new SummaryAgent(deps, std::move(options)));
}

}  // namespace skilldb::summarize
