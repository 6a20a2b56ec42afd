// Running the skilldb binary in tests: a child process with its own HOME,
// stdin fed, stdout/stderr captured, exit code returned.
#ifndef SKILLDB_TESTS_CLI_UTIL_H_
#define SKILLDB_TESTS_CLI_UTIL_H_

#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_util.h"
#include "build_paths.h"

#ifndef SKILLDB_CLI_PATH
#error "SKILLDB_CLI_PATH must name the skilldb binary"
#endif

namespace skilldb::testing {

// Whether `text` contains `part`.
inline bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

using Json = nlohmann::json;

struct Run {
  int code = -1;
  std::string out;
  std::string err;
};

// Runs the CLI with `args`, feeding `input` on stdin, with HOME pointing at
// `home` so the default library never touches the real one. With
// `stdout_path`, stdout goes to that file (e.g. /dev/full) instead of
// Run::out. A CLI still running after kCliDeadlineS seconds is killed (its
// process group too) and the run fails with code 124 and a note on stderr,
// so a hang is a failure that says where, not a test timeout.
inline constexpr int kCliDeadlineS = 600;
inline Run Cli(const std::string& home, const std::vector<std::string>& args,
               const std::string& input = "",
               const std::vector<std::string>& extra_env = {},
               const std::string& stdout_path = "") {
  // Everything the child needs is made before fork: the test process may
  // have threads (a scripted server's), and between fork and exec the child
  // may only make async-signal-safe calls (an allocation there can wait
  // forever on a lock another thread held at the fork, as ASan's allocator
  // does).
  std::vector<std::string> env = {"HOME=" + home, "PATH=/usr/bin:/bin",
                                  "USER=tester"};
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_s = {SKILLDB_CLI_PATH};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  const char* out_path = stdout_path.empty() ? nullptr : stdout_path.c_str();
  int in[2], out[2], err[2];
  REQUIRE(pipe(in) == 0);
  REQUIRE(pipe(out) == 0);
  REQUIRE(pipe(err) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    setpgid(0, 0);
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    if (out_path != nullptr) {
      const int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd < 0) _exit(126);
      dup2(fd, 1);
      close(fd);
    }
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) close(fd);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  close(err[1]);
  if (!input.empty()) {
    REQUIRE(write(in[1], input.data(), input.size()) ==
            static_cast<ssize_t>(input.size()));
  }
  close(in[1]);
  Run r;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[4096];
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(kCliDeadlineS);
  bool killed = false;
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      killed = true;
      break;
    }
    poll(fds, 2, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof(buf));
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
      }
    }
  }
  for (pollfd& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (killed) {
    r.code = 124;
    r.err += "\n[cli_util: the CLI was still running after " +
             std::to_string(kCliDeadlineS) + " s and was killed]\n";
  }
  return r;
}

inline const char* kFixture =
    R"({"id":"smem-tiling","title":"Tile the K loop through shared memory","summary":"Stage tiles of A and B in shared memory.","body":"Load a tile, sync, multiply, repeat.","tags":["shared-memory","tiling"],"ops":["matmul"],"arch":["sm_80","sm_90"],"language":"cuda"}
{"id":"warp-shuffle-reduce","title":"Warp shuffle reduction","body":"Use __shfl_down_sync to reduce within a warp.","tags":["warp"],"ops":["reduction"],"language":"cuda"}
{"id":"bank-padding","title":"Pad shared memory rows to avoid bank conflicts","body":"Add one element of padding per row of the shared-memory tile.","tags":["shared-memory","bank-conflicts"],"ops":["transpose"],"language":"cuda"}
{"id":"triton-autotune","title":"Autotune Triton block sizes","body":"Use triton.autotune over BLOCK_M, BLOCK_N and num_warps.","tags":["triton"],"ops":["matmul"],"language":"triton"}
)";

struct Fixture {
  testing::TempDir dir;
  std::string home = dir.Sub("home");
  std::string db = dir.Sub("lib");
  std::string file = dir.Sub("skills.jsonl");
  Fixture() {
    std::filesystem::create_directories(home);
    std::ofstream(file) << kFixture;
  }
  Run operator()(std::vector<std::string> args, const std::string& input = "") {
    args.insert(args.begin(), {"--db", db});
    return Cli(home, args, input);
  }
  // As operator(), with more environment and stdout sent to a file.
  Run With(std::vector<std::string> args,
           const std::vector<std::string>& extra_env,
           const std::string& stdout_path = "") {
    args.insert(args.begin(), {"--db", db});
    return Cli(home, args, "", extra_env, stdout_path);
  }
  void Init() {
    REQUIRE(operator()({"init"}).code == 0);
    REQUIRE(operator()({"import", file, "-m", "fixture"}).code == 0);
  }
};

}  // namespace skilldb::testing

#endif  // SKILLDB_TESTS_CLI_UTIL_H_
