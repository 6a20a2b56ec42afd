// EvaluatorImpl: runners kept warm, the build pool, the baseline cache.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <mutex>
#include <unordered_map>

#include "file_util.h"
#include "kb_evaluate.h"
#include "skilldb/util/clock.h"

namespace skilldb::verify::kb {
namespace internal {
namespace {

namespace fs = std::filesystem;
using verify::internal::JoinPath;

// Reference runners kept warm per evaluator (a device's pool keeps this
// many for each evaluator that shares it).
constexpr size_t kWarmReferences = 2;


std::string Safe(std::string s) {
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '_';
  }
  return s.empty() ? "unknown" : s;
}

}  // namespace

std::string CacheRoot(const EvalOptions& o) {
  if (!o.cache_dir.empty()) return o.cache_dir;
  if (std::string v = Env("SKILLDB_KB_CACHE"); !v.empty()) return v;
  if (std::string v = Env("XDG_CACHE_HOME"); !v.empty()) {
    return JoinPath(v, "skilldb/kernelbench");
  }
  if (std::string v = Env("HOME"); !v.empty()) {
    return JoinPath(v, ".cache/skilldb/kernelbench");
  }
  return "/tmp/skilldb-kernelbench-cache";
}

// The GPU a worker's runners see: the i-th of the caller's
// CUDA_VISIBLE_DEVICES when it names them, else GPU i.
std::string VisibleDevice(int i) {
  const char* v = std::getenv("CUDA_VISIBLE_DEVICES");
  if (v == nullptr || *v == '\0') return std::to_string(i);
  std::vector<std::string> ids;
  std::string cur;
  for (const char* c = v;; ++c) {
    if (*c == ',' || *c == '\0') {
      ids.push_back(cur);
      cur.clear();
      if (*c == '\0') break;
    } else {
      cur += *c;
    }
  }
  return i < static_cast<int>(ids.size()) ? ids[static_cast<size_t>(i)] : std::to_string(i);
}

// The device a runner of `r` sees: "cpu", or "cuda:" and the GPU's id as
// CUDA_VISIBLE_DEVICES names it (the runner's own setting, else the
// caller's first, else 0).
std::string GateKey(const RunnerOptions& r) {
  if (r.device == "cpu") return "cpu";
  const std::string var = "CUDA_VISIBLE_DEVICES=";
  std::string id;
  for (const std::string& e : r.extra_env) {
    if (e.rfind(var, 0) == 0) id = e.substr(var.size());
  }
  return "cuda:" + (id.empty() ? VisibleDevice(0) : id);
}

Result<std::shared_ptr<RefEntry>> ReferencePool::Get(const std::string& key,
                                                     const Loader& load) {
  // Entries that leave the pool stop their runners (a kill, a scratch
  // removed) after the lock is released: declared before it.
  std::vector<std::shared_ptr<RefEntry>> dropped;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    // The key's live runner with the fewest sessions; dead ones leave.
    size_t best = entries_.size();
    long best_users = 0;
    for (size_t i = 0; i < entries_.size();) {
      const std::shared_ptr<RefEntry>& e = entries_[i];
      if (e->key != key) {
        ++i;
        continue;
      }
      // A runner in a request is alive as far as this caller can tell (its
      // state is read under its mutex only).
      std::unique_lock<std::mutex> busy(e->mu, std::try_to_lock);
      if (busy.owns_lock() && e->runner && !e->runner->alive()) {
        busy.unlock();
        dropped.push_back(std::move(entries_[i]));
        entries_.erase(entries_.begin() + static_cast<long>(i));
        continue;
      }
      const long users = e.use_count() - 1;  // the sessions holding it
      if (best == entries_.size() || users < best_users) {
        best = i;
        best_users = users;
      }
      ++i;
    }
    const bool loading = loading_.count(key) > 0;
    if (best < entries_.size() &&
        (best_users < static_cast<long>(sessions_per_runner_) || loading)) {
      std::shared_ptr<RefEntry> e = entries_[best];
      entries_.erase(entries_.begin() + static_cast<long>(best));
      entries_.push_back(e);
      return e;
    }
    if (!loading)
      return Load(lock, key, load, &dropped);  // none, or each serves its share
    // The load under way: if it fails, its error is this caller's too
    // (each waiter trying again in turn would cost a load's time each).
    const uint64_t attempt = attempts_[key];
    ++waiters_;
    loaded_.wait(lock, [&] {
      return !loading_.count(key) || attempts_[key] != attempt;
    });
    --waiters_;
    if (auto f = failures_.find(key);
        f != failures_.end() && f->second.first == attempt) {
      return f->second.second;
    }
  }
}

