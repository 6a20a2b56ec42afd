#include "skilldb/models/decoder.h"

#include <cmath>
#include <limits>

#include "decoder_impl.h"
#include "torch_util.h"

namespace skilldb::models {
namespace {

using torch::indexing::Slice;

torch::Tensor RotateHalf(const torch::Tensor& x) {
  const int64_t half = x.size(-1) / 2;
  return torch::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
}

// transformers' default inverse frequencies, then its llama3 or linear
// scaling, all in fp32 as it computes them.
torch::Tensor InverseFrequencies(const DecoderConfig& c) {
  const int64_t dim = c.head_dim;
  torch::Tensor exponent =
      torch::arange(0, dim, 2, torch::kInt64).to(torch::kFloat32) /
      static_cast<double>(dim);
  torch::Tensor inv_freq = torch::pow(c.rope.theta, exponent).reciprocal();
  const RopeConfig& r = c.rope;
  if (r.type == "linear") return inv_freq / r.factor;
  if (r.type != "llama3") return inv_freq;
  const double old_len =
      static_cast<double>(r.original_max_position_embeddings);
  const double low_wavelen = old_len / r.low_freq_factor;
  const double high_wavelen = old_len / r.high_freq_factor;
  torch::Tensor wavelen = 2 * M_PI / inv_freq;
  torch::Tensor scaled =
      torch::where(wavelen > low_wavelen, inv_freq / r.factor, inv_freq);
  torch::Tensor smooth = (old_len / wavelen - r.low_freq_factor) /
                         (r.high_freq_factor - r.low_freq_factor);
  torch::Tensor smoothed = (1 - smooth) * scaled / r.factor + smooth * scaled;
  torch::Tensor medium = (wavelen >= high_wavelen) & (wavelen <= low_wavelen);
  return torch::where(medium, smoothed, scaled);
}

bool UseFusedAttention(const DecoderOptions& options) {
#if TORCH_VERSION_MAJOR >= 2
  return options.fused_attention && options.device.is_cuda();
#else
  (void)options;
  return false;
#endif
}

}  // namespace

// Layers
// ------------------------------------------------------------------------

LinearLayer::LinearLayer(torch::Tensor weight, torch::Tensor bias,
                         bool trainable) {
  weight_ = register_parameter("weight", std::move(weight), trainable);
  if (bias.defined())
    bias_ = register_parameter("bias", std::move(bias), trainable);
}

torch::Tensor LinearLayer::Forward(const torch::Tensor& x) const {
  return torch::linear(x, weight_, bias_);
}

RmsNormLayer::RmsNormLayer(torch::Tensor weight, double eps, bool trainable)
    : eps_(eps) {
  weight_ = register_parameter("weight", std::move(weight), trainable);
}

torch::Tensor RmsNormLayer::Forward(const torch::Tensor& x) const {
  // As transformers: statistics in fp32, the weight applied in x's dtype.
  torch::Tensor h = x.to(torch::kFloat32);
  torch::Tensor variance = h.pow(2).mean(-1, /*keepdim=*/true);
  h = h * torch::rsqrt(variance + eps_);
  return weight_ * h.to(x.scalar_type());
}

// The model
// -----------------------------------------------------------------------

namespace {

// A named node of the parameter tree ("model", "layers.0", "self_attn").
class Node : public torch::nn::Module {};

torch::Tensor Take(std::vector<std::pair<std::string, torch::Tensor>>& weights,
                   const std::string& name) {
  for (auto& [n, t] : weights) {
    if (n == name) return t;
  }
  return torch::Tensor();
}

}  // namespace

CausalLM::Impl::Impl(const DecoderConfig& config,
                     std::vector<std::pair<std::string, torch::Tensor>>& w,
                     const DecoderOptions& options, torch::nn::Module& owner)
    : config_(config), options_(options) {
  const bool grad = options.trainable;
  auto model = owner.register_module("model", std::make_shared<Node>());
  auto embed_node =
      model->register_module("embed_tokens", std::make_shared<Node>());
  embed_ = embed_node->register_parameter(
      "weight", Take(w, "model.embed_tokens.weight"), grad);
  auto layer_list = model->register_module("layers", std::make_shared<Node>());
  auto linear = [&](Node& parent, const std::string& prefix, const char* name,
                    bool bias) {
    const std::string base = prefix + name;
    return parent.register_module(
        name, std::make_shared<LinearLayer>(
                  Take(w, base + ".weight"),
                  bias ? Take(w, base + ".bias") : torch::Tensor(), grad));
  };
  for (int64_t i = 0; i < config.num_layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    auto node = layer_list->register_module(std::to_string(i),
                                            std::make_shared<Node>());
    Layer layer;
    layer.input_norm = node->register_module(
        "input_layernorm",
        std::make_shared<RmsNormLayer>(Take(w, p + "input_layernorm.weight"),
                                       config.rms_norm_eps, grad));
    layer.post_norm = node->register_module(
        "post_attention_layernorm",
        std::make_shared<RmsNormLayer>(
            Take(w, p + "post_attention_layernorm.weight"), config.rms_norm_eps,
            grad));
    auto attn = node->register_module("self_attn", std::make_shared<Node>());
    const std::string ap = p + "self_attn.";
    layer.q = linear(*attn, ap, "q_proj", config.qkv_bias);
    layer.k = linear(*attn, ap, "k_proj", config.qkv_bias);
    layer.v = linear(*attn, ap, "v_proj", config.qkv_bias);
    layer.o = linear(*attn, ap, "o_proj", config.o_bias);
    auto mlp = node->register_module("mlp", std::make_shared<Node>());
    const std::string mp = p + "mlp.";
    layer.gate = linear(*mlp, mp, "gate_proj", config.mlp_bias);
    layer.up = linear(*mlp, mp, "up_proj", config.mlp_bias);
    layer.down = linear(*mlp, mp, "down_proj", config.mlp_bias);
    layers_.push_back(std::move(layer));
  }
  norm_ = model->register_module(
      "norm", std::make_shared<RmsNormLayer>(Take(w, "model.norm.weight"),
                                             config.rms_norm_eps, grad));
  if (config.tie_word_embeddings) {
    lm_head_ = embed_;
  } else {
    auto head = owner.register_module("lm_head", std::make_shared<Node>());
    lm_head_ =
        head->register_parameter("weight", Take(w, "lm_head.weight"), grad);
  }
  inv_freq_ = InverseFrequencies(config).to(options.device);
}

std::pair<torch::Tensor, torch::Tensor> CausalLM::Impl::Rotary(
    const torch::Tensor& positions) const {
  // freqs = position x inv_freq (one fp32 product each, as transformers'
  // [D/2, 1] @ [1, T] matmul computes), duplicated to the head dim.
  torch::Tensor freqs =
      positions.to(torch::kFloat32).unsqueeze(-1) * inv_freq_;  // [B, T, D/2]
  torch::Tensor emb = torch::cat({freqs, freqs}, -1);
  const auto dtype = options_.dtype;
  return {emb.cos().to(dtype).unsqueeze(1), emb.sin().to(dtype).unsqueeze(1)};
}

torch::Tensor CausalLM::Impl::Attention(const Layer& layer, size_t index,
                                        const torch::Tensor& x,
                                        const AttentionInputs& in,
                                        KvCache* cache) {
  const int64_t B = x.size(0), T = x.size(1);
  const int64_t nh = config_.num_heads, nkv = config_.num_kv_heads;
  const int64_t hd = config_.head_dim, groups = nh / nkv;
  torch::Tensor q = layer.q->Forward(x).view({B, T, nh, hd}).transpose(1, 2);
  torch::Tensor k = layer.k->Forward(x).view({B, T, nkv, hd}).transpose(1, 2);
  torch::Tensor v = layer.v->Forward(x).view({B, T, nkv, hd}).transpose(1, 2);
  q = q * in.cos + RotateHalf(q) * in.sin;
  k = k * in.cos + RotateHalf(k) * in.sin;
  torch::Tensor keys = k, values = v;
  if (cache != nullptr) {
    torch::Tensor& ck = cache->k[index];
    torch::Tensor& cv = cache->v[index];
    if (in.write_index.defined()) {
      ck.index_copy_(2, in.write_index, k);
      cv.index_copy_(2, in.write_index, v);
    } else {
      ck.narrow(2, in.start, T).copy_(k);
      cv.narrow(2, in.start, T).copy_(v);
    }
    keys = ck.narrow(2, 0, in.key_length);
    values = cv.narrow(2, 0, in.key_length);
  }
  const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
  torch::Tensor out;
#if TORCH_VERSION_MAJOR >= 2
  if (UseFusedAttention(options_) && T > 1) {
    if (in.causal_only) {
      // Flash attention: causal, no mask; kv heads shared across groups.
#if TORCH_VERSION_MAJOR > 2 || TORCH_VERSION_MINOR >= 5
      out = at::scaled_dot_product_attention(q, keys, values, {}, 0.0, true,
                                             scale, /*enable_gqa=*/true);
#else
      out = at::scaled_dot_product_attention(
          q, keys.repeat_interleave(groups, 1),
          values.repeat_interleave(groups, 1), {}, 0.0, true, scale);
#endif
    } else {
      // A mask rules flash out; the memory-efficient kernel takes it with
      // the kv heads expanded.
      out = at::scaled_dot_product_attention(
          q, keys.repeat_interleave(groups, 1),
          values.repeat_interleave(groups, 1), in.allowed, 0.0, false, scale);
    }
  }
#endif
  if (!out.defined()) {
    // Explicit attention, with the query heads of a kv head stacked so one
    // matmul serves the group (no copies of k and v).
    const int64_t L = keys.size(2);
    torch::Tensor qg = q.reshape({B, nkv, groups * T, hd});
    torch::Tensor scores = torch::matmul(qg, keys.transpose(-1, -2))
                               .mul_(scale)
                               .view({B, nkv, groups, T, L});
    if (in.bias.defined()) scores = scores + in.bias;
    torch::Tensor probs =
        torch::softmax(scores, -1, torch::kFloat32).to(q.scalar_type());
    out = torch::matmul(probs.view({B, nkv, groups * T, L}), values)
              .view({B, nh, T, hd});
  }
  out = out.transpose(1, 2).reshape({B, T, nh * hd});
  return layer.o->Forward(out);
}

torch::Tensor CausalLM::Impl::Forward(const torch::Tensor& input_ids,
                                      const AttentionInputs& in,
                                      KvCache* cache) {
  torch::Tensor x = torch::embedding(embed_, input_ids);
  for (size_t i = 0; i < layers_.size(); ++i) {
    const Layer& layer = layers_[i];
    torch::Tensor h =
        x + Attention(layer, i, layer.input_norm->Forward(x), in, cache);
    torch::Tensor m = layer.post_norm->Forward(h);
    x = h + layer.down->Forward(torch::silu(layer.gate->Forward(m)) *
                                layer.up->Forward(m));
  }
  if (cache != nullptr && !in.write_index.defined()) {
    cache->length = in.start + input_ids.size(1);
  }
  return norm_->Forward(x);
}

torch::Tensor CausalLM::Impl::DecodeStep(const torch::Tensor& ids,
                                         const torch::Tensor& positions,
                                         const torch::Tensor& key_mask,
                                         const torch::Tensor& write_index,
                                         KvCache& cache) {
  AttentionInputs in;
  std::tie(in.cos, in.sin) = Rotary(positions);
  const int64_t B = ids.size(0), L = key_mask.size(1);
  in.bias =
      torch::zeros({B, 1, 1, 1, L}, key_mask.options().dtype(torch::kFloat32))
          .masked_fill_(key_mask.logical_not().view({B, 1, 1, 1, L}),
                        -std::numeric_limits<float>::infinity());
  in.write_index = write_index;
  in.key_length = L;
  torch::Tensor hidden = Forward(ids, in, &cache);
  return LmHead(hidden.select(1, 0)).to(torch::kFloat32);
}

torch::Tensor CausalLM::Impl::LmHead(const torch::Tensor& hidden) const {
  return torch::linear(hidden, lm_head_);
}

// CausalLM
// --------------------------------------------------------------------------

CausalLM::CausalLM(const DecoderConfig& config,
                   std::vector<std::pair<std::string, torch::Tensor>> weights,
                   const DecoderOptions& options)
    : config_(config), options_(options) {
  impl_ = std::make_unique<Impl>(config_, weights, options_, *this);
}

CausalLM::~CausalLM() = default;

CausalLM::KvCache CausalLM::NewCache(int64_t batch, int64_t capacity) const {
  return impl_->NewCache(batch, capacity);
}

CausalLM::KvCache CausalLM::Impl::NewCache(int64_t batch,
                                           int64_t capacity) const {
  KvCache cache;
  auto opts =
      torch::TensorOptions().dtype(options_.dtype).device(options_.device);
  for (int64_t i = 0; i < config_.num_layers; ++i) {
    cache.k.push_back(torch::zeros(
        {batch, config_.num_kv_heads, capacity, config_.head_dim}, opts));
    cache.v.push_back(torch::zeros(
        {batch, config_.num_kv_heads, capacity, config_.head_dim}, opts));
  }
  return cache;
}

namespace {

// Masks for `T` queries at cache positions [start, start + T) over keys
// [0, start + T): causal, and a key must be a token (key_mask) unless it is
// the query itself (so a padding query still attends to something and its
// row stays finite).
void BuildMasks(const torch::Tensor& key_mask, int64_t start, int64_t T,
                AttentionInputs& in) {
  const int64_t B = key_mask.size(0), L = key_mask.size(1);
  auto dev = key_mask.device();
  torch::Tensor qpos =
      torch::arange(start, start + T,
                    torch::TensorOptions().dtype(torch::kInt64).device(dev));
  torch::Tensor kpos = torch::arange(
      0, L, torch::TensorOptions().dtype(torch::kInt64).device(dev));
  torch::Tensor causal = kpos.view({1, L}) <= qpos.view({T, 1});  // [T, L]
  torch::Tensor self = kpos.view({1, L}) == qpos.view({T, 1});
  torch::Tensor allowed =
      causal.unsqueeze(0) & (key_mask.to(torch::kBool).view({B, 1, L}) |
                             self.unsqueeze(0));  // [B, T, L]
  in.allowed = allowed.unsqueeze(1);
  in.bias =
      torch::zeros({B, 1, 1, T, L},
                   torch::TensorOptions().dtype(torch::kFloat32).device(dev))
          .masked_fill_(allowed.logical_not().view({B, 1, 1, T, L}),
                        -std::numeric_limits<float>::infinity());
}

}  // namespace

torch::Tensor CausalLM::Hidden(const torch::Tensor& input_ids,
                               const torch::Tensor& positions,
                               const torch::Tensor& key_mask, KvCache* cache) {
  AttentionInputs in;
  const int64_t T = input_ids.size(1);
  std::tie(in.cos, in.sin) = impl_->Rotary(positions);
  in.start = cache != nullptr ? cache->length : 0;
  in.key_length = in.start + T;
  const bool all_keys = !key_mask.defined() || key_mask.all().item<bool>();
  in.causal_only = all_keys && in.start == 0;
  if (!in.causal_only) {
    torch::Tensor mask =
        key_mask.defined()
            ? key_mask
            : torch::ones({input_ids.size(0), in.key_length},
                          input_ids.options().dtype(torch::kBool));
    BuildMasks(mask, in.start, T, in);
  } else {
    BuildMasks(torch::ones({input_ids.size(0), T},
                           input_ids.options().dtype(torch::kBool)),
               0, T, in);
    if (UseFusedAttention(options_)) in.bias = in.allowed = torch::Tensor();
  }
  return impl_->Forward(input_ids, in, cache);
}

torch::Tensor CausalLM::LmHead(const torch::Tensor& hidden) {
  return impl_->LmHead(hidden);
}

}  // namespace skilldb::models
