// Starting and talking to runner processes (kb_runner.py under
// skilldb_kb_launch), and the interpreter's paths the confinement must show.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <thread>

#include "file_util.h"
#include "kb_internal.h"
#include "skilldb/util/clock.h"
#include "subprocess.h"

namespace skilldb::verify::kb::internal {
namespace {

using verify::internal::JoinPath;
using verify::internal::MakeTempDir;
using verify::internal::WorkerProcess;
using verify::internal::WorkerSpec;



bool IsExecutable(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         ::access(path.c_str(), X_OK) == 0;
}

// The environment of a runner: nothing of this process's but what the
// interpreter, the compilers and the driver need.
std::vector<std::string> RunnerEnv(const RunnerOptions& o,
                                   const std::string& scratch,
                                   const RunnerStart& s) {
  std::vector<std::string> env = {
      "HOME=" + scratch,
      "TMPDIR=" + scratch,
      "USER=skilldb",
      "LOGNAME=skilldb",
      "LANG=C.UTF-8",
      "PYTHONDONTWRITEBYTECODE=1",
      "PYTHONUNBUFFERED=1",
      "PYTHONNOUSERSITE=1",
      "TORCH_EXTENSIONS_DIR=" + JoinPath(scratch, "torch_extensions"),
      "TRITON_CACHE_DIR=" + JoinPath(scratch, "triton"),
      "TORCHINDUCTOR_CACHE_DIR=" + JoinPath(scratch, "inductor"),
      "TORCHINDUCTOR_COMPILE_THREADS=1",
  };
  if (o.omp_threads > 0) {
    env.push_back("OMP_NUM_THREADS=" + std::to_string(o.omp_threads));
    env.push_back("MKL_NUM_THREADS=" + std::to_string(o.omp_threads));
  }
  for (const char* name :
       {"PATH", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH",
        "CUDA_VISIBLE_DEVICES", "PYTHONPATH", "TORCH_CUDA_ARCH_LIST",
        "NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST",
        "NVSHMEM_DISABLE_NVLS", "CC", "CXX"}) {
    if (std::string v = Env(name); !v.empty()) {
      env.push_back(std::string(name) + "=" + v);
    }
  }
  if (Env("CUDA_HOME").empty() && ::access("/usr/local/cuda", F_OK) == 0) {
    env.push_back("CUDA_HOME=/usr/local/cuda");
  }
  if (s.run_sandbox) env.push_back("SKILLDB_KB_SANDBOX_LIB=" + o.sandbox_lib);
  // Later entries win: the caller's and the start's own come last, and
  // only the last of each name is passed (execve keeps duplicates, and
  // getenv reads the first).
  for (const std::string& e : o.extra_env) env.push_back(e);
  for (const std::string& e : s.extra_env) env.push_back(e);
  std::vector<std::string> unique;
  std::set<std::string> seen;
  for (auto it = env.rbegin(); it != env.rend(); ++it) {
    if (seen.insert(it->substr(0, it->find('='))).second) unique.push_back(*it);
  }
  std::reverse(unique.begin(), unique.end());
  return unique;
}

}  // namespace

std::string Reply::error_kind() const {
  if (!ok) return std::string(FindingCodeName(failure.code));
  if (header.contains("error") && header["error"].is_object()) {
    return header["error"].value("kind", "internal");
  }
  return "";
}

std::string Reply::error_text(size_t max_bytes) const {
  std::string text;
  if (!ok) {
    text = failure.message;
  } else if (header.contains("error") && header["error"].is_object()) {
    const json& e = header["error"];
    text = e.value("name", "") + ": " + e.value("message", "");
  }
  if (text.size() > max_bytes) text = "..." + text.substr(text.size() - max_bytes);
  return text;
}

Result<std::string> ResolvePython(const std::string& python) {
  const std::string name = python.empty() ? "python3" : python;
  if (name.find('/') != std::string::npos) {
    if (!IsExecutable(name)) {
      return Status::NotFound("the Python interpreter " + name +
                              " is not an executable file");
    }
    return name[0] == '/' ? name : JoinPath(Env("PWD"), name);
  }
  const std::string path = Env("PATH");
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    const std::string dir = path.substr(start, end - start);
    if (!dir.empty() && IsExecutable(JoinPath(dir, name))) {
      return JoinPath(dir, name);
    }
    start = end + 1;
  }
  return Status::NotFound("no " + name + " on PATH (set --python)");
}

