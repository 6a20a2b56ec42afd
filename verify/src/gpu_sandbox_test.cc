// The CUDA worker's confinement (worker/sandbox.h) without a GPU: phase 1
// (namespaces and the fresh root) and phase 2 (the seccomp allowlist) are
// entered in a forked child, which then probes what it can reach and exits
// with a code the test checks. The runtime's own needs (ioctl on the
// device nodes, ...) are covered by the GPU suite's containment phase.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "file_util.h"
#include "worker/sandbox.h"
#include "worker/worker_loop.h"

namespace skilldb::verify::internal {
namespace {

struct Scratch {
  Scratch() { dir = *MakeTempDir("/tmp", "skilldb-gpu-sandbox-test-"); }
  ~Scratch() { RemoveTree(dir); }
  std::string dir;
};

// Runs `body` in a forked child after phase 1 (and phase 2 if `seccomp`);
// returns the child's exit status, or 1000 + signal.
template <typename Body>
int InSandbox(const std::string& scratch, bool seccomp, std::string* notes,
              Body body) {
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(pipe_fds[0]);
    GpuSandboxOptions o;
    o.scratch_dir = scratch;
    std::string ns;
    if (!EnterGpuNamespaces(o, &ns).ok()) ::_exit(90);
    std::string all = ns;
    if (seccomp) {
      auto entered = EnterGpuSandbox(o, ns);
      if (!entered.ok()) ::_exit(91);
      all = *entered;
    }
    [[maybe_unused]] ssize_t n = ::write(pipe_fds[1], all.data(), all.size());
    ::close(pipe_fds[1]);
    ::_exit(body());
  }
  ::close(pipe_fds[1]);
  char buf[512];
  ssize_t n;
  while ((n = ::read(pipe_fds[0], buf, sizeof(buf))) > 0) notes->append(buf, n);
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
}

bool CanOpen(const char* path, int flags) {
  const int fd =
      static_cast<int>(::syscall(SYS_openat, AT_FDCWD, path, flags, 0644));
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

TEST_CASE(
    "the CUDA worker's namespaces: scratch writable, host files absent, PID "
    "1") {
  Scratch s;
  const std::string outside =
      "/tmp/skilldb-gpu-sandbox-escape-" + std::to_string(::getpid());
  RemoveTree(outside);
  std::string notes;
  const std::string inside = s.dir + "/inside";
  const int code = InSandbox(s.dir, false, &notes, [&] {
    if (CanOpen("/etc/passwd", O_RDONLY)) return 10;
    if (CanOpen(outside.c_str(), O_WRONLY | O_CREAT)) return 11;
    if (CanOpen("/usr/skilldb-probe", O_WRONLY | O_CREAT)) return 12;
    if (!CanOpen(inside.c_str(), O_WRONLY | O_CREAT)) return 13;
    if (!CanOpen("/usr/lib", O_RDONLY | O_DIRECTORY)) return 14;
    if (::getpid() != 1) return 15;
    if (!CanOpen("/dev/null", O_WRONLY)) return 16;
    return 0;
  });
  INFO(notes);
  if (notes.find("mntns") == std::string::npos) {
    // No namespaces here: the notes must say why.
    CHECK(notes.find("no namespaces") != std::string::npos);
    return;
  }
  CHECK(notes.find("netns mntns pidns") != std::string::npos);
  CHECK(code == 0);
  CHECK(!FileExists(outside));
  CHECK(FileExists(inside));
}

TEST_CASE(
    "the CUDA worker's allowlist: threads run, a process or a socket traps") {
  Scratch s;
  std::string notes;
  // Threads (the CUDA runtime starts them) keep working.
  const int threads = InSandbox(s.dir, true, &notes, [] {
    int x = 0;
    std::thread t([&] { x = 7; });
    t.join();
    return x == 7 ? 0 : 20;
  });
  INFO(notes);
  CHECK(threads == 0);
  CHECK(notes.find("seccomp-allowlist(after-cuda-init") != std::string::npos);
  CHECK(notes.find("no-caps") != std::string::npos);
  std::string ignored;
  CHECK(InSandbox(s.dir, true, &ignored, [] {
          return static_cast<int>(
                     ::syscall(SYS_clone, 17 /*SIGCHLD*/, 0, 0, 0, 0)) >= 0
                     ? 21
                     : 22;
        }) == kWorkerExitSandboxViolation);
  CHECK(InSandbox(s.dir, true, &ignored, [] {
          return ::syscall(SYS_socket, 2 /*AF_INET*/, 1, 0) >= 0 ? 23 : 24;
        }) == kWorkerExitSandboxViolation);
  CHECK(InSandbox(s.dir, true, &ignored, [] {
          return ::syscall(SYS_execve, "/bin/true", nullptr, nullptr) >= 0 ? 25
                                                                           : 26;
        }) == kWorkerExitSandboxViolation);
}

}  // namespace
}  // namespace skilldb::verify::internal
