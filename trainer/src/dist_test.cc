// Two CPU processes (gloo) train on different data; with the gradient
// all-reduce their parameters stay identical, without it they diverge.
#include <doctest/doctest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "skilldb/trainer/report.h"

namespace {

int RunPair(const std::string& out, int port, bool allreduce) {
  pid_t pids[2];
  for (int rank = 0; rank < 2; ++rank) {
    pids[rank] = fork();
    REQUIRE(pids[rank] >= 0);
    if (pids[rank] == 0) {
      setenv("RANK", std::to_string(rank).c_str(), 1);
      setenv("WORLD_SIZE", "2", 1);
      setenv("MASTER_ADDR", "127.0.0.1", 1);
      setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
      const std::string model =
          std::string(SKILLDB_MODELS_TESTDATA) + "/qwen2-tiny";
      if (allreduce) {
        execl(TRAINER_DIST_CHECK, TRAINER_DIST_CHECK, model.c_str(),
              out.c_str(), (char*)nullptr);
      } else {
        execl(TRAINER_DIST_CHECK, TRAINER_DIST_CHECK, model.c_str(),
              out.c_str(), "--no-allreduce", (char*)nullptr);
      }
      _exit(127);
    }
  }
  int failures = 0;
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    failures += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  return failures;
}

TEST_CASE("two gloo ranks keep identical parameters") {
  char tmpl[] = "/tmp/skilldb_dist_test_XXXXXX";
  REQUIRE(mkdtemp(tmpl));
  const std::string out = tmpl;
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

}  // namespace
