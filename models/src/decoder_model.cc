// DecoderModel: loading a checkpoint into a CausalLM, and its forwards for
// training and scoring.
#include <set>

#include "decode_graphs.h"
#include "decoder_impl.h"
#include "skilldb/models/decoder.h"
#include "skilldb/models/safetensors.h"
#include "torch_util.h"

namespace skilldb::models {
namespace {

using Weights = std::vector<std::pair<std::string, torch::Tensor>>;

// Every tensor the config implies, with its shape.
std::vector<std::pair<std::string, std::vector<int64_t>>> ExpectedTensors(
    const DecoderConfig& c) {
  const int64_t H = c.hidden_size, I = c.intermediate_size;
  const int64_t q = c.num_heads * c.head_dim, kv = c.num_kv_heads * c.head_dim;
  std::vector<std::pair<std::string, std::vector<int64_t>>> out = {
      {"model.embed_tokens.weight", {c.vocab_size, H}},
      {"model.norm.weight", {H}}};
  if (!c.tie_word_embeddings)
    out.push_back({"lm_head.weight", {c.vocab_size, H}});
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    out.push_back({p + "input_layernorm.weight", {H}});
    out.push_back({p + "post_attention_layernorm.weight", {H}});
    out.push_back({p + "self_attn.q_proj.weight", {q, H}});
    out.push_back({p + "self_attn.k_proj.weight", {kv, H}});
    out.push_back({p + "self_attn.v_proj.weight", {kv, H}});
    out.push_back({p + "self_attn.o_proj.weight", {H, q}});
    if (c.qkv_bias) {
      out.push_back({p + "self_attn.q_proj.bias", {q}});
      out.push_back({p + "self_attn.k_proj.bias", {kv}});
      out.push_back({p + "self_attn.v_proj.bias", {kv}});
    }
    if (c.o_bias) out.push_back({p + "self_attn.o_proj.bias", {H}});
    out.push_back({p + "mlp.gate_proj.weight", {I, H}});
    out.push_back({p + "mlp.up_proj.weight", {I, H}});
    out.push_back({p + "mlp.down_proj.weight", {H, I}});
    if (c.mlp_bias) {
      out.push_back({p + "mlp.gate_proj.bias", {I}});
      out.push_back({p + "mlp.up_proj.bias", {I}});
      out.push_back({p + "mlp.down_proj.bias", {H}});
    }
  }
  return out;
}

torch::Tensor PositionsOf(const torch::Tensor& attention_mask) {
  return (attention_mask.to(torch::kInt64).cumsum(-1) - 1).clamp_min(0);
}

// Log-probabilities [B, T] (fp32) of `ids` [B, T] where `select` [B, T] is
// set, each from the hidden state at the same place in `before` [B, T, H]
// (0 elsewhere): the lm head runs on the selected rows only, so scoring
// never materializes [B, T, vocab].
torch::Tensor SelectedLogprobs(CausalLM& module, const torch::Tensor& before,
                               const torch::Tensor& ids,
                               const torch::Tensor& select) {
  torch::Tensor rows = before.index({select});                     // [N, H]
  torch::Tensor targets = ids.index({select}).to(torch::kInt64);  // [N]
  torch::Tensor logp =
      torch::log_softmax(module.LmHead(rows).to(torch::kFloat32), -1)
          .gather(-1, targets.unsqueeze(-1))
          .squeeze(-1);
  auto fopts =
      torch::TensorOptions().dtype(torch::kFloat32).device(before.device());
  return torch::zeros({ids.size(0), ids.size(1)}, fopts)
      .masked_scatter(select, logp);
}

}  // namespace

Result<std::shared_ptr<DecoderModel>> DecoderModel::Load(
    const std::string& dir, const DecoderOptions& options) {
  SKILLDB_ASSIGN_OR_RETURN(DecoderConfig config,
                           DecoderConfig::FromCheckpoint(dir));
  SKILLDB_ASSIGN_OR_RETURN(std::unique_ptr<Tokenizer> tokenizer,
                           Tokenizer::FromFile(dir));
  if (tokenizer->vocab_size() > config.vocab_size) {
    return Status::InvalidArgument(
        dir + ": the tokenizer has " + std::to_string(tokenizer->vocab_size()) +
        " ids, the embedding only " + std::to_string(config.vocab_size));
  }
  std::shared_ptr<DecoderModel> model(new DecoderModel());
  model->dir_ = dir;
  auto format = ChatFormat::FromCheckpoint(dir);
  if (format.ok()) {
    model->chat_format_ = std::move(format).value();
  } else {
    model->chat_format_status_ = format.status();
  }
  SKILLDB_ASSIGN_OR_RETURN(CheckpointWeights weights,
                           CheckpointWeights::Open(dir));
  Weights tensors;
  for (const auto& [name, shape] : ExpectedTensors(config)) {
    auto t = internal::LoadTensor(weights, name, shape, options.dtype,
                                  options.device);
    if (!t.ok()) return t.status();
    tensors.emplace_back(name, std::move(t).value());
  }
  try {
    model->module_ =
        std::make_shared<CausalLM>(config, std::move(tensors), options);
    model->module_->eval();
  } catch (const std::exception& e) {
    return Status::Internal(
        dir + ": building the model: " + internal::ExceptionMessage(e));
  }
  std::set<int32_t> eos(config.eos_token_ids.begin(),
                        config.eos_token_ids.end());
  if (model->chat_format_) {
    if (auto id = tokenizer->TokenToId(model->chat_format_->end_of_turn())) {
      eos.insert(*id);
    }
  }
  model->eos_ids_.assign(eos.begin(), eos.end());
  model->tokenizer_ = std::move(tokenizer);
  return model;
}

