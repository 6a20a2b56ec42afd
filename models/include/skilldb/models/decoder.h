// The Llama / Qwen2 decoder on libtorch: a Hugging Face checkpoint loaded
// into a torch::nn::Module (parameters named as in the checkpoint, so the
// trainer's optimizer and checkpoints speak the same names), a training
// forward with autograd, and batched generation with a static KV cache
// (CUDA graphs for the decode steps on GPUs).
//
// Architecture as transformers computes it: RMSNorm (fp32 statistics),
// rotary embeddings with the config's theta (and llama3 or linear
// scaling), grouped-query attention, SwiGLU MLP, Qwen2's q/k/v biases,
// tied or untied embeddings. Positions come from the attention mask
// (cumsum - 1), as transformers' generate computes them, so left- and
// right-padded batches give every sequence its unpadded logits.
//
// Thread safety: a DecoderModel may be read (Logits, TokenLogprobs) from
// several threads only when nothing trains it meanwhile; Generate
// serializes itself on an internal mutex. Training (changing parameters)
// must not overlap with Generate: the caller orders them.
#ifndef SKILLDB_MODELS_DECODER_H_
#define SKILLDB_MODELS_DECODER_H_

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "skilldb/llm/backbone.h"
#include "skilldb/models/chat_format.h"
#include "skilldb/models/model_config.h"
#include "skilldb/models/tokenizer.h"
#include "skilldb/status.h"

namespace skilldb::models {

struct DecoderOptions {
  // Where the weights live and the model runs. Default: CPU.
  torch::Device device = torch::kCPU;
  // Weights and activations. Default: fp32 (tests, CPU); bf16 is the
  // usual choice on GPUs (norm statistics, softmax and sampling stay fp32).
  torch::Dtype dtype = torch::kFloat32;
  // Parameters require gradients (the trainer's model). Weights mapped
  // from the checkpoint are copy-on-write, so updating them in place never
  // writes the files. Default: false (inference).
  bool trainable = false;
  // Capture the decode step in CUDA graphs (one per batch size and KV
  // length bucket). Ignored on CPU and when libtorch has no CUDA.
  // Default: true.
  bool cuda_graphs = true;
  // Scaled-dot-product attention kernels (flash / memory-efficient) for
  // prefill and training where libtorch has them (>= 2.0) and the device is
  // a GPU; otherwise explicit matmul + softmax. Default: true.
  bool fused_attention = true;
};

// One generated continuation, in tokens.
struct GeneratedTokens {
  std::vector<int32_t> token_ids;      // completion tokens, EOS included
  std::vector<double> token_logprobs;  // under the model (temperature 1)
  std::vector<std::vector<llm::TokenChoice>> top_logprobs;
  std::string text;           // decoded, special tokens and stop string cut
  std::string finish_reason;  // "stop" (EOS or stop string) | "length"
};

struct GenerationOptions {
  int max_new_tokens = 512;       // Default: 512.
  double temperature = 1.0;       // 0 = greedy. Default: 1.0.
  double top_p = 1.0;             // Default: 1.0 (off).
  int top_k = 0;                  // Default: 0 (off).
  std::optional<uint64_t> seed;   // fixes the call's random stream
  std::vector<std::string> stop;  // text stops before any of these
  bool logprobs = true;
  int top_logprobs = 0;
  // Extra ids that end a sequence (besides the checkpoint's EOS ids and
  // the chat format's end-of-turn token).
  std::vector<int32_t> extra_eos_ids;
  // Generate max_new_tokens tokens whatever they are (benchmarks); stop
  // strings still apply. Default: false.
  bool ignore_eos = false;
};

// The module: parameters under transformers' names
// ("model.layers.0.self_attn.q_proj.weight", ...).
class CausalLM : public torch::nn::Module {
 public:
  // REQUIRES: weights already shaped as `config` says (DecoderModel::Load
  // checks and builds them).
  CausalLM(const DecoderConfig& config,
           std::vector<std::pair<std::string, torch::Tensor>> weights,
           const DecoderOptions& options);
  ~CausalLM() override;

  // Per-layer KV cache, preallocated: k[l], v[l] are [B, kv_heads, capacity,
  // head_dim]. Positions [0, length) are written.
  struct KvCache {
    std::vector<torch::Tensor> k, v;
    int64_t length = 0;
    int64_t capacity() const { return k.empty() ? 0 : k[0].size(2); }
  };
  KvCache NewCache(int64_t batch, int64_t capacity) const;

  // Final hidden states [B, T, hidden] of `input_ids` [B, T] (int64) at
  // `positions` [B, T]. `key_mask` [B, L] (bool) says which keys may be
  // attended (L = T without a cache, cache.length + T with one); attention
  // is causal on top of it. With `cache`, k and v are written at
  // [cache->length, cache->length + T) and length advances.
  torch::Tensor Hidden(const torch::Tensor& input_ids,
                       const torch::Tensor& positions,
                       const torch::Tensor& key_mask, KvCache* cache);
  // Logits [.., vocab] of hidden states [.., hidden].
  torch::Tensor LmHead(const torch::Tensor& hidden);

