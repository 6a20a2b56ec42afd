// Launch interposition, tested on the CPU: this test binary exports the same
// wrappers as the GPU worker, loads a real nvcc-compiled candidate and
// checks what the monitor records. Without a GPU the real CUDA calls fail,
// but every call still passes through the wrappers first.
#include "worker/interpose.h"

#include <dlfcn.h>
#include <doctest/doctest.h>

#include <thread>

#include "skilldb/verify/compiler.h"
#include "skilldb_candidate.h"
#include "test_util.h"

namespace skilldb::verify::internal {
namespace {

using LaunchFn = int (*)(const Tensor*, int, Tensor*, int, void*);

// Launches one kernel on the given stream and one on a stream it makes up,
// then asks for `n_out` bytes of device memory.
const char* kProbe = R"(
__global__ void k1(float* p) { if (p) p[0] = 1.f; }
extern "C" int launch(const Tensor* in, int, Tensor* out, int n_out, cudaStream_t s) {
  k1<<<1, 1, 0, s>>>(nullptr);
  k1<<<1, 1, 0, reinterpret_cast<cudaStream_t>(0x5678)>>>(nullptr);
  void* p = nullptr;
  if (n_out > 1) cudaMalloc(&p, size_t{1} << 40);
  (void)in; (void)out;
  return 0;
}
)";

struct Loaded {
  void* handle = nullptr;
  LaunchFn fn = nullptr;
};

// Compiles and loads kProbe; empty when nvcc is not installed.
Loaded LoadProbe() {
  VerifierOptions vo = testing::TestOptions(Backend::kCuda);
  CompilerOptions o;
  o.cache_dir = vo.cache_dir;
  o.protocol_dir = vo.protocol_dir;
  auto c = Compiler::Make(o);
  REQUIRE(c.ok());
  auto out = (*c)->Compile(kProbe, SourceLanguage::kCuda);
  if (!out.ok()) return {};
  REQUIRE_MESSAGE(out->ok, out->log);
  Loaded l;
  l.handle = ::dlopen(out->library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE_MESSAGE(l.handle != nullptr, ::dlerror());
  l.fn = reinterpret_cast<LaunchFn>(::dlsym(l.handle, "launch"));
  REQUIRE(::dlsym(l.handle, "launch") != nullptr);
  return l;
}

TEST_CASE("a candidate's kernel launches and streams pass through the monitor") {
  Loaded l = LoadProbe();
  if (l.fn == nullptr) {
    MESSAGE("nvcc not available: skipped");
    return;
  }
  MonitorInit(int64_t{1} << 30);
  Tensor t{};
  MonitorBegin(reinterpret_cast<void*>(0x1234));
  l.fn(&t, 1, &t, 1, reinterpret_cast<void*>(0x1234));
  const MonitorStats m = MonitorEnd();
  CHECK(m.kernels == 2);
  CHECK(m.foreign_stream_ops == 1);
  CHECK(m.foreign_detail.find("0x5678") != std::string::npos);
  CHECK(!m.alloc_denied);
}

TEST_CASE("an allocation over the candidate memory cap is refused") {
  Loaded l = LoadProbe();
  if (l.fn == nullptr) {
    MESSAGE("nvcc not available: skipped");
    return;
  }
  MonitorInit(int64_t{1} << 30);
  Tensor t[2] = {};
  MonitorBegin(reinterpret_cast<void*>(0x1234));
  l.fn(t, 1, t, 2, reinterpret_cast<void*>(0x1234));
  CHECK(MonitorEnd().alloc_denied);
}

TEST_CASE("work enqueued from another thread outside launch() is refused and counted") {
  Loaded l = LoadProbe();
  if (l.fn == nullptr) {
    MESSAGE("nvcc not available: skipped");
    return;
  }
  MonitorInit(int64_t{1} << 30);
  MonitorTakeLateOps();
  Tensor t{};
  std::thread other([&] { l.fn(&t, 1, &t, 1, reinterpret_cast<void*>(0x1234)); });
  other.join();
  CHECK(MonitorTakeLateOps() == 2);
  CHECK(MonitorTakeLateOps() == 0);
}

}  // namespace
}  // namespace skilldb::verify::internal
