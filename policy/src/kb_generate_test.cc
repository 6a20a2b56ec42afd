// RunKernelBench with an in-test Backbone and Evaluator (no model, no
// Python): the layout, the results kernelbench eval reads back, the
// trajectories, per-turn scores, and that generation overlaps verification.
#include <doctest/doctest.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>

#include "skilldb/policy/kernelbench_run.h"
#include "skilldb/util/sha256.h"
#include "test_util.h"

namespace skilldb::policy {
namespace kb_generate_test {

namespace kbv = verify::kb;

std::string Answer(const std::string& tag) {
  return "import torch\nclass ModelNew(torch.nn.Module):\n    def "
         "forward(self, x):\n"
         "        return x  # " +
         tag + "\n";
}

// Answers by problem: problem 1 wrong then right, problem 2 no code.
class FakeBackbone : public llm::Backbone {
 public:
  std::string Model() const override { return model_; }
  Result<std::vector<llm::Generation>> Generate(
      const std::vector<llm::Chat>& prompts,
      const llm::SamplingOptions&) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++calls_;
      cv_.notify_all();
    }
    if (down_ || (down_second_ && prompts.front().size() > 2))
      return Status::Unavailable("the fake server is down");
    const std::string& user = prompts.front()[1].content;
    const bool second = prompts.front().size() > 2;
    std::string text;
    if (user.find("1_One.py") != std::string::npos) {
      text = "```python\n" + Answer(second ? "right" : "wrong") + "```";
    } else {
      text = "no code from me";
    }
    llm::Generation g;
    g.samples.push_back(llm::Sample{.text = text, .finish_reason = "stop"});
    return std::vector<llm::Generation>{g};
  }
  Result<std::vector<llm::ScoreResult>> Score(
      const std::vector<llm::ScoreRequest>&) override {
    return Status::NotSupported("fake");
  }
  llm::TokenUsage Usage() const override { return {}; }

  int calls() {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }
  std::string model_ = "fake";
  std::atomic<bool> down_{false};
  std::atomic<bool> down_second_{false};  // down for second turns only

