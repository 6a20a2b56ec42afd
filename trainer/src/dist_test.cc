// Two CPU processes (gloo) train on different data; with the gradient
// all-reduce their parameters stay identical, without it they diverge.
#include <doctest/doctest.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "build_paths.h"
#include "skilldb/trainer/report.h"
#include "test_dir.h"

namespace {

// Runs both ranks; the number that failed. A pair still running after
// `limit_s` (a rank waiting for a collective the other never joins) is
// killed, and both count as failed.
int RunPair(const std::string& out, int port, bool allreduce,
            const std::vector<std::string>& extra_args = {},
            const std::vector<std::string>& extra_env = {}, int limit_s = 300) {
  // Argument and environment vectors are made before fork: the child may
  // only make async-signal-safe calls before exec.
  const std::string model = std::string(SKILLDB_MODELS_TESTDATA) + "/qwen2-tiny";
  std::vector<std::string> args = {TRAINER_DIST_CHECK, model, out};
  if (!allreduce) args.push_back("--no-allreduce");
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> envs[2];
  std::vector<char*> envp[2];
  for (int rank = 0; rank < 2; ++rank) {
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string v = *e;
      const std::string name = v.substr(0, v.find('='));
      if (name != "RANK" && name != "WORLD_SIZE" && name != "MASTER_ADDR" &&
          name != "MASTER_PORT" && name != "SKILLDB_DIST_TIMEOUT_S") {
        envs[rank].push_back(v);
      }
    }
    envs[rank].insert(envs[rank].end(), extra_env.begin(), extra_env.end());
    for (std::string v : {"RANK=" + std::to_string(rank),
                          std::string("WORLD_SIZE=2"),
                          std::string("MASTER_ADDR=127.0.0.1"),
                          "MASTER_PORT=" + std::to_string(port)}) {
      envs[rank].push_back(std::move(v));
    }
    for (std::string& e : envs[rank]) envp[rank].push_back(e.data());
    envp[rank].push_back(nullptr);
  }
  pid_t pids[2];
  for (int rank = 0; rank < 2; ++rank) {
    pids[rank] = fork();
    REQUIRE(pids[rank] >= 0);
    if (pids[rank] == 0) {
      execve(argv[0], argv.data(), envp[rank].data());
      _exit(127);
    }
  }
  int failures = 0;
  bool done[2] = {false, false};
  for (int waited_ms = 0; !(done[0] && done[1]); waited_ms += 50) {
    if (waited_ms > limit_s * 1000) {
      for (int rank = 0; rank < 2; ++rank) {
        if (done[rank]) continue;
        kill(pids[rank], SIGKILL);
        waitpid(pids[rank], nullptr, 0);
        done[rank] = true;
      }
      return 2;
    }
    for (int rank = 0; rank < 2; ++rank) {
      int status = 0;
      if (done[rank] || waitpid(pids[rank], &status, WNOHANG) != pids[rank])
        continue;
      done[rank] = true;
      failures += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    usleep(50 * 1000);
  }
  return failures;
}

TEST_CASE("two gloo ranks keep identical parameters") {
  skilldb::trainer::ScopedTempDir temp("skilldb_dist_test");
  const std::string out = temp.path();
  const int port = 20000 + static_cast<int>(getpid() % 20000);
  REQUIRE(RunPair(out, port, true) == 0);
  auto a = skilldb::trainer::ReadFile(out + "/params.rank0.bin");
  auto b = skilldb::trainer::ReadFile(out + "/params.rank1.bin");
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->size() > 1000);
  CHECK(*a == *b);

  REQUIRE(RunPair(out, port + 1, false) == 0);
  auto c = skilldb::trainer::ReadFile(out + "/params.rank0.bin");
  auto d = skilldb::trainer::ReadFile(out + "/params.rank1.bin");
  REQUIRE(c.ok());
  REQUIRE(d.ok());
  CHECK(*c != *d);  // the control: without the all-reduce they diverge
}

TEST_CASE(
    "a rank with no completion tokens still joins the step's all-reduce") {
  // Before, its Step failed (InvalidArgument) and the RL step skipped it,
  // and the other rank waited in the all-reduce for it.
  skilldb::trainer::ScopedTempDir temp("skilldb_dist_test");
  const std::string out = temp.path();
  const int port = 20000 + static_cast<int>((getpid() + 7) % 20000);
  REQUIRE(RunPair(out, port, true, {"--empty-step"}, {}, /*limit_s=*/120) == 0);
  auto a = skilldb::trainer::ReadFile(out + "/params.rank0.bin");
  auto b = skilldb::trainer::ReadFile(out + "/params.rank1.bin");
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(*a == *b);
}

TEST_CASE(
    "a collective waits SKILLDB_DIST_TIMEOUT_S for a rank that falls behind") {
  // Rank 0 sleeps 5 s before its second step (as it does while it distills
  // skills and evaluates the held-out split): within the timeout rank 1
  // waits for it, past it rank 1's all-reduce fails and the pair ends.
  skilldb::trainer::ScopedTempDir temp("skilldb_dist_test");
  const std::string out = temp.path();
  const int port = 20000 + static_cast<int>((getpid() + 13) % 20000);
  CHECK(RunPair(out, port, true, {"--stagger", "5"},
                {"SKILLDB_DIST_TIMEOUT_S=2"},
                /*limit_s=*/120) > 0);
  REQUIRE(RunPair(out, port + 1, true, {"--stagger", "5"}, {},
                  /*limit_s=*/120) == 0);
  auto a = skilldb::trainer::ReadFile(out + "/params.rank0.bin");
  auto b = skilldb::trainer::ReadFile(out + "/params.rank1.bin");
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(*a == *b);
}

TEST_CASE("SKILLDB_DIST_TIMEOUT_S out of range is refused by name") {
  skilldb::trainer::ScopedTempDir temp("skilldb_dist_test");
  const std::string cmd = "SKILLDB_DIST_TIMEOUT_S=0 RANK=0 WORLD_SIZE=1 " +
                          std::string(TRAINER_DIST_CHECK) + " " +
                          SKILLDB_MODELS_TESTDATA + "/qwen2-tiny " +
                          temp.path() + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string text;
  char buf[512];
  while (size_t n = fread(buf, 1, sizeof buf, p)) text.append(buf, n);
  const int status = pclose(p);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  CHECK(text.find("SKILLDB_DIST_TIMEOUT_S='0'") != std::string::npos);
}

}  // namespace
