#include "skilldb/llm/openai_client.h"

#include <algorithm>
#include <atomic>
#include <thread>

#include "http_transport.h"
#include "openai_protocol.h"
#include "skilldb/llm/chat_template.h"
#include "skilldb/util/parallel.h"

namespace skilldb::llm {

using internal::HttpAnswer;
using internal::ParsedSamples;
using internal::RequestSampling;

// One HTTP request of a Generate call: prompt `prompt`, its share of the
// samples, and what came back.
struct OpenAiClient::Job {
  size_t prompt = 0;
  RequestSampling part;
  Status status;
  ParsedSamples parsed;
};

namespace {

// Reads any exception a callee could still raise (bad_alloc, a JSON or
// library error this module did not foresee) as Internal: nothing escapes.
template <typename F>
auto NoThrow(std::string_view what, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::exception& e) {
    return Status::Internal(std::string(what) + ": " + e.what());
  } catch (...) {
    return Status::Internal(std::string(what) + ": unknown exception");
  }
}

Status ValidatePrompts(const std::vector<Chat>& prompts) {
  if (prompts.empty()) return Status::InvalidArgument("no prompts");
  for (size_t i = 0; i < prompts.size(); ++i) {
    if (prompts[i].empty()) {
      return Status::InvalidArgument("prompt " + std::to_string(i) +
                                     " is empty");
    }
    for (const Message& m : prompts[i]) {
      if (m.role.empty()) {
        return Status::InvalidArgument("prompt " + std::to_string(i) +
                                       " has a message without a role");
      }
    }
  }
  return Status::Ok();
}

// Scoring is unsupported, not wrong, when the server refuses echo.
bool RefusesEcho(int status) {
  return status == 400 || status == 404 || status == 405 || status == 422 ||
         status == 501;
}

}  // namespace

Result<std::unique_ptr<OpenAiClient>> OpenAiClient::Create(
    const ClientConfig& config) {
  SKILLDB_ASSIGN_OR_RETURN(auto transport,
                           internal::HttpTransport::Create(config));
  return std::unique_ptr<OpenAiClient>(
      new OpenAiClient(config, std::move(transport)));
}

OpenAiClient::OpenAiClient(const ClientConfig& config,
                           std::unique_ptr<internal::HttpTransport> transport)
    : config_(config), transport_(std::move(transport)) {}

OpenAiClient::~OpenAiClient() = default;

std::string OpenAiClient::Model() const {
  if (!config_.model.empty()) return config_.model;
  std::lock_guard<std::mutex> lock(model_mu_);
  return resolved_model_;
}

TokenUsage OpenAiClient::Usage() const {
  return {requests_.load(), prompt_tokens_.load(), completion_tokens_.load()};
}

ClientStats OpenAiClient::Stats() const {
  const internal::TransportStats t = transport_->stats();
  return {t.attempts, t.retries, t.failures, without_usage_.load()};
}

void OpenAiClient::Account(bool present, uint64_t prompt_tokens,
                           uint64_t completion_tokens) {
  requests_.fetch_add(1);
  if (!present) without_usage_.fetch_add(1);
  prompt_tokens_.fetch_add(prompt_tokens);
  completion_tokens_.fetch_add(completion_tokens);
}

Result<std::vector<ModelInfo>> OpenAiClient::ListModels() {
  return NoThrow("list models", [&]() -> Result<std::vector<ModelInfo>> {
    SKILLDB_ASSIGN_OR_RETURN(
        HttpAnswer answer,
        transport_->Get(transport_->Path("/models"),
                        internal::ModelsBudget().max_bytes));
    if (!answer.ok()) return internal::StatusForAnswer(answer);
    return internal::ParseModelsAnswer(answer);
  });
}

