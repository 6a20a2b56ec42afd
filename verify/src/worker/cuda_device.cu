// The GPU backend's Device: buffers in device memory, calls timed with
// events on a dedicated stream, a device-wide synchronize after every call,
// launch interposition and (for correctness calls) CUPTI kernel counting.
#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "gen.h"
#include "worker/cupti_monitor.h"
#include "worker/device.h"
#include "worker/interpose.h"

namespace skilldb::verify::internal {
namespace {

constexpr int kThreads = 256;

std::string ErrorText(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

Status Check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return Status::Ok();
  return Status::IOError(std::string(what) + ": " + ErrorText(e));
}

int Blocks(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 65536 ? (b < 1 ? 1 : b) : 65536);
}

__global__ void FillKernel(void* dst, int dtype, int64_t n, int64_t row_len,
                           uint64_t seed, int dist, float scale) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const float v = GenValue(seed, i, row_len, dist, scale);
    switch (dtype) {
      case SKDB_BFLOAT16:
        static_cast<uint16_t*>(dst)[i] = FloatToBf16(v);
        break;
      case SKDB_FLOAT16:
        static_cast<uint16_t*>(dst)[i] = FloatToHalf(v);
        break;
      case SKDB_INT32:
        static_cast<int32_t*>(dst)[i] = static_cast<int32_t>(v);
        break;
      case SKDB_INT64:
        static_cast<int64_t*>(dst)[i] = static_cast<int64_t>(v);
        break;
      default:
        static_cast<float*>(dst)[i] = v;
    }
  }
}

__device__ float LoadAt(const void* p, int dtype, int64_t i) {
  switch (dtype) {
    case SKDB_BFLOAT16:
      return Bf16ToFloat(static_cast<const uint16_t*>(p)[i]);
    case SKDB_FLOAT16:
      return HalfToFloat(static_cast<const uint16_t*>(p)[i]);
    case SKDB_INT32:
      return static_cast<float>(static_cast<const int32_t*>(p)[i]);
    case SKDB_INT64:
      return static_cast<float>(static_cast<const int64_t*>(p)[i]);
    default:
      return static_cast<const float*>(p)[i];
  }
}

__device__ bool PoisonAt(const void* p, int dtype, int64_t i) {
  switch (dtype) {
    case SKDB_BFLOAT16:
    case SKDB_FLOAT16:
      return static_cast<const uint16_t*>(p)[i] == 0xffffu;
    case SKDB_INT64:
      return static_cast<const uint64_t*>(p)[i] == ~0ull;
    default:
      return static_cast<const uint32_t*>(p)[i] == 0xffffffffu;
  }
}

__global__ void DiffKernel(const uint8_t* a, const uint8_t* b, size_t n,
                           unsigned long long* count) {
  unsigned long long local = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    local += a[i] != b[i];
  }
  if (local) atomicAdd(count, local);
}

__global__ void SumSquaresKernel(const void* x, int dtype, int64_t n,
                                 double* out) {
  __shared__ double partial[kThreads];
  double s = 0;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const double v = LoadAt(x, dtype, i);
    if (isfinite(v)) s += v * v;
  }
  partial[threadIdx.x] = s;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) partial[threadIdx.x] += partial[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, partial[0]);
}

struct DeviceCounts {
  unsigned long long unwritten, mismatches;
  unsigned long long max_abs_bits, max_rel_bits;  // non-negative doubles
  unsigned long long first_bad;
};

__global__ void CompareKernel(const void* cand, const void* ref, int dtype,
                              int64_t n, double atol, double rtol,
                              DeviceCounts* c) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    if (PoisonAt(cand, dtype, i)) {
      atomicAdd(&c->unwritten, 1ull);
      continue;
    }
    const double got = LoadAt(cand, dtype, i);
    const double want = LoadAt(ref, dtype, i);
    const double err = fabs(got - want);
    if (isfinite(err)) {
      atomicMax(&c->max_abs_bits, __double_as_longlong(err));
      atomicMax(&c->max_rel_bits,
                __double_as_longlong(err / fmax(fabs(want), 1e-30)));
    }
    if (!(isfinite(got) && err <= atol + rtol * fabs(want))) {
      atomicAdd(&c->mismatches, 1ull);
      atomicMin(&c->first_bad, static_cast<unsigned long long>(i));
    }
  }
}

__global__ void CopyKernel(const float4* __restrict__ a, float4* b, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    b[i] = a[i];
  }
}

