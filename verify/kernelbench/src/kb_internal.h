// Internals of the KernelBench bridge shared by its .cc files: runner
// processes, tensors on the wire and their comparison, JSON helpers.
// Not thread-safe unless stated.
#ifndef SKILLDB_VERIFY_KERNELBENCH_INTERNAL_H_
#define SKILLDB_VERIFY_KERNELBENCH_INTERNAL_H_

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "skilldb/status.h"
#include "skilldb/util/clock.h"
#include "skilldb/verify/kernelbench.h"
#include "worker_client.h"

namespace skilldb::verify::kb::internal {

using nlohmann::json;

// ---- Runner processes ----------------------------------------------------

class DeviceGate;

struct RunnerStart {
  std::string role;    // reference | candidate | build | inspect
  std::string device;  // cuda | cpu
  std::vector<std::string> extra_visible;
  std::vector<std::string> extra_env;  // NAME=VALUE
  bool run_sandbox = false;            // candidate: enter the run stage
  // RLIMIT_FSIZE; 0 = RunnerOptions::output_bytes. Builds write object
  // files and a precompiled header far larger than any log.
  int64_t file_bytes = 0;
  // RLIMIT_AS of a CPU runner; -1 = RunnerOptions::memory_bytes.
  int64_t memory_bytes = -1;
  // The device's gate, or null (held by the caller, or nothing runs
  // beside). Runner::Start holds it shared for the start-up's kernels
  // ("init_kernels", "init_profiler") and, on a CPU device, whose cores a
  // timed phase measures, for the whole start.
  DeviceGate* gate = nullptr;
  bool warm_profiler = false;  // candidate: "init_profiler" too
};

// One reply: the runner's header and blob, or the process's failure, with
// the wall time this process measured around the request.
struct Reply {
  bool ok = false;        // the process answered (header may say ok:false)
  json header;
  std::string blob;
  verify::internal::WorkerFailure failure;  // when !ok
  double wall_ms = 0;
  bool answered_ok() const { return ok && header.value("ok", false); }
  // header.error.kind ("compile", "init", "runtime", "problem", ...), or
  // "crashed"/"timeout"/... from the failure.
  std::string error_kind() const;
  std::string error_text(size_t max_bytes = 4000) const;
};

// Adds a request and its reply (its wall time, the runner's "op_ms") to
// `stats`, by the request's op.
void CountOp(const json& request, const Reply& reply,
             std::map<std::string, OpTime>* stats);

class Runner {
 public:
  // Starts a runner, waits for its greeting and takes it through the
  // device's start-up, in order: "init" (the CUDA context, the BLAS handle,
  // the flush buffer: no kernel, so no hold of a GPU), with
  // `warm_profiler` "init_profiler_host" (Kineto and CUPTI around host
  // work: no hold), "init_kernels" and with `warm_profiler`
  // "init_profiler" (kernels: `gate` held shared), "init_host" (Triton's
  // facts, the watch: host work). Their replies' fields join hello().
  // Unavailable (with the log's tail) if it does not come up. Before 2026-12-06 the context came under the device's hold:
  // 6 s per candidate on the H100 with 8 starting at once, which every
  // timed phase waiting for the device waited out.
  static Result<std::unique_ptr<Runner>> Start(const RunnerOptions& options,
                                               const RunnerStart& start);
  ~Runner();

  // `reuse`: storage for the reply's blob (verify::internal::ReceiveMessage).
  Reply Request(const json& header, std::string_view blob, double timeout_s,
                std::string* reuse = nullptr);
  const json& hello() const { return hello_; }
  // Adds fields to the greeting (a candidate's "init" reply: its sandbox).
  void UpdateHello(const json& fields) {
    for (const auto& [k, v] : fields.items()) hello_[k] = v;
  }
  const std::string& scratch() const { return scratch_; }
  // The requests since the last call, by op (OpTime); resets them.
  std::map<std::string, OpTime> TakeOpStats() { return std::exchange(op_stats_, {}); }
  bool alive() const { return process_ && process_->alive(); }
  std::string LogTail(size_t bytes) const;
  // Kills it (if running) and removes its scratch directory.
  void Stop();
  // Kills it without waiting for its end (WorkerProcess::Signal): Stop
  // then reaps it.
  void Signal() {
    if (process_) process_->Signal();
  }

