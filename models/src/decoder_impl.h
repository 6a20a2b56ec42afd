// The decoder's layers (decoder.cc) as the generator (generate.cc) and the
// CUDA-graph runner call them: a general forward and a decode step whose
// every input is a device tensor, so it can be captured once and replayed.
//
// Not thread-safe by itself: DecoderModel serializes generation; training
// forwards must not run concurrently with a generation on the same model.
#ifndef SKILLDB_MODELS_SRC_DECODER_IMPL_H_
#define SKILLDB_MODELS_SRC_DECODER_IMPL_H_

#include <torch/torch.h>

#include <vector>

#include "skilldb/models/decoder.h"

namespace skilldb::models {

// A bias-free or biased linear layer with transformers' parameter names.
class LinearLayer : public torch::nn::Module {
 public:
  LinearLayer(torch::Tensor weight, torch::Tensor bias, bool trainable);
  torch::Tensor Forward(const torch::Tensor& x) const;

 private:
  torch::Tensor weight_, bias_;
};

class RmsNormLayer : public torch::nn::Module {
 public:
  RmsNormLayer(torch::Tensor weight, double eps, bool trainable);
  torch::Tensor Forward(const torch::Tensor& x) const;

 private:
  torch::Tensor weight_;
  double eps_;
};

// What every layer's attention needs for one forward.
struct AttentionInputs {
  torch::Tensor cos, sin;  // [B, 1, T, head_dim], the model's dtype
  // Additive bias [B, 1, 1, T, L] (0 or -inf, fp32), for the explicit
  // path; undefined when attention is plainly causal over unpadded keys.
  torch::Tensor bias;
  // Boolean form [B, 1, T, L] (true = attend) for the fused kernels.
  torch::Tensor allowed;
  bool causal_only = false;
  // Decode step: k/v go to this index of the cache ([1] int64 on the
  // device) and the keys are the cache's first L positions.
  torch::Tensor write_index;
  int64_t start = 0;       // cache positions already written (host-known)
  int64_t key_length = 0;  // L
};

class CausalLM::Impl {
 public:
  Impl(const DecoderConfig& config,
       std::vector<std::pair<std::string, torch::Tensor>>& weights,
       const DecoderOptions& options, torch::nn::Module& owner);

  // cos and sin [B, 1, T, head_dim] for positions [B, T].
  std::pair<torch::Tensor, torch::Tensor> Rotary(
      const torch::Tensor& positions) const;

  torch::Tensor Forward(const torch::Tensor& input_ids,
                        const AttentionInputs& inputs, KvCache* cache);

  // One decode step for `ids` [B, 1] at `positions` [B, 1]: k/v written at
  // `write_index`, keys [0, key_mask.size(1)) attended where `key_mask`
  // [B, L] is true. Only device tensors flow in: capturable in a graph.
  // Returns the logits [B, vocab] as fp32.
  torch::Tensor DecodeStep(const torch::Tensor& ids,
                           const torch::Tensor& positions,
                           const torch::Tensor& key_mask,
                           const torch::Tensor& write_index, KvCache& cache);

  torch::Tensor LmHead(const torch::Tensor& hidden) const;
  KvCache NewCache(int64_t batch, int64_t capacity) const;

 private:
  struct Layer {
    std::shared_ptr<RmsNormLayer> input_norm, post_norm;
    std::shared_ptr<LinearLayer> q, k, v, o, gate, up, down;
  };
  torch::Tensor Attention(const Layer& layer, size_t index,
                          const torch::Tensor& x, const AttentionInputs& in,
                          KvCache* cache);

  const DecoderConfig& config_;
  DecoderOptions options_;
  torch::Tensor embed_;     // [vocab, hidden]
  torch::Tensor lm_head_;   // embed_ when tied
  torch::Tensor inv_freq_;  // [head_dim / 2] fp32 on the device
  std::vector<Layer> layers_;
  std::shared_ptr<RmsNormLayer> norm_;
};

}  // namespace skilldb::models

#endif  // SKILLDB_MODELS_SRC_DECODER_IMPL_H_
