// The BERT encoder and sentence-transformers' pooling, behind Embedder.
#include <torch/torch.h>

#include <algorithm>
#include <limits>
#include <mutex>
#include <nlohmann/json.hpp>

#include "skilldb/util/file.h"
#include "skilldb/models/embedder.h"
#include "skilldb/models/model_config.h"
#include "skilldb/models/safetensors.h"
#include "skilldb/models/tokenizer.h"
#include "skilldb/util/json.h"
#include "skilldb/util/sha256.h"
#include "torch_util.h"

namespace skilldb::models {
namespace {

using Json = nlohmann::json;

struct BertLayer {
  torch::Tensor q_w, q_b, k_w, k_b, v_w, v_b;
  torch::Tensor attn_out_w, attn_out_b, attn_ln_w, attn_ln_b;
  torch::Tensor inter_w, inter_b, out_w, out_b, out_ln_w, out_ln_b;
};

// What sentence-transformers' files say about the pipeline around BERT.
struct PipelineConfig {
  int max_seq_length = 0;
  bool normalize = true;
};

Result<PipelineConfig> ReadPipeline(const std::string& dir,
                                    const EncoderConfig& config) {
  PipelineConfig p;
  try {
    const std::string pooling = dir + "/1_Pooling/config.json";
    if (util::IsRegularFile(pooling)) {
      SKILLDB_ASSIGN_OR_RETURN(std::string text, util::ReadFile(pooling));
      SKILLDB_ASSIGN_OR_RETURN(const Json j,
                               util::ParseUntrustedJson(text, pooling));
      for (const char* other :
           {"pooling_mode_cls_token", "pooling_mode_max_tokens",
            "pooling_mode_mean_sqrt_len_tokens",
            "pooling_mode_weightedmean_tokens", "pooling_mode_lasttoken"}) {
        if (j.value(other, false)) {
          return Status::NotSupported(pooling + ": " + other +
                                      " (mean pooling is supported)");
        }
      }
      if (!j.value("pooling_mode_mean_tokens", true)) {
        return Status::NotSupported(pooling + ": mean pooling is off");
      }
    }
    const std::string modules = dir + "/modules.json";
    if (util::IsRegularFile(modules)) {
      SKILLDB_ASSIGN_OR_RETURN(std::string text, util::ReadFile(modules));
      p.normalize = text.find("sentence_transformers.models.Normalize") !=
                    std::string::npos;
    }
    const std::string st = dir + "/sentence_bert_config.json";
    if (util::IsRegularFile(st)) {
      SKILLDB_ASSIGN_OR_RETURN(std::string text, util::ReadFile(st));
      SKILLDB_ASSIGN_OR_RETURN(const Json j, util::ParseUntrustedJson(text, st));
      if (j.is_object() && j.contains("max_seq_length") &&
          !j["max_seq_length"].is_null()) {
        int64_t length = 0;
        SKILLDB_RETURN_IF_ERROR(util::ReadInt64(
            j["max_seq_length"], st + ": max_seq_length", 1, 1 << 24, &length));
        p.max_seq_length = static_cast<int>(length);
      }
    }
  } catch (const Json::exception& e) {
    return Status::InvalidArgument(dir + ": " + e.what());
  }
  if (p.max_seq_length <= 0) p.max_seq_length = 512;
  p.max_seq_length = static_cast<int>(
      std::min<int64_t>(p.max_seq_length, config.max_position_embeddings));
  return p;
}

class BertEmbedder : public Embedder {
 public:
  Status Load(const std::string& dir, const EmbedderOptions& options);

  Result<std::vector<std::vector<float>>> Embed(
      const std::vector<std::string>& texts) override;
  const std::string& model_id() const override { return model_id_; }
  const std::string& weights_sha256() const override { return sha256_; }
  int dimension() const override {
    return static_cast<int>(config_.hidden_size);
  }
  int max_seq_length() const override { return pipeline_.max_seq_length; }
  bool normalizes() const override { return pipeline_.normalize; }