 private:
  Runner() = default;
  std::unique_ptr<verify::internal::WorkerProcess> process_;
  std::string scratch_;
  json hello_;
  std::map<std::string, OpTime> op_stats_;
};

// Absolute paths the interpreter needs to see: its prefixes and sys.path
// (asked once per interpreter, cached).
Result<std::vector<std::string>> PythonPaths(const std::string& python);
// `python` made absolute (searched on PATH).
Result<std::string> ResolvePython(const std::string& python);

// IsolationInfo from a runner's greeting (its SKILLDB_KB_ISOLATION notes
// and the sandbox it entered).
IsolationInfo IsolationFromHello(const json& hello, bool compiler_confined);
// The toolchain prefixes a runner's root must show read-only: for $CC,
// $CXX and $CUDAHOSTCXX (absolute paths, and what they resolve to) the
// directory holding the compiler, or its parent when that is a bin/ (a GPU
// image's /opt/gcc/bin/gcc needs /opt/gcc). /usr and /usr/local are
// visible anyway and not repeated.
std::vector<std::string> CompilerPrefixes();

// The runners' bytecode cache: points the runners of `o` at `dir`
// (PYTHONPYCACHEPREFIX, read-only: they never write it; `dir` is made if
// missing, and `o` is left as it was if it cannot be) and starts filling
// it with runner/kb_bytecode.py (the modules a runner imports, compiled
// once), outside the sandbox on a thread of its own since it runs no
// answer's code. Filled once per process and directory; the handle joins
// the fill when the last holder drops it, and is null when the fill was
// already done in this process or `dir` could not be made. Best effort: a
// failed fill only leaves runners compiling what they import, as they did
// without the cache.
class BytecodeFill;
std::shared_ptr<BytecodeFill> UseBytecodeCache(RunnerOptions* o,
                                               const std::string& dir);

// The one T of `key` in this process while anyone holds it (made on first
// use): what the evaluators of one device, or the builders of one cache,
// share. Thread-safe; each T has its own registry.
template <typename T>
std::shared_ptr<T> SharedFor(const std::string& key) {
  static std::mutex mu;
  static std::map<std::string, std::weak_ptr<T>> all;  // GUARDED_BY(mu)
  std::lock_guard<std::mutex> lock(mu);
  std::shared_ptr<T> made = all[key].lock();
  if (!made) {
    made = std::make_shared<T>();
    all[key] = made;
  }
  return made;
}

// ---- One device's timing gate ------------------------------------------------

// Shared by every evaluator on one device: a timed phase holds it alone
// (lock), any other work on the device (a runner's start-up, a load, a
// trial, a fetch, a Triton build's first call) holds it shared
// (lock_shared), so answers are checked side by side but timed alone. A
// timed phase that waits goes first: new shared holders wait behind it.
// The method names are the standard library's, for std::unique_lock and
// std::shared_lock.
class DeviceGate {
 public:
  // The gate of `device` ("cpu", "cuda", "cuda:<visible id>"), one per
  // process.
  static std::shared_ptr<DeviceGate> For(const std::string& device);

