// Building answers ahead of the device: a pool of build runners and the
// content-addressed cache they fill.
//
// Cache layout (under EvalOptions::cache_dir):
//   builds/<answer key>.json   the outcome of building one answer
//   ext/<extension key>/       one load_inline call's build (its .so)
//   triton/<answer key>/       Triton's cache after the answer's first call
// An answer key hashes the answer, the problem (the answer runs in its
// globals) and everything that changes a build; an extension key hashes one
// load_inline call's arguments (kb_load.py), so answers that share an
// extension build it once.
//
// Thread-safe.
#ifndef SKILLDB_VERIFY_KERNELBENCH_BUILD_H_
#define SKILLDB_VERIFY_KERNELBENCH_BUILD_H_

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "kb_internal.h"

namespace skilldb::verify::kb::internal {

struct BuildRecord {
  bool ok = false;
  // "" when ok; "compile" (the module raised: KernelBench's compiled =
  // False), "problem", or a runner failure ("timeout", "crashed",
  // "sandbox_violation", "resource_limit", "system").
  std::string kind;
  std::string message;  // the compiler's output or the exception, bounded
  std::vector<std::string> extensions;  // extension keys
  bool triton = false;   // a Triton cache exists for the answer
  bool light_include = false;  // some .cu built without torch/extension.h
  std::string pch;             // "offered", "made in N s", an error, or ""
  // Per extension with CUDA sources, how they were built: "NAME: split: N
  // kernel(s), ...", "NAME: not split: why", "NAME: split, did not build:
  // ..." (then built whole); "" without CUDA sources.
  std::string split;
  // Per extension built or loaded, how its functions are called: "generic
  // caller (N s)" (thunks, kb_caller.py) or "pybind11: why not"; "" when
  // none says.
  std::string binding;
  // The generic caller, where this build was asked for it: "made in N s",
  // "present", "not made: why"; "" otherwise.
  std::string caller;
  // TORCH_CUDA_ARCH_LIST the build ran with (the device's capability; ""
  // on the CPU): part of each extension's key, so the run step is told it.
  std::string arch;
  double seconds = 0;    // the build's own wall time
  // The build runner's requests (its start, its start-up, "build"), with
  // their CPU time, the compilers' included (children the runner waited
  // for); the session adds them as "build.<op>". Not kept in the cache.
  std::map<std::string, OpTime> ops;
  bool cached = false;   // read from the cache, not built now
  std::string key;       // the answer key
  // When a build made now was queued, started and finished (the sessions'
  // spans "build_queue" and "build"); unset (epoch) for a cached one.
  util::SteadyClock::time_point queued, started, finished;
};

class Builder {
 public:
  // `describe` gives the device (its capability is TORCH_CUDA_ARCH_LIST
  // for CPU-side CUDA builds, its torch version names the precompiled
  // header); `gate` is held shared around builds that need the device
  // (Triton's start-up and first call), so they never overlap an answer's
  // timing, and are checked beside other answers as a session's trials
  // are (before, they also waited for their own evaluator's whole
  // evaluation: 61-69 s on the H100 for Triton answers).
  Builder(RunnerOptions runner, EvalOptions options, std::string cache_root,
          std::function<Result<DeviceInfo>()> describe, DeviceGate* gate);
  ~Builder();

  // The cache key of an answer's build: the answer, its problem, the
  // options that change a build, the toolchain and `arch`, the device's
  // capability its CUDA code is built for (a build, or a compile error,
  // cached on one GPU model says nothing about another sharing the cache),
  // and `runner_code` (RunnerCode: the runner's sources name the
  // extensions a build makes, and the run step finds them by those names).
  static std::string AnswerKey(const Problem& problem, std::string_view answer,
                               const FormatInfo& format,
                               const EvalOptions& options,
                               std::string_view arch,
                               std::string_view runner_code = "");
  // A digest of the runner's sources in `runner_dir` (its .py, .cpp and .h
  // files but the tests, by name and content), read once per directory
  // and process; "" if the directory cannot be read. Until 2026-12-06 a
  // build record outlived a change of them: a cache kept across an upgrade
  // sent the run step to extension names the new runner no longer made,
  // and every repeated answer was judged a compile error.
  static std::string RunnerCode(const std::string& runner_dir);

  // The build of `answer`, started if it is not cached or under way. A
  // session that judges the answer passes `repeat`: true when an earlier
  // session of this builder was given the same build (an answer judged
  // again, as an RL step's samples often are): its build cost that session
  // nothing, and is not counted again.
  std::shared_future<BuildRecord> Submit(const Problem& problem,
                                         std::string_view answer,
                                         const FormatInfo& format,
                                         bool* repeat = nullptr);

  const std::string& cache_root() const { return cache_root_; }

  // Builds queued or under way (what a new one would wait behind).
  int Load();

