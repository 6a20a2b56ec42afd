// Built when libtorch has no CUDA: no graphs, CPU generators.
#include <ATen/CPUGeneratorImpl.h>

#include "decode_graphs.h"

namespace skilldb::models::internal {

at::Generator MakeGenerator(const torch::Device& device, uint64_t seed) {
  TORCH_CHECK(device.is_cpu(), "this libtorch has no CUDA");
  return at::detail::createCPUGenerator(seed);
}

std::unique_ptr<DecodeGraphs> MakeDecodeGraphs(CausalLM::Impl&,
                                               const DecoderOptions&) {
  return nullptr;
}

}  // namespace skilldb::models::internal
