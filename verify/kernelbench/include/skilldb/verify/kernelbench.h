// KernelBench in the verifier: its problems as tasks, its answers (a
// ModelNew with inline CUDA through load_inline, or Triton) as candidates,
// judged by a confined torch runner with this verifier's protocol or with
// KernelBench's own, and fast_p exactly as KernelBench's score.py.
//
//   TaskStore store = *TaskStore::Open(TaskStore::DefaultDir());
//   ImportOptions io; io.path = "KernelBench/level1"; io.problems = "1-20";
//   auto summary = ImportProblems(io, &store);      // problems -> store
//   auto ev = Evaluator::Make(RunnerOptions{...}, EvalOptions{});
//   auto r = (*ev)->Evaluate(*store.Get(1, 19), answer_source);
//   // r->verdict, r->speedup_eager, r->findings ...
//
// Processes: for each answer a build process (runs the answer's module so
// load_inline builds; compilers may run), a candidate process (the answer's
// ModelNew; no processes, no exec, a system-call allowlist entered before
// any answer code runs) and, per problem, a reference process (the
// problem's Model), all confined by skilldb_kb_launch (namespaces, no
// network, a root where only the scratch directory is writable, no
// capabilities, rlimits). Outputs cross to this process as raw tensors and
// are compared here; every request is timed here too, on a clock the
// candidate cannot reach.
//
// Thread safety: TaskStore is safe for concurrent readers; writers must be
// serialized by the caller. An Evaluator is safe for concurrent use: builds
// run on a pool, evaluations queue for the device.
#ifndef SKILLDB_VERIFY_KERNELBENCH_H_
#define SKILLDB_VERIFY_KERNELBENCH_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/status.h"
#include "skilldb/verifier.h"
#include "skilldb/verify/finding.h"
#include "skilldb/verify/stats.h"

namespace skilldb::verify::kb {

// ---- Problems and the task store ---------------------------------------

// One argument of the forward call, as get_inputs() returned it.
struct InputSpec {
  std::string kind;  // "tensor" | "int" | "float" | "bool" | "other"
  std::string dtype;            // tensors: "float32", "int64", ...
  std::vector<int64_t> shape;   // tensors
  // Tensors: "rand" | "randn" | "randint" | "bernoulli" | "const" |
  // "replay" (fresh values come from get_inputs() itself) | "" (unknown).
  std::string distribution;
  int64_t bytes = 0;
};

// A KernelBench problem as a verifier task.
struct Problem {
  int level = 0;
  int id = 0;                // the number before the first '_'
  std::string name;          // the file name with .py: KernelBench's key
  std::string source;        // verbatim: the harness execs the whole file
  std::string code_hash;     // KernelBench's get_code_hash (dataset.py)
  std::string source_path;   // where it was imported from
  std::string kernelbench_root;  // the checkout it came from, "" if unknown
  std::string init_inputs_json;  // get_init_inputs() under seed 42, as sent
  std::vector<InputSpec> inputs;
  std::string precision = "fp32";  // fp32 | fp16 | bf16
  // KernelBench's tolerance for the precision (eval.py at 423217d): atol =
  // rtol = 1e-4 for fp32, 1e-2 for fp16 and bf16.
  double tolerance = 1e-4;
  int64_t input_bytes = -1;  // -1: unknown
  int64_t flops = -1;        // FlopCounterMode's count, -1: unknown
  // "no", "yes" or "unknown" (the screen could not run; reason says why).
  std::string degenerate = "unknown";
  std::string degenerate_reason;
  std::string key() const;   // "level1/19"
};

// KernelBench's tolerance for a precision; InvalidArgument for others.
Result<double> ToleranceFor(std::string_view precision);

// A problem that could not be imported, and why.
struct Unimportable {
  int level = 0;
  int id = 0;
  std::string file;
  std::string reason;
};

// Problems on disk, outside the repository: DIR/level<L>/<id>/problem.py
// and task.json, plus DIR/level<L>/unimportable.json.
class TaskStore {
 public:
  // Opens (creating) the store at `dir`. IOError if it cannot be created.
  static Result<TaskStore> Open(const std::string& dir);
  // $SKILLDB_KB_STORE, else $XDG_DATA_HOME/skilldb/kernelbench, else
  // ~/.local/share/skilldb/kernelbench.
  static std::string DefaultDir();