Result<std::vector<std::string>> PythonPaths(const std::string& python) {
  static std::mutex mu;
  static auto* cache = new std::map<std::string, std::vector<std::string>>();
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache->find(python);
    if (it != cache->end()) return it->second;
  }
  verify::internal::RunOptions ro;
  ro.argv = {python, "-B", "-s", "-c",
             "import json, sys\n"
             "print(json.dumps([sys.prefix, sys.base_prefix, sys.exec_prefix] + "
             "[p for p in sys.path if p]))"};
  ro.timeout_s = 60;
  SKILLDB_ASSIGN_OR_RETURN(auto run, verify::internal::Run(ro));
  if (!run.ok()) {
    return Status::Unavailable("cannot run " + python + ": " + run.output);
  }
  // The last line is the list (warnings may come before it).
  std::string last = run.output;
  while (!last.empty() && last.back() == '\n') last.pop_back();
  if (const size_t nl = last.rfind('\n'); nl != std::string::npos) last = last.substr(nl + 1);
  json j = json::parse(last, nullptr, false);
  if (!j.is_array()) {
    return Status::Unavailable(python + " did not list its paths: " + run.output);
  }
  std::vector<std::string> out;
  for (const json& p : j) {
    if (p.is_string() && !p.get<std::string>().empty() &&
        p.get<std::string>()[0] == '/') {
      out.push_back(p.get<std::string>());
    }
  }
  // The interpreter's own directory (a venv's bin/ links elsewhere).
  out.push_back(ParentDir(python));
  char real[PATH_MAX];
  if (::realpath(python.c_str(), real) != nullptr) out.push_back(ParentDir(real));
  std::lock_guard<std::mutex> lock(mu);
  (*cache)[python] = out;
  return out;
}

std::vector<std::string> CompilerPrefixes() {
  std::vector<std::string> out;
  for (const char* name : {"CC", "CXX", "CUDAHOSTCXX"}) {
    const std::string v = Env(name);
    if (v.empty() || v[0] != '/') continue;
    char real[PATH_MAX];
    const std::string resolved = ::realpath(v.c_str(), real) != nullptr ? real : "";
    for (const std::string& path : {v, resolved}) {
      if (path.empty()) continue;
      std::string dir = ParentDir(path);
      // A toolchain's bin/ needs its prefix (lib/, libexec/: cc1plus, as).
      if (dir.size() > 4 && dir.compare(dir.size() - 4, 4, "/bin") == 0) dir = ParentDir(dir);
      if (dir.empty() || dir == "/" || dir == "/usr" || dir == "/usr/local") continue;
      if (std::find(out.begin(), out.end(), dir) == out.end()) out.push_back(dir);
    }
  }
  return out;
}

