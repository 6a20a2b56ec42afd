// Device-specific pieces of generation: random generators per device, and
// the CUDA-graph runner that replays the decode step (one graph per batch
// size and KV-length bucket, over a persistent static KV cache).
//
// decode_graphs_cuda.cc implements them when libtorch has CUDA;
// decode_graphs_cpu.cc otherwise (no graphs, CPU generators only). Not
// thread-safe: the generator that owns a runner serializes its calls.
#ifndef SKILLDB_MODELS_SRC_DECODE_GRAPHS_H_
#define SKILLDB_MODELS_SRC_DECODE_GRAPHS_H_

#include <torch/torch.h>

#include <memory>

#include "decoder_impl.h"

namespace skilldb::models::internal {

// KV positions per length bucket: a decode step on a GPU attends over the
// keys of the bucket holding the current length (masked beyond it), with or
// without graphs, and GPU caches hold whole buckets.
constexpr int64_t kKeyBucket = 128;
inline int64_t RoundUpToBucket(int64_t n) {
  return (n + kKeyBucket - 1) / kKeyBucket * kKeyBucket;
}

// A generator for sampling on `device`, seeded with `seed`.
at::Generator MakeGenerator(const torch::Device& device, uint64_t seed);

// The KV cache and key mask [rows, capacity] (true = a token is there) of
// one generation.
struct DecodeState {
  CausalLM::KvCache cache;
  torch::Tensor key_mask;
};

class DecodeGraphs {
 public:
  virtual ~DecodeGraphs() = default;
  // A zeroed state for `rows` rows and at least `capacity` positions, kept
  // across calls (graphs refer to its tensors).
  virtual DecodeState& Prepare(int64_t rows, int64_t capacity) = 0;
  // The decode step for `ids` [rows, 1] at `positions` [rows, 1] writing
  // cache slot `write`: replays (capturing on first use) the graph of the
  // smallest length bucket holding write + 1. Returns logits [rows, vocab]
  // (fp32), valid until the next Step.
  virtual torch::Tensor Step(DecodeState& state, const torch::Tensor& ids,
                             const torch::Tensor& positions, int64_t write) = 0;
};

// A runner for `impl` on options.device, or nullptr where CUDA graphs are
// not available (CPU device, libtorch without CUDA, options.cuda_graphs off).
std::unique_ptr<DecodeGraphs> MakeDecodeGraphs(CausalLM::Impl& impl,
                                               const DecoderOptions& options);

}  // namespace skilldb::models::internal

#endif  // SKILLDB_MODELS_SRC_DECODE_GRAPHS_H_
