#include "worker/interpose.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <unordered_map>

namespace skilldb::verify::internal {
namespace {

struct State {
  pid_t main_tid = 0;
  int64_t memory_limit = 0;
  std::atomic<bool> active{false};
  void* stream = nullptr;
  std::atomic<int> kernels{0};
  std::atomic<int> foreign{0};
  std::atomic<int> late{0};
  std::atomic<bool> alloc_denied{false};
  std::mutex mu;  // guards detail and allocations
  std::string detail;
  std::unordered_map<void*, size_t> allocations;
  int64_t allocated = 0;
};

State& S() {
  static State* s = new State();
  return *s;
}

thread_local bool t_in_real = false;

pid_t Tid() { return static_cast<pid_t>(::syscall(SYS_gettid)); }

enum class Who { kWorker, kCandidate, kOtherThread };

Who Classify() {
  State& s = S();
  if (s.main_tid != 0 && Tid() != s.main_tid) return Who::kOtherThread;
  return s.active.load() ? Who::kCandidate : Who::kWorker;
}

// Streams that order with the one launch() got: itself and the legacy
// default stream (the worker's stream is a blocking one).
bool StreamAllowed(cudaStream_t stream, bool per_thread_variant) {
  State& s = S();
  if (stream == static_cast<cudaStream_t>(s.stream)) return true;
  if (stream == cudaStreamLegacy) return true;
  if (stream == nullptr) return !per_thread_variant;
  return false;
}

// Records a stream-ordered op; false if it must be refused.
bool Observe(const char* what, cudaStream_t stream, bool is_kernel,
             bool per_thread_variant) {
  if (t_in_real) return true;
  switch (Classify()) {
    case Who::kWorker:
      return true;
    case Who::kOtherThread:
      S().late.fetch_add(1);
      return false;
    case Who::kCandidate:
      break;
  }
  State& s = S();
  if (is_kernel) s.kernels.fetch_add(1);
  if (!StreamAllowed(stream, per_thread_variant)) {
    if (s.foreign.fetch_add(1) == 0) {
      std::lock_guard<std::mutex> lock(s.mu);
      char buf[160];
      std::snprintf(buf, sizeof(buf), "%s on stream %p, not the given %p",
                    what, static_cast<void*>(stream), s.stream);
      s.detail = buf;
    }
  }
  return true;
}

bool AllowAlloc(size_t bytes) {
  const Who who = t_in_real ? Who::kWorker : Classify();
  if (who == Who::kWorker) return true;
  State& s = S();
  if (who == Who::kOtherThread) {
    s.late.fetch_add(1);
    return false;
  }
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.allocated + static_cast<int64_t>(bytes) > s.memory_limit) {
    s.alloc_denied = true;
    return false;
  }
  return true;
}

void RecordAlloc(void* p, size_t bytes) {
  if (p == nullptr || t_in_real || Classify() == Who::kWorker) return;
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  s.allocations[p] = bytes;
  s.allocated += static_cast<int64_t>(bytes);
}

void RecordFree(void* p) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.allocations.find(p);
  if (it == s.allocations.end()) return;
  s.allocated -= static_cast<int64_t>(it->second);
  s.allocations.erase(it);
}

template <typename Fn>
Fn Real(const char* name) {
  void* p = ::dlvsym(RTLD_NEXT, name, "libcudart.so.13");
  if (p == nullptr) p = ::dlsym(RTLD_NEXT, name);
  return reinterpret_cast<Fn>(p);
}

// Forwards to the real function with the in-real flag set, so nested
// runtime calls are not counted twice.
template <typename Fn, typename... Args>
cudaError_t Forward(Fn fn, Args... args) {
  if (fn == nullptr) return cudaErrorNotSupported;
  const bool was = t_in_real;
  t_in_real = true;
  const cudaError_t e = fn(args...);
  t_in_real = was;
  return e;
}

}  // namespace

void MonitorInit(int64_t limit) {
  S().main_tid = Tid();
  S().memory_limit = limit;
}

void MonitorBegin(void* stream) {
  State& s = S();
  s.stream = stream;
  s.kernels = 0;
  s.foreign = 0;
  s.alloc_denied = false;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.detail.clear();
  }
  s.active = true;
}

MonitorStats MonitorEnd() {
  State& s = S();
  s.active = false;
  MonitorStats m;
  m.kernels = s.kernels.load();
  m.foreign_stream_ops = s.foreign.load();
  m.alloc_denied = s.alloc_denied.load();
  std::lock_guard<std::mutex> lock(s.mu);
  m.foreign_detail = s.detail;
  return m;
}

