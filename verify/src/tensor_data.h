// Host-side tensors for correctness checks: generation of inputs from a seed
// (the same generator the devices use), and comparison of candidate outputs
// with the float64 oracle. Pure functions; thread-safe.
#ifndef SKILLDB_VERIFY_TENSOR_DATA_H_
#define SKILLDB_VERIFY_TENSOR_DATA_H_

#include <cstdint>
#include <string>
#include <vector>

#include "skilldb/verify/task.h"

namespace skilldb::verify::internal {

// A tensor in both forms: the bytes the candidate sees (in its dtype) and
// their exact values as doubles (what the oracle sees).
struct HostTensor {
  Dtype dtype = Dtype::kFloat32;
  std::vector<int64_t> shape;
  std::string bytes;
  std::vector<double> values;
  int64_t numel() const;
};

// Generates `spec` at `shape` with element i = GenValue(seed, i, ...),
// rounded to the dtype.
HostTensor GenerateTensor(const TensorSpec& spec,
                          const std::vector<int64_t>& shape, uint64_t seed,
                          Distribution dist);

// Decodes `bytes` of `dtype` into doubles (poison NaNs stay NaN).
std::vector<double> DecodeValues(Dtype dtype, const std::string& bytes);

struct OutputCheck {
  int64_t elements = 0;
  int64_t unwritten = 0;    // still the poison bit pattern
  int64_t mismatches = 0;   // out of tolerance, NaN or Inf (written ones)
  double max_abs_error = 0;
  double max_rel_error = 0;
  double scale = 0;         // rms of the oracle output
  std::vector<std::string> examples;  // first few mismatches, in words
};

// Checks `got` (bytes in `dtype`) against the oracle's doubles under
// `tol`: |got - want| <= atol * rms(want) + rtol * |want|.
OutputCheck CheckOutput(Dtype dtype, const std::string& got,
                        const std::vector<double>& want, const Tolerance& tol,
                        const std::vector<int64_t>& shape);

}  // namespace skilldb::verify::internal

#endif  // SKILLDB_VERIFY_TENSOR_DATA_H_