 private:
  struct Job {
    Problem problem;
    std::string answer;
    FormatInfo format;
    std::string key;
    std::promise<BuildRecord> promise;
    util::SteadyClock::time_point queued = util::SteadyClock::now();
  };
  // torch/extension.h to precompile after an answer's build (Build says).
  struct ExtensionPch {
    RunnerStart start;
    std::string pch_root;
    std::string ext_cache;
  };
  void Work();
  // A C++/CUDA job taken from the queue of another builder of this cache
  // that builds the same way (same_way_), or null: a build
  // thread with nothing of its own to do takes one (on the H100,
  // 2026-12-06, a cold run's last answer waited 32 s behind two long builds
  // on its own builder while the seven others were idle). Triton builds
  // need their builder's device and are never taken.
  std::unique_ptr<Job> Steal();
  // Whether any builder of this cache has a C++/CUDA build queued.
  bool AnyWaiting();
  // Builds `job`, gives its record, then makes what the build said is
  // wanted (torch/extension.h's header).
  void BuildAndGive(Job* job);
  BuildRecord Build(const Job& job, std::optional<ExtensionPch>* later);
  // A runner started as `s`: the spare started so, if there is one, else
  // started now; and, while C++/CUDA answers wait in the queue, a spare
  // started so for the next build.
  Result<std::unique_ptr<Runner>> StartRunner(const RunnerStart& s);
  // Makes a precompiled header (pch_kind "types": torch/types.h, "ext":
  // torch/extension.h, "": none) into pch_root/<pch_kind> and the generic
  // caller (into ext_cache, if it lacks it) in a runner of their own,
  // started as `s`, that runs no answer's code: one that did could change
  // them before they are moved into the cache, for every later build and
  // run. Says how it went in rec->pch and rec->caller.
  void MakeOnce(const RunnerStart& s, const std::string& pch_kind,
                bool make_caller, const std::string& pch_root,
                const std::string& ext_cache, BuildRecord* rec);
  std::optional<BuildRecord> ReadCached(const std::string& key) const;

  RunnerOptions runner_;
  EvalOptions options_;
  std::string cache_root_;
  std::function<Result<DeviceInfo>()> describe_;
  // What a cache gets made once (the precompiled headers, the generic
  // caller): shared by the builders of one process with the same cache
  // root, so the workers of a MultiEvaluator (a builder each) make each
  // once. On the H100 (2026-12-05), 8 workers made the headers twice and
  // the caller four times in one cold start.
  struct MadeOnce {
    std::mutex mu;
    std::condition_variable cv;  // pch_finished changed, or a builder stops
    bool pch_started =
        false;  // GUARDED_BY(mu): one build makes torch/types.h's
    bool pch_finished = false;   // GUARDED_BY(mu): made, or failed to be
    bool caller_asked = false;  // GUARDED_BY(mu): the first C++/CUDA build asks
    bool ext_pch_started = false;  // GUARDED_BY(mu): torch/extension.h's
    // The burst its builders see, for when to make the headers: C++/CUDA
    // answers queued, and extensions compiled, in all of them (per builder,
    // 8 workers of 18 answers never saw two waiting: no header was made on
    // the H100, 2026-12-05).
    int waiting = 0;      // GUARDED_BY(mu)
    std::set<std::string> compiled;  // GUARDED_BY(mu): extension keys
    int threads = 0;  // GUARDED_BY(mu): build threads of its builders
    std::vector<Builder*> builders;  // GUARDED_BY(mu): alive, for Steal
    static std::shared_ptr<MadeOnce> For(const std::string& cache_root);
  };
  std::shared_ptr<MadeOnce> made_;
  std::atomic<bool> stopping_{false};  // stop_, readable under made_->mu
  DeviceGate* gate_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<Job>> queue_;                     // GUARDED_BY(mu_)
  std::map<std::string, std::shared_future<BuildRecord>> known_;  // GUARDED_BY(mu_)
  std::set<std::string> judged_;  // keys given to a session; GUARDED_BY(mu_)
  // Build runners started ahead, one per build thread at most: a runner's
  // start (Python with torch imported, 1.5 s median on the H100 machine,
  // 2026-12-06) beside the build before, off the next build's path. Each
  // with its RunnerStart as text (StartKey): only a build started the same
  // way takes it; one started otherwise (the headers made since) is
  // stopped.
  struct Spare {
    std::string start;
    std::future<Result<std::unique_ptr<Runner>>> runner;
  };
  std::mutex spare_mu_;
  std::vector<Spare> spares_;  // GUARDED_BY(spare_mu_)
  bool stop_ = false;                                          // GUARDED_BY(mu_)
  std::atomic<int> running_{0};  // builds under way on the threads
  // What a build depends on besides the answer (the options that change
  // it, the runners' interpreter, sources, limits, device and environment):
  // builders with the same one may build each other's queued answers (a
  // build under another's options would be cached under this one's key).
  std::string same_way_;
  std::vector<std::thread> threads_;
};

// A key the shim makes for an extension (kb_load.extension_key: 32
// lowercase hex digits). A build reply comes from the process that ran the
// answer: only such keys name directories the builder moves into the
// cache, never "caller-..." or a path that leaves ext/.
bool IsExtensionKey(std::string_view key);

// Whether a failed build is the answer's own compile error, the same every
// time, and so kept in the cache (builds/<key>.json): kind "compile", not an
// OSError (a program or file the machine lacks), and no sign in its text of
// a compiler stopped by the machine (killed, out of memory or disk, an
// internal compiler error): those may be the load of the moment and pass
// next time, and a cached one would fail every later copy of the answer.
bool CacheableCompileError(std::string_view kind, bool os_error,
                           std::string_view text);

// Copies a directory tree (rename when it can). Best effort; false on failure.
bool MoveTree(const std::string& from, const std::string& to);

// Copies into `to` the files of the tree `from` that `to` lacks; a file
// already there is never rewritten (a runner may have it mapped: Triton's
// cuda_utils.so rewritten in place under a loaded copy crashed the runner
// with SIGSEGV). Caches keyed by content hold the same bytes under the same
// name, so skipping is exact. Best effort; false if something could not be
// copied.
bool CopyMissing(const std::string& from, const std::string& to);

}  // namespace skilldb::verify::kb::internal

#endif  // SKILLDB_VERIFY_KERNELBENCH_BUILD_H_
