// The verification pipeline, part 1: construction, compiling, the static
// screen, worker management and the report. Correctness and timing are in
// verify_checks.cc.
#include "verifier_impl.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

#include "elf_symbols.h"
#include "file_util.h"
#include "gen.h"
#include "symbol_policy.h"
#include "skilldb/util/clock.h"
#include "skilldb/util/sha256.h"

namespace skilldb::verify::internal {
namespace {

constexpr char kNoGpuHint[] =
    "; on a machine without a GPU use --backend host";

using nlohmann::json;
using Clock = std::chrono::steady_clock;

uint64_t UnpredictableSeed() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd() ^
         static_cast<uint64_t>(Clock::now().time_since_epoch().count());
}

// The newest finding's message, or a placeholder when there is none.
std::string LastFindingMessage(const JobState& job) {
  if (job.out.findings.empty()) return "no reason was recorded";
  return job.out.findings.back().message;
}

Status CopyFile(const std::string& from, const std::string& to) {
  SKILLDB_ASSIGN_OR_RETURN(std::string data, ReadFile(from));
  return WriteFileAtomic(to, data);
}

}  // namespace

void JobState::Add(FindingCode code, std::string message) {
  if (HasFinding(out.findings, code)) return;
  out.findings.push_back({code, std::move(message)});
}

Result<std::unique_ptr<TaskVerifierImpl>> TaskVerifierImpl::Make(
    const VerifierOptions& options) {
  std::unique_ptr<TaskVerifierImpl> v(new TaskVerifierImpl(options));
  SKILLDB_RETURN_IF_ERROR(v->Init());
  return v;
}

TaskVerifierImpl::~TaskVerifierImpl() {
  pool_.reset();  // kills the workers before their scratch goes
  if (!scratch_base_.empty()) RemoveTree(scratch_base_);
}

WorkerSpec TaskVerifierImpl::SpecFor(int device, int slot) const {
  const VerifierLimits& l = options_.limits;
  WorkerSpec s;
  s.executable = options_.worker_path;
  s.scratch_dir = JoinPath(scratch_base_, "worker-" + std::to_string(slot));
  s.args = {"--file-size-bytes", std::to_string(l.output_bytes)};
  if (options_.backend == Backend::kCuda) {
    s.args.insert(s.args.end(),
                  {"--device", std::to_string(device), "--gpu-memory-bytes",
                   std::to_string(l.gpu_memory_bytes)});
    if (!options_.use_cupti) s.args.push_back("--no-cupti");
  } else {
    s.args.insert(s.args.end(),
                  {"--memory-bytes", std::to_string(l.host_memory_bytes),
                   "--cpu-seconds", std::to_string(l.cpu_seconds),
                   "--flush-bytes", std::to_string(options_.host_flush_bytes)});
  }
  if (!options_.sandbox) s.args.push_back("--no-sandbox");
  if (gpu_namespaces_failed_) {
    s.args.insert(s.args.end(),
                  {"--namespaces-failed", namespace_error_.substr(0, 200)});
  }
  return s;
}

