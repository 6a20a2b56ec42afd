// `skilldb kernelbench run` end to end against a scripted OpenAI-compatible
// server (tests/llm_server, in process): a problem set this test writes,
// imported by `kernelbench import`; CPU answers whose kernels are C++
// through load_inline (cpp_sources only), judged by the real confined
// torch runner; a model that answers wrong then right, one that answers
// garbage, one that answers a hack (a cached output), one that times out.
// Only the model is scripted. Needs a Python with torch (Debian's
// python3-torch): without one, the cases that run answers are skipped with
// a message (exit 77 after the cases that need no torch).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "agents_test_util.h"
#include "cli_util.h"
#include "kb_cpu_problems.h"
#include "scripted_llm_server.h"

namespace skilldb::kb_run_scripted {
namespace {

using Json = nlohmann::json;
using scripted::ScriptedLlmServer;
using scripted::ScriptedReply;
using skilldb::testing::Contains;

bool g_torch = false;

using kb_testing::KbPython;
using kb_testing::KbTmp;
using kb_testing::ScaleAddAnswer;

// One problem, under four names: the scripted model tells them apart by
// the name the prompt quotes.
std::string Problem(int n) { return kb_testing::ScaleAddProblem(n); }

// Answers on the extension of verify/kernelbench's host test
// (kb_cpu_problems.h: the same load_inline arguments, so the same cached
// build).
const std::string kCorrect = ScaleAddAnswer(R"PY(
    def forward(self, x, y):
        return ext.scale_add(x, y, self.alpha)
)PY");

const std::string kWrong = ScaleAddAnswer(R"PY(
    def forward(self, x, y):
        return ext.scale_add(x, y, self.alpha) + 1e-2
)PY");

const std::string kCached = ScaleAddAnswer(R"PY(
        self.calls = 0
        self.last = None

    def forward(self, x, y):
        self.calls += 1
        if self.calls > 4 and self.last is not None:
            return self.last
        self.last = ext.scale_add(x, y, self.alpha)
        return self.last
)PY");

ScriptedReply Reply(const std::string& contains, const std::string& text,
                    int delay_ms = 0) {
  ScriptedReply r = scripted::TextReply({text});
  r.prompt_contains = contains;
  r.times = -1;
  r.delay_ms = delay_ms;
  return r;
}

struct World {
  skilldb::testing::TempDir dir;
  std::string home = dir.Sub("home");
  std::string db = dir.Sub("lib");
  std::string store = dir.Sub("store");
  std::string out = dir.Sub("run");
  std::string cache = kb_testing::KbTestCacheDir();
  std::unique_ptr<ScriptedLlmServer> server;

  World() {
    std::filesystem::create_directories(home);
    const std::string kb = dir.Sub("KernelBench/level1");
    std::filesystem::create_directories(kb);
    const char* names[] = {"1_Scale_add_learner.py", "2_Scale_add_garbage.py",
                           "3_Scale_add_hacker.py", "4_Scale_add_sleeper.py"};
    for (int i = 0; i < 4; ++i)
      REQUIRE(kb_testing::WriteTestFile(kb + "/" + names[i], Problem(1 << 16)));
    Options o;
    o.create_if_missing = true;
    o.field_weights = kSkillLibraryWeights;
    {
      auto lib = Library::Open(o, db);
      REQUIRE(lib.ok());
      REQUIRE((*lib)->PutMany(policy::testing::SeedSkills()).ok());
    }
    scripted::ServerOptions so;
    so.protocol.max_model_len = 1 << 20;
    auto s = ScriptedLlmServer::Start(so);
    REQUIRE(s.ok());
    server = std::move(*s);
    // First match wins: the learner's second turn (its feedback says the
    // output is wrong) before its first.
    server->Add(Reply("The output is wrong: ",
                      "Fixed the offset.\n```python\n" + kCorrect + "```\n"));
    server->Add(
        Reply("1_Scale_add_learner", "Here is a fused kernel.\n```python\n" +
                                         kWrong + "```\nIt should be fast."));
    server->Add(Reply("2_Scale_add_garbage",
                      "As an AI I will not write code today. }}}{{{"));
    server->Add(Reply("3_Scale_add_hacker", "```python\n" + kCached + "```"));
    server->Add(
        Reply("4_Scale_add_sleeper", "```python\n" + kCorrect + "```", 60000));
  }

