// llm::Backbone over a DecoderModel: chats to token ids and back, n samples
// per prompt as rows of one batch, scoring through TokenLogprobs.
#include "skilldb/models/local_backbone.h"

#include <mutex>

#include "skilldb/models/decoder.h"
#include "torch_util.h"

namespace skilldb::models {
namespace {

class LocalBackbone : public llm::Backbone {
 public:
  LocalBackbone(std::shared_ptr<DecoderModel> model, std::string name, int rows)
      : model_(std::move(model)), name_(std::move(name)), max_rows_(rows) {}

  std::string Model() const override { return name_; }

  Result<std::vector<llm::Generation>> Generate(
      const std::vector<llm::Chat>& prompts,
      const llm::SamplingOptions& options) override;

  Result<std::vector<llm::ScoreResult>> Score(
      const std::vector<llm::ScoreRequest>& requests) override;

  llm::TokenUsage Usage() const override {
    std::lock_guard<std::mutex> lock(usage_mu_);
    return usage_;
  }

 private:
  // Fills token_logprobs and sum_logprob of results[begin, end).
  Status ScoreChunk(std::vector<llm::ScoreResult>& results, size_t begin,
                    size_t end);

  std::shared_ptr<DecoderModel> model_;
  std::string name_;
  int max_rows_;
  std::mutex mu_;  // one request at a time
  mutable std::mutex usage_mu_;
  llm::TokenUsage usage_;  // GUARDED_BY(usage_mu_)
};

GenerationOptions ToGenerationOptions(const llm::SamplingOptions& o) {
  GenerationOptions g;
  g.max_new_tokens = o.max_tokens;
  g.temperature = o.temperature;
  g.top_p = o.top_p;
  g.top_k = o.top_k;
  g.seed = o.seed;
  g.stop = o.stop;
  g.logprobs = o.logprobs;
  g.top_logprobs = o.top_logprobs;
  return g;
}

Result<std::vector<llm::Generation>> LocalBackbone::Generate(
    const std::vector<llm::Chat>& prompts,
    const llm::SamplingOptions& options) {
  if (options.n < 1) return Status::InvalidArgument("generate: n must be >= 1");
  if (prompts.empty()) return Status::InvalidArgument("generate: no prompts");
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<llm::Generation> out(prompts.size());
  std::vector<std::vector<int32_t>> rows;
  std::vector<size_t> row_prompt;
  for (size_t i = 0; i < prompts.size(); ++i) {
    auto encoded =
        model_->EncodeChat(prompts[i], /*add_generation_prompt=*/true);
    if (!encoded.ok()) {
      return encoded.status().WithContext("prompt " + std::to_string(i));
    }
    out[i].prompt_text = encoded->text;
    out[i].prompt_token_ids = encoded->ids;
    for (int s = 0; s < options.n; ++s) {
      rows.push_back(encoded->ids);
      row_prompt.push_back(i);
    }
  }
  GenerationOptions g = ToGenerationOptions(options);
  uint64_t completion_tokens = 0;
  for (size_t begin = 0, chunk = 0; begin < rows.size();
       begin += max_rows_, ++chunk) {
    const size_t end = std::min(rows.size(), begin + max_rows_);
    // Each chunk its own stream, derived from the seed.
    if (options.seed) g.seed = *options.seed + chunk;
    std::vector<std::vector<int32_t>> part(rows.begin() + begin,
                                           rows.begin() + end);
    SKILLDB_ASSIGN_OR_RETURN(std::vector<GeneratedTokens> done,
                             model_->Generate(part, g));
    for (size_t r = 0; r < done.size(); ++r) {
      llm::Sample sample;
      sample.text = std::move(done[r].text);
      sample.token_ids = std::move(done[r].token_ids);
      sample.token_logprobs = std::move(done[r].token_logprobs);
      sample.top_logprobs = std::move(done[r].top_logprobs);
      sample.finish_reason = std::move(done[r].finish_reason);
      completion_tokens += sample.token_ids.size();
      out[row_prompt[begin + r]].samples.push_back(std::move(sample));
    }
  }
  std::lock_guard<std::mutex> usage_lock(usage_mu_);
  usage_.requests += 1;
  for (const auto& gen : out)
    usage_.prompt_tokens += gen.prompt_token_ids.size();
  usage_.completion_tokens += completion_tokens;
  return out;
}

Status LocalBackbone::ScoreChunk(std::vector<llm::ScoreResult>& results,
                                 size_t begin, size_t end) {
  const int64_t B = static_cast<int64_t>(end - begin);
  int64_t T = 0;
  for (size_t i = begin; i < end; ++i) {
    T = std::max<int64_t>(T, results[i].prompt_token_ids.size() +
                                 results[i].completion_token_ids.size());
  }
  std::vector<int64_t> ids(B * T, 0), mask(B * T, 0), target(B * T, 0);
  for (int64_t b = 0; b < B; ++b) {
    const auto& r = results[begin + b];
    const int64_t p = r.prompt_token_ids.size(),
                  c = r.completion_token_ids.size();
    for (int64_t t = 0; t < p + c; ++t) {
      ids[b * T + t] =
          t < p ? r.prompt_token_ids[t] : r.completion_token_ids[t - p];
      mask[b * T + t] = 1;
      target[b * T + t] = t >= p;
    }
  }
  try {
    torch::NoGradGuard no_grad;
    const torch::Device dev = model_->device();
    auto to = [&](std::vector<int64_t>& v) {
      return torch::from_blob(v.data(), {B, T}, torch::kInt64).to(dev);
    };
    torch::Tensor logp = model_->TokenLogprobs(to(ids), to(mask), to(target))
                             .cpu()
                             .to(torch::kFloat64);
    auto a = logp.accessor<double, 2>();
    for (int64_t b = 0; b < B; ++b) {
      auto& r = results[begin + b];
      const int64_t p = r.prompt_token_ids.size(),
                    c = r.completion_token_ids.size();
      for (int64_t t = p; t < p + c; ++t) {
        r.token_logprobs.push_back(a[b][t]);
        r.sum_logprob += a[b][t];
      }
    }
  } catch (const std::exception& e) {
    return Status::Internal("score: " + internal::ExceptionMessage(e));
  }
  return Status::Ok();
}

Result<std::vector<llm::ScoreResult>> LocalBackbone::Score(
    const std::vector<llm::ScoreRequest>& requests) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<llm::ScoreResult> results(requests.size());
  const int64_t max_pos = model_->config().max_position_embeddings;
  for (size_t i = 0; i < requests.size(); ++i) {
    auto encoded = model_->EncodeChat(requests[i].prompt, true);
    if (!encoded.ok())
      return encoded.status().WithContext("request " + std::to_string(i));
    results[i].prompt_token_ids = std::move(encoded->ids);
    results[i].completion_token_ids =
        model_->tokenizer().Encode(requests[i].completion, false);
    if (static_cast<int64_t>(results[i].prompt_token_ids.size() +
                             results[i].completion_token_ids.size()) >
        max_pos) {
      return Status::InvalidArgument("score: request " + std::to_string(i) +
                                     " is longer than the model's positions");
    }
  }
  for (size_t begin = 0; begin < results.size(); begin += max_rows_) {
    SKILLDB_RETURN_IF_ERROR(ScoreChunk(
        results, begin, std::min(results.size(), begin + max_rows_)));
  }
  std::lock_guard<std::mutex> usage_lock(usage_mu_);
  usage_.requests += 1;
  for (const auto& r : results) {
    usage_.prompt_tokens +=
        r.prompt_token_ids.size() + r.completion_token_ids.size();
  }
  return results;
}

}  // namespace

