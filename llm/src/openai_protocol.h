// The OpenAI-compatible wire format: request bodies for /v1/chat/completions
// and /v1/completions, and readers for their answers and /v1/models. Pure
// functions over strings and parsed JSON; every reader tolerates missing
// fields and wrong types by returning Internal naming the request and the
// field, never by throwing.
#ifndef SKILLDB_LLM_SRC_OPENAI_PROTOCOL_H_
#define SKILLDB_LLM_SRC_OPENAI_PROTOCOL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "http_transport.h"
#include "json_util.h"
#include "skilldb/llm/backbone.h"
#include "skilldb/llm/client_config.h"
#include "skilldb/llm/openai_client.h"

namespace skilldb::llm::internal {

// Checks SamplingOptions' ranges. Errors: InvalidArgument naming the field.
Status ValidateSampling(const SamplingOptions& options);

// One request's share of SamplingOptions: n and seed differ when n samples
// are split into n requests.
struct RequestSampling {
  int n = 1;
  std::optional<uint64_t> seed;
};

std::string BuildChatRequest(const std::string& model, const Chat& chat,
                             const SamplingOptions& options,
                             const RequestSampling& part,
                             const ClientConfig& config);

std::string BuildCompletionRequest(const std::string& model,
                                   const std::string& prompt,
                                   const SamplingOptions& options,
                                   const RequestSampling& part,
                                   const ClientConfig& config);

// The scoring request: `text` echoed back with a logprob per token.
std::string BuildEchoScoreRequest(const std::string& model,
                                  const std::string& text,
                                  const ClientConfig& config);

// Token counts from an answer's "usage" object (absent or malformed: both
// zero and present false).
struct UsageCounts {
  bool present = false;
  uint64_t prompt_tokens = 0;
  uint64_t completion_tokens = 0;
};
UsageCounts ReadUsage(const json& answer);

// What one chat or completion answer held.
struct ParsedSamples {
  std::vector<Sample> samples;  // ordered by choice index
  std::vector<int32_t> prompt_token_ids;
  UsageCounts usage;
};

// What one answer may hold, from what its request asked for: its bytes
// (the transport stops reading past them) and its JSON values (the parser
// stops past them). A parsed value costs tens of bytes whatever its text,
// so both bound the memory an answer can take: with the defaults, a chat
// answer of one sample of 4096 tokens without logprobs is at most about
// 1.1 MB of text and 70k values. llm/README.md states the worst case of a
// query with reranking.
struct AnswerBudget {
  size_t max_bytes = 0;
  size_t max_values = 0;
};

// For a chat or completion request of `n` samples under `options`.
AnswerBudget SamplesBudget(const SamplingOptions& options, int n);
// For an echo scoring request of `text`.
AnswerBudget EchoBudget(const std::string& text, int score_max_tokens);
// For /v1/models.
AnswerBudget ModelsBudget();

// Reads a /v1/chat/completions answer that must hold exactly `n` choices,
// parsing at most `max_values` JSON values.
Result<ParsedSamples> ParseChatAnswer(const HttpAnswer& answer, int n,
                                      size_t max_values = size_t{1} << 20);

// Reads a /v1/completions answer that must hold exactly `n` choices.
Result<ParsedSamples> ParseCompletionAnswer(
    const HttpAnswer& answer, int n, size_t max_values = size_t{1} << 20);

// The logprobs of an echoed prompt (the legacy completions format).
struct EchoedTokens {
  std::string text;  // choice.text: the prompt, then what was generated
  std::vector<std::string> tokens;
  std::vector<std::optional<double>> logprobs;  // null for the first token
  // Byte span [starts[i], ends[i]) of token i in `text` (empty for a BOS
  // the text does not contain).
  std::vector<size_t> starts;
  std::vector<size_t> ends;
  std::vector<int32_t> token_ids;  // all echoed ids when the server gave them
};

// Reads a scoring answer. Errors: NotSupported when the server did not echo
// the prompt with logprobs; Internal for a malformed answer.
Result<EchoedTokens> ParseEchoAnswer(const HttpAnswer& answer,
                                     const std::string& sent_text,
                                     UsageCounts* usage,
                                     size_t max_values = size_t{1} << 20);

// The score of the completion occupying bytes [prompt_bytes, total_bytes)
// of the echoed text: the tokens that end after prompt_bytes and start
// before total_bytes (a token straddling the boundary counts as the
// completion's: its logprob covers completion bytes). Errors: Internal when
// a completion token has no logprob or the offsets are inconsistent.
Result<ScoreResult> ScoreFromEcho(const EchoedTokens& echoed,
                                  size_t prompt_bytes, size_t total_bytes);

// Reads a /v1/models answer.
Result<std::vector<ModelInfo>> ParseModelsAnswer(const HttpAnswer& answer);

}  // namespace skilldb::llm::internal

#endif  // SKILLDB_LLM_SRC_OPENAI_PROTOCOL_H_