// The model to put in requests: the configured one, else the first the
// server lists (asked once; concurrent first callers may both ask).
Result<std::string> OpenAiClient::ResolveModel() {
  if (!config_.model.empty()) return config_.model;
  {
    std::lock_guard<std::mutex> lock(model_mu_);
    if (!resolved_model_.empty()) return resolved_model_;
  }
  SKILLDB_ASSIGN_OR_RETURN(std::vector<ModelInfo> models, ListModels());
  if (models.empty()) {
    return Status::FailedPrecondition(
        transport_->Url(transport_->Path("/models")) +
        " lists no models; set the model (--llm-model or SKILLDB_LLM_MODEL)");
  }
  std::lock_guard<std::mutex> lock(model_mu_);
  resolved_model_ = models.front().id;
  return resolved_model_;
}

Status OpenAiClient::RunJob(const std::string& model, const Chat& chat,
                            const SamplingOptions& options, Job* job) {
  const std::string body =
      internal::BuildChatRequest(model, chat, options, job->part, config_);
  const internal::AnswerBudget budget =
      internal::SamplesBudget(options, job->part.n);
  SKILLDB_ASSIGN_OR_RETURN(
      HttpAnswer answer,
      transport_->Post(transport_->Path("/chat/completions"), body,
                       budget.max_bytes));
  if (!answer.ok()) return internal::StatusForAnswer(answer);
  SKILLDB_ASSIGN_OR_RETURN(
      job->parsed,
      internal::ParseChatAnswer(answer, job->part.n, budget.max_values));
  const internal::UsageCounts& u = job->parsed.usage;
  Account(u.present, u.prompt_tokens, u.completion_tokens);
  return Status::Ok();
}

Result<std::vector<Generation>> OpenAiClient::Generate(
    const std::vector<Chat>& prompts, const SamplingOptions& options) {
  return NoThrow("generate", [&]() -> Result<std::vector<Generation>> {
    SKILLDB_RETURN_IF_ERROR(ValidatePrompts(prompts));
    SKILLDB_RETURN_IF_ERROR(internal::ValidateSampling(options));
    SKILLDB_ASSIGN_OR_RETURN(std::string model, ResolveModel());
    std::vector<Job> jobs;
    for (size_t p = 0; p < prompts.size(); ++p) {
      if (config_.native_n) {
        jobs.push_back({p, {options.n, options.seed}, Status::Ok(), {}});
        continue;
      }
      for (int j = 0; j < options.n; ++j) {
        std::optional<uint64_t> seed;
        if (options.seed) seed = *options.seed + static_cast<uint64_t>(j);
        jobs.push_back({p, {1, seed}, Status::Ok(), {}});
      }
    }
    util::ParallelFor(
        jobs.size(), static_cast<size_t>(std::max(config_.max_in_flight, 1)),
        [&](size_t i) {
          Job& job = jobs[i];
          job.status = NoThrow("generate", [&] {
            return RunJob(model, prompts[job.prompt], options, &job);
          });
        });
    std::vector<Generation> out(prompts.size());
    for (Job& job : jobs) {
      if (!job.status.ok()) {
        return job.status.WithContext("prompt " + std::to_string(job.prompt));
      }
      Generation& g = out[job.prompt];
      if (g.prompt_token_ids.empty()) {
        g.prompt_token_ids = std::move(job.parsed.prompt_token_ids);
      }
      for (Sample& s : job.parsed.samples) {
        if (options.top_logprobs == 0) s.top_logprobs.clear();
        g.samples.push_back(std::move(s));
      }
    }
    return out;
  });
}

