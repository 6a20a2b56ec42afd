// The evaluator's parts: EvaluatorImpl owns the runners and caches (one
// evaluation on the device at a time); a Session is one evaluation.
// kb_evaluate.cc: shared steps and the correctness comparison;
// kb_protocols.cc: the two protocols; kb_evaluator.cc: EvaluatorImpl.
#ifndef SKILLDB_VERIFY_KERNELBENCH_EVALUATE_H_
#define SKILLDB_VERIFY_KERNELBENCH_EVALUATE_H_

#include <condition_variable>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <shared_mutex>
#include <string>
#include <vector>

#include "kb_build.h"
#include "kb_internal.h"
#include "skilldb/util/clock.h"

namespace skilldb::verify::kb::internal {

// True for findings that void a result (a hack); the others inform.
bool Voids(FindingCode code);

// A warm reference runner: the problem loaded under one protocol. Shared by
// the sessions of every evaluator on its device (ReferencePool): a request
// is whole under `mu`, and a session's trial and call ids carry its own tag
// (Session::Ref), so one session's clear leaves another's outputs alone.
struct RefEntry {
  std::string key;  // problem key + code hash + protocol + precision
  std::unique_ptr<Runner> runner;
  uint64_t init_seed = 42;
  std::mutex mu;  // one request at a time; guards runner's state
};

// The warm reference runners of one device, shared by its evaluators: a
// problem is loaded once however many of them judge its answers at once
// (before, each evaluator loaded its own: seconds of interpreter, CUDA
// context and weights per evaluator and problem). Thread-safe.
class ReferencePool {
 public:
  // `sessions_per_runner`: a problem's runner serves this many sessions at
  // once before a caller loads it again (its requests are one at a time:
  // eight sessions of one problem comparing outputs of hundreds of MB would
  // otherwise queue on one process).
  explicit ReferencePool(size_t capacity, size_t sessions_per_runner = 4)
      : capacity_(capacity < 1 ? 1 : capacity),
        sessions_per_runner_(sessions_per_runner < 1 ? 1
                                                     : sessions_per_runner) {}

  using Loader = std::function<Result<std::shared_ptr<RefEntry>>()>;
  // The live entry of `key` serving the fewest sessions, or the one `load`
  // makes when there is none or each serves sessions_per_runner (callers
  // of one key wait for a load in progress rather than start another; a
  // failed load is the error of its caller and of those that waited for
  // it, and the next caller tries again). Beyond the capacity the least
  // recently used entries no session holds leave the pool (the capacity is
  // exceeded while sessions hold them all).
  Result<std::shared_ptr<RefEntry>> Get(const std::string& key,
                                        const Loader& load);
  // Loads `key` (in the caller's thread) when it has no live entry and no
  // load under way, for a Get soon after; else returns at once. A failed
  // load is what callers waiting for it get, as Get's.
  void Warm(const std::string& key, const Loader& load);
  // Entries kept, and callers waiting for another's load (for tests).
  size_t size();
  size_t waiters();

 private:
  const size_t capacity_;
  const size_t sessions_per_runner_;
  // Get's and Warm's load of `key` (mu_ held by `lock`, let go meanwhile);
  // entries that leave the pool go to `dropped`.
  Result<std::shared_ptr<RefEntry>> Load(
      std::unique_lock<std::mutex>& lock, const std::string& key,
      const Loader& load, std::vector<std::shared_ptr<RefEntry>>* dropped);
  std::mutex mu_;
  std::condition_variable loaded_;
  std::vector<std::shared_ptr<RefEntry>>
      entries_;                    // GUARDED_BY(mu_), newest last
  std::set<std::string> loading_;  // GUARDED_BY(mu_)
  std::map<std::string, uint64_t> attempts_;  // GUARDED_BY(mu_): loads ended
  // The last failed load of a key (its attempt): the callers that waited
  // for it get its error.
  std::map<std::string, std::pair<uint64_t, Status>>
      failures_;                   // GUARDED_BY(mu_)
  size_t waiters_ = 0;             // GUARDED_BY(mu_)
};

// A device's description (its bandwidth and FLOP rate measured alone on
// it, the torch and Triton versions), shared by the evaluators of one
// device: measured once, not once per evaluator (each measurement holds
// the device alone and starts a runner).
struct DeviceDescription {
  std::mutex mu;
  std::optional<DeviceInfo> info;  // GUARDED_BY(mu)
};

class EvaluatorImpl final : public Evaluator {
 public:
  // `references`: the device's pool, shared with the other evaluators on it
  // (null: one of its own).
  EvaluatorImpl(RunnerOptions runner, EvalOptions options,
                std::shared_ptr<ReferencePool> references = nullptr,
                std::shared_ptr<DeviceDescription> described = nullptr);
  ~EvaluatorImpl() override;