  // Blocks until Generate is called once more (false after 20 s).
  bool WaitNextCall() {
    std::unique_lock<std::mutex> lock(mu_);
    const int n = calls_ + 1;
    return cv_.wait_for(lock, std::chrono::seconds(20),
                        [&] { return calls_ >= n; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int calls_ = 0;
};

// Judges by the answer's tag. Its first evaluation waits until the backbone
// is called again: it can only return (in time) if generation goes on while
// an answer is being verified, not in batches between verifications.
class FakeEvaluator : public kbv::Evaluator {
 public:
  explicit FakeEvaluator(FakeBackbone* backbone) : backbone_(backbone) {}
  Result<kbv::EvalResult> Evaluate(const kbv::Problem& p,
                                   std::string_view answer,
                                   std::string_view) override {
    if (first_.exchange(false)) overlapped_ = backbone_->WaitNextCall();
    kbv::EvalResult r;
    r.level = p.level;
    r.problem = p.id;
    r.problem_name = p.name;
    r.answer_hash = util::Sha256Hex(answer);
    r.compiled = true;
    const bool right = answer.find("# right") != std::string_view::npos;
    r.correct = right;
    r.credited = right;
    r.verdict = right ? "correct" : "incorrect";
    if (right) {
      r.candidate_ms = 1;
      r.eager.median_ms = 2;
      r.speedup_eager = 2.0;
    } else {
      r.trials = 5;
      r.mismatches = {"element 3: 1.5 vs 1.0"};
    }
    ++evaluations_;
    return r;
  }
  void Prebuild(const kbv::Problem&, std::string_view,
                std::string_view) override {}
  Result<kbv::DeviceInfo> Describe() override {
    return kbv::DeviceInfo{.name = "host", .torch_version = "9.9"};
  }
  const kbv::EvalOptions& options() const override { return options_; }

  std::atomic<bool> first_{true};
  std::atomic<bool> overlapped_{false};
  std::atomic<int> evaluations_{0};

 private:
  FakeBackbone* backbone_;
  kbv::EvalOptions options_;
};

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

std::vector<nlohmann::json> ReadJsonLines(const std::string& path) {
  std::ifstream in(path);
  std::vector<nlohmann::json> out;
  for (std::string line; std::getline(in, line);)
    out.push_back(nlohmann::json::parse(line));
  return out;
}

kbv::Problem MakeProblem(int id, const std::string& name) {
  kbv::Problem p;
  p.level = 1;
  p.id = id;
  p.name = name;
  p.source =
      "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
      "        return x\n";
  p.degenerate = "no";
  return p;
}

TEST_CASE(
    "kernelbench run overlaps generation with verification and writes the "
    "layout") {
  skilldb::testing::TempDir dir;
  auto store = kbv::TaskStore::Open(dir.Sub("store"));
  REQUIRE(store.ok());
  REQUIRE(store->Put(MakeProblem(1, "1_One.py")).ok());
  REQUIRE(store->Put(MakeProblem(2, "2_Two.py")).ok());
  FakeBackbone backbone;
  FakeEvaluator evaluator(&backbone);
  KernelBenchRunOptions o;
  o.out_dir = dir.Sub("run");
  o.level = 1;
  o.turns = 2;
  o.samples = 2;
  o.format = KernelBenchFormat::kCpp;
  auto report = RunKernelBench(o, &backbone, &evaluator, *store);
  REQUIRE_MESSAGE(report.ok(), report.status().message());
  CHECK(evaluator.overlapped_);
  CHECK(evaluator.evaluations_ ==
        4);  // problem 1: 2 samples x 2 turns; eval recomputes none
  CHECK(report->no_answer == 4);
  CHECK(report->eval.resumed == 4);
  REQUIRE(report->turns.size() == 2);
  CHECK(report->turns[0].correct == 0);
  CHECK(report->turns[1].correct == 2);
  CHECK(report->turns[1].fast_1 == doctest::Approx(0.5));
  REQUIRE(report->eval.eager.size() == 1);
  CHECK(report->eval.eager[0].fast_p.at(1.0) == doctest::Approx(0.5));
  CHECK(report->eval.eager[0].pass_at_k.at(1) == doctest::Approx(0.5));
  for (int p : {1, 2}) {
    for (int s : {0, 1}) {
      CHECK(std::filesystem::exists(o.out_dir + "/level_1_problem_" +
                                    std::to_string(p) + "_sample_" +
                                    std::to_string(s) + "_kernel.py"));
    }
  }
  // The layout holds each sample's best turn.
  CHECK(ReadText(o.out_dir + "/level_1_problem_1_sample_0_kernel.py") ==
        Answer("right"));
  // Trajectories: the second turn's prompt got the first's feedback.
  int lines = 0;
  for (const auto& j : ReadJsonLines(o.out_dir + "/trajectories.jsonl")) {
    ++lines;
    REQUIRE(j["turns"].size() == 2);
    if (j["problem"] == 1) {
      CHECK(j["best_turn"] == 2);
      CHECK(j["turns"][0]["feedback"].get<std::string>().find(
                "element 3: 1.5 vs 1.0") != std::string::npos);
    } else {
      CHECK(j["turns"][0]["extraction"]["found"] == false);
    }
  }
  CHECK(lines == 4);
}

// Keeps the lines of `path` for which `keep` is true (a stop's leftovers).
void KeepLines(const std::string& path,
               const std::function<bool(const nlohmann::json&)>& keep,
               const std::string& tail = "") {
  std::ifstream in(path);
  std::string line, out;
  while (std::getline(in, line)) {
    if (keep(nlohmann::json::parse(line))) out += line + "\n";
  }
  in.close();
  std::ofstream(path, std::ios::trunc) << out << tail;
}

TEST_CASE("kernelbench run resumes a stopped run without asking again") {
  skilldb::testing::TempDir dir;
  auto store = kbv::TaskStore::Open(dir.Sub("store"));
  REQUIRE(store.ok());
  REQUIRE(store->Put(MakeProblem(1, "1_One.py")).ok());
  REQUIRE(store->Put(MakeProblem(2, "2_Two.py")).ok());
  KernelBenchRunOptions o;
  o.out_dir = dir.Sub("run");
  o.turns = 2;
  o.samples = 2;
  o.format = KernelBenchFormat::kCpp;
  {
    FakeBackbone backbone;
    FakeEvaluator evaluator(&backbone);
    auto first = RunKernelBench(o, &backbone, &evaluator, *store);
    REQUIRE_MESSAGE(first.ok(), first.status().message());
    CHECK(backbone.calls() == 8);
    CHECK(first->resumed_trajectories == 0);
  }
  // As a stop would leave it: problem 1's trajectories never ended, sample
  // 0 had judged its first turn only, and the last line was cut.
  KeepLines(o.out_dir + "/trajectories.jsonl",
            [](const nlohmann::json& j) { return j["problem"] == 2; });
  KeepLines(
      o.out_dir + "/turns.jsonl",
      [](const nlohmann::json& j) {
        return !(j["problem"] == 1 && j["sample"] == 0 &&
                 j["turn"]["turn"] == 2);
      },
      "{\"level\": 1, \"problem\": 1, \"sam");
  FakeBackbone backbone;
  FakeEvaluator evaluator(&backbone);
  evaluator.first_ = false;
  auto again = RunKernelBench(o, &backbone, &evaluator, *store);
  REQUIRE_MESSAGE(again.ok(), again.status().message());
  CHECK(backbone.calls() == 1);  // problem 1 sample 0, turn 2
  CHECK(evaluator.evaluations_ == 1);
  CHECK(again->resumed_trajectories == 2);
  CHECK(again->resumed_turns == 3);
  REQUIRE(again->turns.size() == 2);
  CHECK(again->turns[0].correct == 0);
  CHECK(again->turns[1].correct == 2);
  CHECK(again->turns[0].answered == 2);
  CHECK(ReadText(o.out_dir + "/level_1_problem_1_sample_0_kernel.py") ==
        Answer("right"));
  // The resumed trajectory's second prompt carried the first's feedback.
  int p1 = 0;
  for (const auto& j : ReadJsonLines(o.out_dir + "/trajectories.jsonl")) {
    if (j["problem"] != 1) continue;
    ++p1;
    REQUIRE(j["turns"].size() == 2);
    CHECK(j["best_turn"] == 2);
  }
  CHECK(p1 == 2);

  // Started once more: everything had ended (the cut line of the second
  // start did not swallow the line appended after it).
  {
    FakeBackbone third;
    FakeEvaluator third_ev(&third);
    third_ev.first_ = false;
    auto done = RunKernelBench(o, &third, &third_ev, *store);
    REQUIRE(done.ok());
    CHECK(third.calls() == 0);
    CHECK(third_ev.evaluations_ == 0);
    CHECK(done->resumed_trajectories == 4);
    CHECK(done->turns[1].correct == 2);
  }

  // Lines of other shapes (another program's, an older layout's skill ids
  // under "skills") are passed over, never an error.
  std::ofstream(o.out_dir + "/turns.jsonl", std::ios::app)
      << "{\"model\": 5, \"format\": \"cpp\"}\n"
      << "{\"model\": \"fake\", \"format\": \"cpp\", \"level\": 1, "
         "\"problem\": 1, \"sample\": \"x\"}\n";
  std::ofstream(o.out_dir + "/trajectories.jsonl", std::ios::app)
      << "{\"model\": \"fake\", \"format\": \"cpp\", \"level\": 1, "
         "\"problem\": 1, \"sample\": 0, \"skills\": [\"s1\"], "
         "\"best_turn\": \"two\", \"turns\": 3}\n";
  {
    FakeBackbone fourth;
    FakeEvaluator fourth_ev(&fourth);
    fourth_ev.first_ = false;
    auto done = RunKernelBench(o, &fourth, &fourth_ev, *store);
    REQUIRE_MESSAGE(done.ok(), done.status().message());
    CHECK(fourth.calls() == 0);
    CHECK(done->resumed_trajectories == 4);
  }

  // More turns than the run that ended: each trajectory goes on.
  {
    o.turns = 3;
    FakeBackbone more;
    FakeEvaluator more_ev(&more);
    more_ev.first_ = false;
    auto longer = RunKernelBench(o, &more, &more_ev, *store);
    REQUIRE(longer.ok());
    CHECK(more.calls() == 4);  // turn 3 of each trajectory
    CHECK(longer->resumed_turns == 8);
    REQUIRE(longer->turns.size() == 3);
    CHECK(longer->turns[2].correct == 2);
    o.turns = 2;
  }

  // Another model in the same directory starts afresh.
  FakeBackbone other;
  other.model_ = "another";
  FakeEvaluator other_ev(&other);
  other_ev.first_ = false;
  auto fresh = RunKernelBench(o, &other, &other_ev, *store);
  REQUIRE(fresh.ok());
  CHECK(other.calls() == 8);
  CHECK(fresh->resumed_trajectories == 0);
  CHECK(fresh->resumed_turns == 0);
}

TEST_CASE("kernelbench run asks again where a generation failed") {
  skilldb::testing::TempDir dir;
  auto store = kbv::TaskStore::Open(dir.Sub("store"));
  REQUIRE(store.ok());
  REQUIRE(store->Put(MakeProblem(1, "1_One.py")).ok());
  KernelBenchRunOptions o;
  o.out_dir = dir.Sub("run");
  o.samples = 2;
  o.format = KernelBenchFormat::kCpp;
  FakeBackbone backbone;
  FakeEvaluator evaluator(&backbone);
  evaluator.first_ = false;

  SUBCASE("at the first turn") {
    o.turns = 1;
    backbone.down_ = true;
    auto down = RunKernelBench(o, &backbone, &evaluator, *store);
    REQUIRE(down.ok());
    CHECK(down->generation_errors == 2);
    backbone.down_ = false;
    auto up = RunKernelBench(o, &backbone, &evaluator, *store);
    REQUIRE(up.ok());
    CHECK(backbone.calls() == 4);
    CHECK(up->generation_errors == 0);
    CHECK(up->resumed_trajectories == 0);
    CHECK(evaluator.evaluations_ == 2);
    REQUIRE(up->eval.eager.size() == 1);
    CHECK(up->eval.eager[0].compiled == 1);
  }

  SUBCASE("at the second turn: the first is kept") {
    o.turns = 2;
    backbone.down_second_ = true;
    auto first = RunKernelBench(o, &backbone, &evaluator, *store);
    REQUIRE(first.ok());
    CHECK(first->generation_errors == 2);
    CHECK(first->turns[1].correct == 0);
    backbone.down_second_ = false;
    auto again = RunKernelBench(o, &backbone, &evaluator, *store);
    REQUIRE(again.ok());
    CHECK(backbone.calls() == 6);  // 2 x 2 before, then turn 2 of each
    CHECK(evaluator.evaluations_ == 4);
    CHECK(again->resumed_turns == 2);
    CHECK(again->turns[1].correct == 2);
    // The layout has the second turn's answer, whole.
    CHECK(ReadText(o.out_dir + "/level_1_problem_1_sample_1_kernel.py") ==
          Answer("right"));
    REQUIRE(again->eval.eager.size() == 1);
    CHECK(again->eval.eager[0].correct == 1);
  }
}

TEST_CASE("kernelbench run refuses bad options and an empty selection") {
  skilldb::testing::TempDir dir;
  auto store = kbv::TaskStore::Open(dir.Sub("store"));
  REQUIRE(store.ok());
  FakeBackbone backbone;
  FakeEvaluator evaluator(&backbone);
  KernelBenchRunOptions o;
  o.out_dir = dir.Sub("run");
  o.turns = 0;
  CHECK(RunKernelBench(o, &backbone, &evaluator, *store).status().code() ==
        StatusCode::kInvalidArgument);
  o.turns = 1;
  o.problems = "1-x";
  CHECK(RunKernelBench(o, &backbone, &evaluator, *store).status().code() ==
        StatusCode::kInvalidArgument);
  o.problems = "5";
  CHECK(RunKernelBench(o, &backbone, &evaluator, *store).status().code() ==
        StatusCode::kNotFound);
}

}  // namespace kb_generate_test
}  // namespace skilldb::policy
