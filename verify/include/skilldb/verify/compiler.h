// Compiling candidates into shared objects, with an on-disk cache.
//
// CUDA candidates are compiled by nvcc (-O3, sm_90a, shared cudart) and host
// candidates by the C++ compiler (-O3), both with the protocol header
// force-included. A compile is keyed by the SHA-256 of the compiler's
// version banner, the flags, the protocol header and the source; a repeated
// key is answered from the cache directory without running the compiler.
// Compiler errors come back verbatim: they are the policy agent's feedback.
// Only a real diagnosis (the compiler exited with a status of its own, its
// output complete) is cached as a failure; a compile stopped by a limit, a
// signal or the machine is retried next time (CompileFailure::kLimit).
//
// Why nvcc and not NVRTC for candidates: the protocol's launch() is host
// code, which NVRTC cannot compile. Measured on the build machine for a
// one-kernel candidate, nvcc spends ~0.9 s of its ~1.4 s in host-side
// phases (cudafe++, host g++, link) and ~0.45 s in the device phases
// (cicc + ptxas) that NVRTC would replace, so an NVRTC path would still need
// a host compile and would save at most a third, while changing the error
// text the policy agent learns from. The common case that repeats in an RL
// loop (identical samples, re-verification, the reference itself) is served
// by the cache in milliseconds instead. See verify/PROTOCOL.md.
//
// A Compiler is safe for concurrent use: concurrent compiles of the same key
// may both run the compiler, and the cache entry is replaced atomically.
#ifndef SKILLDB_VERIFY_COMPILER_H_
#define SKILLDB_VERIFY_COMPILER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/status.h"
#include "skilldb/verify/task.h"

namespace skilldb::verify {

struct CompilerOptions {
  std::string nvcc_path = "/usr/local/cuda/bin/nvcc";  // Default: CUDA 13.
  std::string cxx_path = "g++";  // host compiler (PATH searched)
  // REQUIRED: where compiled objects and logs are kept (created if absent).
  std::string cache_dir;
  // REQUIRED: the directory holding skilldb_candidate.h.
  std::string protocol_dir;
  // Code generation target for CUDA. Default: sm_90a (Hopper, H100/H200),
  // which also admits wgmma/setmaxnreg.
  std::string cuda_gencode = "-gencode=arch=compute_90a,code=sm_90a";
  std::vector<std::string> extra_nvcc_flags;  // appended; part of the key
  std::vector<std::string> extra_cxx_flags;   // appended; part of the key
  double timeout_s = 120;  // per compile, wall clock. Default: 120.
  // Address space of each compiler process (RLIMIT_AS): an endless
  // preprocessing (an #include of a device file, a macro bomb) ends in an
  // "out of memory" limit failure instead of eating the machine. nvcc's
  // cicc and ptxas reserve far more than they touch, but a one-kernel
  // candidate compiles under 2 GiB; heavy template code (CUTLASS/CuTe)
  // needs a few GiB. 0 = none. Default: 8 GiB.
  int64_t memory_bytes = int64_t{8} << 30;
  // CPU seconds of each compiler process (RLIMIT_CPU). 0: the timeout,
  // rounded up. Default: 0.
  int64_t cpu_seconds = 0;
  // Largest file a compiler process may write (RLIMIT_FSIZE).
  // Default: 512 MiB.
  int64_t file_size_bytes = int64_t{512} << 20;
  // Run the compilers confined (src/subprocess.h): new mount, network and
  // PID namespaces whose file system is the toolchain (/usr, /lib*, the
  // CUDA toolkit), the protocol header and the build directory only, no
  // capabilities. If the probe in Make() finds that the machine does not
  // allow it, compiles run unconfined and confinement() says why.
  // Default: true.
  bool confine = true;
  int64_t max_source_bytes = 1 << 20;  // Default: 1 MiB.
  int64_t max_log_bytes = 64 << 10;    // kept compiler output. Default: 64 KiB.
};

// Why a compile produced no object.
enum class CompileFailure {
  kNone,       // it compiled
  kDiagnosis,  // the compiler rejected the source (it exited with a
               // status of its own): determined by the source, cached
  kLimit,      // stopped by a limit, a signal or the machine (time, memory,
               // CPU, file size, output size, a killed compiler process):
               // says nothing about the source, never cached
};

struct CompileOutput {
  bool ok = false;           // false: see failure and log
  std::string library_path;  // the .so, valid while the cache entry lives
  std::string log;           // compiler output, verbatim (maybe truncated)
  std::string key;           // the cache key (hex SHA-256)
  bool cache_hit = false;
  double wall_ms = 0;  // time spent in this call
  CompileFailure failure = CompileFailure::kNone;
  // For kLimit, the limit that stopped it: "time", "memory", "cpu",
  // "file size", "output", "signal".
  std::string limit;
};

class Compiler {
 public:
  // Probes both compilers' version banners (a missing compiler is allowed;
  // compiling with it then yields Unavailable). InvalidArgument if a
  // required option is empty; IOError if the cache cannot be created.
  static Result<std::unique_ptr<Compiler>> Make(const CompilerOptions& options);

  // Compiles `source`. A compile error or timeout is OK with ok == false and
  // the verbatim log; InvalidArgument for an oversized source; Unavailable
  // when the compiler cannot be run; IOError for cache failures.
  Result<CompileOutput> Compile(std::string_view source,
                                SourceLanguage language);

  // The cache key Compile would use (hex SHA-256).
  std::string CacheKey(std::string_view source, SourceLanguage language) const;

  // The full command line used for `language` (without input/output).
  std::vector<std::string> Flags(SourceLanguage language) const;

  const CompilerOptions& options() const { return options_; }

  // Whether compiles run confined, and a short description for reports:
  // "compiler: mntns netns pidns no-caps rlimits(as,cpu,fsize)" or
  // "compiler: unconfined (unshare (namespaces): Operation not permitted)
  // rlimits(as,cpu,fsize)".
  bool confined() const { return confined_; }
  const std::string& confinement() const { return confinement_; }

 private:
  explicit Compiler(const CompilerOptions& options) : options_(options) {}

  CompilerOptions options_;
  bool confined_ = false;
  std::string confinement_;
  std::vector<std::string> visible_;  // what a confined compiler sees
  std::string nvcc_banner_;
  std::string cxx_banner_;
  std::string protocol_header_;
};

}  // namespace skilldb::verify

#endif  // SKILLDB_VERIFY_COMPILER_H_
