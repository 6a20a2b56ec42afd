// Many proposers and usage recorders in parallel threads and processes.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <set>
#include <thread>

#include "test_util.h"

namespace skilldb {
namespace {

class PassingVerifier : public Verifier {
 public:
  std::string_view Name() const override { return "passing"; }
  Result<VerificationReport> Verify(
      const VerificationRequest& request) override {
    VerificationReport r;
    r.verifier = "passing";
    r.task = request.task;
    r.device_class = "host";
    r.compiled = true;
    r.correctness = {true, true, 3, 0, 0, {}};
    for (int i = 0; i < 3; ++i) {
      RoundTiming t;
      t.speedup_ratio = 1.3;
      r.rounds.push_back(t);
    }
    r.speedup = {1.3, 1.25, 1.35, 0.95};
    r.passed = true;
    return r;
  }
};

Skill Candidate(int i) {
  // Distinct topics, so no two candidates are near duplicates.
  static const char* kTopics[] = {
      "coalesced global loads", "bank conflict padding",
      "warp shuffle reduce",    "cp async pipelining",
      "tensor core mma",        "persistent tile scheduler",
      "split k reduction",      "online softmax rescale",
      "layernorm welford",      "tma bulk copies",
      "grid stride loops",      "thread coarsening"};
  Skill s = Skill::Make("cand-" + std::to_string(i), kTopics[i % 12]);
  s.body = std::string(kTopics[i % 12]) + " variant " + std::to_string(i) +
           " explained with its own distinct words number " +
           std::to_string(i * 7919);
  return s;
}

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
  std::vector<pid_t> children;
  for (int c = 0; c < 4; ++c) {
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      PassingVerifier verifier;
      for (int i = 0; i < 3; ++i) {
        Options o;
        o.lock_timeout_ms = 60000;  // wait for the other processes' turns
        o.sync_commits = false;
        auto lib = Library::Open(o, path);
        if (!lib.ok()) {
          fprintf(stderr, "child open: %s\n", lib.status().ToString().c_str());
          _exit(10);
        }
        auto p = (*lib)->Propose(Candidate(c * 10 + i), {});
        if (!p.ok() || !(*p)->Verify(verifier, {}).ok()) _exit(11);
        auto outcome = (*p)->Commit();
        if (!outcome.ok() || !outcome->accepted) _exit(12);
      }
      _exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
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
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      Options ro;
      ro.read_only = true;
      auto lib = Library::Open(ro, path);
      if (!lib.ok()) _exit(10);
      for (int i = 0; i < 400; ++i) {
        if (!(*lib)->RecordUsage("hot", UsageEvent::kSelected).ok()) _exit(11);
      }
      _exit(0);
    }
    children.push_back(pid);
  }
  for (int i = 0; i < 250; ++i) {
    REQUIRE((*writer)->RecordUsage("hot", UsageEvent::kSelected, 2).ok());
  }
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WEXITSTATUS(status) == 0);
  }
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