Result<std::unique_ptr<Runner>> Runner::Start(const RunnerOptions& o,
                                              const RunnerStart& s) {
  SKILLDB_ASSIGN_OR_RETURN(std::string python, ResolvePython(o.python));
  SKILLDB_ASSIGN_OR_RETURN(std::vector<std::string> pypaths, PythonPaths(python));
  const std::string root = o.scratch_root.empty()
                               ? (Env("TMPDIR").empty() ? "/tmp" : Env("TMPDIR"))
                               : o.scratch_root;
  SKILLDB_RETURN_IF_ERROR(verify::internal::MakeDirs(root));
  SKILLDB_ASSIGN_OR_RETURN(std::string scratch,
                           MakeTempDir(root, "skilldb-kb-" + s.role + "-"));
  for (const char* sub : {"torch_extensions", "triton", "inductor"}) {
    SKILLDB_RETURN_IF_ERROR(verify::internal::MakeDirs(JoinPath(scratch, sub)));
  }
  ::chmod(scratch.c_str(), 0777);
  std::vector<std::string> args = {"--confine", o.confine ? "1" : "0",
                                   "--seccomp", o.confine ? "1" : "0",
                                   "--cpu-seconds", std::to_string(o.cpu_seconds),
                                   "--file-bytes",
                                   std::to_string(s.file_bytes > 0 ? s.file_bytes
                                                                   : o.output_bytes)};
  const int64_t memory = s.memory_bytes >= 0 ? s.memory_bytes : o.memory_bytes;
  if (s.device == "cpu" && memory > 0) {
    args.insert(args.end(), {"--memory-bytes", std::to_string(memory)});
  }
  // Besides the interpreter's paths: Debian's alternatives (libblas.so.3,
  // which, cc link through /etc/alternatives), /bin and /sbin (merged-/usr
  // links: shell scripts such as which start with #!/bin/sh) and the user
  // database (getpass and the like).
  std::vector<std::string> visible = pypaths;
  for (const char* etc : {"/etc/alternatives", "/etc/passwd", "/etc/group", "/bin", "/sbin"}) {
    visible.push_back(etc);
  }
  for (const std::string& dir : CompilerPrefixes()) visible.push_back(dir);
  visible.push_back(o.runner_dir);
  visible.push_back(ParentDir(o.sandbox_lib));
  visible.insert(visible.end(), o.extra_visible.begin(), o.extra_visible.end());
  visible.insert(visible.end(), s.extra_visible.begin(), s.extra_visible.end());
  for (const std::string& v : visible) args.insert(args.end(), {"--visible", v});
  for (const std::string& e : RunnerEnv(o, scratch, s)) {
    args.insert(args.end(), {"--env", e});
  }
  args.insert(args.end(),
              {"--", python, "-B", "-s", JoinPath(o.runner_dir, "kb_runner.py"),
               "--role", s.role, "--device", s.device, "--flush-bytes",
               std::to_string(o.cpu_flush_bytes)});
  WorkerSpec spec{o.launcher, args, scratch};
  // A CPU device's start-up is work on the cores a timed phase measures.
  // Each wait for the gate is kept as op "wait.<step>" (TakeOpStats).
  std::map<std::string, OpTime> waits;
  auto hold = [&](const std::string& step) {
    const auto t0 = util::SteadyClock::now();
    std::shared_lock<DeviceGate> held(*s.gate);
    waits["wait." + step] = OpTime{1, util::MsSince(t0), 0};
    return held;
  };
  std::shared_lock<DeviceGate> host;
  if (s.gate != nullptr && s.device == "cpu") host = hold("start");
  std::unique_ptr<Runner> r(new Runner());
  r->scratch_ = scratch;
  auto process = WorkerProcess::Start(spec);
  if (!process.ok()) {
    verify::internal::RemoveTree(scratch);
    return process.status();
  }
  r->process_ = std::move(*process);
  const auto started = util::SteadyClock::now();
  auto hello = r->process_->Receive(o.start_timeout_s);
  if (!hello.ok || hello.reply.header.value("ok", true) == false ||
      hello.reply.header.value("op", "") != "hello") {
    std::string why = hello.ok ? Dump(hello.reply.header) : hello.failure.message;
    const std::string tail = r->LogTail(1500);
    r->Stop();
    return Status::Unavailable("the " + s.role + " runner did not start: " + why +
                               (tail.empty() ? "" : "; log: " + tail));
  }
  r->hello_ = std::move(hello.reply.header);
  // The interpreter and torch's import, as op "start" (TakeOpStats).
  r->op_stats_["start"] = OpTime{1, util::MsSince(started), 0,
                                 r->hello_.value("start_cpu_ms", 0.0)};
  // The profiler's host part (Kineto, CUPTI) before the first kernels:
  // 3.8-4.4 s median for the whole warm-up under the device's hold on the
  // H100 (2026-12-06b), which timed phases waited out.
  std::vector<std::string> steps = {"init"};
  if (s.warm_profiler) steps.push_back("init_profiler_host");
  steps.push_back("init_kernels");
  if (s.warm_profiler) steps.push_back("init_profiler");
  steps.push_back("init_host");
  for (const std::string& op : steps) {
    std::shared_lock<DeviceGate> kernels;
    const bool runs_kernels = op == "init_kernels" || op == "init_profiler";
    if (runs_kernels && s.gate != nullptr && !host.owns_lock())
      kernels = hold(op);
    Reply step = r->Request({{"op", op}}, "", o.start_timeout_s);
    if (!step.answered_ok()) {
      const std::string tail = r->LogTail(1500);
      const std::string why = step.error_text();
      r->Stop();
      return Status::Unavailable("the " + s.role + " runner did not start (" +
                                 op + "): " + why +
                                 (tail.empty() ? "" : "; log: " + tail));
    }
    for (const char* k : {"ok", "already", "op_ms", "op_cpu_ms"})
      step.header.erase(k);
    r->UpdateHello(step.header);
  }
  r->op_stats_.insert(waits.begin(), waits.end());
  return r;
}

Runner::~Runner() { Stop(); }

void Runner::Stop() {
  if (process_) {
    process_->Kill();
    process_.reset();
  }
  if (!scratch_.empty()) {
    verify::internal::RemoveTree(scratch_);
    scratch_.clear();
  }
}

std::string Runner::LogTail(size_t bytes) const {
  return process_ ? process_->LogTail(bytes) : "";
}

