// The host backend's Device: buffers in host memory, timing with two
// independent clocks. "Device" time is CLOCK_MONOTONIC through the vDSO (the
// path a candidate could tamper with in-process); the cross-check clock is
// the same clock read through a raw system call, which only the kernel
// answers, so a patched vDSO shows up as a timer mismatch.
#include <algorithm>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

#include "gen.h"
#include "worker/device.h"

namespace skilldb::verify::internal {
namespace {

double RawMonotonicMs() {
  timespec ts{};
  ::syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 +
         static_cast<double>(ts.tv_nsec) * 1e-6;
}

double VdsoMonotonicMs() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 +
         static_cast<double>(ts.tv_nsec) * 1e-6;
}

int64_t ReadCacheBytes() {
  std::ifstream f("/sys/devices/system/cpu/cpu0/cache/index3/size");
  std::string s;
  if (!(f >> s) || s.empty()) return 32 << 20;
  int64_t v = std::atoll(s.c_str());
  if (s.back() == 'K') v <<= 10;
  if (s.back() == 'M') v <<= 20;
  return v > 0 ? v : (32 << 20);
}

std::string CpuModel() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "host CPU";
}

float Load(const void* p, int dtype, int64_t i) {
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

bool IsPoison(const void* p, int dtype, int64_t i) {
  switch (dtype) {
    case SKDB_BFLOAT16:
    case SKDB_FLOAT16:
      return static_cast<const uint16_t*>(p)[i] == 0xffffu;
    case SKDB_INT64:
      return static_cast<const uint64_t*>(p)[i] == ~uint64_t{0};
    default:
      return static_cast<const uint32_t*>(p)[i] == 0xffffffffu;
  }
}

class HostDevice final : public Device {
 public:
  explicit HostDevice(int64_t flush_bytes) {
    info_.name = CpuModel();
    info_.device_class = "host";
    info_.sm_count = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
    info_.cache_bytes = ReadCacheBytes();
    info_.memory_bytes =
        static_cast<int64_t>(::sysconf(_SC_PHYS_PAGES)) * ::sysconf(_SC_PAGESIZE);
    if (flush_bytes <= 0) {
      flush_bytes = std::min(2 * info_.cache_bytes, kHostFlushCapBytes);
    }
    flush_.assign(static_cast<size_t>(flush_bytes), 0);
  }

  DeviceInfo Info() const override { return info_; }

  Result<void*> Alloc(size_t bytes) override {
    void* p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
    if (p == nullptr) return Status::IOError("host allocation failed");
    return p;
  }
  void Free(void* p) override { std::free(p); }
  Status ToDevice(void* dst, const void* src, size_t n) override {
    std::memcpy(dst, src, n);
    return Status::Ok();
  }
  Status ToHost(void* dst, const void* src, size_t n) override {
    std::memcpy(dst, src, n);
    return Status::Ok();
  }
  Status Copy(void* dst, const void* src, size_t n) override {
    std::memcpy(dst, src, n);
    return Status::Ok();
  }
  Status SetBytes(void* dst, uint8_t v, size_t n) override {
    std::memset(dst, v, n);
    return Status::Ok();
  }

  Status Fill(void* dst, int dtype, int64_t n, int64_t row_len, uint64_t seed,
              int dist, float scale) override {
    if (dtype == SKDB_FLOAT32) {
      GenFill(static_cast<float*>(dst), n, seed, row_len, dist, scale);
      return Status::Ok();
    }
    std::vector<float> tmp(static_cast<size_t>(n));
    GenFill(tmp.data(), n, seed, row_len, dist, scale);
    for (int64_t i = 0; i < n; ++i) {
      const float v = tmp[static_cast<size_t>(i)];
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
        default:
          static_cast<int64_t*>(dst)[i] = static_cast<int64_t>(v);
      }
    }
    return Status::Ok();
  }

  Result<int64_t> CountDifferentBytes(const void* a, const void* b,
                                      size_t n) override {
    int64_t diff = 0;
    const auto* pa = static_cast<const uint8_t*>(a);
    const auto* pb = static_cast<const uint8_t*>(b);
    for (size_t i = 0; i < n; ++i) diff += pa[i] != pb[i];
    return diff;
  }

  Result<double> SumSquares(const void* x, int dtype, int64_t n) override {
    double s = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double v = Load(x, dtype, i);
      if (std::isfinite(v)) s += v * v;
    }
    return s;
  }

  Result<CompareCounts> Compare(const void* cand, const void* ref, int dtype,
                                int64_t n, double atol_abs,
                                double rtol) override {
    CompareCounts c;
    for (int64_t i = 0; i < n; ++i) {
      const double want = Load(ref, dtype, i);
      if (IsPoison(cand, dtype, i)) {
        ++c.unwritten;
        continue;
      }
      const double got = Load(cand, dtype, i);
      const double err = std::fabs(got - want);
      const bool ok = std::isfinite(got) && err <= atol_abs + rtol * std::fabs(want);
      if (std::isfinite(err)) {
        c.max_abs = std::max(c.max_abs, err);
        c.max_rel = std::max(c.max_rel, err / std::max(std::fabs(want), 1e-30));
      }
      if (!ok) {
        if (c.first_bad < 0) {
          c.first_bad = i;
          c.first_got = got;
          c.first_want = want;
        }
        ++c.mismatches;
      }
    }
    return c;
  }

  Status FlushCache() override {
    ++flush_value_;
    std::memset(flush_.data(), flush_value_, flush_.size());
    return Status::Ok();
  }

  CallReport Call(LaunchFn fn, const Tensor* in, int n_in, Tensor* out,
                  int n_out, bool) override {
    CallReport r;
    const double raw0 = RawMonotonicMs();
    const double t0 = VdsoMonotonicMs();
    r.rc = fn(in, n_in, out, n_out, nullptr);
    const double t1 = VdsoMonotonicMs();
    const double raw1 = RawMonotonicMs();
    r.device_ms = t1 - t0;
    r.host_ms = raw1 - raw0;
    return r;
  }

  int TakeLateOps() override { return 0; }

  Result<Ceilings> MeasureCeilings() override {
    Ceilings c;
    const size_t n = size_t{64} << 20;
    std::vector<char> a(n, 1), b(n, 2);
    double best = 1e30;
    for (int rep = 0; rep < 3; ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
      std::memcpy(b.data(), a.data(), n);
      best = std::min(best, std::chrono::duration<double>(
                                std::chrono::steady_clock::now() - t0)
                                .count());
      a[static_cast<size_t>(rep)] = b[n - 1 - static_cast<size_t>(rep)];
    }
    c.bandwidth_bytes_per_s = 2.0 * static_cast<double>(n) / best;
    // Eight independent multiply-add chains kept in registers: one core's
    // scalar rate (std::fma would be a library call without -mfma). The
    // verifier multiplies it by SIMD and FMA slack (verify_checks.cc).
    float acc[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    const int iters = 20000000;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) {
      for (float& x : acc) x = x * 0.999999f + 1e-7f;
    }
    const double s = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - t0)
                         .count();
    volatile float sink = acc[0] + acc[7];
    (void)sink;
    c.fp32_flops_per_s = 2.0 * 8.0 * iters / s * info_.sm_count;
    return c;
  }

  Status Healthy() override { return Status::Ok(); }

 private:
  DeviceInfo info_;
  std::vector<char> flush_;
  uint8_t flush_value_ = 0;
};

}  // namespace

Result<std::unique_ptr<Device>> MakeHostDevice(int64_t flush_bytes) {
  return std::unique_ptr<Device>(new HostDevice(flush_bytes));
}

}  // namespace skilldb::verify::internal