Status TaskVerifierImpl::Init() {
  const VerifierOptions& o = options_;
  if (o.backend == Backend::kCuda) {
    // Without the driver the worker cannot start; say so before it tries.
    void* driver = ::dlopen(o.cuda_driver.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (driver == nullptr) {
      const char* why = ::dlerror();
      return Status::FailedPrecondition(
          "the cuda backend needs the NVIDIA driver (" + o.cuda_driver +
          ": " + (why ? why : "not found") + ")" + kNoGpuHint);
    }
    ::dlclose(driver);
  }
  if (o.task_dir.empty() || o.protocol_dir.empty() || o.worker_path.empty() ||
      o.cache_dir.empty() || o.scratch_root.empty()) {
    return Status::InvalidArgument(
        "VerifierOptions paths are empty; start from DefaultOptions()");
  }
  if (!FileExists(o.task_dir)) {
    return Status::NotFound("task directory '" + o.task_dir + "' not found");
  }
  if (::access(o.worker_path.c_str(), X_OK) != 0) {
    return Status::NotFound("worker executable '" + o.worker_path +
                            "' not found (was it built?)");
  }
  if (o.host_workers < 1 || o.host_workers > kMaxHostWorkers) {
    return Status::InvalidArgument(
        "VerifierOptions::host_workers is " + std::to_string(o.host_workers) +
        "; it must be between 1 and " + std::to_string(kMaxHostWorkers));
  }
  if (o.rotate_buffers < 1 || o.warmup_calls < 0 ||
      o.spot_checks_per_round < 0 || o.timing_shape_trials < 0 ||
      o.host_flush_bytes < 0) {
    return Status::InvalidArgument("VerifierOptions counts out of range");
  }
  CompilerOptions co;
  co.nvcc_path = o.nvcc_path;
  co.cxx_path = o.cxx_path;
  co.cache_dir = o.cache_dir;
  co.protocol_dir = o.protocol_dir;
  co.timeout_s = o.limits.compile_timeout_s;
  co.max_source_bytes = o.limits.max_source_bytes;
  co.memory_bytes = o.limits.compile_memory_bytes;
  co.confine = o.confine_compiler;
  SKILLDB_ASSIGN_OR_RETURN(compiler_, Compiler::Make(co));
  oracles_ = std::make_unique<OracleSet>(compiler_.get());
  SKILLDB_ASSIGN_OR_RETURN(
      scratch_base_,
      MakeTempDir(o.scratch_root,
                  "skilldb-verify-" + std::to_string(::getpid()) + "-"));
  std::vector<int> devices = o.devices;
  if (o.backend == Backend::kCuda && devices.empty()) {
    // Probe: one worker on GPU 0 says how many GPUs there are.
    SKILLDB_ASSIGN_OR_RETURN(auto probe, WorkerProcess::Start(SpecFor(0, 0)));
    CallOutcome hello = probe->Call({{"op", "hello"}}, {}, 120);
    if (!hello.ok) {
      return Status::Unavailable("the CUDA worker did not start: " +
                                 hello.failure.message + kNoGpuHint);
    }
    if (!hello.reply.header.value("ok", false) && o.sandbox &&
        !gpu_namespaces_failed_) {
      // CUDA may fail to start inside the worker's namespaces (a driver
      // file the root does not hold): retry without them, and say so in
      // every report's isolation notes.
      gpu_namespaces_failed_ = true;
      namespace_error_ = hello.reply.header.value("error", "");
      probe.reset();
      SKILLDB_ASSIGN_OR_RETURN(probe, WorkerProcess::Start(SpecFor(0, 0)));
      hello = probe->Call({{"op", "hello"}}, {}, 120);
      if (!hello.ok) {
        return Status::Unavailable("the CUDA worker did not start: " +
                                   hello.failure.message + kNoGpuHint);
      }
    }
    if (!hello.reply.header.value("ok", false)) {
      return Status::Unavailable("no usable CUDA device: " +
                                 hello.reply.header.value("error", "") +
                                 kNoGpuHint);
    }
    // At most 64 devices: the count sizes the worker pool.
    const int count =
        std::clamp(hello.reply.header.value("device_count", 1), 1, 64);
    for (int i = 0; i < count; ++i) devices.push_back(i);
  }
  std::vector<WorkerSpec> specs;
  if (o.backend == Backend::kCuda) {
    for (size_t i = 0; i < devices.size(); ++i) {
      specs.push_back(SpecFor(devices[i], static_cast<int>(i)));
    }
  } else {
    for (int i = 0; i < o.host_workers; ++i) specs.push_back(SpecFor(0, i));
  }
  slots_.resize(specs.size());
  pool_ = std::make_unique<WorkerPool>(std::move(specs));
  return Status::Ok();
}

Result<const LoadedTask*> TaskVerifierImpl::GetTask(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = tasks_.find(name); it != tasks_.end()) return it->second.get();
  auto task = LoadTask(options_.task_dir, name);
  if (!task.ok()) {
    if (task.status().IsNotFound()) {
      return Status::InvalidArgument(task.status().message());
    }
    return task.status();
  }
  auto loaded = std::make_unique<LoadedTask>();
  loaded->task = std::move(*task);
  const SourceLanguage lang = LanguageFor(options_.backend);
  SKILLDB_ASSIGN_OR_RETURN(loaded->reference,
                           compiler_->Compile(lang == SourceLanguage::kCuda
                                                  ? loaded->task.reference_cuda
                                                  : loaded->task.reference_cpp,
                                              lang));
  if (!loaded->reference.ok) {
    return Status::Internal("the reference of task " + name +
                            " does not compile:\n" + loaded->reference.log);
  }
  const LoadedTask* out = loaded.get();
  tasks_[name] = std::move(loaded);
  return out;
}

