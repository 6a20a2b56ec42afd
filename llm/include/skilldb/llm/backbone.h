// Backbone: the one LLM interface the three agents (selection, policy,
// summary) share. Implementations: the OpenAI-compatible HTTP client
// (llm/openai_client.h) and the in-process libtorch model (models/).
//
// The value types are plain structs, safe to copy and to share read-only.
// A Backbone implementation is safe for concurrent use by multiple threads
// (each states how many requests it runs at once).
#ifndef SKILLDB_LLM_BACKBONE_H_
#define SKILLDB_LLM_BACKBONE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/status.h"

namespace skilldb::llm {

// One chat message: role is "system", "user" or "assistant".
struct Message {
  std::string role;
  std::string content;
  bool operator==(const Message&) const = default;
};
using Chat = std::vector<Message>;

// How to sample. Fields a backend cannot honour are ignored only where the
// backend says so in its header (e.g. a server without top_k).
struct SamplingOptions {
  int n = 1;                 // samples per prompt, >= 1. Default: 1.
  double temperature = 1.0;  // 0 = greedy. Default: 1.0.
  double top_p = 1.0;        // nucleus mass in (0, 1]. Default: 1.0.
  int top_k = 0;             // 0 = off. Default: 0.
  int max_tokens = 512;      // completion tokens at most. Default: 512.
  // Generation stops before the first occurrence of any of these (the stop
  // string is not part of the text). Default: none.
  std::vector<std::string> stop;
  // Fixes the random stream where the backend supports it. Default: unset.
  std::optional<uint64_t> seed;
  bool logprobs = true;  // per-token logprobs of the sampled tokens
  // Also return this many most likely alternatives per position (0 = none).
  int top_logprobs = 0;
};

// One alternative at one position (SamplingOptions::top_logprobs).
struct TokenChoice {
  std::string text;
  int32_t id = -1;  // -1 when the backend does not say
  double logprob = 0.0;
};

// One sampled completion.
struct Sample {
  std::string text;
  // Completion token ids and their logprobs, one per token; empty when the
  // backend does not return them.
  std::vector<int32_t> token_ids;
  std::vector<double> token_logprobs;
  std::vector<std::vector<TokenChoice>> top_logprobs;  // per position
  std::string finish_reason;  // "stop" | "length" (as OpenAI names them)
};

// The samples for one prompt.
struct Generation {
  // The prompt as the model saw it (chat template applied) and its token
  // ids, where the backend knows them ("" / empty otherwise).
  std::string prompt_text;
  std::vector<int32_t> prompt_token_ids;
  std::vector<Sample> samples;
};

// A completion to score under a prompt.
struct ScoreRequest {
  Chat prompt;
  std::string completion;
};

// The logprob of a given completion under its prompt.
struct ScoreResult {
  double sum_logprob = 0.0;
  std::vector<double> token_logprobs;  // per completion token
  std::vector<int32_t> prompt_token_ids;
  std::vector<int32_t> completion_token_ids;
};

// Tokens a backend has consumed since it was made (for accounting).
struct TokenUsage {
  uint64_t requests = 0;
  uint64_t prompt_tokens = 0;
  uint64_t completion_tokens = 0;
};

class Backbone {
 public:
  virtual ~Backbone() = default;

  // The model's name ("Qwen/Qwen2.5-Coder-7B-Instruct", a checkpoint path).
  virtual std::string Model() const = 0;

  // Samples options.n completions for each chat in `prompts`; the result
  // has one Generation per prompt, in order. Errors: InvalidArgument for
  // bad options or an empty prompt; Unavailable / DeadlineExceeded when
  // the backend cannot be reached in time (after its retries); Internal
  // for an answer it cannot read. Never throws.
  virtual Result<std::vector<Generation>> Generate(
      const std::vector<Chat>& prompts, const SamplingOptions& options) = 0;

  // The logprob of each request's completion under its prompt (the chat
  // template applied, the completion as the assistant's answer). Errors as
  // Generate; NotSupported when the backend cannot score.
  virtual Result<std::vector<ScoreResult>> Score(
      const std::vector<ScoreRequest>& requests) = 0;

  virtual TokenUsage Usage() const = 0;
};

}  // namespace skilldb::llm

#endif  // SKILLDB_LLM_BACKBONE_H_
