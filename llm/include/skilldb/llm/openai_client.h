// OpenAiClient: the Backbone over an OpenAI-compatible HTTP server (vLLM,
// SGLang, llama.cpp's server, hosted APIs): /v1/chat/completions for
// Generate, /v1/completions for Complete and Score, /v1/models.
//
// An OpenAiClient is safe for concurrent use by multiple threads. It runs at
// most config.max_in_flight requests at once across all callers; the
// prompts of one Generate or Score call are sent in parallel up to that
// limit.
//
// What the server may ignore: top_k when config.send_top_k is false; seed,
// top_k, stop on servers that do not implement them (the request carries
// them; the answer cannot show whether they were honoured).
#ifndef SKILLDB_LLM_OPENAI_CLIENT_H_
#define SKILLDB_LLM_OPENAI_CLIENT_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/llm/backbone.h"
#include "skilldb/llm/client_config.h"
#include "skilldb/status.h"

namespace skilldb::llm {

namespace internal {
class HttpTransport;
}

// One entry of /v1/models.
struct ModelInfo {
  std::string id;
  std::string owned_by;       // "" when not given
  int64_t max_model_len = 0;  // context length (vLLM's field); 0 = unknown
};

// Counters beyond token usage, for monitoring and tests.
struct ClientStats {
  uint64_t attempts = 0;  // HTTP attempts, retries included
  uint64_t retries = 0;
  uint64_t failures = 0;  // requests that ended without a 2xx answer
  // 2xx answers to generation or scoring without a readable usage object.
  uint64_t answers_without_usage = 0;
};

class OpenAiClient final : public Backbone {
 public:
  // Makes a client; no request is sent. Errors: InvalidArgument for a
  // config that fails ValidateClientConfig or an unreadable ca_cert_path.
  static Result<std::unique_ptr<OpenAiClient>> Create(
      const ClientConfig& config);
  ~OpenAiClient() override;

  // config.model, or the model the server listed first once a request has
  // resolved it; "" before that.
  std::string Model() const override;

  // POST /v1/chat/completions, one request per prompt (or per sample when
  // !config.native_n). Sample.token_logprobs and top_logprobs are filled
  // when options.logprobs and the server returns them; token_ids and
  // Generation::prompt_token_ids when the server returns them (vLLM with
  // config.request_token_ids). prompt_text stays "" (the server applies the
  // template). Errors as Backbone::Generate, plus the codes of
  // StatusForAnswer for a refused request (InvalidArgument for 400,
  // NotFound for an unknown model, FailedPrecondition for a bad key). Each
  // error names the endpoint, what it answered, and the prompt's index.
  Result<std::vector<Generation>> Generate(
      const std::vector<Chat>& prompts,
      const SamplingOptions& options) override;

  // POST /v1/completions with each completion appended to its prompt under
  // config.chat_template, echo true and logprobs, and the completion's
  // tokens picked out by their text offsets. Errors: NotSupported when no
  // chat_template is set, or when the server refuses echo (HTTP 400, 404,
  // 405, 422, 501) or answers without the echoed prompt's logprobs (the
  // message names the endpoint and what it answered); otherwise as Generate.
  Result<std::vector<ScoreResult>> Score(
      const std::vector<ScoreRequest>& requests) override;

  TokenUsage Usage() const override;

  // POST /v1/completions for raw prompt text (no chat template): the
  // samples of `prompt`, with the legacy logprobs format read into Sample.
  // Generation::prompt_text is `prompt`. Errors as Generate.
  Result<Generation> Complete(const std::string& prompt,
                              const SamplingOptions& options);

  // GET /v1/models. Errors: Unavailable / DeadlineExceeded as Generate;
  // Internal for an answer without a "data" array.
  Result<std::vector<ModelInfo>> ListModels();

  ClientStats Stats() const;
  const ClientConfig& config() const { return config_; }

 private:
  OpenAiClient(const ClientConfig& config,
               std::unique_ptr<internal::HttpTransport> transport);
  struct Job;
  Result<std::string> ResolveModel();
  Status RunJob(const std::string& model, const Chat& chat,
                const SamplingOptions& options, Job* job);
  Result<ScoreResult> ScoreOne(const std::string& model,
                               const ScoreRequest& request);
  void Account(bool present, uint64_t prompt_tokens,
               uint64_t completion_tokens);

  const ClientConfig config_;
  std::unique_ptr<internal::HttpTransport> transport_;

  mutable std::mutex model_mu_;
  std::string resolved_model_;  // GUARDED_BY(model_mu_)

  std::atomic<uint64_t> requests_{0};
  std::atomic<uint64_t> prompt_tokens_{0};
  std::atomic<uint64_t> completion_tokens_{0};
  std::atomic<uint64_t> without_usage_{0};
};

}  // namespace skilldb::llm

#endif  // SKILLDB_LLM_OPENAI_CLIENT_H_