Status TaskVerifierImpl::Validate(const VerificationRequest& r) const {
  if (r.task.empty()) return Status::InvalidArgument("request.task is empty");
  if (r.candidate.source.empty()) {
    return Status::InvalidArgument("request.candidate.source is empty");
  }
  const std::string want(SourceLanguageName(LanguageFor(options_.backend)));
  for (const Artifact* a : {&r.candidate, &r.baseline}) {
    if (!a->language.empty() && a->language != want && !a->source.empty()) {
      return Status::InvalidArgument("artifact '" + a->name +
                                     "' is written in '" + a->language +
                                     "' but the " + std::string(Name()) +
                                     " backend compiles '" + want + "'");
    }
  }
  if (r.rounds < 1 || r.rounds > 100) {
    return Status::InvalidArgument("request.rounds must be in [1, 100]");
  }
  if (r.timed_calls_per_round < options_.min_timed_calls_per_round ||
      r.timed_calls_per_round > 100000) {
    return Status::InvalidArgument(
        "request.timed_calls_per_round must be at least " +
        std::to_string(options_.min_timed_calls_per_round));
  }
  return Status::Ok();
}

// Compiles the candidate and the baseline; false (with findings) if the
// candidate cannot run.
Result<bool> TaskVerifierImpl::CompileCandidate(Job* job) {
  const SourceLanguage lang = LanguageFor(options_.backend);
  const VerificationRequest& r = *job->request;
  SKILLDB_ASSIGN_OR_RETURN(job->candidate,
                           compiler_->Compile(r.candidate.source, lang));
  job->out.times.compile_ms = job->candidate.wall_ms;
  job->out.times.compile_cache_hit = job->candidate.cache_hit;
  VerificationReport& rep = job->out.report;
  rep.compile_log = job->candidate.log;
  rep.compiled = job->candidate.ok;
  if (!job->candidate.ok) {
    if (job->candidate.failure == CompileFailure::kLimit &&
        job->candidate.limit != "output") {
      job->Add(FindingCode::kResourceLimit,
               "the compiler was stopped by its " + job->candidate.limit +
                   " limit (the compiler output is in compile_log)");
    } else {
      job->Add(FindingCode::kCompileError,
               "the candidate does not compile (the compiler output is in "
               "compile_log)");
    }
    return false;
  }
  if (options_.static_screen) {
    SKILLDB_ASSIGN_OR_RETURN(ElfDynamicInfo info,
                             ReadElfDynamicInfo(job->candidate.library_path));
    for (Finding& f : ScreenSymbols(lang, info)) {
      job->Add(f.code, std::move(f.message));
    }
    if (job->failed()) return false;
  }
  if (r.baseline.source.empty()) {
    job->baseline = job->task->reference;
  } else {
    SKILLDB_ASSIGN_OR_RETURN(job->baseline,
                             compiler_->Compile(r.baseline.source, lang));
    if (!job->baseline.ok) {
      return Status::InvalidArgument("the baseline does not compile:\n" +
                                     job->baseline.log);
    }
  }
  return true;
}

Result<bool> TaskVerifierImpl::CallWorker(Job* job, const json& header,
                                          std::string_view blob,
                                          double timeout_s, Message* reply) {
  CallOutcome c = job->worker->Call(header, blob, timeout_s);
  if (!c.ok) {
    job->Add(c.failure.code, c.failure.message);
    job->replace_worker = true;
    return false;
  }
  *reply = std::move(c.reply);
  const json& h = reply->header;
  if (h.value("ok", false)) return true;
  const std::string kind = h.value("kind", "internal");
  const std::string error = h.value("error", "");
  if (kind == "sticky") {
    job->Add(FindingCode::kStickyCudaError,
             "the candidate left the GPU context unusable (" + error +
                 "); the worker was replaced");
    job->replace_worker = true;
  } else if (kind == "launch") {
    job->Add(FindingCode::kLaunchError,
             "a CUDA error during the call: " + error);
  } else if (kind == "load") {
    job->Add(FindingCode::kLoadError, error);
  } else if (kind == "reference") {
    job->Add(FindingCode::kReferenceFailed, error);
  } else if (kind == "unavailable") {
    job->replace_worker = true;
    return Status::Unavailable("the worker cannot run candidates: " + error);
  } else {
    job->replace_worker = true;
    return Status::Internal("worker error: " + error);
  }
  return false;
}

