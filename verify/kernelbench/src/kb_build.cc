#include "kb_build.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "file_util.h"
#include "skilldb/util/clock.h"
#include "skilldb/util/parallel.h"
#include "skilldb/util/sha256.h"

namespace skilldb::verify::kb::internal {
namespace {

namespace fs = std::filesystem;
using verify::internal::JoinPath;

// "/3": records carry the build's arch (2026-12-05: the H200 run step
// computed its extensions' keys without it and found none); "/4": the
// device's capability is part of the key (AnswerKey).
constexpr char kBuildSalt[] = "skilldb-kb-answer-build/4";

// Writes to the cache may fail (a full disk): the build stands, it is only
// not remembered for the next run.
void BestEffort(const Status& status) { static_cast<void>(status.ok()); }

json RecordToJson(const BuildRecord& r) {
  return {{"ok", r.ok},           {"kind", r.kind},
          {"message", r.message}, {"extensions", r.extensions},
          {"triton", r.triton},   {"light_include", r.light_include},
          {"pch", r.pch},         {"split", r.split},
          {"binding", r.binding}, {"caller", r.caller},
          {"arch", r.arch},       {"seconds", r.seconds}};
}

}  // namespace

bool CacheableCompileError(std::string_view kind, bool os_error,
                           std::string_view text) {
  if (kind != "compile" || os_error) return false;
  static constexpr std::string_view kMachine[] = {
      "Killed signal terminated program",  // gcc's driver: cc1plus killed
      "terminated by signal",
      "internal compiler error",
      "memory exhausted",
      "out of memory",
      "Cannot allocate memory",
      "std::bad_alloc",
      "No space left on device",
      "Resource temporarily unavailable",
  };
  for (std::string_view m : kMachine) {
    if (text.find(m) != std::string_view::npos) return false;
  }
  return true;
}

bool IsExtensionKey(std::string_view key) {
  return key.size() == 32 && std::all_of(key.begin(), key.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

bool MoveTree(const std::string& from, const std::string& to) {
  std::error_code ec;
  if (fs::exists(to, ec)) return true;  // built before: same content by key
  fs::create_directories(fs::path(to).parent_path(), ec);
  // Unique per process and call: two builders of one process may race.
  static std::atomic<uint64_t> serial{0};
  const std::string tmp = to + ".tmp" + std::to_string(::getpid()) + "." +
                          std::to_string(serial++);
  fs::rename(from, tmp, ec);
  if (ec) {
    ec.clear();
    fs::copy(from, tmp, fs::copy_options::recursive | fs::copy_options::overwrite_existing,
             ec);
    if (ec) {
      fs::remove_all(tmp, ec);
      return false;
    }
  }
  fs::rename(tmp, to, ec);
  if (ec) {  // another builder won the race: theirs is the same build
    std::error_code ignored;
    fs::remove_all(tmp, ignored);
  }
  return true;
}

bool CopyMissing(const std::string& from, const std::string& to) {
  std::error_code ec;
  fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::skip_existing, ec);
  return !ec;
}

Builder::Builder(RunnerOptions runner, EvalOptions options,
                 std::string cache_root,
                 std::function<Result<DeviceInfo>()> describe, DeviceGate* gate)
    : runner_(std::move(runner)),
      options_(std::move(options)),
      cache_root_(std::move(cache_root)),
      describe_(std::move(describe)),
      gate_(gate) {
  made_ = MadeOnce::For(cache_root_);
  same_way_ = json({{"options", AnswerKey(Problem{}, "", FormatInfo{}, options_,
                                          "", RunnerCode(runner_.runner_dir))},
                    {"generic_caller", options_.generic_caller},
                    {"use_pch", options_.use_pch},
                    {"protocol", static_cast<int>(options_.protocol)},
                    {"build_timeout_s", options_.build_timeout_s},
                    {"python", runner_.python},
                    {"runner_dir", runner_.runner_dir},
                    {"launcher", runner_.launcher},
                    {"sandbox_lib", runner_.sandbox_lib},
                    {"scratch_root", runner_.scratch_root},
                    {"device", runner_.device},
                    {"confine", runner_.confine},
                    {"memory_bytes", runner_.memory_bytes},
                    {"cpu_seconds", runner_.cpu_seconds},
                    {"output_bytes", runner_.output_bytes},
                    {"omp_threads", runner_.omp_threads},
                    {"env", runner_.extra_env},
                    {"visible", runner_.extra_visible}})
                  .dump();
  int jobs = options_.build_jobs;
  if (jobs <= 0) {
    const long cores = ::sysconf(_SC_NPROCESSORS_ONLN);
    jobs = static_cast<int>(std::max(1L, cores / 2));
  }
  // Threads the system refuses cost parallelism; with none, Submit builds
  // on its caller's thread.
  util::StartThreads(jobs, [this] { Work(); }, &threads_);
  std::lock_guard<std::mutex> lock(made_->mu);
  made_->threads += static_cast<int>(threads_.size());
  made_->builders.push_back(this);
}

Builder::~Builder() {
  {
    // No other builder's thread takes a job from this one after this (a
    // thief holds made_->mu while it looks).
    std::lock_guard<std::mutex> lock(made_->mu);
    std::erase(made_->builders, this);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    int cpp = 0;
    for (auto& job : queue_) {
      BuildRecord r;
      r.kind = "system";
      r.message = "the evaluator stopped before this answer was built";
      job->promise.set_value(r);
      cpp += job->format.backend != "triton";
    }
    queue_.clear();
    std::lock_guard<std::mutex> made(
        made_->mu);  // mu_ then made_->mu, as Submit
    made_->waiting -= cpp;
  }
  cv_.notify_all();
  {
    std::lock_guard<std::mutex> lock(made_->mu);
    stopping_ = true;
    made_->threads -= static_cast<int>(threads_.size());
  }
  made_->cv.notify_all();
  for (std::thread& t : threads_) t.join();
  std::lock_guard<std::mutex> lock(spare_mu_);
  spares_.clear();  // waits for their starts, then stops them
}

std::shared_ptr<Builder::MadeOnce> Builder::MadeOnce::For(
    const std::string& cache_root) {
  return SharedFor<MadeOnce>(cache_root);
}

namespace {

// The first 16 bytes of a digest as 32 hex digits: the cache's keys.
template <typename Digest>
std::string Hex16(const Digest& digest) {
  std::string hex;
  char buf[3];
  for (size_t i = 0; i < 16; ++i) {
    std::snprintf(buf, sizeof(buf), "%02x", digest[i]);
    hex += buf;
  }
  return hex;
}

}  // namespace

std::string Builder::RunnerCode(const std::string& runner_dir) {
  static std::mutex mu;
  static auto* digests = new std::map<std::string, std::string>();
  std::lock_guard<std::mutex> lock(mu);
  auto it = digests->find(runner_dir);
  if (it != digests->end()) return it->second;
  util::Sha256 h;
  bool any = false;
  for (const std::string& name : ListDir(runner_dir)) {
    const auto ends = [&name](std::string_view suffix) {
      return name.size() >= suffix.size() &&
             name.compare(name.size() - suffix.size(), suffix.size(), suffix) ==
                 0;
    };
    if (!(ends(".py") || ends(".cpp") || ends(".h")) ||
        name.rfind("test_", 0) == 0)
      continue;
    auto text =
        verify::internal::ReadFile(JoinPath(runner_dir, name), 16 << 20);
    if (!text.ok()) continue;
    h.Update(name);
    h.Update("\x1e");
    h.Update(*text);
    h.Update("\x1e");
    any = true;
  }
  const std::string hex = any ? Hex16(h.Finish()) : std::string();
  (*digests)[runner_dir] = hex;
  return hex;
}

std::string Builder::AnswerKey(const Problem& problem, std::string_view answer,
                               const FormatInfo& format, const EvalOptions& o,
                               std::string_view arch,
                               std::string_view runner_code) {
  util::Sha256 h;
  // The toolchain the build saw is part of the key: a compile error cached
  // under one $CC or $CXX says nothing about another.
  const std::string toolchain = Env("CC") + "\x1f" + Env("CXX") + "\x1f" +
                                Env("CUDAHOSTCXX") + "\x1f" + Env("CUDA_HOME") +
                                "\x1f" + Env("TORCH_CUDA_ARCH_LIST") + "\x1f" +
                                std::string(arch);
  for (std::string_view part :
       {std::string_view(kBuildSalt), std::string_view(toolchain),
        std::string_view(format.backend), std::string_view(o.precision),
        std::string_view(o.light_cuda_include ? "light" : "full"),
        std::string_view(o.split_cuda ? "split" : "whole"), runner_code,
        std::string_view(problem.source), std::string_view("\x1f"), answer}) {
    h.Update(part);
    h.Update("\x1e");
  }
  return Hex16(h.Finish());
}

std::optional<BuildRecord> Builder::ReadCached(const std::string& key) const {
  const std::string path = JoinPath(JoinPath(cache_root_, "builds"), key + ".json");
  auto text = verify::internal::ReadFile(path, 16 << 20);
  if (!text.ok()) return std::nullopt;
  json j = json::parse(*text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  BuildRecord r;
  r.ok = j.value("ok", false);
  r.kind = j.value("kind", "");
  r.message = j.value("message", "");
  r.extensions = j.value("extensions", std::vector<std::string>{});
  r.triton = j.value("triton", false);
  r.light_include = j.value("light_include", false);
  r.pch = j.value("pch", "");
  r.split = j.value("split", "");
  r.binding = j.value("binding", "");
  r.caller = j.value("caller", "");
  r.arch = j.value("arch", "");
  r.seconds = j.value("seconds", 0.0);
  r.cached = true;
  r.key = key;
  // A cached success whose libraries were removed is built again.
  for (const std::string& e : r.extensions) {
    if (!verify::internal::FileExists(JoinPath(JoinPath(cache_root_, "ext"), e))) {
      return std::nullopt;
    }
  }
  return r;
}

std::shared_future<BuildRecord> Builder::Submit(const Problem& problem,
                                                std::string_view answer,
                                                const FormatInfo& format,
                                                bool* repeat) {
  // The device's capability (described once per evaluator: a build for
  // it is what Build makes).
  std::string arch;
  if (describe_ && runner_.device == "cuda") {
    if (const Result<DeviceInfo> d = describe_(); d.ok()) arch = d->capability;
  }
  const std::string key = AnswerKey(problem, answer, format, options_, arch,
                                    RunnerCode(runner_.runner_dir));
  std::unique_lock<std::mutex> lock(mu_);
  if (repeat != nullptr) *repeat = !judged_.insert(key).second;
  auto it = known_.find(key);
  if (it != known_.end()) return it->second;
  if (auto cached = ReadCached(key)) {
    std::promise<BuildRecord> p;
    p.set_value(*cached);
    auto f = p.get_future().share();
    known_[key] = f;
    return f;
  }
  auto job = std::make_unique<Job>();
  job->problem = problem;
  job->answer = std::string(answer);
  job->format = format;
  job->key = key;
  auto f = job->promise.get_future().share();
  known_[key] = f;
  if (stop_) {
    BuildRecord r;
    r.kind = "system";
    r.message = "the evaluator is stopping";
    job->promise.set_value(r);
    return f;
  }
  if (threads_.empty()) {  // no builder thread could be started
    lock.unlock();
    BuildAndGive(job.get());
    return f;
  }
  const bool cpp = job->format.backend != "triton";
  queue_.push_back(std::move(job));
  if (cpp) {
    std::lock_guard<std::mutex> made(made_->mu);  // mu_ then made_->mu
    ++made_->waiting;
  }
  cv_.notify_one();
  return f;
}

void Builder::Work() {
  while (true) {
    std::unique_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      // Another builder's queue is looked at now and then: its Submit
      // cannot wake this thread without a race (it holds its own mutex).
      cv_.wait_for(lock, std::chrono::milliseconds(200),
                   [this] { return stop_ || !queue_.empty() || AnyWaiting(); });
      if (stop_ && queue_.empty()) return;
      if (!queue_.empty()) {
        job = std::move(queue_.front());
        queue_.pop_front();
        if (job->format.backend != "triton") {
          std::lock_guard<std::mutex> made(made_->mu);
          --made_->waiting;
        }
        ++running_;
      }
    }
    if (!job) job = Steal();
    if (!job) {
      // Builds are waiting, none this thread may take: their builders'
      // own threads take them.
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    BuildAndGive(job.get());
    --running_;
  }
}

bool Builder::AnyWaiting() {
  std::lock_guard<std::mutex> made(made_->mu);  // mu_ then made_->mu
  return made_->waiting > 0;
}

std::unique_ptr<Builder::Job> Builder::Steal() {
  std::lock_guard<std::mutex> made(made_->mu);
  for (Builder* b : made_->builders) {
    if (b == this || b->same_way_ != same_way_) continue;
    // Never waited for: its Submit holds its mutex, then made_->mu.
    std::unique_lock<std::mutex> theirs(b->mu_, std::try_to_lock);
    if (!theirs.owns_lock() || b->stop_) continue;
    for (auto it = b->queue_.begin(); it != b->queue_.end(); ++it) {
      if ((*it)->format.backend == "triton") continue;
      std::unique_ptr<Job> job = std::move(*it);
      b->queue_.erase(it);
      --made_->waiting;
      ++running_;
      return job;
    }
  }
  return nullptr;
}

void Builder::BuildAndGive(Job* job) {
  std::optional<ExtensionPch> later;
  const auto started = util::SteadyClock::now();
  BuildRecord r = Build(*job, &later);
  r.key = job->key;
  r.queued = job->queued;
  r.started = started;
  r.finished = util::SteadyClock::now();
  job->promise.set_value(r);
  if (later) {  // after the answer's record is given: its wait is not this
    BuildRecord made;
    MakeOnce(later->start, "ext", false, later->pch_root, later->ext_cache,
             &made);
  }
}

int Builder::Load() {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(queue_.size()) + running_;
}

void Builder::MakeOnce(const RunnerStart& s, const std::string& pch_kind,
                       bool make_caller, const std::string& pch_root,
                       const std::string& ext_cache, BuildRecord* rec) {
  const bool make_pch = !pch_kind.empty();
  auto runner = Runner::Start(runner_, s);
  json h = json::object();
  std::string failed;
  if (!runner.ok()) {
    failed = runner.status().message();
  } else {
    json req = {{"op", "make_once"},
                {"ext_root", JoinPath((*runner)->scratch(), "ext")},
                {"ext_cache", ext_cache},
                {"make_caller", make_caller}};
    if (make_pch) {
      req["make_pch"] = JoinPath((*runner)->scratch(), "pch");
      // "types": torch/types.h and ATen/core/Tensor.h (the thunks of
      // sources that only declare their functions), made side by side.
      req["pch_headers"] =
          pch_kind == "types"
              ? json::array({"skilldb_torch_types.h", "skilldb_torch_tensor.h"})
              : json::array({"skilldb_torch_extension.h"});
      // -O3 besides the default where answers are CUDA (most ask for -O3);
      // on the CPU (the tests' answers) the default only: half the cost.
      req["pch_variants"] =
          runner_.device == "cpu" ? json::array() : json::array({"O3"});
    }
    const Reply reply = (*runner)->Request(req, "", options_.build_timeout_s);
    if (reply.ok) {
      h = reply.header;
    } else {
      failed = reply.failure.message;
    }
  }
  if (make_pch) {
    const json pch = h.value("pch", json());
    if (pch.is_object() && pch.contains("seconds") &&
        MoveTree(JoinPath((*runner)->scratch(), "pch"),
                 JoinPath(pch_root, pch_kind))) {
      rec->pch = "made in " + Num(pch.value("seconds", 0.0)) + " s";
    } else {
      rec->pch = "not made: " + (!failed.empty() ? failed
                                 : pch.is_object()
                                     ? pch.value("error", std::string())
                                     : std::string("could not be moved"));
    }
  }
  if (make_caller) {
    // Built now (a key), present before, or failed: into the extension
    // cache, where builds and runs find it by its key.
    const json caller = h.value("caller", json());
    const std::string key =
        caller.is_object() ? caller.value("key", std::string()) : std::string();
    const bool plain_key =
        key.size() <= 64 && std::all_of(key.begin(), key.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '-';
        });
    if (!failed.empty() || !caller.is_object()) {
      rec->caller =
          "not made: " + (failed.empty() ? std::string("no reply") : failed);
    } else if (caller.contains("error")) {
      rec->caller = "not made: " + caller.value("error", std::string());
    } else if (key.empty()) {
      rec->caller = "present";
    } else if (plain_key &&
               MoveTree(JoinPath(JoinPath((*runner)->scratch(), "ext"), key),
                        JoinPath(ext_cache, key))) {
      rec->caller = "made in " + Num(caller.value("seconds", 0.0)) + " s";
    } else {
      rec->caller = "not made: could not be moved into the cache";
    }
  }
}

namespace {

// A runner start as text: two builds that would start a runner the same
// way have the same.
std::string StartKey(const RunnerStart& s) {
  json j = {{"role", s.role},
            {"device", s.device},
            {"visible", s.extra_visible},
            {"env", s.extra_env},
            {"run_sandbox", s.run_sandbox},
            {"file_bytes", s.file_bytes},
            {"memory_bytes", s.memory_bytes},
            {"gate", reinterpret_cast<uintptr_t>(s.gate)},
            {"warm_profiler", s.warm_profiler}};
  return j.dump();
}

}  // namespace

Result<std::unique_ptr<Runner>> Builder::StartRunner(const RunnerStart& s) {
  const std::string key = StartKey(s);
  std::vector<Spare> taken, stale;
  bool more = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& job : queue_)
      more = more || job->format.backend != "triton";
    more = more && !stop_;
  }
  {
    std::lock_guard<std::mutex> lock(spare_mu_);
    std::vector<Spare> kept;
    for (Spare& sp : spares_) {
      (sp.start != key ? stale
       : taken.empty() ? taken
                       : kept)
          .push_back(std::move(sp));
    }
    spares_ = std::move(kept);
    if (more && s.gate == nullptr && spares_.size() < threads_.size()) {
      spares_.push_back({key, std::async(std::launch::async, [this, s] {
                           return Runner::Start(runner_, s);
                         })});
    }
  }
  stale.clear();  // waits for their starts, then stops them
  if (!taken.empty()) {
    auto r = taken.front().runner.get();
    if (r.ok() && (*r)->alive()) return r;
  }
  return Runner::Start(runner_, s);
}