  void lock() {
    std::unique_lock<std::mutex> l(mu_);
    ++waiting_;
    cv_.wait(l, [this] { return !exclusive_ && shared_ == 0; });
    --waiting_;
    exclusive_ = true;
  }
  void unlock() {
    std::lock_guard<std::mutex> l(mu_);
    exclusive_ = false;
    cv_.notify_all();
  }
  void lock_shared() {
    std::unique_lock<std::mutex> l(mu_);
    ++shared_waiting_;
    cv_.wait(l, [this] { return !exclusive_ && waiting_ == 0; });
    --shared_waiting_;
    ++shared_;
  }
  void unlock_shared() {
    std::lock_guard<std::mutex> l(mu_);
    if (--shared_ == 0) cv_.notify_all();
  }
  // Shared at once, or false (held alone, or a timed phase waits).
  bool try_lock_shared() {
    std::lock_guard<std::mutex> l(mu_);
    if (exclusive_ || waiting_ > 0) return false;
    ++shared_;
    return true;
  }
  int waiting() {  // timed phases waiting (for tests)
    std::lock_guard<std::mutex> l(mu_);
    return waiting_;
  }
  int shared_waiting() {  // shared holds waiting (for tests)
    std::lock_guard<std::mutex> l(mu_);
    return shared_waiting_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool exclusive_ = false;  // GUARDED_BY(mu_)
  int shared_ = 0;          // GUARDED_BY(mu_)
  int waiting_ = 0;         // GUARDED_BY(mu_): timed phases waiting
  int shared_waiting_ = 0;  // GUARDED_BY(mu_)
};

// ---- Tensors on the wire -----------------------------------------------------

// A tensor as a runner sent it: its raw bytes in the wire dtype, kept as
// they came (the reply's bytes are moved in, never widened to a copy: a
// 256 MiB float32 output stays 256 MiB), read as doubles in pieces.
struct WireTensor {
  std::string dtype;  // the wire dtype (kb_wire.py WIRE_DTYPES)
  std::string orig_dtype;  // when it was widened
  std::vector<int64_t> shape;
  std::string bytes;  // the reply's bytes; the tensor's start at `offset`
  int64_t offset = 0;
  int64_t numel() const;  // the elements held: the shape's product
  // Elements [begin, begin + n) as doubles into `out`; the range lies
  // inside [0, numel()).
  void Read(int64_t begin, int64_t n, double* out) const;
  double at(int64_t i) const;
};

// Decodes the tensor described by `desc` ({dtype, shape, offset, nbytes})
// in `blob` (taken: pass the reply's bytes with std::move). Corruption for
// a descriptor outside the blob or of an unknown dtype.
Result<WireTensor> DecodeTensor(const json& desc, std::string blob);

int64_t DtypeBytes(std::string_view dtype);  // 0 for unknown

struct CloseCheck {
  int64_t elements = 0;
  int64_t mismatches = 0;
  double max_abs = 0;
  double sum_abs = 0;
  std::vector<std::string> examples;  // "element 17 (index [0, 17]): got 1.5, want 2"
  bool ok() const { return mismatches == 0; }
};

// torch.allclose(want, got, atol, rtol) elementwise: |want - got| <= atol +
// rtol * |got|; NaN never close; equal infinities close. `indices` names
// elements for examples (flat indices into `shape`; empty: 0..n-1).
// Over the first min(sizes) elements; in pieces, with no copy of either.
CloseCheck AllClose(const WireTensor& want, const WireTensor& got, double atol,
                    double rtol, const std::vector<int64_t>& shape,
                    const std::vector<int64_t>& indices = {});
CloseCheck AllClose(const std::vector<double>& want,
                    const std::vector<double>& got, double atol, double rtol,
                    const std::vector<int64_t>& shape,
                    const std::vector<int64_t>& indices = {});

// Relative RMS error of `got` against `exact`: rms(got - exact) / rms(exact)
// over finite elements; NaN if none.
double RelativeRmsError(const WireTensor& got, const WireTensor& exact);
double RelativeRmsError(const std::vector<double>& got,
                        const std::vector<double>& exact);
// The same over the elements `at` of `got` (flat indices inside it), whose
// exact values are `exact`'s, in order: a sample's.
double RelativeRmsError(const WireTensor& got, const WireTensor& exact,
                        const std::vector<int64_t>& at);

// Sample indices into `numel` elements: the first and last `edge`, then
// `count` drawn from `rng`, sorted and unique.
std::vector<int64_t> SampleIndices(int64_t numel, int64_t count, int64_t edge,
                                   std::mt19937_64* rng);

// ---- Small helpers (kb_util.cc) ----------------------------------------

std::string Num(double v, const char* fmt = "%.3g");  // snprintf'd number
// Milliseconds from the process's start (its static initialization) to
// `t`: the clock of Span.
double ProcessMs(util::SteadyClock::time_point t);
// Adds the span [start, end] named `name` to `split`, or counts it dropped
// past PhaseSplit::kMaxSpans.
void AddSpan(PhaseSplit* split, std::string name,
             util::SteadyClock::time_point start,
             util::SteadyClock::time_point end);
std::string Env(const char* name);                    // "" when unset
bool IsDirectory(const std::string& path);
std::vector<std::string> ListDir(const std::string& dir);  // sorted, no . ..
std::string BaseName(const std::string& path);
std::string ParentDir(const std::string& path);
// KernelBench rounds its timing statistics to 3 significant digits
// (timing.py get_timing_stats) before any speedup is computed.
double Round3(double v);
double Mean(const std::vector<double>& v);  // 0 when empty

// A profiled kernel's function name: "void ns::foo<float>(float const*)"
// -> "foo" (kb_evaluate.cc).
std::string KernelFunctionName(std::string name);
// Whether a profiled kernel is one of `own` (OwnKernelNames): its function
// name is one of them, or one of them followed by '_' (Triton's variants).
bool IsOwnKernel(const std::string& kernel, const std::vector<std::string>& own);

// ---- JSON --------------------------------------------------------------------

// util::DumpLossy(j), for this module's json type: the one non-template
// name lets callers pass a braced initializer list.
std::string Dump(const json& j);
// Parses; Corruption naming `what` on failure.
Result<json> ParseJson(std::string_view text, std::string_view what);

json SpecsToJson(const std::vector<InputSpec>& specs);
std::vector<InputSpec> SpecsFromJson(const json& j);

// The builds' and baselines' cache directory (EvalOptions::cache_dir, else
// $SKILLDB_KB_CACHE, else the user's cache directory).
std::string CacheRoot(const EvalOptions& options);

}  // namespace skilldb::verify::kb::internal

#endif  // SKILLDB_VERIFY_KERNELBENCH_INTERNAL_H_
