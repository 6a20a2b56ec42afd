// skilldb candidate protocol, version 1: the one header every candidate
// kernel (CUDA or host C++) is compiled against. The verifier force-includes
// it (nvcc/g++ `-include skilldb_candidate.h`), so a candidate may use these
// names without including anything. PROTOCOL.md describes the protocol in
// prose for LLM prompts.
//
// A candidate defines exactly one entry point:
//
//   extern "C" int launch(const Tensor* inputs, int n_inputs,
//                         Tensor* outputs, int n_outputs,
//                         skdb_stream_t stream);
//
// CUDA: `skdb_stream_t` is `cudaStream_t`; every kernel, memset and copy must
// be enqueued on `stream`; launch() may return before the work finishes.
// Host: `skdb_stream_t` is `void*` and always null; launch() returns when the
// outputs are written. Return 0 on success, anything else on failure.
#ifndef SKILLDB_CANDIDATE_H_
#define SKILLDB_CANDIDATE_H_

#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__) || defined(SKDB_WITH_CUDA_RUNTIME)
#include <cuda_runtime.h>
typedef cudaStream_t skdb_stream_t;
#else
typedef void* skdb_stream_t;
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define SKDB_PROTOCOL_VERSION 1
#define SKDB_MAX_DIMS 8

// Element types. Values are part of the protocol: never renumber.
enum SkdbDtype {
  SKDB_FLOAT32 = 0,   // float
  SKDB_BFLOAT16 = 1,  // 16-bit brain float (__nv_bfloat16 on the device)
  SKDB_FLOAT16 = 2,   // IEEE half (__half on the device)
  SKDB_INT32 = 3,
  SKDB_INT64 = 4,
};

// A dense, row-major, contiguous tensor. `data` is a device pointer for the
// CUDA backend and a host pointer for the host backend; it is aligned to at
// least 256 bytes. `stride` is in elements (stride[ndim-1] == 1).
typedef struct Tensor {
  void* data;
  int32_t dtype;  // an SkdbDtype
  int32_t ndim;
  int64_t shape[SKDB_MAX_DIMS];
  int64_t stride[SKDB_MAX_DIMS];
  int64_t numel;
} Tensor;

// Bytes per element of an SkdbDtype.
static inline int64_t skdb_dtype_size(int32_t dtype) {
  return dtype == SKDB_BFLOAT16 || dtype == SKDB_FLOAT16 ? 2
         : dtype == SKDB_INT64                           ? 8
                                                         : 4;
}

// Host helpers for bfloat16 (stored as uint16_t): exact widening and
// round-to-nearest-even narrowing, the same rounding the verifier uses.
static inline float skdb_bf16_to_float(uint16_t v) {
  uint32_t bits = (uint32_t)v << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static inline uint16_t skdb_float_to_bf16(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0) {
    return (uint16_t)((bits >> 16) | 0x0040u);  // quiet NaN stays NaN
  }
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return (uint16_t)(bits >> 16);
}

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // SKILLDB_CANDIDATE_H_
