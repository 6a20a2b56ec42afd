// Library programs in processes of their own, for the tests that put
// several processes on one library.
//
// A child is always exec'd, never only forked: the test process has started
// RocksDB's thread pool (and ASan's allocator keeps locks of its own), and a
// forked child that opens a library can wait forever on a lock a thread of
// the parent held at the fork, or for a background job no thread runs.
#ifndef SKILLDB_TESTS_PROCESS_UTIL_H_
#define SKILLDB_TESTS_PROCESS_UTIL_H_

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace skilldb::testing {

// Starts `args[0]` with `args` (stdout and stderr inherited). `close_fd`, if
// not -1, is closed in the child before exec (the read end of a pipe whose
// write end the child is given by number).
inline pid_t StartProgram(const std::vector<std::string>& args,
                          int close_fd = -1) {
  // Everything the child uses is built before fork: between fork and exec
  // only async-signal-safe calls are allowed.
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (close_fd >= 0) close(close_fd);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

// How a child ended: its exit code, or -signal if a signal ended it, or
// kTimedOut if it was still running at the deadline (it is then killed).
inline constexpr int kTimedOut = 1000;
inline int ExitCode(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return -WTERMSIG(status);
  return -1;
}

// True while `pid` runs; once it has ended, false with `*code` set.
inline bool StillRunning(pid_t pid, int* code) {
  int status = 0;
  const pid_t r = waitpid(pid, &status, WNOHANG);
  if (r == 0) return true;
  *code = r == pid ? ExitCode(status) : -1;
  return false;
}

// Waits for `pid` at most `limit`; a child still running then is killed,
// so a hang fails the test with a message instead of the test's timeout.
inline int WaitForExit(pid_t pid, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int code = 0;
  while (StillRunning(pid, &code)) {
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
      return kTimedOut;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return code;
}

}  // namespace skilldb::testing

#endif  // SKILLDB_TESTS_PROCESS_UTIL_H_