 private:
  Status LoadWeights(const CheckpointWeights& w);
  torch::Tensor Forward(const torch::Tensor& ids,
                        const torch::Tensor& mask) const;
  torch::Tensor LayerNorm(const torch::Tensor& x, const torch::Tensor& w,
                          const torch::Tensor& b) const {
    return torch::layer_norm(x, {config_.hidden_size}, w, b,
                             config_.layer_norm_eps);
  }

  EncoderConfig config_;
  PipelineConfig pipeline_;
  EmbedderOptions options_;
  torch::Device device_ = torch::kCPU;
  torch::Dtype dtype_ = torch::kFloat32;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::string model_id_, sha256_;
  torch::Tensor word_, position_, token_type_, emb_ln_w_, emb_ln_b_;
  std::vector<BertLayer> layers_;
  std::mutex mu_;
};

Status BertEmbedder::LoadWeights(const CheckpointWeights& w) {
  const std::string prefix =
      w.Contains("bert.embeddings.word_embeddings.weight") ? "bert." : "";
  const int64_t H = config_.hidden_size, I = config_.intermediate_size;
  auto load = [&](const std::string& name, std::vector<int64_t> shape,
                  torch::Tensor& out) -> Status {
    auto t = internal::LoadTensor(w, prefix + name, shape, dtype_, device_);
    if (!t.ok()) return t.status();
    out = std::move(t).value();
    return Status::Ok();
  };
  SKILLDB_RETURN_IF_ERROR(load("embeddings.word_embeddings.weight",
                               {config_.vocab_size, H}, word_));
  SKILLDB_RETURN_IF_ERROR(load("embeddings.position_embeddings.weight",
                               {config_.max_position_embeddings, H},
                               position_));
  SKILLDB_RETURN_IF_ERROR(load("embeddings.token_type_embeddings.weight",
                               {config_.type_vocab_size, H}, token_type_));
  SKILLDB_RETURN_IF_ERROR(load("embeddings.LayerNorm.weight", {H}, emb_ln_w_));
  SKILLDB_RETURN_IF_ERROR(load("embeddings.LayerNorm.bias", {H}, emb_ln_b_));
  for (int64_t i = 0; i < config_.num_layers; ++i) {
    const std::string p = "encoder.layer." + std::to_string(i) + ".";
    BertLayer l;
    SKILLDB_RETURN_IF_ERROR(
        load(p + "attention.self.query.weight", {H, H}, l.q_w));
    SKILLDB_RETURN_IF_ERROR(load(p + "attention.self.query.bias", {H}, l.q_b));
    SKILLDB_RETURN_IF_ERROR(
        load(p + "attention.self.key.weight", {H, H}, l.k_w));
    SKILLDB_RETURN_IF_ERROR(load(p + "attention.self.key.bias", {H}, l.k_b));
    SKILLDB_RETURN_IF_ERROR(
        load(p + "attention.self.value.weight", {H, H}, l.v_w));
    SKILLDB_RETURN_IF_ERROR(load(p + "attention.self.value.bias", {H}, l.v_b));
    SKILLDB_RETURN_IF_ERROR(
        load(p + "attention.output.dense.weight", {H, H}, l.attn_out_w));
    SKILLDB_RETURN_IF_ERROR(
        load(p + "attention.output.dense.bias", {H}, l.attn_out_b));
    SKILLDB_RETURN_IF_ERROR(
        load(p + "attention.output.LayerNorm.weight", {H}, l.attn_ln_w));
    SKILLDB_RETURN_IF_ERROR(
        load(p + "attention.output.LayerNorm.bias", {H}, l.attn_ln_b));
    SKILLDB_RETURN_IF_ERROR(
        load(p + "intermediate.dense.weight", {I, H}, l.inter_w));
    SKILLDB_RETURN_IF_ERROR(
        load(p + "intermediate.dense.bias", {I}, l.inter_b));
    SKILLDB_RETURN_IF_ERROR(load(p + "output.dense.weight", {H, I}, l.out_w));
    SKILLDB_RETURN_IF_ERROR(load(p + "output.dense.bias", {H}, l.out_b));
    SKILLDB_RETURN_IF_ERROR(
        load(p + "output.LayerNorm.weight", {H}, l.out_ln_w));
    SKILLDB_RETURN_IF_ERROR(load(p + "output.LayerNorm.bias", {H}, l.out_ln_b));
    layers_.push_back(std::move(l));
  }
  return Status::Ok();
}

Status BertEmbedder::Load(const std::string& dir,
                          const EmbedderOptions& options) {
  options_ = options;
  if (options.batch_size < 1) {
    return Status::InvalidArgument("embedder: batch_size must be >= 1");
  }
  SKILLDB_ASSIGN_OR_RETURN(config_, EncoderConfig::FromCheckpoint(dir));
  SKILLDB_ASSIGN_OR_RETURN(pipeline_, ReadPipeline(dir, config_));
  if (options.max_seq_length > 0) {
    if (options.max_seq_length > config_.max_position_embeddings) {
      return Status::InvalidArgument(
          "embedder: max_seq_length exceeds the model's positions");
    }
    pipeline_.max_seq_length = options.max_seq_length;
  }
  SKILLDB_ASSIGN_OR_RETURN(device_, internal::ParseDevice(options.device));
  SKILLDB_ASSIGN_OR_RETURN(dtype_, internal::ParseDtype(options.dtype));
  SKILLDB_ASSIGN_OR_RETURN(tokenizer_, Tokenizer::FromFile(dir));
  if (tokenizer_->kind() != Tokenizer::Kind::kWordPiece) {
    return Status::NotSupported(dir +
                                ": the encoder expects a WordPiece tokenizer");
  }
  if (tokenizer_->vocab_size() > config_.vocab_size) {
    return Status::InvalidArgument(
        dir + ": the tokenizer is larger than the embedding");
  }
  if (options.cpu_threads > 0) torch::set_num_threads(options.cpu_threads);
  SKILLDB_ASSIGN_OR_RETURN(CheckpointWeights w, CheckpointWeights::Open(dir));
  SKILLDB_RETURN_IF_ERROR(LoadWeights(w));
  const std::vector<std::string> files = w.Files();
  if (files.size() == 1) {
    SKILLDB_ASSIGN_OR_RETURN(sha256_, util::Sha256File(files[0]));
  } else {
    std::string lines;
    for (const std::string& f : files) {
      SKILLDB_ASSIGN_OR_RETURN(std::string h, util::Sha256File(f));
      lines += h + "  " + f.substr(f.rfind('/') + 1) + "\n";
    }
    sha256_ = util::Sha256Hex(lines);
  }
  model_id_ = options.model_id.empty() ? dir : options.model_id;
  return Status::Ok();
}

torch::Tensor BertEmbedder::Forward(const torch::Tensor& ids,
                                    const torch::Tensor& mask) const {
  const int64_t B = ids.size(0), T = ids.size(1), H = config_.hidden_size;
  const int64_t nh = config_.num_heads, hd = H / nh;
  torch::Tensor pos = torch::arange(T, ids.options());
  torch::Tensor x = torch::embedding(word_, ids) +
                    torch::embedding(position_, pos) + token_type_[0];
  x = LayerNorm(x, emb_ln_w_, emb_ln_b_);
  // transformers' extended mask: nothing added for tokens, a vanishing
  // weight for padding (every row has [CLS] and [SEP] to attend to).
  torch::Tensor bias =
      torch::zeros({B, 1, 1, T}, x.options().dtype(torch::kFloat32))
          .masked_fill(mask.eq(0).view({B, 1, 1, T}),
                       -std::numeric_limits<float>::infinity())
          .to(dtype_);
  const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
  for (const BertLayer& l : layers_) {
    auto heads = [&](const torch::Tensor& t) {
      return t.view({B, T, nh, hd}).transpose(1, 2);
    };
    torch::Tensor q = heads(torch::linear(x, l.q_w, l.q_b));
    torch::Tensor k = heads(torch::linear(x, l.k_w, l.k_b));
    torch::Tensor v = heads(torch::linear(x, l.v_w, l.v_b));
    torch::Tensor scores =
        torch::matmul(q, k.transpose(-1, -2)).mul(scale) + bias;
    torch::Tensor ctx = torch::matmul(torch::softmax(scores, -1), v)
                            .transpose(1, 2)
                            .reshape({B, T, H});
    torch::Tensor a =
        LayerNorm(torch::linear(ctx, l.attn_out_w, l.attn_out_b) + x,
                  l.attn_ln_w, l.attn_ln_b);
    torch::Tensor inter = torch::gelu(torch::linear(a, l.inter_w, l.inter_b));
    x = LayerNorm(torch::linear(inter, l.out_w, l.out_b) + a, l.out_ln_w,
                  l.out_ln_b);
  }
  // sentence-transformers' mean pooling: padding excluded, the count
  // clamped at 1e-9; then its Normalize module (F.normalize).
  torch::Tensor m = mask.to(torch::kFloat32).unsqueeze(-1);
  torch::Tensor pooled =
      (x.to(torch::kFloat32) * m).sum(1) / m.sum(1).clamp_min(1e-9);
  if (pipeline_.normalize) {
    pooled = pooled / pooled.norm(2, -1, /*keepdim=*/true).clamp_min(1e-12);
  }
  return pooled;
}

Result<std::vector<std::vector<float>>> BertEmbedder::Embed(
    const std::vector<std::string>& texts) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::vector<float>> out(texts.size());
  // The text's share of the sequence: what the special tokens leave (a
  // sequence too short for them keeps no text rather than wrapping).
  const size_t specials = tokenizer_->NumSpecialTokensToAdd();
  const size_t length = static_cast<size_t>(pipeline_.max_seq_length);
  const size_t keep = length > specials ? length - specials : 0;
  try {
    std::vector<std::vector<int32_t>> encoded;
    encoded.reserve(texts.size());
    for (const std::string& text : texts) {
      std::vector<int32_t> ids = tokenizer_->Encode(text, false);
      if (ids.size() > keep) ids.resize(keep);
      encoded.push_back(tokenizer_->AddSpecialTokens(ids));
    }
    // Batches of texts of similar length, longest first (as
    // sentence-transformers batches): a short text padded to a long one's
    // width would cost the long one's attention and matmuls. Padding is
    // masked, so the order changes no embedding beyond rounding.
    std::vector<size_t> order(texts.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return encoded[a].size() > encoded[b].size();
    });
    torch::NoGradGuard no_grad;
    for (size_t start = 0; start < order.size(); start += options_.batch_size) {
      const size_t end = std::min(order.size(), start + options_.batch_size);
      const int64_t B = static_cast<int64_t>(end - start),
                    T = static_cast<int64_t>(encoded[order[start]].size());
      std::vector<int64_t> ids(B * T, config_.pad_token_id), mask(B * T, 0);
      for (int64_t b = 0; b < B; ++b) {
        const std::vector<int32_t>& seq = encoded[order[start + b]];
        for (size_t t = 0; t < seq.size(); ++t) {
          ids[b * T + t] = seq[t];
          mask[b * T + t] = 1;
        }
      }
      torch::Tensor emb =
          Forward(
              torch::from_blob(ids.data(), {B, T}, torch::kInt64).to(device_),
              torch::from_blob(mask.data(), {B, T}, torch::kInt64).to(device_))
              .cpu()
              .contiguous();
      const float* p = emb.data_ptr<float>();
      for (int64_t b = 0; b < B; ++b) {
        out[order[start + b]].assign(p + b * config_.hidden_size,
                                     p + (b + 1) * config_.hidden_size);
      }
    }
  } catch (const std::exception& e) {
    return Status::Internal("embed: " + internal::ExceptionMessage(e));
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<Embedder>> Embedder::Open(
    const std::string& dir, const EmbedderOptions& options) {
  auto embedder = std::make_unique<BertEmbedder>();
  Status s = embedder->Load(dir, options);
  if (!s.ok()) return s;
  return std::unique_ptr<Embedder>(std::move(embedder));
}

}  // namespace skilldb::models