void ReferencePool::Warm(const std::string& key, const Loader& load) {
  std::vector<std::shared_ptr<RefEntry>> dropped;  // stopped after the lock
  std::unique_lock<std::mutex> lock(mu_);
  if (loading_.count(key)) return;
  for (const std::shared_ptr<RefEntry>& e : entries_) {
    if (e->key != key) continue;
    std::unique_lock<std::mutex> busy(e->mu, std::try_to_lock);
    if (!busy.owns_lock() || !e->runner || e->runner->alive()) return;
  }
  // Its failure is the waiting callers' (as Get's); none waits for it here.
  (void)Load(lock, key, load, &dropped);
}

Result<std::shared_ptr<RefEntry>> ReferencePool::Load(
    std::unique_lock<std::mutex>& lock, const std::string& key,
    const Loader& load, std::vector<std::shared_ptr<RefEntry>>* dropped) {
  loading_.insert(key);
  const uint64_t attempt = attempts_[key];
  lock.unlock();
  // A loader that throws (a thread the system refuses) is a failed load:
  // the key must not stay "loading", with its callers waiting for ever.
  Result<std::shared_ptr<RefEntry>> made =
      [&]() -> Result<std::shared_ptr<RefEntry>> {
    try {
      return load();
    } catch (const std::exception& ex) {
      return Status::Internal(std::string("the reference did not load: ") +
                              ex.what());
    }
  }();
  lock.lock();
  loading_.erase(key);
  ++attempts_[key];
  if (made.ok()) {
    failures_.erase(key);
    entries_.push_back(*made);
    // Beyond the capacity the least recently used entry no session holds
    // leaves (one in use would live on beside a second runner of its key).
    for (size_t i = 0; entries_.size() > capacity_ && i < entries_.size();) {
      if (entries_[i].use_count() > 1 || entries_[i] == *made) {
        ++i;
        continue;
      }
      dropped->push_back(std::move(entries_[i]));
      entries_.erase(entries_.begin() + static_cast<long>(i));
    }
  } else {
    failures_[key] = {attempt, made.status()};
  }
  loaded_.notify_all();
  return made;
}

