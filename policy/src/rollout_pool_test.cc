#include "skilldb/policy/rollout_pool.h"

#include <doctest/doctest.h>

#include <atomic>
#include <map>
#include <set>

#include "agents_test_util.h"
#include "skilldb/policy/rollout_store.h"

namespace skilldb::policy {
namespace {

// Answers each prompt with the answer for the task it names.
class TaskBackbone : public llm::Backbone {
 public:
  explicit TaskBackbone(std::map<std::string, std::string> answers)
      : answers_(std::move(answers)) {}
  std::string Model() const override { return "task-model"; }
  Result<std::vector<llm::Generation>> Generate(
      const std::vector<llm::Chat>& prompts,
      const llm::SamplingOptions& options) override {
    std::vector<llm::Generation> out;
    for (const llm::Chat& chat : prompts) {
      llm::Generation g;
      for (const auto& [task, answer] : answers_) {
        if (chat.at(1).content.find("Task `" + task + "`") == std::string::npos)
          continue;
        for (int i = 0; i < options.n; ++i) {
          llm::Sample s;
          s.text = answer;
          g.samples.push_back(s);
        }
      }
      std::lock_guard<std::mutex> lock(mu_);
      ++usage_.requests;
      usage_.completion_tokens += 10 * static_cast<uint64_t>(options.n);
      out.push_back(std::move(g));
    }
    return out;
  }
  Result<std::vector<llm::ScoreResult>> Score(
      const std::vector<llm::ScoreRequest>&) override {
    return Status::NotSupported("no scoring");
  }
  llm::TokenUsage Usage() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return usage_;
  }

 private:
  std::map<std::string, std::string> answers_;
  mutable std::mutex mu_;
  llm::TokenUsage usage_;
};

TEST_CASE("the pool runs every job concurrently and counts what they did") {
  testing::SeedLibrary lib;
  verify::VerifierOptions vo = testing::HostOptions();
  vo.host_workers = 2;
  auto verifier = testing::HostVerifier(vo);
  std::map<std::string, std::string> answers;
  std::vector<PolicyTask> tasks;
  for (const char* name :
       {"sum_dim1_fp32", "matmul_fp32", "softmax_rows_fp32"}) {
    // The team's wrong candidates: each is verified (compiled, run, checked)
    // without the timing rounds a correct one costs on a loaded machine.
    answers[name] = testing::Fenced(testing::CandidateSource(name, "wrong.cc"));
    tasks.push_back(testing::HostTask(name));
  }
  TaskBackbone backbone(answers);
  Bm25Selector selector(&*lib);
  skilldb::testing::TempDir dir;
  auto store = RolloutStore::Open(dir.Sub("r.sqlite"));
  REQUIRE(store.ok());
  PolicyAgentDeps deps;
  deps.backbone = &backbone;
  deps.selector = &selector;
  deps.verifier = verifier.get();
  deps.library = &*lib;
  deps.store = store->get();
  auto agent = PolicyAgent::Make(deps);
  REQUIRE(agent.ok());

  std::vector<RolloutJob> jobs;
  for (const PolicyTask& t : tasks) {
    for (int g = 0; g < 2; ++g) {
      RolloutJob job{&t, PolicyOptions()};
      job.options.max_turns = 1;
      job.options.group = "step-0/" + t.task.name;
      jobs.push_back(job);
    }
  }
  std::atomic<int> done{0};
  PoolOptions po;
  po.concurrency = 6;
  po.workers = 2;
  po.on_done = [&](size_t, const Result<Trajectory>& r) {
    CHECK(r.ok());
    ++done;
  };
  auto result = RolloutPool(agent->get(), po).Run(jobs);
  REQUIRE(result.ok());
  CHECK(done == 6);
  const PoolCounters& c = result->counters;
  INFO(ToJson(c));
  CHECK(c.jobs == 6);
  CHECK(c.trajectories == 6);
  CHECK(c.errors == 0);
  CHECK(c.turns == 6);
  CHECK(c.samples == 6);
  CHECK(c.verified == 6);
  CHECK(c.solved == 0);
  CHECK(c.completion_tokens == 60);
  CHECK(c.turns_per_minute > 0);
  CHECK(c.turns_per_minute_per_worker ==
        doctest::Approx(c.turns_per_minute / 2));
  CHECK(c.time.generation_ms >= 0);
  CHECK(c.time.compile_ms + c.time.correctness_ms > 0);
  std::set<std::string> ids;
  for (size_t i = 0; i < jobs.size(); ++i) {
    REQUIRE(result->results[i].ok());
    CHECK(result->results[i]->task == jobs[i].task->task.name);
    CHECK(result->results[i]->group == jobs[i].options.group);
    ids.insert(result->results[i]->id);
  }
  CHECK(ids.size() == 6);
  auto listed = (*store)->List(ListOptions{.group = "step-0/matmul_fp32"});
  REQUIRE(listed.ok());
  CHECK(listed->size() == 2);
}

TEST_CASE("a pool without a task or with no concurrency refuses to run") {
  testing::QueueBackbone backbone;
  testing::SeedLibrary lib;
  Bm25Selector selector(&*lib);
  auto verifier = testing::HostVerifier();
  auto agent = PolicyAgent::Make({&backbone, &selector, verifier.get()});
  REQUIRE(agent.ok());
  CHECK(RolloutPool(agent->get(), PoolOptions{})
            .Run({RolloutJob{}})
            .status()
            .IsInvalidArgument());
  PoolOptions none;
  none.concurrency = 0;
  CHECK(RolloutPool(agent->get(), none).Run({}).status().IsInvalidArgument());
}

}  // namespace
}  // namespace skilldb::policy
