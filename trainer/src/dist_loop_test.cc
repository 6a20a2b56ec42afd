// The RL loop data-parallel: two `skilldb-ml train demo` processes (gloo, one
// run directory, rank 0 owning the library) sample different rollouts and
// still take the same update at every step.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "skilldb/trainer/report.h"
#include "test_dir.h"
#include "build_paths.h"

namespace skilldb::trainer {
namespace {

using nlohmann::json;

// Starts `args` as rank `rank` of two, stdout and stderr to files.
pid_t StartRank(const std::vector<std::string>& args, int rank, int port,
                const std::string& out_file, const std::string& err_file) {
  // Everything the child needs is made before fork: it may only make
  // async-signal-safe calls before exec.
  std::vector<std::string> args_copy = args;
  std::vector<char*> argv;
  for (std::string& a : args_copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string v = *e;
    const std::string name = v.substr(0, v.find('='));
    if (name != "RANK" && name != "WORLD_SIZE" && name != "MASTER_ADDR" &&
        name != "MASTER_PORT") {
      env.push_back(v);
    }
  }
  env.push_back("RANK=" + std::to_string(rank));
  env.push_back("WORLD_SIZE=2");
  env.push_back("MASTER_ADDR=127.0.0.1");
  env.push_back("MASTER_PORT=" + std::to_string(port));
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  const int out_fd = open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int err_fd = open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  REQUIRE(out_fd >= 0);
  REQUIRE(err_fd >= 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  close(out_fd);
  close(err_fd);
  return pid;
}

// The exit status of `pid`, killing it past `seconds` (then -1).
int WaitBounded(pid_t pid, int seconds) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::vector<json> StepLines(const std::string& path) {
  std::vector<json> out;
  auto text = ReadFile(path);
  REQUIRE(text.ok());
  size_t start = 0;
  while (start < text->size()) {
    size_t end = text->find('\n', start);
    if (end == std::string::npos) end = text->size();
    json j = json::parse(text->substr(start, end - start), nullptr, false);
    if (j.is_object() && j.contains("step")) out.push_back(std::move(j));
    start = end + 1;
  }
  return out;
}

TEST_CASE("two gloo ranks run the RL loop and take the same update") {
  ScopedTempDir temp("skilldb_dist_loop_test");
  const std::string run = temp.path() + "/run";
  const int port = 40000 + static_cast<int>(getpid() % 20000);
  // A short cold start (both ranks, its gradients all-reduced too), so
  // that rollouts earn rewards and the updates are not zero: 5 epochs, as
  // the learning test's, where the policy already earns 0.46 on average
  // (the demo's 30 made this test cost two minutes).
  const std::vector<std::string> args = {
      SKILLDB_ML, "train", "demo",  "--steps", "2",       "--groups",
      "4",        "--turns", "1",   "--seed",  "3",       "--sft-epochs",
      "5",        "--out",   run};
  pid_t pids[2];
  for (int rank = 0; rank < 2; ++rank) {
    const std::string base = temp.path() + "/rank" + std::to_string(rank);
    pids[rank] = StartRank(args, rank, port, base + ".out", base + ".err");
  }
  for (int rank = 0; rank < 2; ++rank) {
    const int code = WaitBounded(pids[rank], 600);
    auto err = ReadFile(temp.path() + "/rank" + std::to_string(rank) + ".err");
    CHECK_MESSAGE(code == 0, "rank " << rank << " exited " << code << ": "
                                     << (err.ok() ? *err : ""));
  }
  const auto a = StepLines(temp.path() + "/rank0.out");
  const auto b = StepLines(temp.path() + "/rank1.out");
  REQUIRE(a.size() == 2);
  REQUIRE(b.size() == 2);
  bool sampled_differently = false, updated = false;
  for (size_t i = 0; i < a.size(); ++i) {
    MESSAGE("rank 0: " << a[i].dump());
    MESSAGE("rank 1: " << b[i].dump());
    CHECK(a[i]["rank"] == 0);
    CHECK(b[i]["rank"] == 1);
    CHECK(a[i]["failed_rollouts"] == 0);
    CHECK(b[i]["failed_rollouts"] == 0);
    CHECK(a[i]["trained"].get<bool>());
    CHECK(b[i]["trained"].get<bool>());
    // The norm is taken of the all-reduced gradients: the same bits on
    // both ranks, though each computed its loss on its own rollouts.
    CHECK(a[i]["grad_norm"] == b[i]["grad_norm"]);
    CHECK(a[i]["lr"] == b[i]["lr"]);
    sampled_differently |= a[i]["loss"] != b[i]["loss"];
    updated |= a[i]["grad_norm"].get<double>() > 0;
  }
  CHECK(sampled_differently);
  CHECK(updated);
  // Each rank keeps its rollouts; only rank 0 writes the step lines.
  CHECK(ReadFile(run + "/rollouts.rank0.sqlite").ok());
  CHECK(ReadFile(run + "/rollouts.rank1.sqlite").ok());
  CHECK(StepLines(run + "/steps.jsonl").size() == 2);
}

}  // namespace
}  // namespace skilldb::trainer
