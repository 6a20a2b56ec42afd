#include "worker_client.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <regex>

#include "file_util.h"
#include "worker/sandbox.h"
#include "worker/worker_loop.h"

namespace skilldb::verify::internal {
namespace {

constexpr int kChildFd = 3;

std::string SignalText(int sig) {
  const char* s = ::strsignal(sig);
  return "signal " + std::to_string(sig) + " (" + (s ? s : "?") + ")";
}

}  // namespace

Result<std::unique_ptr<WorkerProcess>> WorkerProcess::Start(
    const WorkerSpec& spec) {
  SKILLDB_RETURN_IF_ERROR(MakeDirs(spec.scratch_dir));
  // World-writable so a host worker that drops privileges can still use it.
  ::chmod(spec.scratch_dir.c_str(), 0777);
  std::unique_ptr<WorkerProcess> w(new WorkerProcess());
  w->scratch_ = spec.scratch_dir;
  w->log_path_ = JoinPath(spec.scratch_dir, "worker.log");
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    return Status::IOError(std::string("socketpair: ") + std::strerror(errno));
  }
  const int log = ::open(w->log_path_.c_str(),
                         O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC,
                         0666);
  if (log < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return Status::IOError("cannot create " + w->log_path_);
  }
  std::vector<std::string> args = {spec.executable, "--fd",
                                   std::to_string(kChildFd), "--scratch",
                                   spec.scratch_dir};
  args.insert(args.end(), spec.args.begin(), spec.args.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    ::close(log);
    return Status::IOError(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::setsid();
    ::dup2(fds[1], kChildFd);  // dup2 clears close-on-exec
    ::dup2(log, 1);
    ::dup2(log, 2);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  ::close(log);
  w->pid_ = pid;
  w->fd_ = fds[0];
  w->alive_ = true;
  return w;
}

WorkerProcess::~WorkerProcess() {
  if (alive_) Kill();
  if (fd_ >= 0) ::close(fd_);
}

void WorkerProcess::Signal() {
  if (pid_ > 0) {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
  }
}

void WorkerProcess::Kill() {
  if (pid_ > 0) {
    Signal();
    int status;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }
  alive_ = false;
}

std::string CrashExcerpt(const std::string& log) {
  // Python's faulthandler writes the stack of every thread after "Fatal
  // Python error", then a long list of extension modules: the stack is
  // what says where a native crash happened, so it is what gets quoted.
  const size_t fatal = log.rfind("Fatal Python error");
  if (fatal == std::string::npos) {
    return "log tail: " + log.substr(log.size() > 300 ? log.size() - 300 : 0);
  }
  std::string stack = log.substr(fatal);
  const size_t modules = stack.find("\nExtension modules:");
  if (modules != std::string::npos) stack.resize(modules);
  constexpr size_t kMax = 2000;
  if (stack.size() > kMax) stack = stack.substr(0, kMax) + " [...]";
  return "crash stack: " + stack;
}

std::string WorkerProcess::LogTail(size_t max_bytes) const {
  auto text = ReadFile(log_path_, int64_t{1} << 30);
  if (!text.ok()) return "";
  if (text->size() > max_bytes) return text->substr(text->size() - max_bytes);
  return *text;
}

void WorkerProcess::TruncateLog() {
  // Best effort: a log that cannot be truncated only grows; LogTail reads its end.
  if (::truncate(log_path_.c_str(), 0) != 0) return;
}

WorkerFailure WorkerProcess::Reap(bool timed_out, double timeout_s) {
  WorkerFailure f;
  int status = 0;
  if (timed_out) {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
  }
  // After EOF the worker is exiting; give it a moment, then insist.
  bool reaped = false;
  for (int i = 0; i < 200 && !timed_out; ++i) {
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      reaped = true;
      break;
    }
    ::usleep(10000);
  }
  if (!reaped) {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  ::kill(-pid_, SIGKILL);  // stray children of the group
  pid_ = -1;
  alive_ = false;
  const std::string log = LogTail(16384);
  const std::string tail = log.size() > 600 ? log.substr(log.size() - 600) : log;
  if (timed_out) {
    f.code = FindingCode::kTimeout;
    f.message = "a call did not finish within " +
                std::to_string(static_cast<int>(timeout_s)) +
                " s; the worker was killed and replaced";
    return f;
  }
  if (WIFEXITED(status)) {
    const int code = WEXITSTATUS(status);
    if (code == kWorkerExitSandboxViolation) {
      f.code = FindingCode::kSandboxViolation;
      std::smatch m;
      static const std::regex kCall("forbidden system call ([0-9]+)");
      std::string name = "?";
      if (std::regex_search(tail, m, kCall)) name = SyscallName(std::stoi(m[1]));
      f.message = "the sandbox stopped the candidate at a forbidden system "
                  "call: " + name;
    } else if (code == kWorkerExitSticky) {
      f.code = FindingCode::kStickyCudaError;
      f.message = "the candidate left the GPU context unusable; the worker "
                  "was replaced";
    } else {
      f.code = FindingCode::kCrashed;
      f.message = "the worker exited with status " + std::to_string(code) +
                  " while running the candidate";
    }
  } else if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    if (sig == SIGXFSZ) {
      f.code = FindingCode::kResourceLimit;
      f.message = "the candidate exceeded the output size limit (" +
                  SignalText(sig) + ")";
    } else if (sig == SIGXCPU) {
      f.code = FindingCode::kResourceLimit;
      f.message = "the candidate exceeded the CPU time limit";
    } else if (sig == SIGSYS) {
      f.code = FindingCode::kSandboxViolation;
      f.message = "the sandbox killed the candidate (" + SignalText(sig) + ")";
      // A trap with signals blocked (a process start through vfork) kills
      // outright; the KernelBench runner names the start it saw first.
      const size_t at = tail.rfind("skilldb-sandbox: process start:");
      if (at != std::string::npos) {
        f.message += ": " + tail.substr(at + 17, std::min<size_t>(240, tail.size() - at - 17));
      }
    } else {
      f.code = FindingCode::kCrashed;
      f.message = "the worker was killed by " + SignalText(sig) +
                  " while running the candidate";
    }
  }
  if (!tail.empty() && f.code != FindingCode::kSandboxViolation) {
    f.message += "; " + CrashExcerpt(log);
  }
  return f;
}

CallOutcome WorkerProcess::Call(const nlohmann::json& header,
                                std::string_view blob, double timeout_s,
                                std::string* reuse) {
  CallOutcome out;
  if (!alive_) {
    out.failure = {FindingCode::kCrashed, "the worker is not running"};
    return out;
  }
  if (!SendMessage(fd_, header, blob).ok()) {
    out.failure = Reap(false, timeout_s);
    return out;
  }
  return Receive(timeout_s, reuse);
}

CallOutcome WorkerProcess::Receive(double timeout_s, std::string* reuse) {
  CallOutcome out;
  if (!alive_) {
    out.failure = {FindingCode::kCrashed, "the worker is not running"};
    return out;
  }
  const int timeout_ms = static_cast<int>(timeout_s * 1000);
  while (true) {
    auto m = ReceiveMessage(fd_, timeout_ms, {}, reuse);
    if (!m.ok()) {
      const bool timed_out = m.status().code() == StatusCode::kDeadlineExceeded;
      out.failure = Reap(timed_out, timeout_s);
      if (m.status().code() == StatusCode::kCorruption) {
        out.failure = {FindingCode::kCrashed,
                       "the worker sent a malformed reply (" +
                           m.status().message() + ")"};
      }
      return out;
    }
    if (m->header.value("op", "") == "progress") {
      if (reuse != nullptr && reuse->empty()) *reuse = std::move(m->blob);
      continue;
    }
    out.ok = true;
    out.reply = std::move(*m);
    return out;
  }
}

// ---- WorkerPool ------------------------------------------------------------

WorkerPool::WorkerPool(std::vector<WorkerSpec> slots)
    : specs_(std::move(slots)) {
  slots_.resize(specs_.size());
  busy_.assign(specs_.size(), false);
}

WorkerPool::~WorkerPool() = default;

WorkerPool::Lease WorkerPool::Acquire() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    for (size_t i = 0; i < busy_.size(); ++i) {
      if (!busy_[i]) {
        busy_[i] = true;
        return Lease(this, static_cast<int>(i));
      }
    }
    cv_.wait(lock);
  }
}

void WorkerPool::Release(int slot) {
  std::lock_guard<std::mutex> lock(mu_);
  busy_[static_cast<size_t>(slot)] = false;
  cv_.notify_one();
}

WorkerPool::Lease::Lease(Lease&& other) noexcept
    : pool_(other.pool_), slot_(other.slot_) {
  other.pool_ = nullptr;
}

WorkerPool::Lease::~Lease() {
  if (pool_ != nullptr) pool_->Release(slot_);
}

Result<WorkerProcess*> WorkerPool::Lease::worker() {
  // The slot is ours alone while the lease lives; no lock is needed for
  // its contents.
  auto& w = pool_->slots_[static_cast<size_t>(slot_)];
  if (!w || !w->alive()) {
    w.reset();
    SKILLDB_ASSIGN_OR_RETURN(
        w, WorkerProcess::Start(pool_->specs_[static_cast<size_t>(slot_)]));
  }
  return w.get();
}

void WorkerPool::Lease::Replace() {
  pool_->slots_[static_cast<size_t>(slot_)].reset();
}

}  // namespace skilldb::verify::internal