__global__ void FmaKernel(float* out, int iters) {
  float a = threadIdx.x, b = 1.0f, c = 2.0f, d = 3.0f;
  float e = 4.0f, f = 5.0f, g = 6.0f, h = 7.0f;
  for (int i = 0; i < iters; ++i) {
    a = fmaf(a, 0.9999f, 0.5f);
    b = fmaf(b, 0.9999f, 0.5f);
    c = fmaf(c, 0.9999f, 0.5f);
    d = fmaf(d, 0.9999f, 0.5f);
    e = fmaf(e, 0.9999f, 0.5f);
    f = fmaf(f, 0.9999f, 0.5f);
    g = fmaf(g, 0.9999f, 0.5f);
    h = fmaf(h, 0.9999f, 0.5f);
  }
  if (a + b + c + d + e + f + g + h == 42.0f) out[threadIdx.x] = a;
}

bool IsStickyError(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorUnknown:
      return true;
    default:
      return false;
  }
}

class CudaDevice final : public Device {
 public:
  Status Init(int index, int64_t limit, bool use_cupti) {
    SKILLDB_RETURN_IF_ERROR(Check(cudaSetDevice(index), "cudaSetDevice"));
    SKILLDB_RETURN_IF_ERROR(Check(cudaFree(nullptr), "context creation"));
    cudaDeviceProp prop;
    SKILLDB_RETURN_IF_ERROR(
        Check(cudaGetDeviceProperties(&prop, index), "device properties"));
    info_.name = prop.name;
    info_.device_class = "sm_" + std::to_string(prop.major * 10 + prop.minor);
    info_.sm_count = prop.multiProcessorCount;
    info_.cache_bytes = prop.l2CacheSize;
    info_.memory_bytes = static_cast<int64_t>(prop.totalGlobalMem);
    cudaGetDeviceCount(&info_.device_count);
    // A blocking stream: work a candidate puts on the legacy default
    // stream is ordered with it and lands inside the timed events.
    SKILLDB_RETURN_IF_ERROR(Check(cudaStreamCreate(&stream_), "stream"));
    SKILLDB_RETURN_IF_ERROR(Check(cudaEventCreate(&ev0_), "event"));
    SKILLDB_RETURN_IF_ERROR(Check(cudaEventCreate(&ev1_), "event"));
    flush_bytes_ = static_cast<size_t>(2 * std::max<int64_t>(info_.cache_bytes,
                                                             32 << 20));
    SKILLDB_RETURN_IF_ERROR(Check(cudaMalloc(&flush_, flush_bytes_), "flush buffer"));
    SKILLDB_RETURN_IF_ERROR(Check(cudaMalloc(&scratch_, 4096), "scratch"));
    MonitorInit(limit);
    if (use_cupti) {
      std::string why;
      info_.cupti = CuptiInit(&why);
      if (info_.cupti) {
        stream_id_ = CuptiStreamId(stream_);
        legacy_id_ = CuptiStreamId(cudaStreamLegacy);
        info_.notes += " cupti";
      } else {
        info_.notes += " (" + why + ")";
      }
    }
    return Status::Ok();
  }

  DeviceInfo Info() const override { return info_; }