BuildRecord Builder::Build(const Job& job, std::optional<ExtensionPch>* later) {
  BuildRecord rec;
  const auto t0 = util::SteadyClock::now();
  const bool triton = job.format.backend == "triton";
  RunnerStart s;
  s.role = "build";
  s.device = triton ? runner_.device : "cpu";
  const Result<DeviceInfo> device =
      describe_ ? describe_() : Result<DeviceInfo>(Status::Unavailable("no device"));
  // The device's capability, else the caller's setting; always set, and
  // the run step is told it (BuildRecord::arch) to find the extensions by
  // their keys.
  const std::string arch = device.ok() && !device->capability.empty()
                               ? device->capability
                               : Env("TORCH_CUDA_ARCH_LIST");
  s.extra_env.push_back("TORCH_CUDA_ARCH_LIST=" + arch);
  rec.arch = arch;
  // The precompiled torch headers (kb_load.make_pch), under pch_root:
  // torch/types.h (types/, what thunks include: nearly every C++/CUDA
  // answer) and torch/extension.h (ext/, for answers built with a binding
  // of their own). torch/types.h is made once, by the first build after two
  // distinct extensions were compiled, or by the first that sees two more
  // C++ or CUDA answers waiting (a burst: a step of RL answers, a run
  // directory), beside the generic caller. Making it costs about one
  // compile of torch's headers: a run whose answers share one extension,
  // or hit the cache, never pays for it. torch/extension.h is made after
  // the first build that needed a binding found it missing (ExtensionPch),
  // by that builder once its answer is done: until 2026-12-06 both were made
  // together and a cold cache's first builds waited for torch/extension.h,
  // 41.2 s on the H100, where thunks needed only torch/types.h.
  std::string pch_root, pch_header;  // pch_header: the root, once offered
  bool make_pch = false;
  // Offers the headers' root once torch/types.h is there; true if so.
  auto use_made = [&] {
    if (pch_root.empty() ||
        !verify::internal::FileExists(
            JoinPath(JoinPath(pch_root, "types"), "skilldb_torch_types.h.gch")))
      return false;
    if (pch_header.empty()) s.extra_visible.push_back(pch_root);
    pch_header = pch_root;
    return true;
  };
  if (options_.use_pch && !triton && device.ok() && !device->torch_version.empty()) {
    std::string tv = device->torch_version;
    for (char& c : tv) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.') c = '_';
    }
    // "pch-v2": headers made before 2026-12-05 (in "pch") carried the
    // probe's extension name and GCC refused them for every build; "pch-v3"
    // added torch/types.h, for thunks (kb_caller.py); "pch-v4" makes each
    // header in a directory of its own; "pch-v5" adds ATen/core/Tensor.h
    // beside torch/types.h.
    pch_root = JoinPath(JoinPath(cache_root_, "pch-v5"), tv);
    if (!use_made()) {
      std::unique_lock<std::mutex> lock(made_->mu);
      const int waiting = made_->waiting;
      const size_t compiled = made_->compiled.size();
      make_pch = !made_->pch_started && (compiled >= 2 || waiting >= 2);
      if (!make_pch && made_->pch_started && !made_->pch_finished &&
          waiting >= std::max(4, 2 * made_->threads)) {
        // Another build is making it, with more C++/CUDA answers waiting
        // than the builders can build without it meanwhile (a burst): this
        // build waits for it rather than compile torch's headers itself.
        // On the H100 (2026-12-05) a step's first builds went without it,
        // 32-52 s each, 8 at a time, and the one making it had not
        // finished 96 s in; it took 64 s when fewer builds ran beside it.
        // A small run (18 answers, 8 builders) builds beside it: that run
        // finished in 95 s so (5308b03), and not in 120 s when every build
        // waited (5bddb04, with the shared reference runners: the two not
        // told apart).
        const double bound =
            options_.build_timeout_s > 0 ? options_.build_timeout_s : 600;
        made_->cv.wait_for(lock, std::chrono::duration<double>(bound), [this] {
          return made_->pch_finished || stopping_.load();
        });
        use_made();
      }
      made_->pch_started = made_->pch_started || make_pch;
    }
  }
  // The build that makes the header says when it is done, whatever the
  // outcome (builds waiting for it go on without it if it failed).
  struct PchDone {
    Builder* b;
    bool armed;
    void Fire() {
      if (!armed) return;
      armed = false;
      {
        std::lock_guard<std::mutex> lock(b->made_->mu);
        b->made_->pch_finished = true;
      }
      b->made_->cv.notify_all();
    }
    ~PchDone() { Fire(); }
  } pch_done{this, make_pch};
  // The generic caller (kb_caller.py): asked for by the first C++/CUDA
  // build of this process's builders of the cache, which has it built if
  // the cache lacks it.
  bool make_caller = false;
  if (options_.generic_caller && !triton) {
    std::lock_guard<std::mutex> lock(made_->mu);
    make_caller = !made_->caller_asked;
    made_->caller_asked = true;
  }
  s.extra_env.push_back("MAX_JOBS=2");
  s.file_bytes = int64_t{4} << 30;
  // The compilers' address space (two jobs of nvcc over torch's headers fit
  // well inside it); a Triton build runs on the device, which no address
  // space limit suits (CUDA reserves more than any useful one).
  s.memory_bytes = int64_t{24} << 30;
  // A CUDA answer's build runs on the CPU runner but sees the evaluator's
  // GPU, as it did on the H200 (an answer's module may touch the device
  // when it is imported).
  const std::string ext_cache = JoinPath(cache_root_, "ext");
  if (verify::internal::MakeDirs(ext_cache).ok()) s.extra_visible.push_back(ext_cache);
  if (make_pch || make_caller) {
    MakeOnce(s, make_pch ? "types" : "", make_caller, pch_root, ext_cache,
             &rec);
    pch_done.Fire();
    if (make_pch) use_made();
  }
  // A Triton build's runner starts on the device: its start-up's kernels
  // hold it shared (Runner::Start), never while an answer is timed there.
  if (triton) s.gate = gate_;
  auto runner = StartRunner(s);
  if (!runner.ok()) {
    rec.kind = "system";
    rec.message = runner.status().message();
    return rec;
  }
  const std::string ext_root = JoinPath((*runner)->scratch(), "ext");
  json req = {{"op", "build"},
              {"problem", job.problem.source},
              {"answer", job.answer},
              {"backend", job.format.backend},
              {"ext_root", ext_root},
              {"ext_cache", ext_cache},
              {"warm", triton},
              {"light_include", options_.light_cuda_include},
              {"split", options_.split_cuda},
              {"generic_caller", options_.generic_caller},
              {"protocol", std::string(ProtocolName(options_.protocol))},
              {"precision", options_.precision},
              {"init_seed", 42}};
  if (!pch_header.empty()) req["pch"] = pch_header;
  Reply reply;
  {
    std::shared_lock<DeviceGate> device;
    if (triton && gate_ != nullptr)
      device = std::shared_lock<DeviceGate>(*gate_);
    reply = (*runner)->Request(req, "", options_.build_timeout_s);
  }
  rec.seconds = util::MsSince(t0) / 1000.0;
  rec.ops = (*runner)->TakeOpStats();
  if (!reply.ok) {
    rec.kind = std::string(FindingCodeName(reply.failure.code));
    rec.message = reply.failure.message;
    return rec;
  }
  const json& h = reply.header;
  if (!pch_header.empty() && rec.pch.empty()) rec.pch = "offered";
  if (h.contains("extensions") && h["extensions"].is_array()) {
    for (const json& e : h["extensions"]) {
      if (!e.is_object()) continue;
      // The reply comes from the process that ran the answer: only keys
      // the shim makes (32 hex digits) name directories to move into the
      // cache, never "caller-..." or a path that leaves ext/.
      const json key_json = e.value("key", json());
      if (!key_json.is_string()) continue;
      const std::string key = key_json.get<std::string>();
      if (!IsExtensionKey(key)) continue;
      rec.extensions.push_back(key);
      if (!e.value("cached", false)) {
        std::lock_guard<std::mutex> lock(made_->mu);
        made_->compiled.insert(key);
      }
      rec.light_include = rec.light_include || e.value("light_include", false);
      // How each extension's functions are called (kb_caller.py).
      const json binding = e.value("binding", json());
      // Built with a binding of its own, where torch/extension.h is not
      // precompiled yet: this builder makes it once the answer is done.
      if (binding.is_string() && !pch_header.empty() &&
          !e.value("cached", false) &&
          binding.get<std::string>().rfind("pybind11", 0) == 0 &&
          !verify::internal::FileExists(JoinPath(
              JoinPath(pch_root, "ext"), "skilldb_torch_extension.h.gch"))) {
        std::lock_guard<std::mutex> lock(made_->mu);
        if (!made_->ext_pch_started) {
          made_->ext_pch_started = true;
          *later = ExtensionPch{s, pch_root, ext_cache};
        }
      }
      if (binding.is_string() && rec.binding.size() < 2000) {
        if (!rec.binding.empty()) rec.binding += "; ";
        rec.binding += binding.get<std::string>().substr(0, 300);
      }
      // How each extension's CUDA sources were built (kb_load.py), one
      // line per extension that has any.
      const json split = e.value("split", json());
      if (split.is_string()) {
        if (!rec.split.empty()) rec.split += "; ";
        // The name is the answer's (load_inline's first argument): only
        // identifier characters are shown; the line is the runner's own.
        std::string name = e.value("name", std::string("?")).substr(0, 64);
        for (char& c : name) {
          if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '?';
        }
        rec.split += name + ": " + split.get<std::string>().substr(0, 300);
      }
    }
  }
  if (!h.value("ok", false)) {
    rec.kind = reply.error_kind();
    std::string text = reply.error_text(12000);
    rec.message = text;
    // A compile error is the answer's, and the same every time: cached
    // (CacheableCompileError says which are not).
    const bool os_error = h.contains("error") && h["error"].is_object() &&
                          h["error"].value("os_error", false);
    if (CacheableCompileError(rec.kind, os_error, text)) {
      BestEffort(verify::internal::MakeDirs(JoinPath(cache_root_, "builds")));
      BestEffort(verify::internal::WriteFileAtomic(
          JoinPath(JoinPath(cache_root_, "builds"), job.key + ".json"),
          RecordToJson(rec).dump()));
    }
    return rec;
  }
  for (const std::string& e : rec.extensions) {
    if (!verify::internal::FileExists(JoinPath(ext_root, e))) continue;  // reused
    if (!MoveTree(JoinPath(ext_root, e), JoinPath(JoinPath(cache_root_, "ext"), e))) {
      rec.kind = "system";
      rec.message = "could not move the build of extension " + e + " into the cache";
      return rec;
    }
  }
  if (triton) {
    rec.triton = MoveTree(JoinPath((*runner)->scratch(), "triton"),
                          JoinPath(JoinPath(cache_root_, "triton"), job.key));
  }
  rec.ok = true;
  BestEffort(verify::internal::MakeDirs(JoinPath(cache_root_, "builds")));
  BestEffort(verify::internal::WriteFileAtomic(
      JoinPath(JoinPath(cache_root_, "builds"), job.key + ".json"),
      RecordToJson(rec).dump()));
  return rec;
}

}  // namespace skilldb::verify::kb::internal
