#include "torch_util.h"

#include <cstring>
#include <sstream>

namespace skilldb::models::internal {
namespace {

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
  out << "]";
  return out.str();
}

Result<torch::Dtype> TorchDtypeOf(DType dtype) {
  switch (dtype) {
    case DType::kF64:
      return torch::kFloat64;
    case DType::kF32:
      return torch::kFloat32;
    case DType::kF16:
      return torch::kFloat16;
    case DType::kBF16:
      return torch::kBFloat16;
    case DType::kI64:
      return torch::kInt64;
    case DType::kI32:
      return torch::kInt32;
    case DType::kI16:
      return torch::kInt16;
    case DType::kI8:
      return torch::kInt8;
    case DType::kU8:
      return torch::kUInt8;
    case DType::kBool:
      return torch::kBool;
  }
  return Status::NotSupported("dtype " + std::string(DTypeName(dtype)));
}

}  // namespace

Result<torch::Tensor> LoadTensor(const CheckpointWeights& weights,
                                 const std::string& name,
                                 const std::vector<int64_t>& shape,
                                 torch::Dtype dtype, torch::Device device) {
  SKILLDB_ASSIGN_OR_RETURN(const TensorView* view, weights.Get(name));
  if (view->shape != shape) {
    return Status::InvalidArgument(weights.dir() + ": tensor '" + name +
                                   "' has shape " + ShapeString(view->shape) +
                                   ", the config implies " +
                                   ShapeString(shape));
  }
  SKILLDB_ASSIGN_OR_RETURN(torch::Dtype stored, TorchDtypeOf(view->dtype));
  try {
    const size_t element = DTypeSize(view->dtype);
    void* data = const_cast<uint8_t*>(view->data);  // the mapping is private
    const bool aligned = reinterpret_cast<uintptr_t>(data) % element == 0;
    auto opts = torch::TensorOptions().dtype(stored);
    if (aligned && stored == dtype && device.is_cpu()) {
      std::shared_ptr<const SafetensorsFile> keep = weights.FileOf(name);
      return torch::from_blob(
          data, shape, [keep](void*) mutable { keep.reset(); }, opts);
    }
    torch::Tensor source;
    if (aligned) {
      source = torch::from_blob(data, shape, opts);
    } else {
      source = torch::empty(shape, opts);
      std::memcpy(source.data_ptr(), data, view->size_bytes);
    }
    return source.to(device, dtype, /*non_blocking=*/false, /*copy=*/true);
  } catch (const std::exception& e) {
    return Status::Internal("loading '" + name + "': " + ExceptionMessage(e));
  }
}

Result<torch::Dtype> ParseDtype(const std::string& name) {
  if (name == "float32" || name == "fp32") return torch::kFloat32;
  if (name == "bfloat16" || name == "bf16") return torch::kBFloat16;
  if (name == "float16" || name == "fp16") return torch::kFloat16;
  return Status::InvalidArgument("dtype '" + name +
                                 "' (float32, bfloat16 or float16 expected)");
}

Result<torch::Device> ParseDevice(const std::string& name) {
  if (name == "cpu") return torch::Device(torch::kCPU);
  if (name.rfind("cuda", 0) != 0) {
    return Status::InvalidArgument("device '" + name +
                                   "' (cpu, cuda or cuda:N expected)");
  }
  if (!torch::cuda::is_available()) {
    return Status::Unavailable("device '" + name +
                               "': no CUDA device (or libtorch without CUDA)");
  }
  try {
    torch::Device device(name);
    if (device.has_index() &&
        device.index() >= static_cast<int>(torch::cuda::device_count())) {
      return Status::Unavailable("device '" + name + "' does not exist");
    }
    return device;
  } catch (const std::exception& e) {
    return Status::InvalidArgument("device '" + name +
                                   "': " + ExceptionMessage(e));
  }
}

std::string ExceptionMessage(const std::exception& e) {
  if (const auto* c10 = dynamic_cast<const c10::Error*>(&e)) {
    return c10->what_without_backtrace();
  }
  return e.what();
}

}  // namespace skilldb::models::internal