Status TaskVerifierImpl::DescribeSlot(Job* job) {
  if (job->slot->described) return Status::Ok();
  Message m;
  SKILLDB_ASSIGN_OR_RETURN(bool ok,
                           CallWorker(job, {{"op", "hello"}}, {}, 120, &m));
  if (!ok) {
    return Status::Unavailable("the worker failed to start: " +
                               LastFindingMessage(*job));
  }
  DeviceDescription& d = job->slot->device;
  d.name = m.header.value("name", "");
  d.device_class = m.header.value("device_class", "");
  d.cache_bytes = m.header.value("cache_bytes", int64_t{0});
  d.notes = m.header.value("notes", "");
  d.devices = pool_->size();
  SKILLDB_ASSIGN_OR_RETURN(ok,
                           CallWorker(job, {{"op", "ceilings"}}, {}, 120, &m));
  if (!ok) return Status::Unavailable("the worker could not measure ceilings");
  d.bandwidth_bytes_per_s = m.header.value("bandwidth", 0.0);
  d.fp32_flops_per_s = m.header.value("fp32_flops", 0.0);
  job->slot->described = true;
  return Status::Ok();
}

Result<bool> TaskVerifierImpl::LoadSlot(Job* job, const std::string& slot,
                                        const std::string& library) {
  const std::string name =
      slot + "-" + std::to_string(++job->slot->load_counter) + ".so";
  const std::string host_path = JoinPath(job->worker->scratch_dir(), name);
  SKILLDB_RETURN_IF_ERROR(CopyFile(library, host_path));
  job->staged_files.push_back(host_path);
  // The host worker's working directory is its scratch directory, whether
  // it is chrooted there or only confined by seccomp (no namespaces here).
  const bool sandboxed = options_.backend == Backend::kHost && options_.sandbox;
  const std::string path = sandboxed ? "./" + name : host_path;
  Message m;
  return CallWorker(job, {{"op", "load"}, {"slot", slot}, {"path", path}}, {},
                    60, &m);
}

Result<DeviceDescription> TaskVerifierImpl::Describe() {
  WorkerPool::Lease lease = pool_->Acquire();
  Job job;
  job.slot = &slots_[static_cast<size_t>(lease.slot())];
  SKILLDB_ASSIGN_OR_RETURN(job.worker, lease.worker());
  Status st = DescribeSlot(&job);
  if (job.replace_worker) lease.Replace();
  SKILLDB_RETURN_IF_ERROR(st);
  return job.slot->device;
}

Result<VerificationReport> TaskVerifierImpl::Verify(
    const VerificationRequest& r) {
  SKILLDB_ASSIGN_OR_RETURN(DetailedReport d, VerifyDetailed(r));
  return std::move(d.report);
}

Result<DetailedReport> TaskVerifierImpl::VerifyDetailed(
    const VerificationRequest& request) {
  const auto t0 = Clock::now();
  SKILLDB_RETURN_IF_ERROR(Validate(request));
  SKILLDB_ASSIGN_OR_RETURN(const LoadedTask* task, GetTask(request.task));
  Job job;
  job.request = &request;
  job.task = task;
  job.seed = request.seed != 0 ? request.seed : UnpredictableSeed();
  job.rng.seed(SplitMix64(job.seed ^ 0x7e57ull));
  VerificationReport& rep = job.out.report;
  rep.verifier = std::string(Name());
  rep.verifier_version = kVerifierVersion;
  rep.task = request.task;
  rep.candidate_hash = util::Sha256Hex(request.candidate.source);
  SKILLDB_ASSIGN_OR_RETURN(bool compiled, CompileCandidate(&job));
  if (!compiled) {
    Finish(&job);
    job.out.times.total_ms = util::MsSince(t0);
    job.out.report.times = job.out.times;
    return std::move(job.out);
  }
  WorkerPool::Lease lease = pool_->Acquire();
  job.slot = &slots_[static_cast<size_t>(lease.slot())];
  auto worker = lease.worker();
  if (!worker.ok()) return worker.status();
  job.worker = *worker;
  job.worker->TruncateLog();
  Status st = RunOnWorker(&job);
  for (const std::string& f : job.staged_files) ::unlink(f.c_str());
  if (!job.replace_worker && job.worker->alive()) {
    Message m;
    auto reset = CallWorker(&job, {{"op", "reset"}}, {}, 60, &m);
    if (reset.ok() && *reset) {
      if (m.header.value("leaked_bytes", int64_t{0}) > 0 ||
          m.header.value("late_ops", 0) > 0) {
        job.replace_worker = true;
      }
    }
  }
  if (job.replace_worker ||
      ++job.slot->verifications >= options_.limits.verifications_per_worker) {
    job.slot->verifications = 0;
    job.slot->validated_tasks.clear();
    lease.Replace();
  }
  SKILLDB_RETURN_IF_ERROR(st);
  Finish(&job);
  job.out.times.total_ms = util::MsSince(t0);
  job.out.report.times = job.out.times;
  return std::move(job.out);
}