Result<std::unique_ptr<llm::Backbone>> MakeBackbone(
    std::shared_ptr<DecoderModel> model, std::string model_name,
    int max_batch_rows) {
  if (max_batch_rows < 1) {
    return Status::InvalidArgument("backbone: max_batch_rows must be >= 1");
  }
  if (model->chat_format() == nullptr) {
    SKILLDB_RETURN_IF_ERROR(model->EncodeChat({{"user", ""}}, true).status());
  }
  if (model_name.empty()) model_name = model->dir();
  return std::unique_ptr<llm::Backbone>(new LocalBackbone(
      std::move(model), std::move(model_name), max_batch_rows));
}

Result<std::unique_ptr<llm::Backbone>> OpenLocalBackbone(
    const std::string& dir, const LocalBackboneOptions& options) {
  DecoderOptions d;
  SKILLDB_ASSIGN_OR_RETURN(d.device, internal::ParseDevice(options.device));
  if (options.dtype == "auto") {
    d.dtype = d.device.is_cuda() ? torch::kBFloat16 : torch::kFloat32;
  } else {
    SKILLDB_ASSIGN_OR_RETURN(d.dtype, internal::ParseDtype(options.dtype));
  }
  d.cuda_graphs = options.cuda_graphs;
  if (options.cpu_threads > 0) torch::set_num_threads(options.cpu_threads);
  SKILLDB_ASSIGN_OR_RETURN(std::shared_ptr<DecoderModel> model,
                           DecoderModel::Load(dir, d));
  return MakeBackbone(std::move(model), options.model_name,
                      options.max_batch_rows);
}

}  // namespace skilldb::models
