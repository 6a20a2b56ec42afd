#include "subprocess.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <set>

#include "confine.h"
#include "skilldb/util/clock.h"

extern char** environ;

namespace skilldb::verify::internal {
namespace {

using Clock = std::chrono::steady_clock;

// Reports a failed setup step to the parent (index and errno), then exits.
[[noreturn]] void Fail(int err_fd, int step, int err) {
  int msg[2] = {step, err};
  [[maybe_unused]] ssize_t n = ::write(err_fd, msg, sizeof(msg));
  ::_exit(125);
}

void SetLimit(int resource, int64_t value) {
  if (value <= 0) return;
  rlimit rl{static_cast<rlim_t>(value), static_cast<rlim_t>(value)};
  ::setrlimit(resource, &rl);
}

[[noreturn]] void ExecProgram(const RunOptions& o, int err_fd, char** argv,
                              char** envp) {
  if (!o.cwd.empty() && ::chdir(o.cwd.c_str()) != 0)
    Fail(err_fd, kStepCwd, errno);
  SetLimit(RLIMIT_CPU, o.cpu_limit_s);
  SetLimit(RLIMIT_FSIZE, o.file_size_limit_bytes);
  SetLimit(RLIMIT_AS, o.address_space_bytes);
  rlimit core{0, 0};
  ::setrlimit(RLIMIT_CORE, &core);
  ::execvpe(argv[0], argv, envp);
  const int err = errno;
  const char msg[] = "cannot execute the program\n";
  [[maybe_unused]] ssize_t n = ::write(2, msg, sizeof(msg) - 1);
  int report[2] = {kStepExec, err};
  n = ::write(err_fd, report, sizeof(report));
  ::_exit(127);
}

// In the child between fork and exec only async-signal-safe calls are made:
// everything it needs is prepared before fork.
[[noreturn]] void Child(const RunOptions& o, const Plan* plan, int out_fd,
                        int err_fd, char** argv, char** envp) {
  ::setpgid(0, 0);
  ::dup2(out_fd, 1);
  ::dup2(out_fd, 2);
  const int devnull = ::open("/dev/null", O_RDONLY);
  if (devnull >= 0) ::dup2(devnull, 0);
  if (plan == nullptr) ExecProgram(o, err_fd, argv, envp);
  const int flags = CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC |
                    CLONE_NEWUTS | (plan->user_ns ? CLONE_NEWUSER : 0);
  if (::unshare(flags) != 0) Fail(err_fd, kStepUnshare, errno);
  if (!WriteIdMaps(*plan)) Fail(err_fd, kStepMaps, errno);
  // The next child is the PID namespace's init: when it exits, everything
  // it started is killed.
  const pid_t init = ::fork();
  if (init < 0) Fail(err_fd, kStepFork, errno);
  if (init == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    int step = 0, err = 0;
    if (!EnterRoot(*plan, &step, &err) || !DropPrivileges(&step, &err)) {
      Fail(err_fd, step, err);
    }
    ExecProgram(o, err_fd, argv, envp);
  }
  ::close(err_fd);
  ::close(out_fd);
  ::close(1);
  ::close(2);
  int status = 0;
  while (::waitpid(init, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    // Die of the same signal, so the parent sees what the program saw.
    struct sigaction dfl;
    std::memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    ::sigaction(WTERMSIG(status), &dfl, nullptr);
    rlimit core{0, 0};
    ::setrlimit(RLIMIT_CORE, &core);
    ::kill(::getpid(), WTERMSIG(status));
    ::_exit(128 + WTERMSIG(status));
  }
  ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 125);
}

// Reads what is available, at most a few buffers so the deadline is
// checked even against a child that writes without pause.
void Drain(int fd, const RunOptions& o, RunResult* r) {
  char buf[65536];
  for (int i = 0; i < 16; ++i) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n <= 0) return;
    const int64_t room =
        o.max_output_bytes - static_cast<int64_t>(r->output.size());
    if (room > 0) {
      r->output.append(buf, static_cast<size_t>(std::min<int64_t>(n, room)));
    }
    if (n > room) r->output_truncated = true;
  }
}

}  // namespace

Result<RunResult> Run(const RunOptions& o) {
  if (o.argv.empty()) return Status::InvalidArgument("empty argv");
  if (o.confine.enabled && o.confine.writable_dir.empty()) {
    return Status::InvalidArgument("Confinement.writable_dir is empty");
  }
  std::vector<char*> argv;
  for (const std::string& a : o.argv)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    if (!o.clean_env || std::strncmp(*e, "PATH=", 5) == 0)
      env_strings.emplace_back(*e);
  }
  for (const std::string& e : o.extra_env) env_strings.push_back(e);
  std::vector<char*> envp;
  for (const std::string& e : env_strings)
    envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  Plan plan;
  if (o.confine.enabled) {
    plan = MakePlan(
        {o.confine.visible, {}, o.confine.writable_dir, o.confine.mount_proc});
  }

  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return Status::IOError(std::string("pipe: ") + std::strerror(errno));
  }
  int err_fds[2];
  if (::pipe2(err_fds, O_CLOEXEC) != 0) {
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    return Status::IOError(std::string("pipe: ") + std::strerror(errno));
  }
  const auto t0 = Clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    for (int fd : {pipe_fds[0], pipe_fds[1], err_fds[0], err_fds[1]})
      ::close(fd);
    return Status::IOError(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(pipe_fds[0]);
    ::close(err_fds[0]);
    Child(o, o.confine.enabled ? &plan : nullptr, pipe_fds[1], err_fds[1],
          argv.data(), envp.data());
  }
  ::close(pipe_fds[1]);
  ::close(err_fds[1]);
  ::fcntl(pipe_fds[0], F_SETFL, O_NONBLOCK);

  RunResult r;
  bool eof = false;
  while (!eof) {
    const double left_ms = o.timeout_s * 1000.0 - util::MsSince(t0);
    if (left_ms <= 0) {
      r.timed_out = true;
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      break;
    }
    pollfd p{pipe_fds[0], POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min(left_ms, 200.0)) + 1);
    if (n < 0 && errno != EINTR) break;
    if (n > 0) {
      char probe;
      const ssize_t got = ::read(pipe_fds[0], &probe, 1);
      if (got == 0) {
        eof = true;
      } else if (got > 0) {
        if (static_cast<int64_t>(r.output.size()) < o.max_output_bytes) {
          r.output.push_back(probe);
        } else {
          r.output_truncated = true;
        }
        Drain(pipe_fds[0], o, &r);
      }
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  // Grandchildren (cicc, ptxas) may survive a timeout kill of the leader;
  // the group kill above reaches them, and this one covers late forks.
  if (r.timed_out) ::kill(-pid, SIGKILL);
  ::close(pipe_fds[0]);
  int report[2] = {0, 0};
  ::fcntl(err_fds[0], F_SETFL, O_NONBLOCK);
  if (::read(err_fds[0], report, sizeof(report)) == sizeof(report)) {
    if (report[0] == kStepExec) {
      r.exec_errno = report[1];
    } else {
      r.confine_error =
          StepName(o.confine.enabled ? &plan : nullptr, report[0]) + ": " +
          std::strerror(report[1]);
    }
  }
  ::close(err_fds[0]);
  r.wall_ms = util::MsSince(t0);
  if (WIFSIGNALED(status)) {
    r.term_signal = WTERMSIG(status);
  } else if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
  }
  return r;
}

}  // namespace skilldb::verify::internal
