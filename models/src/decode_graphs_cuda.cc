// Built when libtorch has CUDA: CUDA generators and the decode step replayed
// from CUDA graphs.
//
// Why graphs: a decode step of a small model is hundreds of short kernels;
// launching them one by one costs more than running them at batch 1 and
// still most of the step at batch 64. Captured once per (batch, length
// bucket), a step is one launch. The capture needs every input at a fixed
// address, hence the persistent per-batch-size state (cache, key mask, input
// buffers); the write position is a device tensor and keys beyond the
// current length are masked, so one graph serves a whole bucket of
// positions.
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/cuda.h>

#include <map>
#include <mutex>

#include "decode_graphs.h"

namespace skilldb::models::internal {
namespace {

constexpr size_t kMaxBatchSizes = 4;  // states kept before starting over

class CudaDecodeGraphs : public DecodeGraphs {
 public:
  CudaDecodeGraphs(CausalLM::Impl& impl, const DecoderOptions& options)
      : impl_(impl), options_(options) {}

  DecodeState& Prepare(int64_t rows, int64_t capacity) override {
    capacity = RoundUpToBucket(capacity);
    auto it = rows_.find(rows);
    if (it == rows_.end() || it->second.capacity < capacity) {
      if (it == rows_.end() && rows_.size() >= kMaxBatchSizes) {
        graphs_.clear();
        rows_.clear();
      }
      DropGraphs(rows);
      PerRows fresh;
      fresh.capacity = capacity;
      rows_.erase(rows);  // free the smaller cache before the larger exists
      auto long_opts =
          torch::TensorOptions().dtype(torch::kInt64).device(options_.device);
      fresh.state.cache = impl_.NewCache(rows, capacity);
      fresh.state.key_mask = torch::zeros(
          {rows, capacity},
          torch::TensorOptions().dtype(torch::kBool).device(options_.device));
      fresh.ids = torch::zeros({rows, 1}, long_opts);
      fresh.positions = torch::zeros({rows, 1}, long_opts);
      fresh.write = torch::zeros({1}, long_opts);
      it = rows_.emplace(rows, std::move(fresh)).first;
    } else {
      for (auto& t : it->second.state.cache.k) t.zero_();
      for (auto& t : it->second.state.cache.v) t.zero_();
      it->second.state.key_mask.zero_();
    }
    it->second.state.cache.length = 0;
    return it->second.state;
  }

  torch::Tensor Step(DecodeState& state, const torch::Tensor& ids,
                     const torch::Tensor& positions, int64_t write) override {
    const int64_t rows = ids.size(0);
    PerRows& s = rows_.at(rows);
    TORCH_CHECK(&s.state == &state, "decode state of another batch size");
    s.ids.copy_(ids);
    s.positions.copy_(positions);
    s.write.fill_(write);
    const int64_t bucket = std::min(s.capacity, RoundUpToBucket(write + 1));
    auto key = std::make_pair(rows, bucket);
    auto it = graphs_.find(key);
    if (it == graphs_.end())
      it = graphs_.emplace(key, Capture(s, bucket)).first;
    it->second->graph.replay();
    return it->second->logits;
  }

 private:
  struct PerRows {
    DecodeState state;
    int64_t capacity = 0;
    torch::Tensor ids, positions, write;
  };
  struct Graph {
    at::cuda::CUDAGraph graph;
    torch::Tensor logits;
  };

  std::unique_ptr<Graph> Capture(PerRows& s, int64_t bucket) {
    // The graphs share one memory pool, which lives while a graph captured
    // into it does; once the last is dropped (a larger cache, too many batch
    // sizes) the pool may linger with no user until its blocks are freed,
    // and capturing into it again fails (libtorch asserts the use count:
    // every generation after the first drop failed on torch 2.11). A new
    // set of graphs starts a new pool.
    if (graphs_.empty()) pool_ = at::cuda::graph_pool_handle();
    auto g = std::make_unique<Graph>();
    torch::Tensor mask = s.state.key_mask.narrow(1, 0, bucket);
    torch::cuda::synchronize();
    c10::cuda::CUDAStream stream = c10::cuda::getStreamFromPool(
        /*isHighPriority=*/false, options_.device.index());
    {
      c10::cuda::CUDAStreamGuard guard(stream);
      // Warm-up runs (cuBLAS handles and workspaces exist before capture);
      // they compute this very step, so their cache writes are the real ones.
      for (int i = 0; i < 2; ++i) {
        impl_.DecodeStep(s.ids, s.positions, mask, s.write, s.state.cache);
      }
      g->graph.capture_begin(pool_);
      g->logits =
          impl_.DecodeStep(s.ids, s.positions, mask, s.write, s.state.cache);
      g->graph.capture_end();
    }
    torch::cuda::synchronize();
    return g;
  }

  void DropGraphs(int64_t rows) {
    for (auto it = graphs_.begin(); it != graphs_.end();) {
      it = it->first.first == rows ? graphs_.erase(it) : std::next(it);
    }
  }

  CausalLM::Impl& impl_;
  DecoderOptions options_;
  at::cuda::MempoolId_t pool_{0, 0};  // Capture picks it
  std::map<int64_t, PerRows> rows_;
  std::map<std::pair<int64_t, int64_t>, std::unique_ptr<Graph>> graphs_;
};

}  // namespace

at::Generator MakeGenerator(const torch::Device& device, uint64_t seed) {
  if (device.is_cpu()) return at::detail::createCPUGenerator(seed);
  at::Generator gen = at::cuda::detail::createCUDAGenerator(device.index());
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.set_current_seed(seed);
  return gen;
}

std::unique_ptr<DecodeGraphs> MakeDecodeGraphs(CausalLM::Impl& impl,
                                               const DecoderOptions& options) {
  if (!options.cuda_graphs || !options.device.is_cuda()) return nullptr;
  return std::make_unique<CudaDecodeGraphs>(impl, options);
}

}  // namespace skilldb::models::internal