void CountOp(const json& request, const Reply& reply,
             std::map<std::string, OpTime>* stats) {
  OpTime& stat = (*stats)[request.value("op", "")];
  ++stat.calls;
  stat.wall_ms += reply.wall_ms;
  if (!reply.ok) return;
  const auto op_ms = reply.header.find("op_ms");
  if (op_ms != reply.header.end() && op_ms->is_number()) {
    stat.runner_ms += op_ms->get<double>();
  }
  const auto cpu_ms = reply.header.find("op_cpu_ms");
  if (cpu_ms != reply.header.end() && cpu_ms->is_number()) {
    stat.cpu_ms += cpu_ms->get<double>();
  }
}

Reply Runner::Request(const json& header, std::string_view blob,
                      double timeout_s, std::string* reuse) {
  Reply r;
  if (!process_) {
    r.failure = {FindingCode::kCrashed, "the runner is not running"};
    return r;
  }
  const auto t0 = util::SteadyClock::now();
  auto out = process_->Call(header, blob, timeout_s, reuse);
  r.wall_ms = util::MsSince(t0);
  r.ok = out.ok;
  if (out.ok) {
    r.header = std::move(out.reply.header);
    r.blob = std::move(out.reply.blob);
  } else {
    r.failure = std::move(out.failure);
  }
  CountOp(header, r, &op_stats_);
  return r;
}

class BytecodeFill {
 public:
  BytecodeFill(const RunnerOptions& o, const std::string& dir)
      : thread_([o, dir] { Fill(o, dir); }) {}
  ~BytecodeFill() { thread_.join(); }

 private:
  static void Fill(const RunnerOptions& o, const std::string& dir) {
    auto python = ResolvePython(o.python);
    const std::string root = Env("TMPDIR").empty() ? "/tmp" : Env("TMPDIR");
    auto home = MakeTempDir(root, "skilldb-kb-bytecode-");
    if (!python.ok() || !home.ok()) return;
    verify::internal::RunOptions ro;
    ro.argv = {*python, "-s", JoinPath(o.runner_dir, "kb_bytecode.py")};
    ro.clean_env = true;
    // A runner's environment (the same imports find the same files), with
    // bytecode written, into `dir`.
    RunnerStart s;
    s.extra_env = {"PYTHONDONTWRITEBYTECODE=", "PYTHONPYCACHEPREFIX=" + dir};
    ro.extra_env = RunnerEnv(o, *home, s);
    // Cold, 2,139 modules took 9.6 s on the H100 machine (2026-12-06c); an
    // evaluator's end waits for it, so a hung import is cut well before.
    ro.timeout_s = 120;
    ro.max_output_bytes = 64 << 10;
    // The outcome is not needed: runners read whatever it wrote.
    static_cast<void>(verify::internal::Run(ro).ok());
    verify::internal::RemoveTree(*home);
  }
  std::thread thread_;
};

std::shared_ptr<BytecodeFill> UseBytecodeCache(RunnerOptions* o,
                                               const std::string& dir) {
  if (!verify::internal::MakeDirs(dir).ok()) return nullptr;
  o->extra_env.push_back("PYTHONPYCACHEPREFIX=" + dir);
  o->extra_visible.push_back(dir);
  static std::mutex mu;
  static auto* begun = new std::map<std::string, std::weak_ptr<BytecodeFill>>();
  std::lock_guard<std::mutex> lock(mu);
  auto it = begun->find(dir);
  if (it != begun->end()) return it->second.lock();  // null once finished
  auto fill = std::make_shared<BytecodeFill>(*o, dir);
  (*begun)[dir] = fill;
  return fill;
}

std::shared_ptr<DeviceGate> DeviceGate::For(const std::string& device) {
  return SharedFor<DeviceGate>(device);
}

IsolationInfo IsolationFromHello(const json& hello, bool compiler_confined) {
  IsolationInfo iso;
  const std::string notes = hello.value("isolation", "");
  const std::string sandbox = hello.value("sandbox", "");
  iso.namespaces = notes.find("mntns") != std::string::npos;
  iso.network = notes.find("netns") == std::string::npos;
  iso.pid_namespace = notes.find("pidns") != std::string::npos;
  iso.seccomp = sandbox.find("seccomp-allowlist") != std::string::npos;
  iso.compiler_confined = compiler_confined;
  iso.notes = notes + (sandbox.empty() ? "" : " " + sandbox);
  return iso;
}

}  // namespace skilldb::verify::kb::internal