  Result<EvalResult> Evaluate(const Problem& problem, std::string_view answer,
                              std::string_view declared_backend) override;
  void Prebuild(const Problem& problem, std::string_view answer,
                std::string_view declared_backend) override;
  // Starts a candidate runner ahead if none is (Prebuild does).
  void StartAhead();
  // `answer`'s build by this evaluator's builder (Builder::Submit, with
  // `repeat`), finished; invalid for a format that is never built.
  std::shared_future<BuildRecord> WaitBuilt(const Problem& problem,
                                            std::string_view answer,
                                            std::string_view declared_backend,
                                            bool* repeat);
  // Evaluate, with the build another evaluator made (WaitBuilt): its
  // record, with what it cost, is this answer's.
  Result<EvalResult> EvaluateBuilt(const Problem& problem,
                                   std::string_view answer,
                                   std::string_view declared_backend,
                                   std::shared_future<BuildRecord> build,
                                   bool repeat);
  Result<DeviceInfo> Describe() override;
  const EvalOptions& options() const override { return options_; }

  // Keeps `held` (the runners' bytecode fill) until this evaluator is gone.
  void HoldWhileAlive(std::shared_ptr<BytecodeFill> held) {
    bytecode_ = std::move(held);
  }
  const RunnerOptions& runner_options() const { return runner_; }
  const std::string& cache_root() const { return cache_root_; }
  uint64_t NextSeed();
  // The problem's reference runner under the options' protocol, from the
  // device's pool, started and loaded if no evaluator has it.
  Result<std::shared_ptr<RefEntry>> Reference(const Problem& problem,
                                              double* load_ms);
  // Loads the problem's reference runner in the background when the pool
  // has none (ReferencePool::Warm): an evaluation calls it before it waits
  // for its build, so that the runner's start and the problem's load are
  // done by the time the candidate is (1.3-5.6 s an answer on the H100,
  // 2026-12-06, where each problem's first answers waited for them).
  void WarmReference(const Problem& problem);
  // A candidate runner (the one started ahead, if it came up), with the
  // answer's Triton cache copied in (REQUIRES: device_mu_ held).
  Result<std::unique_ptr<Runner>> TakeCandidate(const BuildRecord& build);
  // Kills `runner` now and leaves the wait for its end (the teardown of its
  // CUDA context and memory: up to 2 s on the H100) and its scratch's
  // removal to a thread of their own, so that the next evaluation does not
  // wait for them. The destructor waits for every one.
  void Retire(std::unique_ptr<Runner> runner);
  // Cached baselines of a problem on this device and torch.
  std::optional<Baseline> CachedBaseline(const Problem& problem, const std::string& kind);
  void StoreBaseline(const Problem& problem, const Baseline& baseline);
  const std::optional<DeviceInfo>& device() const { return device_; }
  Builder* builder() { return builder_.get(); }
  std::mutex* device_mutex() { return &device_mu_; }
  // The device's timing gate (DeviceGate), shared with every evaluator on
  // the same device.
  DeviceGate* gate() { return gate_.get(); }

 private:
  // A candidate runner, started and initialized (Runner::Start: its device
  // start-up's kernels under the device's shared hold).
  Result<std::unique_ptr<Runner>> StartCandidate();
  std::string ReferenceKey(const Problem& problem) const;
  // Starts and loads `problem`'s reference runner (a copy of it is kept).
  ReferencePool::Loader ReferenceLoader(const Problem& problem);
  std::string BaselinePath(const Problem& problem, const std::string& kind) const;

  RunnerOptions runner_;
  EvalOptions options_;
  std::string cache_root_;
  std::mutex device_mu_;  // one evaluation at a time
  std::shared_ptr<DeviceGate> gate_;
  std::mutex describe_mu_;
  std::mutex seed_mu_;
  std::mt19937_64 seeds_;   // GUARDED_BY(seed_mu_)
  std::optional<DeviceInfo> device_;  // GUARDED_BY(describe_mu_)
  std::shared_ptr<ReferencePool> refs_;
  std::shared_ptr<DeviceDescription> described_;       // the device's, shared
  // The candidate runner started ahead: by the first Prebuild (so the
  // first answer's runner starts while its build runs), then by each
  // TakeCandidate for the next answer.
  std::mutex warm_mu_;
  std::future<Result<std::unique_ptr<Runner>>> warm_;  // GUARDED_BY(warm_mu_)
  std::unique_ptr<Builder> builder_;
  std::shared_ptr<BytecodeFill> bytecode_;  // set once, before any use
  // Work off the evaluations' path (Retire's reaping, WarmReference's
  // loads), waited for by the destructor; finished ones are dropped as
  // new ones come.
  template <typename Fn>
  void Aside(Fn&& fn);
  std::mutex aside_mu_;
  std::vector<std::future<void>> aside_;  // GUARDED_BY(aside_mu_)
};

class Session {
 public:
  // `build`: the answer's build, when another evaluator made it (then
  // `repeat` as its Builder::Submit said); invalid: this one's builder's.
  Session(EvaluatorImpl* ev, const Problem& problem, std::string_view answer,
          FormatInfo format, std::shared_future<BuildRecord> build = {},
          bool repeat = false);