Status TaskVerifierImpl::RunOnWorker(Job* job) {
  SKILLDB_RETURN_IF_ERROR(DescribeSlot(job));
  const DeviceDescription& dev = job->slot->device;
  VerificationReport& rep = job->out.report;
  rep.device = dev.name + " (" + dev.device_class + ")";
  rep.device_class = dev.device_class;
  if (!job->request->device_class.empty() &&
      job->request->device_class != dev.device_class) {
    return Status::Unavailable(
        "evidence from device class '" + job->request->device_class +
        "' was asked for, this verifier runs on '" + dev.device_class + "'");
  }
  for (const auto& [slot, lib] : {std::pair<std::string, const CompileOutput*>{
                                      "ref", &job->task->reference},
                                  {"base", &job->baseline},
                                  {"cand", &job->candidate}}) {
    SKILLDB_ASSIGN_OR_RETURN(bool loaded,
                             LoadSlot(job, slot, lib->library_path));
    if (!loaded) {
      if (slot != "cand" && !job->failed()) {
        return Status::Internal("cannot load the " + slot + " library");
      }
      return Status::Ok();
    }
  }
  const auto t_check = Clock::now();
  if (job->request->check_correctness) {
    SKILLDB_ASSIGN_OR_RETURN(bool correct, CheckCorrectness(job));
    job->out.times.correctness_ms = util::MsSince(t_check);
    if (!correct) return Status::Ok();
  }
  const auto t_time = Clock::now();
  std::vector<RoundSamples> samples;
  SKILLDB_ASSIGN_OR_RETURN(bool timed, RunRounds(job, &samples));
  job->out.times.timing_ms = util::MsSince(t_time);
  if (timed || !samples.empty()) Decide(job, samples);
  return Status::Ok();
}

IsolationInfo IsolationFrom(const std::string& worker_notes,
                            const Compiler& compiler) {
  IsolationInfo i;
  auto has = [&](const char* word) {
    return worker_notes.find(word) != std::string::npos;
  };
  i.namespaces = has("mntns");
  i.seccomp = has("seccomp");
  i.network = !has("netns");
  i.pid_namespace = has("pidns");
  i.compiler_confined = compiler.confined();
  i.notes = (worker_notes.empty() ? std::string("worker: did not run")
                                  : worker_notes) +
            "; " + compiler.confinement();
  return i;
}

// The isolation a report states is that of the worker that ran this
// candidate; one that never ran (it did not compile) was confined by
// nothing and says so, never borrowing another job's worker.
void TaskVerifierImpl::Finish(Job* job) {
  VerificationReport& rep = job->out.report;
  if (job->slot != nullptr && job->slot->described) {
    rep.isolation = IsolationFrom(job->slot->device.notes, *compiler_);
  } else {
    rep.isolation = IsolationInfo{};
    rep.isolation.applied = false;
    rep.isolation.network = false;
    rep.isolation.compiler_confined = compiler_->confined();
    rep.isolation.notes =
        "worker: the candidate never ran; " + compiler_->confinement();
  }
  rep.passed = job->out.findings.empty();
  rep.reasons.clear();
  rep.findings.clear();
  for (const Finding& f : job->out.findings) {
    rep.reasons.push_back(FormatFinding(f));
    rep.findings.emplace_back(FindingCodeName(f.code));
  }
  rep.finished_at_ms = util::NowUnixMs();
}

}  // namespace skilldb::verify::internal