size_t ReferencePool::size() {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

size_t ReferencePool::waiters() {
  std::lock_guard<std::mutex> lock(mu_);
  return waiters_;
}

EvaluatorImpl::EvaluatorImpl(RunnerOptions runner, EvalOptions options,
                             std::shared_ptr<ReferencePool> references,
                             std::shared_ptr<DeviceDescription> described)
    : runner_(std::move(runner)),
      options_(std::move(options)),
      cache_root_(CacheRoot(options_)),
      seeds_(options_.seed != 0
                 ? options_.seed
                 : std::random_device{}() ^
                       (static_cast<uint64_t>(::getpid()) << 32) ^
                       static_cast<uint64_t>(util::NowUnixMs())),
      refs_(references ? std::move(references)
                       : std::make_shared<ReferencePool>(kWarmReferences)),
      described_(described ? std::move(described)
                           : std::make_shared<DeviceDescription>()) {
  gate_ = DeviceGate::For(GateKey(runner_));
  builder_ = std::make_unique<Builder>(
      runner_, options_, cache_root_, [this] { return Describe(); },
      gate_.get());
}

EvaluatorImpl::~EvaluatorImpl() {
  {
    std::lock_guard<std::mutex> lock(aside_mu_);
    for (auto& f : aside_) f.wait();
  }
  builder_.reset();  // joins the build threads first
  std::lock_guard<std::mutex> lock(device_mu_);
  std::lock_guard<std::mutex> warm(warm_mu_);
  if (warm_.valid()) {
    auto w = warm_.get();
    if (w.ok()) (*w)->Stop();
  }
}

template <typename Fn>
void EvaluatorImpl::Aside(Fn&& fn) {
  std::lock_guard<std::mutex> lock(aside_mu_);
  std::erase_if(aside_, [](const std::future<void>& f) {
    return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  });
  aside_.push_back(std::async(std::launch::async, std::forward<Fn>(fn)));
}

void EvaluatorImpl::Retire(std::unique_ptr<Runner> runner) {
  if (!runner) return;
  runner->Signal();
  Aside([r = std::move(runner)] { r->Stop(); });
}

uint64_t EvaluatorImpl::NextSeed() {
  std::lock_guard<std::mutex> lock(seed_mu_);
  return seeds_();
}

Result<DeviceInfo> EvaluatorImpl::Describe() {
  std::lock_guard<std::mutex> lock(describe_mu_);
  if (device_) return *device_;
  // Another evaluator of this device measured it, or measures it now.
  std::lock_guard<std::mutex> shared(described_->mu);
  if (described_->info) {
    device_ = described_->info;
    return *device_;
  }
  RunnerStart s;
  s.role = "reference";
  s.device = runner_.device;
  // A measurement of the device (bandwidth, FLOP rate): alone on it.
  std::unique_lock<DeviceGate> alone(*gate_);
  SKILLDB_ASSIGN_OR_RETURN(std::unique_ptr<Runner> r, Runner::Start(runner_, s));
  Reply d = r->Request({{"op", "describe"}}, "", 300);
  if (!d.answered_ok()) {
    return Status::Unavailable("the device could not be described: " + d.error_text());
  }
  DeviceInfo info;
  info.name = d.header.value("name", "host");
  info.capability = d.header.value("capability", "");
  info.torch_version = d.header.value("torch", "");
  info.triton_version =
      r->hello().contains("triton") && r->hello()["triton"].is_string()
          ? r->hello()["triton"].get<std::string>()
          : "";
  info.bandwidth_bytes_per_s = d.header.value("bandwidth_bytes_per_s", 0.0);
  info.fp32_flops_per_s = d.header.value("fp32_flops_per_s", 0.0);
  info.isolation = r->hello().value("isolation", "");
  r->Stop();
  device_ = info;
  described_->info = info;
  return info;
}

std::string EvaluatorImpl::ReferenceKey(const Problem& p) const {
  return p.key() + "#" + p.code_hash + "#" +
         std::string(ProtocolName(options_.protocol)) + "#" +
         options_.precision;
}

Result<std::shared_ptr<RefEntry>> EvaluatorImpl::Reference(const Problem& p,
                                                           double* load_ms) {
  const auto t0 = util::SteadyClock::now();
  auto entry = refs_->Get(ReferenceKey(p), ReferenceLoader(p));
  if (load_ms) *load_ms += util::MsSince(t0);
  return entry;
}

void EvaluatorImpl::WarmReference(const Problem& p) {
  Aside([this, key = ReferenceKey(p), load = ReferenceLoader(p)] {
    refs_->Warm(key, load);
  });
}

ReferencePool::Loader EvaluatorImpl::ReferenceLoader(const Problem& problem) {
  return [this, p = problem,
          key = ReferenceKey(problem)]() -> Result<std::shared_ptr<RefEntry>> {
    RunnerStart s;
    s.role = "reference";
    s.device = runner_.device;
    for (const std::string& root :
         {options_.static_checker_root, p.kernelbench_root}) {
      if (!root.empty())
        s.extra_visible.push_back(JoinPath(root, "src/kernelbench"));
    }
    s.gate = gate_.get();
    SKILLDB_ASSIGN_OR_RETURN(std::unique_ptr<Runner> r,
                             Runner::Start(runner_, s));
    // The problem's constructor runs kernels (its weights' init).
    std::shared_lock<DeviceGate> device(*gate_);
    auto e = std::make_shared<RefEntry>();
    e->key = key;
    e->init_seed =
        options_.protocol == Protocol::kKernelBench ? 42 : (NextSeed() >> 33);
    Reply l =
        r->Request({{"op", "load"},
                    {"problem", p.source},
                    {"protocol", std::string(ProtocolName(options_.protocol))},
                    {"precision", options_.precision},
                    {"init_seed", e->init_seed}},
                   "", options_.load_timeout_s);
    if (!l.answered_ok()) {
      return Status::FailedPrecondition("the problem " + p.key() +
                                        " did not load: " + l.error_text());
    }
    e->runner = std::move(r);
    return e;
  };
}

// A candidate runner, started and initialized outside any timed phase: its
// interpreter, imports and CUDA context hold nothing on a GPU, its first
// kernels and profiler warm-up the device shared (Runner::Start).
Result<std::unique_ptr<Runner>> EvaluatorImpl::StartCandidate() {
  RunnerStart s;
  s.role = "candidate";
  s.device = runner_.device;
  s.run_sandbox = runner_.confine;
  s.gate = gate_.get();
  s.warm_profiler = true;
  const std::string ext = JoinPath(cache_root_, "ext");
  SKILLDB_RETURN_IF_ERROR(verify::internal::MakeDirs(ext));
  s.extra_visible = {ext};
  return Runner::Start(runner_, s);
}

Result<std::unique_ptr<Runner>> EvaluatorImpl::TakeCandidate(const BuildRecord& build) {
  std::unique_ptr<Runner> r;
  std::future<Result<std::unique_ptr<Runner>>> ahead;
  {
    std::lock_guard<std::mutex> lock(warm_mu_);
    ahead = std::move(warm_);
    // The next evaluation's runner starts and initializes while this one
    // is judged: its interpreter, imports and context at once, its first
    // kernels between timed phases (Runner::Start).
    warm_ = std::async(std::launch::async, [this] { return StartCandidate(); });
  }
  if (ahead.valid()) {
    auto w = ahead.get();
    if (w.ok() && (*w)->alive()) r = std::move(*w);
  }
  if (!r) {
    SKILLDB_ASSIGN_OR_RETURN(r, StartCandidate());
  }
  if (build.triton) {
    // The build's kernels and launchers; what the runner made itself at
    // init (cuda_utils.so, loaded) stays as it is.
    CopyMissing(JoinPath(JoinPath(cache_root_, "triton"), build.key),
                JoinPath(r->scratch(), "triton"));
  }
  return r;
}

std::string EvaluatorImpl::BaselinePath(const Problem& p, const std::string& kind) const {
  const std::string dev = device_ ? device_->name : "unknown";
  const std::string torch = device_ ? device_->torch_version : "unknown";
  return JoinPath(
      JoinPath(JoinPath(JoinPath(cache_root_, "baselines"), Safe(dev)), Safe(torch)),
      Safe(std::string(ProtocolName(options_.protocol)) + "-" + options_.precision + "-" +
           std::to_string(options_.kb_perf_trials) + "-" + std::to_string(options_.calls_per_round)) +
          "/level" + std::to_string(p.level) + "_" + std::to_string(p.id) + "_" +
          Safe(p.code_hash) + "_" + kind + ".json");
}

std::optional<Baseline> EvaluatorImpl::CachedBaseline(const Problem& p,
                                                      const std::string& kind) {
  auto text = verify::internal::ReadFile(BaselinePath(p, kind), 1 << 20);
  if (!text.ok()) return std::nullopt;
  json j = json::parse(*text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  Baseline b;
  b.kind = j.value("kind", kind);
  b.median_ms = j.value("median_ms", 0.0);
  b.mean_ms = j.value("mean_ms", 0.0);
  b.calls = j.value("calls", 0);
  b.unavailable = j.value("unavailable", "");
  b.cached = true;
  return b;
}

void EvaluatorImpl::StoreBaseline(const Problem& p, const Baseline& b) {
  const std::string path = BaselinePath(p, b.kind);
  if (!verify::internal::MakeDirs(fs::path(path).parent_path().string()).ok()) return;
  const json j = {{"kind", b.kind},       {"median_ms", b.median_ms}, {"mean_ms", b.mean_ms},
                  {"calls", b.calls},     {"unavailable", b.unavailable},
                  {"device", device_ ? device_->name : ""},
                  {"torch", device_ ? device_->torch_version : ""},
                  {"problem", p.key()},   {"code_hash", p.code_hash}};
  if (!verify::internal::WriteFileAtomic(path, j.dump(1)).ok()) return;
}

void EvaluatorImpl::Prebuild(const Problem& problem, std::string_view answer,
                             std::string_view declared) {
  const FormatInfo f = DetectFormat(answer, declared);
  if (!f.supported) return;
  builder_->Submit(problem, answer, f);
  StartAhead();
}

void EvaluatorImpl::StartAhead() {
  std::lock_guard<std::mutex> lock(warm_mu_);
  if (!warm_.valid()) {
    warm_ = std::async(std::launch::async, [this] { return StartCandidate(); });
  }
}

std::shared_future<BuildRecord> EvaluatorImpl::WaitBuilt(
    const Problem& problem, std::string_view answer, std::string_view declared,
    bool* repeat) {
  const FormatInfo f = DetectFormat(answer, declared);
  if (!f.supported) return {};
  auto built = builder_->Submit(problem, answer, f, repeat);
  built.wait();
  return built;
}

Result<EvalResult> EvaluatorImpl::Evaluate(const Problem& problem, std::string_view answer,
                                           std::string_view declared) {
  const auto t0 = util::SteadyClock::now();
  auto r = EvaluateBuilt(problem, answer, declared, {}, false);
  if (r.ok()) AddSpan(&r->times, "answer", t0, util::SteadyClock::now());
  return r;
}

Result<EvalResult> EvaluatorImpl::EvaluateBuilt(
    const Problem& problem, std::string_view answer, std::string_view declared,
    std::shared_future<BuildRecord> build, bool repeat) {
  SKILLDB_RETURN_IF_ERROR(Describe().status());
  Session s(this, problem, answer, DetectFormat(answer, declared),
            std::move(build), repeat);
  return s.Run();
}

// Several evaluators (on one device or several): an answer goes to the
// least busy one (its prebuild's, when that one is as free, so the build it
// started is the one it waits for).
class MultiEvaluator final : public Evaluator {
 public:
  explicit MultiEvaluator(std::vector<std::unique_ptr<EvaluatorImpl>> devices)
      : devices_(std::move(devices)), busy_(devices_.size(), 0) {}

  Result<EvalResult> Evaluate(const Problem& problem, std::string_view answer,
                              std::string_view declared) override {
    const auto t0 = util::SteadyClock::now();
    // The build its prebuild started, finished first: another evaluator
    // then loads it from the shared cache instead of compiling it again,
    // and its record (what it cost) is this answer's wherever it is judged.
    const size_t home = Home(problem, answer);
    // Its reference loads while the build is waited for (Session::Run's
    // warm-up comes after it here: on the H100, 2026-12-06f, that one
    // overlapped nothing, 25.9 s of reference waits against 27.6 s).
    devices_[home]->WarmReference(problem);
    bool repeat = false;
    auto built = devices_[home]->WaitBuilt(problem, answer, declared, &repeat);
    size_t pick = home;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (size_t i = 0; i < busy_.size(); ++i) {
        if (busy_[i] < busy_[pick]) pick = i;
      }
      ++busy_[pick];
    }
    auto r =
        devices_[pick]->EvaluateBuilt(problem, answer, declared, built, repeat);
    if (r.ok()) AddSpan(&r->times, "answer", t0, util::SteadyClock::now());
    std::lock_guard<std::mutex> lock(mu_);
    --busy_[pick];
    return r;
  }
  void Prebuild(const Problem& problem, std::string_view answer,
                std::string_view declared) override {
    devices_[Home(problem, answer)]->Prebuild(problem, answer, declared);
    // Every evaluator's first candidate runner starts with the first
    // builds (no-op once each has one ahead).
    if (DetectFormat(answer, declared).supported) {
      for (auto& d : devices_) d->StartAhead();
    }
  }
  Result<DeviceInfo> Describe() override { return devices_[0]->Describe(); }
  const EvalOptions& options() const override { return devices_[0]->options(); }
  int Parallelism() const override { return static_cast<int>(devices_.size()); }

 private:
  // The evaluator whose builder builds the answer: the one with the
  // fewest builds queued or under way when the answer is first seen (its
  // prebuild), the same one after. Until 2026-12-06 it was a hash of the
  // answer: 18 answers over 8 builders of one build thread each left some
  // four deep while others had one.
  size_t Home(const Problem& problem, std::string_view answer) {
    const size_t h =
        std::hash<std::string>{}(problem.key() + "\n" + std::string(answer));
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = homes_.find(h); it != homes_.end()) return it->second;
    size_t pick = h % devices_.size();
    int least = devices_[pick]->builder()->Load();
    for (size_t i = 0; i < devices_.size(); ++i) {
      const int load = devices_[i]->builder()->Load();
      if (load < least) pick = i, least = load;
    }
    if (homes_.size() >= kMaxHomes)
      homes_.clear();  // bounded: then hashed anew
    homes_[h] = pick;
    return pick;
  }
  static constexpr size_t kMaxHomes = 1 << 17;
  std::vector<std::unique_ptr<EvaluatorImpl>> devices_;
  std::mutex mu_;
  std::vector<int> busy_;  // GUARDED_BY(mu_)
  std::unordered_map<size_t, size_t>
      homes_;  // answer's hash -> home; GUARDED_BY(mu_)
};

}  // namespace internal

