#include "subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

extern char** environ;

namespace skilldb::verify::internal {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// In the child between fork and exec only async-signal-safe calls are made:
// everything it needs is prepared before fork.
[[noreturn]] void ExecChild(const RunOptions& o, int out_fd, char** argv,
                            char** envp) {
  ::setpgid(0, 0);
  ::dup2(out_fd, 1);
  ::dup2(out_fd, 2);
  const int devnull = ::open("/dev/null", O_RDONLY);
  if (devnull >= 0) ::dup2(devnull, 0);
  if (!o.cwd.empty() && ::chdir(o.cwd.c_str()) != 0) ::_exit(126);
  if (o.cpu_limit_s > 0) {
    rlimit rl{static_cast<rlim_t>(o.cpu_limit_s),
              static_cast<rlim_t>(o.cpu_limit_s)};
    ::setrlimit(RLIMIT_CPU, &rl);
  }
  if (o.file_size_limit_bytes > 0) {
    rlimit rl{static_cast<rlim_t>(o.file_size_limit_bytes),
              static_cast<rlim_t>(o.file_size_limit_bytes)};
    ::setrlimit(RLIMIT_FSIZE, &rl);
  }
  rlimit core{0, 0};
  ::setrlimit(RLIMIT_CORE, &core);
  ::execvpe(argv[0], argv, envp);
  const char msg[] = "cannot execute the program\n";
  [[maybe_unused]] ssize_t n = ::write(2, msg, sizeof(msg) - 1);
  ::_exit(127);
}

void Drain(int fd, const RunOptions& o, RunResult* r) {
  char buf[65536];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n <= 0) return;
    const int64_t room = o.max_output_bytes -
                         static_cast<int64_t>(r->output.size());
    if (room > 0) {
      r->output.append(buf, static_cast<size_t>(std::min<int64_t>(n, room)));
    }
    if (n > room) r->output_truncated = true;
  }
}

}  // namespace

Result<RunResult> Run(const RunOptions& o) {
  if (o.argv.empty()) return Status::InvalidArgument("empty argv");
  std::vector<char*> argv;
  for (const std::string& a : o.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  for (const std::string& e : o.extra_env) env_strings.push_back(e);
  std::vector<char*> envp;
  for (const std::string& e : env_strings) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return Status::IOError(std::string("pipe: ") + std::strerror(errno));
  }
  const auto t0 = Clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    return Status::IOError(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) ExecChild(o, pipe_fds[1], argv.data(), envp.data());
  ::close(pipe_fds[1]);
  ::fcntl(pipe_fds[0], F_SETFL, O_NONBLOCK);

  RunResult r;
  bool eof = false;
  while (!eof) {
    const double left_ms = o.timeout_s * 1000.0 - MsSince(t0);
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
  r.wall_ms = MsSince(t0);
  if (WIFSIGNALED(status)) {
    r.term_signal = WTERMSIG(status);
  } else if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
  }
  return r;
}

}  // namespace skilldb::verify::internal