  const DecoderConfig& config() const { return config_; }
  const DecoderOptions& options() const { return options_; }

  class Impl;  // src/decoder_impl.h
  Impl& impl() { return *impl_; }

 private:
  DecoderConfig config_;
  DecoderOptions options_;
  std::unique_ptr<Impl> impl_;
};

// A loaded checkpoint: the module, its tokenizer and chat format.
class DecoderModel {
 public:
  // Loads config.json (+ generation_config.json), the safetensors weights,
  // tokenizer.json and the chat template from `dir`. Errors: those of the
  // readers (NotFound, Corruption, NotSupported), InvalidArgument for a
  // tensor whose shape disagrees with the config or a tokenizer larger than
  // the embedding, NotFound for a missing tensor. A checkpoint without a
  // chat template loads (chat_format() is then null, and EncodeChat returns
  // the reason: NotFound or NotSupported).
  static Result<std::shared_ptr<DecoderModel>> Load(
      const std::string& dir, const DecoderOptions& options = {});
  ~DecoderModel();

  CausalLM& module() { return *module_; }
  std::shared_ptr<CausalLM> module_ptr() { return module_; }
  const DecoderConfig& config() const { return module_->config(); }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  // nullptr when the checkpoint declares no (known) template.
  const ChatFormat* chat_format() const {
    return chat_format_ ? &*chat_format_ : nullptr;
  }
  const std::string& dir() const { return dir_; }
  torch::Device device() const { return module_->options().device; }
  // The ids that end generation: the checkpoint's EOS ids and the chat
  // format's end-of-turn token.
  const std::vector<int32_t>& eos_ids() const { return eos_ids_; }

  // Logits [B, T, vocab] (the module's dtype) for `input_ids` [B, T] and
  // `attention_mask` [B, T] (1 = token, 0 = padding, either side).
  // Differentiable when grad mode is on. Throws c10::Error on bad shapes
  // (torch-level API: callers in torch code catch).
  torch::Tensor Logits(const torch::Tensor& input_ids,
                       const torch::Tensor& attention_mask);
  // Log-probabilities [B, T] (fp32) of each token given the tokens before
  // it, computed only where `target_mask` [B, T] is set (0 elsewhere, and
  // at t = 0): the lm head runs on those positions only, so scoring or
  // training on completion tokens never materializes [B, T, vocab].
  torch::Tensor TokenLogprobs(const torch::Tensor& input_ids,
                              const torch::Tensor& attention_mask,
                              const torch::Tensor& target_mask);
  // TokenLogprobs for a batch whose sequences all begin with `prefix_ids`
  // [P] (int64, P >= 1): `input_ids` [B, T] are what follows the prefix in
  // each sequence (right-padded; `attention_mask` and `target_mask` [B, T]
  // over them as above). The prefix runs once, batch 1, and its keys and
  // values serve every row, so a group of samples of one prompt pays for the
  // prompt once (forward and backward); the result equals TokenLogprobs on
  // the concatenated sequences' suffix columns up to float rounding. A
  // target at suffix position 0 is predicted by the prefix's last token.
  // Differentiable when grad mode is on. Throws c10::Error on bad shapes.
  torch::Tensor TokenLogprobsAfterPrefix(const torch::Tensor& prefix_ids,
                                         const torch::Tensor& input_ids,
                                         const torch::Tensor& attention_mask,
                                         const torch::Tensor& target_mask);

  // The chat's prompt text and ids (template applied, no special tokens
  // added by the tokenizer: the template carries them).
  struct EncodedPrompt {
    std::string text;
    std::vector<int32_t> ids;
  };
  Result<EncodedPrompt> EncodeChat(const llm::Chat& chat,
                                   bool add_generation_prompt) const;

  // Continues each of `prompts` (token ids, non-empty) once. Rows run as one
  // left-padded batch with a static KV cache. Errors: InvalidArgument for
  // an empty prompt, out-of-range ids, bad options or a prompt plus
  // max_new_tokens beyond max_position_embeddings; Internal for a torch
  // failure (its message kept).
  Result<std::vector<GeneratedTokens>> Generate(
      const std::vector<std::vector<int32_t>>& prompts,
      const GenerationOptions& options);

  class Generator;  // generate.cc

 private:
  DecoderModel();
  std::string dir_;
  std::shared_ptr<CausalLM> module_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::optional<ChatFormat> chat_format_;
  Status chat_format_status_;  // why chat_format_ is empty
  std::vector<int32_t> eos_ids_;
  std::mutex generate_mu_;
  std::unique_ptr<Generator> generator_;  // GUARDED_BY(generate_mu_)
};

// An llm::Backbone over `model` (shared: the trainer can keep training the
// same module the agents sample from, ordering the two itself). See
// local_backbone.h for what it honours. InvalidArgument when
// max_batch_rows < 1; the model's chat-format error (NotFound,
// NotSupported) when it has no known chat template.
Result<std::unique_ptr<llm::Backbone>> MakeBackbone(
    std::shared_ptr<DecoderModel> model, std::string model_name,
    int max_batch_rows = 64);

}  // namespace skilldb::models

#endif  // SKILLDB_MODELS_DECODER_H_