Result<std::unique_ptr<Evaluator>> Evaluator::Make(const RunnerOptions& runner,
                                                   const EvalOptions& options) {
  if (options.correctness_trials < 1 || options.correctness_trials > 100) {
    return Status::InvalidArgument("correctness trials must be 1..100");
  }
  if (options.rounds < 1 || options.calls_per_round < 1 || options.calls_per_round > 10000) {
    return Status::InvalidArgument("rounds and calls per round must be positive (calls <= 10000)");
  }
  if (options.kb_perf_trials < 1 || options.kb_perf_trials > 10000) {
    return Status::InvalidArgument("KernelBench perf trials must be 1..10000");
  }
  SKILLDB_RETURN_IF_ERROR(ToleranceFor(options.precision).status());
  if (runner.device != "cuda" && runner.device != "cpu") {
    return Status::InvalidArgument("device must be cuda or cpu");
  }
  RunnerOptions r = WithDefaults(runner);
  for (const std::string* path : {&r.launcher, &r.sandbox_lib}) {
    if (!verify::internal::FileExists(*path)) {
      return Status::NotFound("the KernelBench runner's " + *path + " does not exist (build "
                              "skilldb_kb_launch, or set SKILLDB_KB_LAUNCH / SKILLDB_KB_SANDBOX_LIB)");
    }
  }
  if (!verify::internal::FileExists(verify::internal::JoinPath(r.runner_dir, "kb_runner.py"))) {
    return Status::NotFound("no kb_runner.py in " + r.runner_dir + " (set SKILLDB_KB_RUNNER_DIR)");
  }
  SKILLDB_RETURN_IF_ERROR(internal::ResolvePython(r.python).status());
  if (r.workers < 1 || r.workers > 64) {
    return Status::InvalidArgument("workers must be 1..64, not " + std::to_string(r.workers));
  }
  if (r.gpus < 1 || r.gpus > 64) {
    return Status::InvalidArgument("gpus must be 1..64, not " + std::to_string(r.gpus));
  }
  if (r.device == "cpu" && r.gpus > 1) {
    return Status::InvalidArgument("gpus (" + std::to_string(r.gpus) + ") needs device cuda");
  }
  if (r.device == "cuda") {
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    if (visible != nullptr && *visible != '\0') {
      const int listed = 1 + static_cast<int>(std::count(visible, visible + std::strlen(visible), ','));
      if (r.gpus > listed) {
        return Status::InvalidArgument("gpus (" + std::to_string(r.gpus) +
                                       ") exceed the GPUs CUDA_VISIBLE_DEVICES lists (" +
                                       visible + ")");
      }
    }
  }
  // The runners' bytecode (UseBytecodeCache): read-only to every runner.
  std::shared_ptr<internal::BytecodeFill> fill;
  if (options.bytecode_cache) {
    fill = internal::UseBytecodeCache(
        &r,
        verify::internal::JoinPath(internal::CacheRoot(options), "pycache"));
  }
  if (r.workers == 1 && r.gpus == 1) {
    auto one = std::make_unique<internal::EvaluatorImpl>(r, options);
    one->HoldWhileAlive(fill);
    return std::unique_ptr<Evaluator>(std::move(one));
  }
  // The build pool is split between the devices (the cache is shared).
  EvalOptions per = options;
  int jobs = options.build_jobs;
  if (jobs <= 0) jobs = static_cast<int>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN) / 2));
  const int evaluators = std::max(r.workers, r.gpus);
  per.build_jobs = std::max(1, jobs / evaluators);
  // One pool of reference runners and one description per device, shared
  // by its evaluators.
  std::vector<std::shared_ptr<internal::ReferencePool>> pools;
  std::vector<std::shared_ptr<internal::DeviceDescription>> described;
  for (int g = 0; g < r.gpus; ++g) {
    const int sharing = (evaluators - g + r.gpus - 1) / r.gpus;
    pools.push_back(std::make_shared<internal::ReferencePool>(
        internal::kWarmReferences * static_cast<size_t>(sharing)));
    described.push_back(std::make_shared<internal::DeviceDescription>());
  }
  std::vector<std::unique_ptr<internal::EvaluatorImpl>> devices;
  for (int i = 0; i < evaluators; ++i) {
    RunnerOptions ri = r;
    if (r.device == "cuda") {
      ri.extra_env.push_back("CUDA_VISIBLE_DEVICES=" + internal::VisibleDevice(i % r.gpus));
    }
    devices.push_back(std::make_unique<internal::EvaluatorImpl>(
        ri, per, pools[i % r.gpus], described[i % r.gpus]));
    devices.back()->HoldWhileAlive(fill);
  }
  return std::unique_ptr<Evaluator>(new internal::MultiEvaluator(std::move(devices)));
}

}  // namespace skilldb::verify::kb