Result<Generation> OpenAiClient::Complete(const std::string& prompt,
                                          const SamplingOptions& options) {
  return NoThrow("complete", [&]() -> Result<Generation> {
    if (prompt.empty()) return Status::InvalidArgument("empty prompt");
    SKILLDB_RETURN_IF_ERROR(internal::ValidateSampling(options));
    SKILLDB_ASSIGN_OR_RETURN(std::string model, ResolveModel());
    const std::string body = internal::BuildCompletionRequest(
        model, prompt, options, {options.n, options.seed}, config_);
    const internal::AnswerBudget budget =
        internal::SamplesBudget(options, options.n);
    SKILLDB_ASSIGN_OR_RETURN(
        HttpAnswer answer,
        transport_->Post(transport_->Path("/completions"), body,
                         budget.max_bytes));
    if (!answer.ok()) return internal::StatusForAnswer(answer);
    SKILLDB_ASSIGN_OR_RETURN(
        ParsedSamples parsed,
        internal::ParseCompletionAnswer(answer, options.n, budget.max_values));
    Account(parsed.usage.present, parsed.usage.prompt_tokens,
            parsed.usage.completion_tokens);
    Generation g;
    g.prompt_text = prompt;
    g.prompt_token_ids = std::move(parsed.prompt_token_ids);
    g.samples = std::move(parsed.samples);
    for (Sample& s : g.samples) {
      if (!options.logprobs) s.token_logprobs.clear();
      if (options.top_logprobs == 0) s.top_logprobs.clear();
    }
    return g;
  });
}

Result<ScoreResult> OpenAiClient::ScoreOne(const std::string& model,
                                           const ScoreRequest& request) {
  SKILLDB_ASSIGN_OR_RETURN(
      std::string prompt,
      ApplyChatTemplate(config_.chat_template, request.prompt, true));
  const std::string text = prompt + request.completion;
  const internal::AnswerBudget budget =
      internal::EchoBudget(text, config_.score_max_tokens);
  SKILLDB_ASSIGN_OR_RETURN(
      HttpAnswer answer,
      transport_->Post(transport_->Path("/completions"),
                       internal::BuildEchoScoreRequest(model, text, config_),
                       budget.max_bytes));
  if (RefusesEcho(answer.status)) {
    return Status::NotSupported("cannot score: " +
                                internal::StatusForAnswer(answer).message());
  }
  if (!answer.ok()) return internal::StatusForAnswer(answer);
  internal::UsageCounts usage;
  SKILLDB_ASSIGN_OR_RETURN(
      internal::EchoedTokens echoed,
      internal::ParseEchoAnswer(answer, text, &usage, budget.max_values));
  Account(usage.present, usage.prompt_tokens, usage.completion_tokens);
  auto scored = internal::ScoreFromEcho(echoed, prompt.size(), text.size());
  if (!scored.ok())
    return internal::BadAnswer(answer, scored.status().message());
  return scored;
}

Result<std::vector<ScoreResult>> OpenAiClient::Score(
    const std::vector<ScoreRequest>& requests) {
  return NoThrow("score", [&]() -> Result<std::vector<ScoreResult>> {
    if (config_.chat_template.empty()) {
      return Status::NotSupported(
          "Score needs the model's chat template on the client side "
          "(ClientConfig::chat_template: chatml, llama3 or plain)");
    }
    if (requests.empty()) return Status::InvalidArgument("no score requests");
    for (size_t i = 0; i < requests.size(); ++i) {
      if (requests[i].prompt.empty()) {
        return Status::InvalidArgument("score request " + std::to_string(i) +
                                       " has an empty prompt");
      }
    }
    SKILLDB_ASSIGN_OR_RETURN(std::string model, ResolveModel());
    std::vector<std::optional<Result<ScoreResult>>> results(requests.size());
    util::ParallelFor(
        requests.size(),
        static_cast<size_t>(std::max(config_.max_in_flight, 1)), [&](size_t i) {
          results[i] =
              NoThrow("score", [&] { return ScoreOne(model, requests[i]); });
        });
    std::vector<ScoreResult> out;
    for (size_t i = 0; i < results.size(); ++i) {
      if (!results[i]->ok()) {
        return results[i]->status().WithContext("score request " +
                                                std::to_string(i));
      }
      out.push_back(std::move(*results[i]).value());
    }
    return out;
  });
}

}  // namespace skilldb::llm