  Result<void*> Alloc(size_t bytes) override {
    void* p = nullptr;
    SKILLDB_RETURN_IF_ERROR(Check(cudaMalloc(&p, bytes), "cudaMalloc"));
    return p;
  }
  void Free(void* p) override { cudaFree(p); }
  Status ToDevice(void* dst, const void* src, size_t n) override {
    return Check(cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice), "upload");
  }
  Status ToHost(void* dst, const void* src, size_t n) override {
    return Check(cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost), "download");
  }
  Status Copy(void* dst, const void* src, size_t n) override {
    SKILLDB_RETURN_IF_ERROR(Check(
        cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, stream_), "copy"));
    return Sync("copy");
  }
  Status SetBytes(void* dst, uint8_t v, size_t n) override {
    SKILLDB_RETURN_IF_ERROR(Check(cudaMemsetAsync(dst, v, n, stream_), "memset"));
    return Sync("memset");
  }

  Status Fill(void* dst, int dtype, int64_t n, int64_t row_len, uint64_t seed,
              int dist, float scale) override {
    FillKernel<<<Blocks(n), kThreads, 0, stream_>>>(dst, dtype, n, row_len,
                                                    seed, dist, scale);
    SKILLDB_RETURN_IF_ERROR(Check(cudaGetLastError(), "fill launch"));
    return Sync("fill");
  }

  Result<int64_t> CountDifferentBytes(const void* a, const void* b,
                                      size_t n) override {
    auto* count = static_cast<unsigned long long*>(scratch_);
    SKILLDB_RETURN_IF_ERROR(Check(cudaMemsetAsync(count, 0, 8, stream_), "memset"));
    DiffKernel<<<Blocks(static_cast<int64_t>(n)), kThreads, 0, stream_>>>(
        static_cast<const uint8_t*>(a), static_cast<const uint8_t*>(b), n,
        count);
    unsigned long long host = 0;
    SKILLDB_RETURN_IF_ERROR(Sync("diff"));
    SKILLDB_RETURN_IF_ERROR(ToHost(&host, count, 8));
    return static_cast<int64_t>(host);
  }

  Result<double> SumSquares(const void* x, int dtype, int64_t n) override {
    auto* sum = static_cast<double*>(scratch_);
    SKILLDB_RETURN_IF_ERROR(Check(cudaMemsetAsync(sum, 0, 8, stream_), "memset"));
    SumSquaresKernel<<<std::min(Blocks(n), 1024), kThreads, 0, stream_>>>(
        x, dtype, n, sum);
    double host = 0;
    SKILLDB_RETURN_IF_ERROR(Sync("sum of squares"));
    SKILLDB_RETURN_IF_ERROR(ToHost(&host, sum, 8));
    return host;
  }

  Result<CompareCounts> Compare(const void* cand, const void* ref, int dtype,
                                int64_t n, double atol_abs,
                                double rtol) override {
    auto* c = static_cast<DeviceCounts*>(scratch_);
    DeviceCounts init{0, 0, 0, 0, ~0ull};
    SKILLDB_RETURN_IF_ERROR(ToDevice(c, &init, sizeof(init)));
    CompareKernel<<<Blocks(n), kThreads, 0, stream_>>>(cand, ref, dtype, n,
                                                       atol_abs, rtol, c);
    SKILLDB_RETURN_IF_ERROR(Sync("compare"));
    DeviceCounts host;
    SKILLDB_RETURN_IF_ERROR(ToHost(&host, c, sizeof(host)));
    CompareCounts out;
    out.unwritten = static_cast<int64_t>(host.unwritten);
    out.mismatches = static_cast<int64_t>(host.mismatches);
    std::memcpy(&out.max_abs, &host.max_abs_bits, 8);
    std::memcpy(&out.max_rel, &host.max_rel_bits, 8);
    if (host.mismatches > 0) {
      out.first_bad = static_cast<int64_t>(host.first_bad);
      out.first_got = ElementAt(cand, dtype, out.first_bad);
      out.first_want = ElementAt(ref, dtype, out.first_bad);
    }
    return out;
  }

  Status FlushCache() override {
    ++flush_value_;
    return Check(cudaMemsetAsync(flush_, flush_value_, flush_bytes_, stream_),
                 "L2 flush");
  }

  CallReport Call(LaunchFn fn, const Tensor* in, int n_in, Tensor* out,
                  int n_out, bool count_kernels) override {
    CallReport r;
    if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) {
      r.error = "before the call: " + ErrorText(e);
      r.sticky = true;
      return r;
    }
    const bool cupti = count_kernels && info_.cupti;
    if (cupti) CuptiBegin();
    MonitorBegin(stream_);
    const auto t0 = std::chrono::steady_clock::now();
    cudaEventRecord(ev0_, stream_);
    r.rc = fn(in, n_in, out, n_out, stream_);
    const cudaError_t launch_error = cudaGetLastError();
    cudaEventRecord(ev1_, stream_);
    const MonitorStats m = MonitorEnd();
    const cudaError_t sync_error = cudaDeviceSynchronize();
    const auto t1 = std::chrono::steady_clock::now();
    r.host_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    r.kernels = m.kernels;
    r.foreign_stream_ops = m.foreign_stream_ops;
    r.foreign_detail = m.foreign_detail;
    r.alloc_denied = m.alloc_denied;
    if (cupti) {
      const CuptiCounts c = CuptiEnd(stream_id_, legacy_id_);
      r.kernels_executed = c.kernels;
      if (c.other_stream_kernels > 0 && m.foreign_stream_ops == 0) {
        // Kernels ran on a stream the interposer never saw launched on.
        r.foreign_stream_ops = c.other_stream_kernels;
        r.foreign_detail = std::to_string(c.other_stream_kernels) +
                           " kernels ran on a stream other than the given "
                           "one (seen by CUPTI)";
      }
    }
    const cudaError_t e = sync_error != cudaSuccess ? sync_error : launch_error;
    if (e != cudaSuccess) {
      r.error = ErrorText(e);
      r.sticky = IsStickyError(e) || !Healthy().ok();
      return r;
    }
    float ms = 0;
    if (cudaEventElapsedTime(&ms, ev0_, ev1_) == cudaSuccess) r.device_ms = ms;
    return r;
  }

  int TakeLateOps() override { return MonitorTakeLateOps(); }
  int64_t CandidateBytes() override { return MonitorCandidateBytes(); }

  Result<Ceilings> MeasureCeilings() override {
    Ceilings c;
    const size_t bytes = size_t{1} << 30;
    void *a = nullptr, *b = nullptr;
    SKILLDB_RETURN_IF_ERROR(Check(cudaMalloc(&a, bytes), "ceilings"));
    if (Status st = Check(cudaMalloc(&b, bytes), "ceilings"); !st.ok()) {
      cudaFree(a);
      return st;
    }
    cudaMemsetAsync(a, 1, bytes, stream_);
    const size_t n4 = bytes / 16;
    float best = 1e30f;
    for (int rep = 0; rep < 6; ++rep) {
      cudaEventRecord(ev0_, stream_);
      CopyKernel<<<info_.sm_count * 8, 512, 0, stream_>>>(
          static_cast<const float4*>(a), static_cast<float4*>(b), n4);
      cudaEventRecord(ev1_, stream_);
      cudaEventSynchronize(ev1_);
      float ms = 0;
      cudaEventElapsedTime(&ms, ev0_, ev1_);
      if (rep > 0) best = std::min(best, ms);
    }
    c.bandwidth_bytes_per_s = 2.0 * static_cast<double>(bytes) / (best * 1e-3);
    const int iters = 4096, blocks = info_.sm_count * 16, threads = 256;
    best = 1e30f;
    for (int rep = 0; rep < 4; ++rep) {
      cudaEventRecord(ev0_, stream_);
      FmaKernel<<<blocks, threads, 0, stream_>>>(static_cast<float*>(a), iters);
      cudaEventRecord(ev1_, stream_);
      cudaEventSynchronize(ev1_);
      float ms = 0;
      cudaEventElapsedTime(&ms, ev0_, ev1_);
      if (rep > 0) best = std::min(best, ms);
    }
    c.fp32_flops_per_s = 2.0 * 8.0 * iters * double(blocks) * threads /
                         (best * 1e-3);
    cudaFree(a);
    cudaFree(b);
    SKILLDB_RETURN_IF_ERROR(Check(cudaGetLastError(), "ceilings"));
    return c;
  }

  Status Healthy() override {
    cudaGetLastError();
    if (cudaMemsetAsync(scratch_, 0, 64, stream_) != cudaSuccess) {
      return Status::Unavailable("the device context is unusable");
    }
    return Sync("health check");
  }

 private:
  Status Sync(const char* what) {
    return Check(cudaStreamSynchronize(stream_), what);
  }

  double ElementAt(const void* p, int dtype, int64_t i) {
    uint64_t bits = 0;
    const int64_t size = dtype == SKDB_FLOAT32 || dtype == SKDB_INT32 ? 4
                         : dtype == SKDB_INT64                      ? 8
                                                                    : 2;
    if (!ToHost(&bits, static_cast<const char*>(p) + i * size,
                static_cast<size_t>(size)).ok()) {
      return NAN;
    }
    switch (dtype) {
      case SKDB_BFLOAT16:
        return Bf16ToFloat(static_cast<uint16_t>(bits));
      case SKDB_FLOAT16:
        return HalfToFloat(static_cast<uint16_t>(bits));
      case SKDB_INT32:
        return static_cast<int32_t>(bits);
      case SKDB_INT64:
        return static_cast<double>(static_cast<int64_t>(bits));
      default: {
        float f;
        uint32_t b32 = static_cast<uint32_t>(bits);
        std::memcpy(&f, &b32, 4);
        return f;
      }
    }
  }

  DeviceInfo info_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t ev0_ = nullptr, ev1_ = nullptr;
  void* flush_ = nullptr;
  size_t flush_bytes_ = 0;
  uint8_t flush_value_ = 0;
  void* scratch_ = nullptr;
  uint32_t stream_id_ = 0, legacy_id_ = 0;
};

}  // namespace

Result<std::unique_ptr<Device>> MakeCudaDevice(int index, int64_t limit,
                                               bool use_cupti) {
  auto d = std::make_unique<CudaDevice>();
  SKILLDB_RETURN_IF_ERROR(d->Init(index, limit, use_cupti));
  return std::unique_ptr<Device>(std::move(d));
}

}  // namespace skilldb::verify::internal
