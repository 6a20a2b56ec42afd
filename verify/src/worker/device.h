// The worker's view of the machine that runs candidates: a GPU (CudaDevice)
// or the host CPU (HostDevice). Buffers are device pointers for the GPU and
// host pointers for the host; every operation is synchronous unless noted.
//
// A Device is used by the worker's single request thread only.
#ifndef SKILLDB_VERIFY_WORKER_DEVICE_H_
#define SKILLDB_VERIFY_WORKER_DEVICE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "skilldb/status.h"
#include "skilldb_candidate.h"

namespace skilldb::verify::internal {

using LaunchFn = int (*)(const Tensor*, int, Tensor*, int, skdb_stream_t);

struct DeviceInfo {
  std::string name;          // "NVIDIA H200" or the CPU model
  std::string device_class;  // "sm_90" or "host"
  int sm_count = 0;
  int64_t cache_bytes = 0;   // L2 (GPU) or last-level cache (host)
  int64_t memory_bytes = 0;
  bool cupti = false;        // kernel executions are counted by CUPTI
  int device_count = 1;      // GPUs visible to the worker
  std::string notes;         // sandbox / monitor state, for the report
};

struct Ceilings {
  double bandwidth_bytes_per_s = 0;  // copy, read + write bytes
  double fp32_flops_per_s = 0;       // FMA throughput
};

// What one call of a candidate did, besides its outputs.
struct CallReport {
  int rc = 0;                // launch()'s return value
  std::string error;         // a CUDA error seen during the call, if any
  bool sticky = false;       // the device context is unusable
  double device_ms = 0;      // events (GPU) / vDSO monotonic clock (host)
  double host_ms = 0;        // host clock around launch + device-wide sync
  int kernels = -1;          // kernel launches seen by interposition
  int kernels_executed = -1; // kernel executions seen by CUPTI (-1: off)
  int foreign_stream_ops = 0;
  std::string foreign_detail;
  bool alloc_denied = false;
};

struct CompareCounts {
  int64_t unwritten = 0;   // elements still holding the poison pattern
  int64_t mismatches = 0;  // elements outside tolerance (incl. NaN/Inf)
  double max_abs = 0;
  double max_rel = 0;
  int64_t first_bad = -1;
  double first_got = 0, first_want = 0;
};

class Device {
 public:
  virtual ~Device() = default;

  virtual DeviceInfo Info() const = 0;
  // 256-byte aligned; ResourceExhausted-like failures come back as IOError.
  virtual Result<void*> Alloc(size_t bytes) = 0;
  virtual void Free(void* p) = 0;
  virtual Status ToDevice(void* dst, const void* src, size_t bytes) = 0;
  virtual Status ToHost(void* dst, const void* src, size_t bytes) = 0;
  virtual Status Copy(void* dst, const void* src, size_t bytes) = 0;
  virtual Status SetBytes(void* dst, uint8_t value, size_t bytes) = 0;
  // Fills `n` elements of `dtype` (SkdbDtype) with GenValue(seed, i, ...).
  virtual Status Fill(void* dst, int dtype, int64_t n, int64_t row_len,
                      uint64_t seed, int dist, float large_scale) = 0;
  virtual Result<int64_t> CountDifferentBytes(const void* a, const void* b,
                                              size_t bytes) = 0;
  virtual Result<double> SumSquares(const void* x, int dtype, int64_t n) = 0;
  // Compares `cand` against `ref` elementwise: |c - r| <= atol_abs +
  // rtol * |r|; poison-pattern elements count as unwritten.
  virtual Result<CompareCounts> Compare(const void* cand, const void* ref,
                                        int dtype, int64_t n, double atol_abs,
                                        double rtol) = 0;
  // Evicts the cache (writes a buffer of twice its size).
  virtual Status FlushCache() = 0;
  // Runs one call: timing, device-wide sync, monitoring. `count_kernels`
  // asks for CUPTI kernel counting where available (slower).
  virtual CallReport Call(LaunchFn fn, const Tensor* in, int n_in,
                          Tensor* out, int n_out, bool count_kernels) = 0;
  // Operations from candidate threads outside any call since the last ask.
  virtual int TakeLateOps() = 0;
  // Device bytes the candidates allocated and have not freed.
  virtual int64_t CandidateBytes() { return 0; }
  virtual Result<Ceilings> MeasureCeilings() = 0;
  // OK if the device still works (runs a small operation).
  virtual Status Healthy() = 0;
};

// Factories. `index` is the GPU ordinal; limits are for candidate memory.
// The host device flushes the cache before each timed call by writing
// `flush_bytes` (0: twice the last-level cache, at most kHostFlushCapBytes).
Result<std::unique_ptr<Device>> MakeHostDevice(int64_t flush_bytes = 0);

// The default host flush stops at 64 MiB: a server's shared last-level cache
// (260 MiB on this project's build machines) is far more than a 2-core slice
// ever fills, and writing twice that before every timed call cost ~0.1 s a
// call (85 s for the 16 tasks' references). A real host can ask for more
// (VerifierOptions::host_flush_bytes).
inline constexpr int64_t kHostFlushCapBytes = int64_t{64} << 20;
Result<std::unique_ptr<Device>> MakeCudaDevice(int index,
                                               int64_t candidate_memory_limit,
                                               bool use_cupti);

}  // namespace skilldb::verify::internal

#endif  // SKILLDB_VERIFY_WORKER_DEVICE_H_