int MonitorTakeLateOps() { return S().late.exchange(0); }

int64_t MonitorCandidateBytes() {
  std::lock_guard<std::mutex> lock(S().mu);
  return S().allocated;
}

}  // namespace skilldb::verify::internal

// ---- The wrappers (exported from the worker executable). -----------------

using skilldb::verify::internal::AllowAlloc;
using skilldb::verify::internal::Forward;
using skilldb::verify::internal::Observe;
using skilldb::verify::internal::Real;
using skilldb::verify::internal::RecordAlloc;
using skilldb::verify::internal::RecordFree;

#define SKDB_REAL(name, type) \
  static const auto real = Real<type>(name)

extern "C" {

cudaError_t __cudaLaunchKernel(void* kernel, dim3 g, dim3 b, void** args,
                               size_t shm, cudaStream_t s) {
  using F = cudaError_t (*)(void*, dim3, dim3, void**, size_t, cudaStream_t);
  SKDB_REAL("__cudaLaunchKernel", F);
  if (!Observe("kernel launch", s, true, false)) return cudaErrorNotPermitted;
  return Forward(real, kernel, g, b, args, shm, s);
}

cudaError_t __cudaLaunchKernel_ptsz(void* kernel, dim3 g, dim3 b,
                                    void** args, size_t shm, cudaStream_t s) {
  using F = cudaError_t (*)(void*, dim3, dim3, void**, size_t, cudaStream_t);
  SKDB_REAL("__cudaLaunchKernel_ptsz", F);
  if (!Observe("kernel launch", s, true, true)) return cudaErrorNotPermitted;
  return Forward(real, kernel, g, b, args, shm, s);
}

cudaError_t cudaLaunchKernel(const void* f, dim3 g, dim3 b, void** args,
                             size_t shm, cudaStream_t s) {
  using F = cudaError_t (*)(const void*, dim3, dim3, void**, size_t,
                            cudaStream_t);
  SKDB_REAL("cudaLaunchKernel", F);
  if (!Observe("kernel launch", s, true, false)) return cudaErrorNotPermitted;
  return Forward(real, f, g, b, args, shm, s);
}

cudaError_t cudaLaunchKernel_ptsz(const void* f, dim3 g, dim3 b, void** args,
                                  size_t shm, cudaStream_t s) {
  using F = cudaError_t (*)(const void*, dim3, dim3, void**, size_t,
                            cudaStream_t);
  SKDB_REAL("cudaLaunchKernel_ptsz", F);
  if (!Observe("kernel launch", s, true, true)) return cudaErrorNotPermitted;
  return Forward(real, f, g, b, args, shm, s);
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config,
                                const void* f, void** args) {
  using F = cudaError_t (*)(const cudaLaunchConfig_t*, const void*, void**);
  SKDB_REAL("cudaLaunchKernelExC", F);
  if (!Observe("kernel launch", config ? config->stream : nullptr, true,
               false)) {
    return cudaErrorNotPermitted;
  }
  return Forward(real, config, f, args);
}

cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t* config,
                                     const void* f, void** args) {
  using F = cudaError_t (*)(const cudaLaunchConfig_t*, const void*, void**);
  SKDB_REAL("cudaLaunchKernelExC_ptsz", F);
  if (!Observe("kernel launch", config ? config->stream : nullptr, true,
               true)) {
    return cudaErrorNotPermitted;
  }
  return Forward(real, config, f, args);
}

cudaError_t cudaLaunchCooperativeKernel(const void* f, dim3 g, dim3 b,
                                        void** args, size_t shm,
                                        cudaStream_t s) {
  using F = cudaError_t (*)(const void*, dim3, dim3, void**, size_t,
                            cudaStream_t);
  SKDB_REAL("cudaLaunchCooperativeKernel", F);
  if (!Observe("kernel launch", s, true, false)) return cudaErrorNotPermitted;
  return Forward(real, f, g, b, args, shm, s);
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t n,
                            cudaMemcpyKind kind, cudaStream_t s) {
  using F = cudaError_t (*)(void*, const void*, size_t, cudaMemcpyKind,
                            cudaStream_t);
  SKDB_REAL("cudaMemcpyAsync", F);
  if (!Observe("cudaMemcpyAsync", s, false, false)) return cudaErrorNotPermitted;
  return Forward(real, dst, src, n, kind, s);
}