torch::Tensor DecoderModel::Logits(const torch::Tensor& input_ids,
                                   const torch::Tensor& attention_mask) {
  const torch::Tensor mask = attention_mask.to(torch::kBool);
  torch::Tensor hidden =
      module_->Hidden(input_ids, PositionsOf(attention_mask), mask, nullptr);
  return module_->LmHead(hidden);
}

torch::Tensor DecoderModel::TokenLogprobs(const torch::Tensor& input_ids,
                                          const torch::Tensor& attention_mask,
                                          const torch::Tensor& target_mask) {
  const int64_t B = input_ids.size(0), T = input_ids.size(1);
  const torch::Tensor mask = attention_mask.to(torch::kBool);
  torch::Tensor hidden =
      module_->Hidden(input_ids, PositionsOf(attention_mask), mask, nullptr);
  // Token t is predicted by the hidden state at t - 1.
  torch::Tensor shifted = SelectedLogprobs(
      *module_, hidden.narrow(1, 0, T - 1), input_ids.narrow(1, 1, T - 1),
      target_mask.to(torch::kBool).narrow(1, 1, T - 1));
  auto fopts =
      torch::TensorOptions().dtype(torch::kFloat32).device(hidden.device());
  return torch::cat({torch::zeros({B, 1}, fopts), shifted}, 1);
}

torch::Tensor DecoderModel::TokenLogprobsAfterPrefix(
    const torch::Tensor& prefix_ids, const torch::Tensor& input_ids,
    const torch::Tensor& attention_mask, const torch::Tensor& target_mask) {
  TORCH_CHECK(prefix_ids.dim() == 1 && prefix_ids.size(0) >= 1,
              "TokenLogprobsAfterPrefix: prefix_ids must be [P], P >= 1");
  TORCH_CHECK(input_ids.dim() == 2 && input_ids.size(1) >= 1,
              "TokenLogprobsAfterPrefix: input_ids must be [B, T], T >= 1");
  TORCH_CHECK(attention_mask.sizes() == input_ids.sizes() &&
                  target_mask.sizes() == input_ids.sizes(),
              "TokenLogprobsAfterPrefix: the masks must be shaped as "
              "input_ids");
  const int64_t P = prefix_ids.size(0), B = input_ids.size(0),
                T = input_ids.size(1);
  const auto long_opts = input_ids.options().dtype(torch::kInt64);
  // The prefix alone, causal, its keys and values written into a cache of
  // batch 1.
  CausalLM::KvCache shared = module_->NewCache(1, P);
  torch::Tensor prefix_hidden = module_->Hidden(
      prefix_ids.to(torch::kInt64).view({1, P}),
      torch::arange(P, long_opts).view({1, P}), torch::Tensor(), &shared);
  // Every row's cache starts with those keys and values (expanded, so the
  // gradient of each row flows back into the one prefix pass).
  CausalLM::KvCache rows = module_->NewCache(B, P + T);
  for (size_t l = 0; l < shared.k.size(); ++l) {
    rows.k[l].narrow(2, 0, P).copy_(shared.k[l].expand({B, -1, -1, -1}));
    rows.v[l].narrow(2, 0, P).copy_(shared.v[l].expand({B, -1, -1, -1}));
  }
  rows.length = P;
  const torch::Tensor mask = attention_mask.to(torch::kBool);
  const torch::Tensor key_mask = torch::cat(
      {torch::ones({B, P}, mask.options()), mask}, 1);  // [B, P + T]
  torch::Tensor hidden = module_->Hidden(
      input_ids, PositionsOf(attention_mask) + P, key_mask, &rows);
  // Token t of the suffix is predicted by the hidden state before it: the
  // prefix's last for t = 0.
  const int64_t H = hidden.size(2);
  torch::Tensor before = torch::cat(
      {prefix_hidden.narrow(1, P - 1, 1).expand({B, 1, H}),
       hidden.narrow(1, 0, T - 1)},
      1);  // [B, T, H]
  return SelectedLogprobs(*module_, before, input_ids,
                          target_mask.to(torch::kBool));
}

Result<DecoderModel::EncodedPrompt> DecoderModel::EncodeChat(
    const llm::Chat& chat, bool add_generation_prompt) const {
  if (!chat_format_) return chat_format_status_;
  EncodedPrompt out;
  SKILLDB_ASSIGN_OR_RETURN(out.text,
                           chat_format_->Apply(chat, add_generation_prompt));
  out.ids = tokenizer_->Encode(out.text, /*add_special_tokens=*/false);
  return out;
}

}  // namespace skilldb::models