  Status Put(const Problem& problem);
  // NotFound if the problem was never imported; Corruption for a damaged
  // entry.
  Result<Problem> Get(int level, int id) const;
  // Every problem of `level` (0: all levels), by level then id.
  Result<std::vector<Problem>> List(int level) const;
  // Replaces the level's list of problems that could not be imported.
  Status PutUnimportable(int level, const std::vector<Unimportable>& list);
  Result<std::vector<Unimportable>> ListUnimportable(int level) const;
  const std::string& dir() const { return dir_; }

 private:
  explicit TaskStore(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

// Parses "1-20,33" into sorted ids; "" means every id. InvalidArgument for
// a malformed list.
Result<std::vector<int>> ParseIdList(std::string_view text);
bool InIdList(const std::vector<int>& ids, int id);  // empty list: all

// ---- The runner ------------------------------------------------------------

struct RunnerOptions {
  std::string python;        // interpreter with torch; "" = python3 on PATH
  std::string runner_dir;    // verify/kernelbench/runner ("" = this build's)
  std::string launcher;      // skilldb_kb_launch ("" = this build's)
  std::string sandbox_lib;   // libskilldb_kb_sandbox.so ("" = this build's)
  std::string scratch_root;  // "" = $TMPDIR or /tmp
  std::string device = "cuda";  // "cuda" (the first visible GPU) or "cpu"
  // Answers judged at once (Evaluator::Make), each by its own evaluator
  // (runners, warm references, a share of the build pool; builds share
  // one cache): max(workers, gpus) of them. With "cuda" they are spread
  // over `gpus` GPUs (evaluator i on the visible GPU i % gpus, pinned by
  // CUDA_VISIBLE_DEVICES); answers
  // on one device are loaded and checked side by side but timed alone
  // (nothing else runs on it meanwhile). With "cpu" the host is the one
  // device. Default: 1 and 1.
  int workers = 1;
  int gpus = 1;
  bool confine = true;       // namespaces, rlimits, seccomp. Default: true.
  // Bytes a CPU runner writes before each timed call (cache flush).
  // Default: 8 MiB.
  int64_t cpu_flush_bytes = int64_t{8} << 20;
  int64_t memory_bytes = 0;  // RLIMIT_AS of CPU runners; 0 = none (a GPU
                             // runner never gets one: CUDA reserves more
                             // address space than any sane limit)
  int64_t cpu_seconds = 3600;       // RLIMIT_CPU per runner. Default: 1 h.
  int64_t output_bytes = int64_t{64} << 20;  // a runner's log. Default: 64 MiB.
  double start_timeout_s = 300;     // interpreter start and device init
  int omp_threads = 1;       // OMP_NUM_THREADS of runners (both sides)
  std::vector<std::string> extra_env;      // NAME=VALUE for every runner
  std::vector<std::string> extra_visible;  // more read-only paths
};

// Fills the empty paths of `options` with this build's defaults (or the
// SKILLDB_KB_RUNNER_DIR / SKILLDB_KB_LAUNCH / SKILLDB_KB_SANDBOX_LIB /
// SKILLDB_KB_PYTHON environment variables).
RunnerOptions WithDefaults(RunnerOptions options);

// ---- Import -------------------------------------------------------------

struct ImportOptions {
  // A KernelBench checkout, its KernelBench/ folder, a level<N>/ folder or
  // one problem file.
  std::string path;
  int level = 0;          // 0: every level found (or the path's own)
  std::string problems;   // ParseIdList syntax; "" = all
  std::string precision = "fp32";
  // The degenerate-problem screen runs the model twice; problems whose
  // inputs are larger than this are not screened (degenerate "unknown").
  // Default: 2 GiB.
  int64_t max_screen_bytes = int64_t{2} << 30;
  double timeout_s = 300;  // per problem
  // Problems inspected at once, each by its own runner (on a GPU they share
  // the device); 0 = a quarter of the cores (at least 1, at most 8).
  int jobs = 0;
  RunnerOptions runner;
  // The runners' bytecode cache (as EvalOptions::bytecode_cache: filled
  // once per process, read-only to the runners); "" = none.
  std::string bytecode_dir;
  // One line per problem, in the order they finish (called from the
  // inspecting threads, one call at a time).
  std::function<void(const std::string&)> progress;
};

struct ImportSummary {
  std::vector<Problem> imported;
  std::vector<Unimportable> skipped;
};

// Imports every selected problem into `store` (REQUIRES: store != null).
// A problem that fails (a syntax error, a missing Model, an exception in
// get_inputs, a module that needs the network) is listed in `skipped` with
// the reason and recorded in the store's unimportable list, never dropped.
// Errors: NotFound for a path without problems, Unavailable when no
// runner can start.
Result<ImportSummary> ImportProblems(const ImportOptions& options,
                                     TaskStore* store);

// ---- Answers ----------------------------------------------------------------

enum class AnswerFormat {
  kCuda,            // ModelNew + load_inline (cuda_sources or cpp_sources)
  kTriton,          // ModelNew + @triton.jit
  kCAbi,            // this verifier's launch() ABI (its own tasks)
  kCute,            // not supported (see FormatInfo::reason)
  kTileLang,        // not supported
  kThunderKittens,  // not supported
  kHip,             // not supported
  kTorchOnly,       // a ModelNew with no kernel of its own: judged (its
                    // heavy lifting is PyTorch's, see kTorchDoesTheWork)
  kUnknown,         // no ModelNew at all
};
std::string_view AnswerFormatName(AnswerFormat format);

struct FormatInfo {
  AnswerFormat format = AnswerFormat::kUnknown;
  bool supported = false;
  std::string backend;  // KernelBench's backend name: "cuda" | "triton"
  std::string reason;   // why it is not supported
};

// The format of an answer's source. `declared` ("", "cuda", "triton",
// "cute", "tilelang", "thunderkittens", "hip") is what the caller says it
// is (KernelBench has no auto-detection); "" detects from the source.
FormatInfo DetectFormat(std::string_view source, std::string_view declared = "");

// The names of the kernels an answer defines: CUDA __global__ functions and
// Triton @triton.jit functions. A profiled kernel is the answer's own when
// its function name is one of these.
std::vector<std::string> OwnKernelNames(std::string_view source);

// ---- Evaluation ---------------------------------------------------------------

enum class Protocol {
  // This verifier's: reference and candidate in different processes,
  // fresh inputs for every correctness trial and timed call, inputs
  // checked unchanged, timed outputs spot-checked, device-wide syncs, L2
  // flushed, interleaved rounds with a bootstrap interval, clock
  // cross-checks, roofline plausibility, hack findings.
  kSkilldb,
  // KernelBench 423217d's eval_kernel_against_ref with run_and_check.py's
  // settings: 5 correctness trials on seeds drawn from seed 42, allclose
  // at the precision's tolerance, 100 timed trials (first discarded) with
  // CUDA events after 3 warm-ups, a 256 MB L2 flush, the same inputs every
  // trial; speedup = reference mean / answer mean (3 significant digits).
  kKernelBench,
};
std::string_view ProtocolName(Protocol protocol);  // "skilldb" | "kernelbench"
Result<Protocol> ParseProtocol(std::string_view name);

struct EvalOptions {
  Protocol protocol = Protocol::kSkilldb;
  std::string precision = "fp32";  // fp32 | fp16 | bf16 (KernelBench's)
  int correctness_trials = 5;      // Default: 5 (KernelBench's).
  int rounds = 3;                  // interleaved timing rounds. Default: 3.
  int calls_per_round = 30;        // timed calls per side per round.
  int warmup_calls = 3;            // untimed calls per side per round.
  int spot_checks = 3;             // timed outputs checked per round.
  int kb_perf_trials = 100;        // KernelBench protocol. Default: 100.
  // Count answers whose GPU time is mostly PyTorch's own kernels as
  // speedups. Default: false (such answers are "correct, not credited").
  bool credit_torch_ops = false;
  // Share of the answer's device time that must be in its own kernels.
  // Default: 0.5.
  double min_own_share = 0.5;
  bool compile_baseline = true;  // time torch.compile too (cached)
  uint64_t seed = 0;             // 0: drawn fresh per evaluation
  double build_timeout_s = 900;  // one answer's build
  double load_timeout_s = 300;   // module, constructor
  double call_timeout_s = 120;   // one request (a trial, a timed call)
  // Outputs up to this size are compared whole; larger ones on a sample
  // of `sample_elements` chosen after they were computed. Default: 256 MiB.
  int64_t max_transfer_bytes = int64_t{256} << 20;
  int64_t sample_elements = int64_t{1} << 20;
  // A timed call's spot check (an output that is not this call's, cached
  // or stale) reads outputs over 4x this many elements on a sample of this
  // many, chosen after the call. Such an output differs from the
  // reference's in most of its elements: a sample of 64K misses a stale
  // share of even 0.01% with probability e^-6.5. The checks run while the
  // device is held alone, so their transfer is every evaluator's wait.
  // Default: 65536.
  int64_t spot_sample_elements = int64_t{1} << 16;
  // Device memory the correctness trials' and the timed calls' inputs and
  // outputs may keep alive (so addresses are not reused); GPU default
  // 16 GiB, CPU 256 MiB.
  int64_t keep_alive_bytes = 0;
  std::string cache_dir;  // builds and baselines; "" = the user cache dir
  bool light_cuda_include = true;  // see kb_load.py ExtensionShim
  // Split CUDA sources (kb_split.py): kernels through nvcc without torch's
  // headers, the torch functions with the C++ sources, each launch through
  // a launcher; a source that does not split, or whose parts do not build,
  // is compiled whole. The result's notes say which.
  bool split_cuda = true;
  // Build load_inline's binding (main.cpp) against a precompiled
  // torch/extension.h, made once per torch version in the cache (by the
  // first build after two distinct extensions were compiled: a run that
  // compiles one extension never pays for it).
  bool use_pch = true;
  // Call answers' load_inline functions through thunks and the generic
  // caller (kb_caller.py: compiled with torch/types.h, no pybind11 binding
  // per answer; the same conversions, pybind11's casters), built once per
  // torch and Python in the cache by the first C++/CUDA build; a call the
  // thunks do not cover gets its own binding, and the notes say which.
  // Off: every answer gets its own binding (thunk libraries already in the
  // cache are still used).
  bool generic_caller = true;
  // Runners read the modules they import as bytecode from the cache
  // (<cache>/pycache, PYTHONPYCACHEPREFIX, read-only to them), filled once
  // per process by kb_bytecode.py outside the sandbox. Where the installed
  // packages carry no bytecode every runner compiled torch's modules
  // again: on the H100 machine (2026-12-06c) the profiler's first set-up
  // took 4.9-6.7 s of CPU per runner. Off: runners use only the
  // interpreter's own bytecode.
  bool bytecode_cache = true;
  int build_jobs = 0;     // concurrent builds; 0 = half the cores
  // Another process's median time for the runner's phases outside the timed
  // call (input generation, fetching outputs) may exceed the reference's by
  // this factor plus untimed_slack_ms before kUntimedWork. Default: 2, 5 ms.
  double untimed_factor = 2.0;
  double untimed_slack_ms = 5.0;
  DecisionOptions clocks;   // the clock cross-checks' slack
  // The KernelBench checkout whose kernel_static_checker.py runs as extra
  // findings ("" = the problem's own checkout, if it has one).
  std::string static_checker_root;
};

// One request kind's share of an evaluation: how many, the wall time this
// process measured around them, the time the runner says it spent in its
// handler (the rest is the channel and the frames), and the CPU time its
// process spent meanwhile, all its threads (a wait shows as wall, not CPU).
struct OpTime {
  int calls = 0;
  double wall_ms = 0;
  double runner_ms = 0;
  double cpu_ms = 0;
};

// One part of an evaluation on the process's clock: milliseconds since the
// process started (one clock for every answer a process judges, so answers
// judged side by side line up: bench/timeline.py draws a run from them).
struct Span {
  std::string name;  // a part ("correctness", "timed_calls", ...), "build",
                     // "build_queue" or "answer" (the whole evaluation)
  double start_ms = 0;
  double end_ms = 0;
};

// The split of one evaluation's wall time, in milliseconds.
struct PhaseSplit {
  double build_ms = 0;
  double reference_ms = 0;
  double correctness_ms = 0;
  double timing_ms = 0;
  double total_ms = 0;
  bool build_cached = false;
  // By "ref.<op>" and "cand.<op>" (the candidate's start-up included; the
  // warm reference's from this answer on).
  std::map<std::string, OpTime> ops;
  // The evaluation's parts as they happened, in the order they ended, at
  // most kMaxSpans (later ones are dropped, counted in spans_dropped). A
  // build read from the cache or given to an earlier answer has no
  // "build" span here.
  static constexpr size_t kMaxSpans = 160;
  std::vector<Span> spans;
  int spans_dropped = 0;
};

struct Baseline {
  std::string kind;       // "eager" | "compile"
  double median_ms = 0;
  double mean_ms = 0;     // KernelBench's statistic (3 significant digits)
  int calls = 0;
  bool cached = false;
  std::string unavailable;  // why it could not be timed
};

struct KernelTime {
  std::string name;
  bool own = false;
  int64_t count = 0;
  double us = 0;
  int64_t stream = 0;
};

struct EvalResult {
  int level = 0;
  int problem = 0;
  int sample = 0;
  std::string problem_name;
  std::string answer_hash;  // SHA-256 of the answer source
  FormatInfo format;
  Protocol protocol = Protocol::kSkilldb;
  // KernelBench's outcome classes: compiled (the module ran and defined
  // ModelNew), correct (every trial within tolerance). `verdict` adds this
  // verifier's: "correct", "not_credited" (correct, but PyTorch does the
  // work), "incorrect", "hack" (a finding that voids the result),
  // "compile_error", "runtime_error", "timeout", "unsupported", "error"
  // (the verifier or the problem failed).
  bool compiled = false;
  bool correct = false;
  bool credited = false;  // counts as a speedup of its own
  std::string verdict;
  std::vector<Finding> findings;
  std::vector<std::string> notes;  // what was seen but decides nothing
  std::string compile_log;         // compiler / exception text, bounded
  // Correctness.
  int trials = 0;
  int trials_passed = 0;
  double max_abs_diff = 0;
  double avg_abs_diff = 0;
  std::vector<std::string> mismatches;  // the first few, in words
  // Timing (ms). Under kSkilldb the candidate's and eager reference's
  // medians over the interleaved rounds; under kKernelBench the means.
  double candidate_ms = -1;
  Baseline eager;
  Baseline compiled_baseline;
  std::optional<double> speedup_eager;    // eager / candidate
  std::optional<double> speedup_compile;  // compile / candidate
  SpeedupEstimate estimate;               // kSkilldb: over eager, with CI
  std::vector<RoundTiming> rounds;
  std::vector<double> kb_times_ms;        // kKernelBench: the 100 trials
  std::optional<double> max_plausible_speedup;
  // Profile: device time in the answer's own kernels against all of it
  // (KernelGYM's custom_kernel_cuda_time_in_profiling_us and
  // total_kernel_run_time_in_profiling_us); -1 when not profiled.
  double own_kernel_us = -1;
  double total_kernel_us = -1;
  int own_kernels = 0;
  int total_kernels = 0;
  std::vector<KernelTime> kernels;  // the largest few
  double own_share() const {
    return total_kernel_us > 0 ? own_kernel_us / total_kernel_us : -1;
  }
  IsolationInfo isolation;
  PhaseSplit times;
  std::string device;         // "NVIDIA H200" or "host"
  std::string torch_version;
  // KernelGYM's ErrorCode for the outcome ("" when correct):
  // COMPILATION_ERROR, RUNTIME_ERROR, CORRECTNESS_ERROR, TIMEOUT_ERROR,
  // SYSTEM_ERROR; and its one-line message.
  std::string error_code;
  std::string error_message;
  bool degenerate_problem = false;
};

// JSON of a result (one object) and back; ResultFromJson returns
// InvalidArgument naming the field on malformed input.
std::string ResultToJson(const EvalResult& result);
Result<EvalResult> ResultFromJson(std::string_view json);
// A few lines for a terminal (not escaped: the caller escapes).
std::string FormatResultText(const EvalResult& result);

struct DeviceInfo {
  std::string name;        // "NVIDIA H200" | "host"
  std::string capability;  // "9.0" | ""
  std::string torch_version;
  std::string triton_version;
  double bandwidth_bytes_per_s = 0;  // measured
  double fp32_flops_per_s = 0;       // measured
  std::string isolation;   // the reference runner's confinement, in words
};

class Evaluator {
 public:
  // Starts nothing yet; Unavailable later if no runner starts.
  // InvalidArgument for inconsistent options.
  static Result<std::unique_ptr<Evaluator>> Make(const RunnerOptions& runner,
                                                 const EvalOptions& options);
  virtual ~Evaluator() = default;

  // Judges `answer` (Python source) on `problem`. `declared_backend` as
  // DetectFormat's. Every outcome of the answer is a result (compile
  // errors, wrong outputs, crashes, hacks); errors are for the verifier
  // and the problem: Unavailable (no runner), Internal.
  virtual Result<EvalResult> Evaluate(const Problem& problem,
                                      std::string_view answer,
                                      std::string_view declared_backend = "") = 0;

  // Starts building `answer` on the build pool (no device needed for CUDA
  // answers), so a later Evaluate finds it built. Thread-safe.
  virtual void Prebuild(const Problem& problem, std::string_view answer,
                        std::string_view declared_backend = "") = 0;

  // The device the reference runner sees, with its measured ceilings.
  virtual Result<DeviceInfo> Describe() = 0;

  virtual const EvalOptions& options() const = 0;

  // Evaluate calls that run at once (one per device); more wait. Default: 1.
  virtual int Parallelism() const { return 1; }
};

// ---- Scoring (KernelBench's score.py) ---------------------------------------

// The p values KernelBench reports.
inline constexpr double kFastPValues[] = {0.0, 0.5, 0.8, 1.0, 1.5, 2.0};

// One problem's outcome as score.py sees it: correct or not, and the
// baseline and answer times (speedup = baseline / answer).
struct ScoredProblem {
  bool correct = false;
  double baseline_ms = 0;
  double answer_ms = -1;
};

// fast_p = #{correct and baseline/answer > p} / n, strictly greater, over
// all n problems of the level (missing answers count as incorrect: pass
// them as correct = false). 0 when n == 0.
double FastP(const std::vector<ScoredProblem>& problems, int n, double p);
// score.py's geometric means: over correct problems (NaN when a correct
// one has no positive speedup, as numpy gives), and over correct ones with
// speedup > 1. 0 when there are none.
double GeomeanCorrect(const std::vector<ScoredProblem>& problems);
double GeomeanCorrectAndFaster(const std::vector<ScoredProblem>& problems);
// eval_from_generations.py's unbiased pass@k from n samples, c correct.
double PassAtK(int n, int c, int k);

struct LevelScore {
  int level = 0;
  std::string baseline;   // "eager" | "compile"
  int problems = 0;       // n: the level's problems in the selection
  int evaluated = 0;      // problems with an answer (sample 0)
  int compiled = 0;
  int correct = 0;
  int not_credited = 0;   // correct, but PyTorch does the work
  std::map<double, double> fast_p;
  double geomean_correct = 0;
  double geomean_correct_and_faster = 0;
  std::map<int, double> pass_at_k;  // when problems have several samples
};

// ---- Run directories -----------------------------------------------------

struct AnswerFile {
  int level = 0;
  int problem = 0;
  int sample = 0;
  std::string path;
};

// The answers in `run_dir`, in any of the accepted layouts:
//   level_<L>_problem_<P>_sample_<S>_kernel.py  (KernelBench's generation)
//   level<L>/<P>_<anything>.py or level<L>/<P>.py  (sample 0)
//   level<L>/<P>/sample_<S>.py
// NotFound for a missing directory; InvalidArgument when nothing in it
// matches a layout.
Result<std::vector<AnswerFile>> FindAnswers(const std::string& run_dir);

struct RunOptions {
  std::string run_dir;
  int level = 0;           // 0: every level present
  std::string problems;    // ParseIdList syntax
  // Where results accumulate, one JSON line per answer; a later run with
  // the same options skips answers already there. "" =
  // RUN_DIR/skilldb_eval.jsonl.
  std::string results_path;
  std::string declared_backend;  // "" = detect per answer
  std::function<void(const std::string&)> progress;  // one line per answer
};

struct RunReport {
  std::vector<EvalResult> results;  // in answer order, resumed ones included
  std::vector<LevelScore> eager;    // per level, over eager
  std::vector<LevelScore> compile;  // per level, over torch.compile
  int resumed = 0;                  // results read back, not recomputed
  std::string protocol;
  DeviceInfo device;
};

// Evaluates every answer of `options.run_dir` against the store's problems
// (building ahead on the evaluator's pool), appending each result to the
// results file as it is known, then scores each level. Problems of a level
// without an answer count as incorrect; problems the store lacks are
// skipped with a note. Errors: NotFound/InvalidArgument for the run
// directory, IOError for the results file.
Result<RunReport> EvaluateRunDir(const RunOptions& options, Evaluator* evaluator,
                                 const TaskStore& store);

// The report as JSON (--json) and as a table.
std::string RunReportToJson(const RunReport& report);
std::string FormatRunReport(const RunReport& report);

// The levels' scores from results (used by EvaluateRunDir).
std::vector<LevelScore> ScoreResults(const std::vector<EvalResult>& results,
                                     const std::map<int, int>& problems_per_level,
                                     const std::string& baseline,
                                     bool credit_torch_ops);

// ---- The engine's Verifier interface --------------------------------------

// The engine's report of `result`, judged for `request` (what the verifier
// MakeKernelBenchVerifier returns; `clocks` holds tau). Its findings are
// codes the rewards and the Policy Agent's verdicts read (policy/reward.h):
// every finding of the result (a hack finding only under a "hack"
// verdict: precision_lowered on a wrong answer says why in the reasons,
// but as a code would make an honest failure a hack),
// "torch_does_the_work" for a correct answer that is not credited, and
// the failure's class for the others (compile_error, wrong_output,
// crashed, timeout, reference_failed). `reasons` has every finding as
// "[code] message", plus why a correct answer did not pass. Passed =
// correct, no finding, every round at or above tau and the speedup's
// interval above 1 (what verified insertion asks). The phase times are
// the result's. Never fails.
VerificationReport ToVerificationReport(const VerificationRequest& request,
                                        const EvalResult& result,
                                        const DecisionOptions& clocks);

// A skilldb::Verifier over KernelBench tasks: request.task
// "kernelbench/level<L>/<id>" (from `store`), candidate.language "python"
// (or "cuda"/"triton", the declared backend) with the answer as source;
// its reports are ToVerificationReport's. Tasks not of that form go to
// `fallback` (the C ABI verifier), if given.
std::unique_ptr<Verifier> MakeKernelBenchVerifier(
    std::shared_ptr<Evaluator> evaluator, TaskStore store,
    std::shared_ptr<Verifier> fallback = nullptr);

}  // namespace skilldb::verify::kb

#endif  // SKILLDB_VERIFY_KERNELBENCH_H_
