// libtorch helpers shared by the decoder and the encoder: tensors built on
// safetensors mappings (no copy when dtype and device allow), dtype and
// device names, and turning torch exceptions into Status.
//
// Stateless: safe from any thread.
#ifndef SKILLDB_MODELS_SRC_TORCH_UTIL_H_
#define SKILLDB_MODELS_SRC_TORCH_UTIL_H_

#include <torch/torch.h>

#include <string>
#include <vector>

#include "skilldb/models/safetensors.h"
#include "skilldb/status.h"

namespace skilldb::models::internal {

// The tensor `name` of `weights` as `dtype` on `device`, checked to have
// `shape`. On the CPU with the file's dtype (and an aligned offset) it is a
// view of the mapping, which it keeps alive; otherwise a converted copy.
// Errors: NotFound (no such tensor), InvalidArgument (shape differs: the
// message gives both), NotSupported (a dtype torch cannot hold).
Result<torch::Tensor> LoadTensor(const CheckpointWeights& weights,
                                 const std::string& name,
                                 const std::vector<int64_t>& shape,
                                 torch::Dtype dtype, torch::Device device);

// "float32" | "fp32" | "bfloat16" | "bf16" | "float16" | "fp16".
Result<torch::Dtype> ParseDtype(const std::string& name);
// "cpu", "cuda", "cuda:N". InvalidArgument otherwise; Unavailable for a
// CUDA device this libtorch or machine does not have.
Result<torch::Device> ParseDevice(const std::string& name);

// The message of a caught exception, for Status::Internal.
std::string ExceptionMessage(const std::exception& e);

}  // namespace skilldb::models::internal

#endif  // SKILLDB_MODELS_SRC_TORCH_UTIL_H_