  skilldb::testing::Run Cli(std::vector<std::string> args) {
    args.insert(args.begin(), {"--db", db});
    return skilldb::testing::Cli(home, args, "", {"TMPDIR=" + KbTmp()});
  }

  // The problem set into the task store (again: the cases run alone too).
  void Import() {
    auto imported =
        Cli({"--json", "kernelbench", "import", dir.Sub("KernelBench"),
             "--store", store, "--device", "cpu", "--python", KbPython()});
    REQUIRE_MESSAGE(imported.code == 0, imported.err);
  }

  std::vector<std::string> RunArgs(const std::string& out_dir) const {
    return {"kernelbench",
            "run",
            out_dir,
            "--store",
            store,
            "--level",
            "1",
            "--problems",
            "1-4",
            "--llm-url",
            server->base_url(),
            "--llm-model",
            "scripted-model",
            "--llm-timeout",
            "4",
            "--llm-retries",
            "0",
            "--turns",
            "2",
            "--samples",
            "2",
            "--skills",
            "on",
            "--device",
            "cpu",
            "--python",
            KbPython(),
            "--cache",
            cache,
            "--trials",
            "2",
            "--rounds",
            "2",
            "--calls",
            "8",
            "--seed",
            "12345",
            "--no-compile-baseline"};
  }
};

World& W() {
  static World* w = new World();  // lives to the end: the server's threads
  return *w;
}

TEST_CASE("kernelbench run refuses bad input with a clear error") {
  World& w = W();
  auto no_level = w.Cli({"kernelbench", "run", w.out, "--store", w.store,
                         "--llm-url", w.server->base_url()});
  CHECK(no_level.code == 1);
  CHECK(Contains(no_level.err, "--level"));
  auto bad_turns =
      w.Cli({"kernelbench", "run", w.out, "--level", "1", "--turns", "0"});
  CHECK(bad_turns.code != 0);
  auto bad_format =
      w.Cli({"kernelbench", "run", w.out, "--level", "1", "--format", "cute"});
  CHECK(bad_format.code != 0);
  auto bad_url =
      w.Cli({"kernelbench", "run", w.out, "--level", "1", "--store", w.store,
             "--skills", "off", "--llm-url", "ftp://nowhere"});
  CHECK(bad_url.code == 1);
  CHECK(Contains(bad_url.err, "ftp"));
}

TEST_CASE(
    "scripted model: kernelbench run writes the layout, trajectories and "
    "eval's table") {
  if (!g_torch) return;
  World& w = W();
  w.Import();

  auto missing = w.Cli({"kernelbench", "run", w.dir.Sub("none"), "--store",
                        w.store, "--level", "1", "--problems", "90-99",
                        "--skills", "off", "--llm-url", w.server->base_url(),
                        "--device", "cpu", "--python", KbPython()});
  CHECK(missing.code == 1);
  CHECK(Contains(missing.err, "kernelbench import"));

  std::vector<std::string> args = w.RunArgs(w.out);
  args.insert(args.begin(), "--json");
  args.insert(args.begin(), "--progress");
  auto run = w.Cli(args);
  INFO(run.err);
  REQUIRE(run.code == 0);
  const Json report = Json::parse(run.out);

  // Every sample of every problem is in KernelBench's layout.
  for (int p = 1; p <= 4; ++p) {
    for (int s = 0; s < 2; ++s) {
      CHECK(std::filesystem::exists(w.out + "/level_1_problem_" +
                                    std::to_string(p) + "_sample_" +
                                    std::to_string(s) + "_kernel.py"));
    }
  }
  CHECK(std::filesystem::exists(w.out +
                                "/turns/level_1_problem_1_sample_0_turn_1.py"));
  CHECK(std::filesystem::exists(w.out +
                                "/turns/level_1_problem_1_sample_0_turn_2.py"));

  // Verdicts as kernelbench eval reports them, per problem.
  std::map<int, std::set<std::string>> verdicts;
  for (const Json& r : report["eval"]["results"]) {
    verdicts[r["problem"].get<int>()].insert(r["verdict"].get<std::string>());
  }
  CHECK(verdicts[1] == std::set<std::string>{"correct"});
  CHECK(verdicts[2] == std::set<std::string>{"no_answer"});
  CHECK(verdicts[3] == std::set<std::string>{"hack"});
  CHECK(verdicts[4] == std::set<std::string>{"generation_error"});
  CHECK(report["generation_errors"] == 2);
  CHECK(report["no_answer"] == 4);  // two turns of two samples
  // The learner was wrong at turn 1 and right at turn 2.
  REQUIRE(report["per_turn"].size() == 2);
  CHECK(report["per_turn"][0]["correct"] == 0);
  CHECK(report["per_turn"][1]["correct"] == 2);
  // fast_p per level and pass@k over the two samples.
  const Json& level = report["eval"]["levels_eager"][0];
  CHECK(level["total_count"] == 4);
  CHECK(level.contains("fast_p"));
  // pass@1 over two samples: the learner 2 of 2, the others 0 of 2.
  CHECK(level["pass_at_k"]["1"].get<double>() == doctest::Approx(0.25));
  // Progress on stderr, one line per turn.
  CHECK(Contains(run.err, "level1/1 sample 0 turn 2: correct"));
  CHECK(Contains(run.err, "level1/3 sample 0 turn 1: hack [cached_output]"));

  // The hack was named, and the model was told so at its second turn.
  std::ifstream traj(w.out + "/trajectories.jsonl");
  std::string line;
  int lines = 0;
  bool hack_named = false;
  while (std::getline(traj, line)) {
    ++lines;
    const Json t = Json::parse(line);
    if (t["problem"] == 3) {
      hack_named =
          hack_named || Contains(t["turns"][0]["feedback"].get<std::string>(),
                                 "cached_output");
    }
    if (t["problem"] == 1) CHECK(t["skills"].size() > 0);
  }
  CHECK(lines == 8);
  CHECK(hack_named);

  // What the model was sent: the problem's source, skills, the device from
  // the verifier; at turn 2 the feedback on the wrong output.
  bool saw_second_turn = false;
  for (const auto& req : w.server->Requests()) {
    if (!Contains(req.prompt, "1_Scale_add_learner")) continue;
    CHECK(Contains(req.prompt, "return self.alpha * x + y"));
    CHECK(Contains(req.prompt, "# Skills from the library that may apply"));
    CHECK(Contains(req.prompt, "host CPU"));
    CHECK(Contains(req.prompt, "cpp_sources"));
    if (Contains(req.prompt, "# Verifier feedback")) {
      saw_second_turn = true;
      CHECK(Contains(req.prompt, "trials within tolerance"));
    }
  }
  CHECK(saw_second_turn);

  // kernelbench eval over the directory agrees and recomputes nothing.
  auto eval = w.Cli({"--json",
                     "kernelbench",
                     "eval",
                     w.out,
                     "--store",
                     w.store,
                     "--level",
                     "1",
                     "--device",
                     "cpu",
                     "--python",
                     KbPython(),
                     "--cache",
                     w.cache,
                     "--trials",
                     "2",
                     "--rounds",
                     "2",
                     "--calls",
                     "8",
                     "--seed",
                     "12345",
                     "--no-compile-baseline"});
  REQUIRE_MESSAGE(eval.code == 0, eval.err);
  const Json again = Json::parse(eval.out);
  CHECK(again["resumed"] == 8);
  CHECK(again["levels_eager"][0]["fast_p"] == level["fast_p"]);

  // As a person runs it, with --skills off (the ablation): eval's table,
  // then the per-turn lines, and no skill in any prompt.
  w.server->ClearLog();
  std::vector<std::string> human = w.RunArgs(w.dir.Sub("run-human"));
  human[std::find(human.begin(), human.end(), "--skills") - human.begin() + 1] =
      "off";
  human[std::find(human.begin(), human.end(), "--turns") - human.begin() + 1] =
      "1";
  human[std::find(human.begin(), human.end(), "--samples") - human.begin() +
        1] = "1";
  human[std::find(human.begin(), human.end(), "--problems") - human.begin() +
        1] = "1-3";
  auto text = w.Cli(human);
  REQUIRE_MESSAGE(text.code == 0, text.err);
  CHECK(Contains(text.out, "level 1 over eager: n=3"));
  CHECK(Contains(text.out, "fast_1.0 0.000"));
  CHECK(Contains(text.out, "turn 1: answered 2, correct 0"));
  CHECK(Contains(text.out, "skills off"));
  REQUIRE(w.server->RequestCount() >= 3);
  for (const auto& req : w.server->Requests()) {
    CHECK_FALSE(Contains(req.prompt, "# Skills from the library"));
  }
}

#ifdef SKILLDB_TEST_MODELS_TESTDATA
// The in-process model (--local-model, handed by skilldb to skilldb-ml):
// the tiny random Qwen2 fixture, its context widened to hold the
// KernelBench prompt (rotary positions: only the config's limit changes).
// It writes no ModelNew: what is checked is the plumbing (the layout, the
// reason kept for the unusable answer, eval's table), not what it earns.
TEST_CASE("in-process model: kernelbench run --local-model runs the loop") {
  if (!g_torch) return;
  World& w = W();
  w.Import();
  const std::string model = w.dir.Sub("qwen2-wide");
  std::filesystem::copy(SKILLDB_TEST_MODELS_TESTDATA "/qwen2-tiny", model,
                        std::filesystem::copy_options::recursive);
  {
    std::ifstream in(model + "/config.json");
    Json config = Json::parse(in);
    config["max_position_embeddings"] = 16384;
    std::ofstream(model + "/config.json") << config.dump(2);
  }
  const std::string out = w.dir.Sub("local");
  auto both = w.Cli({"kernelbench", "run", out, "--store", w.store, "--level",
                     "1", "--local-model", model, "--llm-url",
                     w.server->base_url()});
  CHECK(both.code == 1);
  CHECK(Contains(both.err, "--llm-url is for a server"));
  auto device_alone = w.Cli({"kernelbench", "run", out, "--store", w.store,
                             "--level", "1", "--local-device", "cuda"});
  CHECK(device_alone.code == 1);
  CHECK(Contains(device_alone.err, "--local-model"));
  auto missing = w.Cli({"kernelbench", "run", out, "--store", w.store,
                        "--level", "1", "--local-model", w.dir.Sub("none"),
                        "--skills", "off", "--device", "cpu"});
  CHECK(missing.code != 0);
  CHECK(Contains(missing.err, "--local-model '" + w.dir.Sub("none") + "'"));

  auto run = w.Cli({"--json", "kernelbench", "run", out, "--store", w.store,
                    "--level", "1", "--problems", "2", "--local-model", model,
                    "--max-tokens", "24", "--temperature", "1", "--skills",
                    "off", "--device", "cpu", "--python", KbPython(),
                    "--cache", w.cache, "--no-compile-baseline"});
  INFO(run.err);
  REQUIRE(run.code == 0);
  const Json report = Json::parse(run.out);
  CHECK(std::filesystem::exists(out + "/level_1_problem_2_sample_0_kernel.py"));
  REQUIRE(report["eval"]["results"].size() == 1);
  CHECK(report["eval"]["results"][0]["verdict"] == "no_answer");
  CHECK(report["no_answer"] == 1);
  CHECK(report["generation_errors"] == 0);
  std::ifstream traj(out + "/trajectories.jsonl");
  std::string line;
  REQUIRE(std::getline(traj, line));
  const Json t = Json::parse(line);
  CHECK(t["model"] == model);
  REQUIRE(t["turns"].size() == 1);
  CHECK(t["turns"][0]["extraction"]["found"] == false);
  CHECK(Contains(t["turns"][0]["feedback"].get<std::string>(),
                 "No answer could be used"));
}
#endif

bool TorchAvailable() {
  const std::string cmd =
      "'" + KbPython() +
      "' -c 'import torch, torch.utils.cpp_extension' >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

}  // namespace
}  // namespace skilldb::kb_run_scripted

int main(int argc, char** argv) {
  bool listing = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--list", 6) == 0 ||
        std::strncmp(argv[i], "-l", 2) == 0) {
      listing = true;
    }
  }
  skilldb::kb_run_scripted::g_torch =
      listing || skilldb::kb_run_scripted::TorchAvailable();
  doctest::Context context(argc, argv);
  const int rc = context.run();
  if (rc == 0 && !skilldb::kb_run_scripted::g_torch) {
    std::printf(
        "no Python with torch ($SKILLDB_KB_PYTHON or /usr/bin/python3 cannot "
        "import "
        "torch): the scripted kernelbench run was skipped\n");
    return 77;
  }
  return rc;
}