cudaError_t cudaMemcpyAsync_ptsz(void* dst, const void* src, size_t n,
                                 cudaMemcpyKind kind, cudaStream_t s) {
  using F = cudaError_t (*)(void*, const void*, size_t, cudaMemcpyKind,
                            cudaStream_t);
  SKDB_REAL("cudaMemcpyAsync_ptsz", F);
  if (!Observe("cudaMemcpyAsync", s, false, true)) return cudaErrorNotPermitted;
  return Forward(real, dst, src, n, kind, s);
}

cudaError_t cudaMemsetAsync(void* dst, int v, size_t n, cudaStream_t s) {
  using F = cudaError_t (*)(void*, int, size_t, cudaStream_t);
  SKDB_REAL("cudaMemsetAsync", F);
  if (!Observe("cudaMemsetAsync", s, false, false)) return cudaErrorNotPermitted;
  return Forward(real, dst, v, n, s);
}

cudaError_t cudaMemsetAsync_ptsz(void* dst, int v, size_t n, cudaStream_t s) {
  using F = cudaError_t (*)(void*, int, size_t, cudaStream_t);
  SKDB_REAL("cudaMemsetAsync_ptsz", F);
  if (!Observe("cudaMemsetAsync", s, false, true)) return cudaErrorNotPermitted;
  return Forward(real, dst, v, n, s);
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t n,
                       cudaMemcpyKind kind) {
  using F = cudaError_t (*)(void*, const void*, size_t, cudaMemcpyKind);
  SKDB_REAL("cudaMemcpy", F);
  if (!Observe("cudaMemcpy", nullptr, false, false)) return cudaErrorNotPermitted;
  return Forward(real, dst, src, n, kind);
}

cudaError_t cudaMemset(void* dst, int v, size_t n) {
  using F = cudaError_t (*)(void*, int, size_t);
  SKDB_REAL("cudaMemset", F);
  if (!Observe("cudaMemset", nullptr, false, false)) return cudaErrorNotPermitted;
  return Forward(real, dst, v, n);
}

cudaError_t cudaMemcpyToSymbol(const void* sym, const void* src, size_t n,
                               size_t offset, cudaMemcpyKind kind) {
  using F = cudaError_t (*)(const void*, const void*, size_t, size_t,
                            cudaMemcpyKind);
  SKDB_REAL("cudaMemcpyToSymbol", F);
  if (!Observe("cudaMemcpyToSymbol", nullptr, false, false)) {
    return cudaErrorNotPermitted;
  }
  return Forward(real, sym, src, n, offset, kind);
}

cudaError_t cudaMemcpyToSymbolAsync(const void* sym, const void* src,
                                    size_t n, size_t offset,
                                    cudaMemcpyKind kind, cudaStream_t s) {
  using F = cudaError_t (*)(const void*, const void*, size_t, size_t,
                            cudaMemcpyKind, cudaStream_t);
  SKDB_REAL("cudaMemcpyToSymbolAsync", F);
  if (!Observe("cudaMemcpyToSymbolAsync", s, false, false)) {
    return cudaErrorNotPermitted;
  }
  return Forward(real, sym, src, n, offset, kind, s);
}

cudaError_t cudaMalloc(void** p, size_t n) {
  using F = cudaError_t (*)(void**, size_t);
  SKDB_REAL("cudaMalloc", F);
  if (!AllowAlloc(n)) return cudaErrorMemoryAllocation;
  const cudaError_t e = Forward(real, p, n);
  if (e == cudaSuccess) RecordAlloc(*p, n);
  return e;
}

cudaError_t cudaMallocAsync(void** p, size_t n, cudaStream_t s) {
  using F = cudaError_t (*)(void**, size_t, cudaStream_t);
  SKDB_REAL("cudaMallocAsync", F);
  if (!Observe("cudaMallocAsync", s, false, false) || !AllowAlloc(n)) {
    return cudaErrorMemoryAllocation;
  }
  const cudaError_t e = Forward(real, p, n, s);
  if (e == cudaSuccess) RecordAlloc(*p, n);
  return e;
}

cudaError_t cudaFree(void* p) {
  using F = cudaError_t (*)(void*);
  SKDB_REAL("cudaFree", F);
  RecordFree(p);
  return Forward(real, p);
}

cudaError_t cudaFreeAsync(void* p, cudaStream_t s) {
  using F = cudaError_t (*)(void*, cudaStream_t);
  SKDB_REAL("cudaFreeAsync", F);
  Observe("cudaFreeAsync", s, false, false);
  RecordFree(p);
  return Forward(real, p, s);
}

}  // extern "C"
