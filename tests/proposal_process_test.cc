// Many proposers and usage recorders in parallel threads and processes.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <set>
#include <thread>

#include "process_fixtures.h"
#include "process_util.h"
#include "test_util.h"
#include "build_paths.h"

namespace skilldb {
namespace {

using testing::Candidate;
using testing::PassingVerifier;
using testing::StartProgram;
using testing::WaitForExit;

constexpr auto kChildLimit = std::chrono::minutes(5);

TEST_CASE(
    "parallel proposers in threads: every distinct candidate lands once, "
    "identical ones conflict") {
  testing::TempLibrary lib;
  PassingVerifier verifier;
  std::atomic<int> accepted{0}, aborted{0}, rejected{0}, errors{0};
  auto proposer = [&](int t) {
    for (int i = 0; i < 6; ++i) {
      // Each thread proposes its own candidates plus one shared skill that
      // all threads race for.
      Skill s = i == 5 ? Candidate(100) : Candidate(t * 10 + i);
      for (int attempt = 0; attempt < 10; ++attempt) {
        auto p = lib->Propose(s, {});
        if (!p.ok()) {
          ++errors;
          break;
        }
        if (!(*p)->Duplicates().ok() || !(*p)->Verify(verifier, {}).ok()) {
          ++errors;
          break;
        }
        auto outcome = (*p)->Commit();
        if (outcome.status().IsAborted()) {
          ++aborted;
          continue;  // retry from the new head
        }
        if (!outcome.ok()) {
          ++errors;
          break;
        }
        (outcome->accepted ? accepted : rejected)++;
        break;
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back(proposer, t);
  for (auto& t : threads) t.join();
  CHECK(errors.load() == 0);
  // 4 x 5 own candidates + the shared one once; the other 3 attempts at
  // the shared one end rejected as duplicates (after an abort when they
  // raced the winner, or directly when they proposed after it landed).
  CHECK(accepted.load() == 21);
  CHECK(rejected.load() == 3);
  auto stats = lib->Stats({});
  CHECK(stats->num_skills == 21);
  auto audit = lib->Audit({});
  REQUIRE(audit.ok());
  int audited_aborts = 0, audited_accepts = 0;
  for (const auto& e : *audit) {
    audited_aborts += e.event == "aborted";
    audited_accepts += e.event == "accepted";
  }
  CHECK(audited_aborts == aborted.load());
  CHECK(audited_accepts == 21);
}

TEST_CASE("parallel proposers in processes take turns and all land") {
  testing::TempDir dir;
  const std::string path = dir.Sub("lib");
  {
    Options o;
    o.create_if_missing = true;
    REQUIRE(Library::Open(o, path).ok());
  }
  // Each child is a worker program (tests/library_worker.cc) proposing
  // three candidates of its own, one writer open per candidate.
  std::vector<pid_t> children;
  for (int c = 0; c < 4; ++c) {
    children.push_back(StartProgram({SKILLDB_LIBRARY_WORKER, "propose", path,
                                     std::to_string(c * 10), "3"}));
  }
  for (pid_t pid : children) CHECK(WaitForExit(pid, kChildLimit) == 0);
  Options o;
  auto lib = Library::Open(o, path);
  REQUIRE(lib.ok());
  CHECK((*lib)->Stats({})->num_skills == 12);
  CHECK((*lib)->CurrentVersion() == 12);
}

TEST_CASE("usage counters are exact with increments from many processes") {
  testing::TempDir dir;
  const std::string path = dir.Sub("lib");
  Options o;
  o.create_if_missing = true;
  {
    auto lib = Library::Open(o, path);
    REQUIRE(lib.ok());
    REQUIRE((*lib)->Put(Skill::Make("hot", "a popular skill")).ok());
  }
  // Reader processes (the rollout workers) record usage through spools
  // while this process holds the library for writing and records too.
  auto writer = Library::Open(o, path);
  REQUIRE(writer.ok());
  std::vector<pid_t> children;
  for (int c = 0; c < 3; ++c) {
    children.push_back(
        StartProgram({SKILLDB_LIBRARY_WORKER, "usage", path, "400"}));
  }
  for (int i = 0; i < 250; ++i) {
    REQUIRE((*writer)->RecordUsage("hot", UsageEvent::kSelected, 2).ok());
  }
  for (pid_t pid : children) CHECK(WaitForExit(pid, kChildLimit) == 0);
  // Visible at once (spooled lines are counted), and exactly once after the
  // next writer folds them.
  CHECK((*writer)->GetUsage("hot")->count(UsageEvent::kSelected) == 1700);
  writer->reset();
  auto reopened = Library::Open(o, path);
  REQUIRE(reopened.ok());
  CHECK((*reopened)->GetUsage("hot")->count(UsageEvent::kSelected) == 1700);
}

}  // namespace
}  // namespace skilldb
