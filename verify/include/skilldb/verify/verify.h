// The GPU verifier (and its host twin): the engine's Verifier implemented on
// real execution. Entry point for `skilldb verify` and for `skilldb propose
// --verifier cuda|host`.
//
//   auto v = skilldb::verify::MakeVerifier(
//       skilldb::verify::DefaultOptions(skilldb::verify::Backend::kCuda));
//   if (!v.ok()) ...                      // Unavailable: no GPU, no nvcc
//   skilldb::VerificationRequest req;
//   req.task = "softmax_rows_fp32";
//   req.candidate = *skilldb::verify::ArtifactFromFile("fast.cu");
//   auto report = (*v)->Verify(req);     // OK even when the candidate fails
//
// What a Verify() does, in order: compile the candidate (disk cache;
// compiler errors verbatim in report.compile_log), screen its symbols, load
// it in an isolated worker process, check correctness against the task's
// float64 oracle on several shapes and input distributions plus the GPU
// reference at the timing shape, then time >= 3 rounds of interleaved
// baseline/candidate calls and decide (stats.h). Any crash, hang or sticky
// CUDA error ends in a report with passed == false and a reason; the worker
// is replaced and the verifier carries on.
//
// A Verifier from MakeVerifier is safe for concurrent use: concurrent
// Verify() calls run on different workers (one per GPU, or
// `host_workers`) and queue when all are busy.
#ifndef SKILLDB_VERIFY_VERIFY_H_
#define SKILLDB_VERIFY_VERIFY_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/status.h"
#include "skilldb/verifier.h"
#include "skilldb/verify/finding.h"
#include "skilldb/verify/stats.h"
#include "skilldb/verify/task.h"

