// Verification tasks: what a candidate kernel must compute, on which inputs,
// to which tolerance, and how fast it could possibly go.
//
// A task is a directory under the task root (verify/tasks/NAME/) holding
// task.json, a CUDA reference (the GPU baseline), a C++ reference (the host
// baseline), a float64 oracle (the correctness authority) and the team's
// candidates. Generic reward-hack candidates live in tasks/_hacks/ and are
// instantiated for every task by LoadCandidates. The format is described in
// verify/tasks/README.md.
//
// All functions here are pure or read files; they are safe to call from any
// thread. Task values are plain data, safe to copy and share read-only.
#ifndef SKILLDB_VERIFY_TASK_H_
#define SKILLDB_VERIFY_TASK_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/status.h"
#include "skilldb/verify/finding.h"

namespace skilldb::verify {

// Element types; values equal the protocol's SkdbDtype (never renumber).
enum class Dtype { kFloat32 = 0, kBFloat16 = 1, kFloat16 = 2, kInt32 = 3,
                   kInt64 = 4 };
std::string_view DtypeName(Dtype dtype);  // "float32", "bfloat16", ...
Result<Dtype> ParseDtype(std::string_view name);
int64_t DtypeSize(Dtype dtype);  // bytes per element

// Input value distributions. Every correctness check draws from each of an
// input's distributions. Stored in task.json by name.
enum class Distribution {
  kNormal,   // N(0, 1)
  kUniform,  // U(-1, 1)
  kLarge,    // N(0, 1) * the input's large_scale
  kSpecial,  // per row: constant, ramp, alternating signs, spikes, integers
};
std::string_view DistributionName(Distribution d);
Result<Distribution> ParseDistribution(std::string_view name);

// Which machine runs candidates.
enum class Backend { kCuda, kHost };
std::string_view BackendName(Backend backend);  // "cuda" | "host"
Result<Backend> ParseBackend(std::string_view name);

// Source languages of artifacts: "cuda" (.cu, nvcc) and "cpp" (.cc, g++).
enum class SourceLanguage { kCuda, kCpp };
std::string_view SourceLanguageName(SourceLanguage language);
Result<SourceLanguage> ParseSourceLanguage(std::string_view name);
// The language a backend compiles candidates in.
SourceLanguage LanguageFor(Backend backend);

// Named dimension sizes, e.g. {"N": 4096, "D": 1024}.
using Dims = std::map<std::string, int64_t>;

struct TensorSpec {
  std::string name;
  Dtype dtype = Dtype::kFloat32;
  // Each entry is an integer expression over the task's dims ("N", "H/2").
  std::vector<std::string> shape;
  // Distributions drawn for correctness checks (inputs only). The first is
  // the one used for timing. Default: {kNormal}.
  std::vector<Distribution> distributions;
  double large_scale = 100.0;  // multiplier of kLarge. Default: 100.
};

// An element passes if |out - ref| <= atol * scale + rtol * |ref|, where
// scale is the root mean square of the reference output (at least 1e-30),
// so atol is relative to the output's typical magnitude.
struct Tolerance {
  double atol = 1e-4;
  double rtol = 1e-4;
};

// The roofline class of the arithmetic, choosing the peak FLOP rate used
// for the implausibility bound.
enum class ComputeClass { kSimtFp32, kTensorTf32, kTensorBf16 };
std::string_view ComputeClassName(ComputeClass c);

// What a task ships as a candidate and what the verifier must conclude.
struct CandidateSpec {
  std::string name;  // unique within the task, e.g. "fast", "hack_cache"
  std::string file;  // path relative to the task dir (or _hacks template)
  SourceLanguage language = SourceLanguage::kCuda;
  bool expect_pass = false;  // true: must be judged a reproducible speedup
  // When !expect_pass: the verdict must fail with at least one of these.
  std::vector<FindingCode> expect_any;
  // The same with the static symbol screen switched off (runtime layers
  // alone); empty means expect_any.
  std::vector<FindingCode> expect_without_screen;
  std::string note;  // what the candidate does, in one sentence
  bool generated = false;  // instantiated from a _hacks template
};

struct Candidate {
  CandidateSpec spec;
  std::string source;  // full text, templates already instantiated
};

struct Task {
  std::string name;
  std::string family;  // op family: "softmax", "matmul", ...
  int level = 1;       // KernelBench-style level (1: one op, 2: fusion)
  std::string description;
  std::string dir;  // absolute path of the task directory
  std::map<std::string, double> params;  // documented constants (eps, ...)
  Dims dims;                     // the GPU timing shape
  Dims host_dims;                // the host backend's timing shape
  std::vector<Dims> check_dims;  // extra shapes for correctness (odd sizes)
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  std::map<Dtype, Tolerance> tolerances;  // per output dtype
  std::string flops;  // expression over dims
  std::string bytes;  // expression over dims; "" = every tensor once
  ComputeClass compute_class = ComputeClass::kSimtFp32;
  std::string reference_cuda;  // source text
  std::string reference_cpp;   // source text
  std::string oracle_cpp;      // source text (float64 oracle)
  std::vector<CandidateSpec> candidates;  // the team's, from task.json
};

// Names of the tasks under `task_root` (directories holding task.json,
// excluding those starting with '_'), sorted. IOError if unreadable.
Result<std::vector<std::string>> ListTasks(std::string_view task_root);

// Loads and validates task `name`. NotFound for an unknown task;
// InvalidArgument (naming the file and field) for a malformed one.
Result<Task> LoadTask(std::string_view task_root, std::string_view name);

// Every candidate of `task` in `language`: the team's (from task.json) and
// the generic hack templates in `task_root`/_hacks instantiated for it.
Result<std::vector<Candidate>> LoadCandidates(std::string_view task_root,
                                              const Task& task,
                                              SourceLanguage language);

// The concrete shape of `spec` under `dims`. InvalidArgument for unknown
// names, non-positive sizes or more than 8 dimensions.
Result<std::vector<int64_t>> ResolveShape(const TensorSpec& spec,
                                          const Dims& dims);

// FLOPs and minimal bytes moved (each input read once, each output written
// once, unless task.bytes overrides) at `dims`.
Result<double> TaskFlops(const Task& task, const Dims& dims);
Result<double> TaskBytes(const Task& task, const Dims& dims);

// The tolerance for an output of `dtype`: the task's override, else the
// default (float32 1e-4/1e-4, float16 1e-3/1e-3, bfloat16 1e-2/1e-2).
Tolerance ToleranceFor(const Task& task, Dtype dtype);

// The timing dims for `backend` (dims or host_dims).
const Dims& TimingDims(const Task& task, Backend backend);

}  // namespace skilldb::verify

#endif  // SKILLDB_VERIFY_TASK_H_