  // Runs the whole evaluation; the result is complete even on failure.
  EvalResult Run();

 private:
  friend class EvaluatorImpl;
  // Steps.
  bool Load(const BuildRecord& build);
  void RunSkilldb();
  void RunKernelBench();
  void StaticCheck();
  bool Correctness(bool skilldb);
  void TimeSkilldb();
  // The reference's outputs' bytes (its trial 0's), and the device memory
  // kept buffers may take (EvalOptions::keep_alive_bytes or its default).
  int64_t OutputBytes() const;
  int64_t KeepAliveBudget() const;
  void Profile();
  void TimeKernelBench();
  void CompileBaseline();
  void Decide();

  // Helpers.
  void Add(FindingCode code, std::string message);
  void AddGuard(const json& reply_header);
  void Fail(const Reply& reply, const std::string& stage);
  // A request to the (shared) reference runner: its "id" and a "clear"
  // carry this session's tag; its time is added to ref_ops_.
  // `reuse`: storage for the reply's blob (Runner::Request).
  Reply Ref(const json& h, std::string_view blob, double* clock,
            double timeout_s = 0, std::string* reuse = nullptr);
  Reply Cand(const json& h, std::string_view blob, double* clock,
             double timeout_s = 0, std::string* reuse = nullptr);
  // `whole_bytes`: outputs up to this size come whole, larger ones on a
  // sample of `sample` elements (and both ends) chosen now. A candidate
  // output not of the reference's shape (`desc`'s) is a finding `wrong`.
  bool Fetch(const std::string& ref_id, const std::string& cand_id, int which,
             const json& desc, int64_t whole_bytes, int64_t sample,
             WireTensor* want, WireTensor* got, std::vector<int64_t>* indices,
             double* ref_ms, double* cand_ms, double* clock, FindingCode wrong);
  // Gives fetched tensors' bytes back for the next fetch's reply (the
  // larger storage of each side is kept).
  void Recycle(WireTensor* want, WireTensor* got);
  bool CompareTrial(const std::string& id, const Reply& rr, const Reply& cr,
                    bool precision_check, bool* close);
  void Clear();
  // Adds the wall time since `t0` to the session's part `name` (reported
  // as ops["part.<name>"]: where an evaluation's wall goes, waits included).
  void Part(const char* name, util::SteadyClock::time_point t0);
  // Part() for a scope: the wall from its construction to its end, early
  // returns included.
  class Timed;

  EvaluatorImpl* ev_;
  std::shared_future<BuildRecord> given_build_;  // see the constructor
  bool given_repeat_ = false;
  const Problem& p_;
  std::string answer_;
  const EvalOptions& o_;
  std::mt19937_64 rng_;
  // The device's gate: each request outside the timed phases holds it
  // shared (so a timed phase that waits gets the device after at most one
  // request of each other answer); a timed phase holds it alone (Alone).
  // On a CPU "device" the checks' own work (the comparisons here) runs on
  // the cores a timed phase measures: there the gate is held shared from
  // the candidate's load to the timed phase, as before 818bdd8 (checking_).
  std::shared_lock<DeviceGate> Shared();
  void Release() {
    if (checking_.owns_lock()) checking_.unlock();
  }
  class Alone;
  bool alone_ = false;  // this session holds the gate alone
  std::shared_lock<DeviceGate> checking_;  // CPU: load to timed phase
  EvalResult res_;
  double tol_ = 1e-4;
  std::shared_ptr<RefEntry> ref_entry_;
  std::string tag_;                        // this session's ids' prefix
  std::map<std::string, OpTime> ref_ops_;  // its requests to the reference
  std::map<std::string, OpTime> parts_;    // Part()'s
  std::unique_ptr<Runner> cand_;
  // Fetched outputs' storage, given back after each comparison (Recycle):
  // each trial's fetch of an output of hundreds of MB reads into memory
  // already mapped.
  std::string spare_ref_, spare_cand_;
  json spec_;                  // the reference's input specs
  json ref_outputs_;           // output descriptors of trial 0
  int64_t input_bytes_ = -1;
  double avg_sum_ = 0;
  int avg_count_ = 0;
  bool correct_trials_ = false;
  // The candidate process's threads (native ones included) after its
  // correctness trials; -1 before.
  int native_threads_ = -1;
};

}  // namespace skilldb::verify::kb::internal

#endif  // SKILLDB_VERIFY_KERNELBENCH_EVALUATE_H_