namespace skilldb::verify {

// Version of the verification protocol, recorded in every report. Bumped
// whenever checks or timing change in a way that affects verdicts.
inline constexpr char kVerifierVersion[] = "skilldb-verify/1";

struct VerifierLimits {
  double compile_timeout_s = 120;  // per compile. Default: 120 s.
  // Address space of each compiler process (CompilerOptions::memory_bytes).
  // Default: 8 GiB.
  int64_t compile_memory_bytes = int64_t{8} << 30;
  // One candidate call, including the device-wide synchronize; a hang is
  // killed after this. Default: 20 s.
  double call_timeout_s = 20;
  // Host worker address space (RLIMIT_AS). Default: 4 GiB.
  int64_t host_memory_bytes = int64_t{4} << 30;
  // Device memory a CUDA candidate may cudaMalloc. Default: 16 GiB.
  int64_t gpu_memory_bytes = int64_t{16} << 30;
  // Bytes a worker may write to its log (candidate printf etc.);
  // exceeding it kills the worker (RLIMIT_FSIZE). Default: 64 MiB.
  int64_t output_bytes = int64_t{64} << 20;
  int64_t cpu_seconds = 3600;          // host worker CPU. Default: 1 h.
  int64_t max_source_bytes = 1 << 20;  // Default: 1 MiB.
  // Recycle a worker after this many verifications. Default: 64.
  int verifications_per_worker = 64;
};

// Host worker processes a verifier starts at most (each is a process with
// its own scratch directory): a larger VerifierOptions::host_workers is
// InvalidArgument, never an attempt to start that many.
inline constexpr int kMaxHostWorkers = 256;

struct VerifierOptions {
  Backend backend = Backend::kHost;
  // Empty paths mean the defaults from DefaultOptions().
  std::string task_dir;      // verify/tasks
  std::string protocol_dir;  // verify/protocol (skilldb_candidate.h)
  std::string worker_path;   // the built worker executable for `backend`
  std::string cache_dir;     // compile cache
  std::string scratch_root;  // parent of the workers' scratch directories
  std::string nvcc_path = "/usr/local/cuda/bin/nvcc";
  std::string cxx_path = "g++";
  // GPU ordinals to run workers on, one worker each. Empty: every GPU the
  // first worker sees.
  std::vector<int> devices;
  // The NVIDIA driver library the cuda backend needs; without it the
  // verifier refuses to start (FailedPrecondition naming --backend host)
  // instead of failing inside its worker. Default: "libcuda.so.1".
  std::string cuda_driver = "libcuda.so.1";
  // Worker processes for the host backend, in [1, kMaxHostWorkers].
  // Default: 1.
  int host_workers = 1;
  VerifierLimits limits;
  DecisionOptions decision;  // tau, rounds, confidence, clock checks
  // Calls below this per round are refused (InvalidArgument). Default: 30.
  int min_timed_calls_per_round = 30;
  int warmup_calls = 5;       // untimed calls per side per round. Default: 5.
  int rotate_buffers = 3;     // input/output sets per side. Default: 3.
  int spot_checks_per_round = 3;  // timed calls re-checked. Default: 3.
  // Correctness trials at the timing shape against the device reference
  // (the host oracle covers the check shapes). Default: 2.
  int timing_shape_trials = 2;
  // The device reference itself agrees with the oracle only to its own
  // tolerance, so device-vs-device comparisons allow this multiple of the
  // task tolerance. Default: 2.
  double device_tolerance_factor = 2.0;
  bool static_screen = true;  // ELF import/export screen. Default: true.
  bool sandbox = true;        // worker sandboxes. Default: true.
  // Compilers in namespaces (CompilerOptions::confine). Default: true.
  bool confine_compiler = true;
  bool use_cupti = true;      // CUPTI kernel counting (GPU). Default: true.
  // Bytes the host worker writes to flush its caches before each timed
  // call; 0 = twice the last-level cache, at most 64 MiB (a server's shared
  // cache is far larger than a slice of it fills). Default: 0.
  int64_t host_flush_bytes = 0;
  // Multiplies the roofline floor's peak rates (> 1 loosens the bound).
  // Default: 1.0 (peaks are already max(measured, datasheet)).
  double roofline_peak_factor = 1.0;
};

// Defaults for `backend`: paths of this build (source tree tasks and
// protocol, built workers), cache in $SKILLDB_VERIFY_CACHE or
// $XDG_CACHE_HOME/skilldb/verify or ~/.cache/skilldb/verify, scratch in
// $TMPDIR or /tmp. A relocated build is pointed at its files with
// $SKILLDB_VERIFY_SOURCE_DIR (the verify/ directory) and
// $SKILLDB_VERIFY_CUDA_WORKER / $SKILLDB_VERIFY_HOST_WORKER.
VerifierOptions DefaultOptions(Backend backend);

// The device a verifier runs on, with the measured ceilings that bound
// plausible speedups.
struct DeviceDescription {
  std::string name;          // "NVIDIA H200"
  std::string device_class;  // "sm_90" | "host"
  int devices = 1;           // workers (GPUs or host workers)
  int64_t cache_bytes = 0;   // L2 / LLC (the flush buffer is twice this)
  double bandwidth_bytes_per_s = 0;  // measured copy bandwidth
  double fp32_flops_per_s = 0;       // measured FMA rate
  std::string notes;         // sandbox layers, CUPTI state
};

// Time spent per phase of one verification (the API's; also in
// report.times).
using PhaseTimes = VerificationTimes;

// The full outcome: the engine's report plus coded findings (their code
// names also in report.findings).
struct DetailedReport {
  VerificationReport report;      // reasons are FormatFinding(findings[i])
  std::vector<Finding> findings;  // empty iff report.passed
  PhaseTimes times;
  std::optional<double> roofline_floor_ms;  // fastest possible at timing dims
};

// A Verifier over a task library. Verify() (from skilldb::Verifier) is
// VerifyDetailed() without the extras.
class TaskVerifier : public Verifier {
 public:
  // Verifies `request` and returns everything found. Errors as
  // Verifier::Verify: InvalidArgument (unknown task, wrong language for the
  // backend, bad counts, oversized source), Unavailable (no device, no
  // compiler, device_class mismatch), DeadlineExceeded; never an error for
  // a bad candidate.
  virtual Result<DetailedReport> VerifyDetailed(
      const VerificationRequest& request) = 0;

  // Starts a worker if needed and describes the device (measuring the
  // ceilings once). Unavailable if no worker can run.
  virtual Result<DeviceDescription> Describe() = 0;

  virtual const VerifierOptions& options() const = 0;

  // Describe()'s device class.
  Result<std::string> DeviceClass() override {
    SKILLDB_ASSIGN_OR_RETURN(DeviceDescription d, Describe());
    return d.device_class;
  }
  int64_t MaxSourceBytes() const override {
    return options().limits.max_source_bytes;
  }
};

// Builds a verifier. Fails fast: InvalidArgument for inconsistent options,
// NotFound for a missing task dir or worker, Unavailable when the backend
// cannot run here (for kCuda: no device; the probe starts one worker).
Result<std::unique_ptr<TaskVerifier>> MakeVerifier(
    const VerifierOptions& options);

// Reads a candidate file: language from the extension (.cu -> "cuda",
// .cc/.cpp/.cxx -> "cpp"), name = the path. NotFound / InvalidArgument.
Result<Artifact> ArtifactFromFile(const std::string& path);

// A few human-readable lines: verdict, speedup with CI, per-round ratios,
// correctness errors, reasons.
std::string FormatReportText(const VerificationReport& report);

}  // namespace skilldb::verify

#endif  // SKILLDB_VERIFY_VERIFY_H_
