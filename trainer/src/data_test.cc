// Tests of the task family, the SFT data filter and the configuration.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <random>
#include <set>
#include <sstream>

#include "skilldb/trainer/config.h"
#include "skilldb/trainer/param_task.h"
#include "skilldb/trainer/report.h"
#include "skilldb/trainer/sft_data.h"
#include "test_dir.h"
#include "build_paths.h"

namespace skilldb::trainer {
namespace {

const std::string kTasks = SKILLDB_TRAINER_TASKS;

TEST_CASE("the host family loads, parses untrusted text and renders") {
  auto f = LoadTaskFamily(kTasks + "/sum_dim1_fp32.host.json");
  REQUIRE(f.ok());
  CHECK(f->task == "sum_dim1_fp32");
  CHECK(f->params.size() == 4);
  CHECK(AllCombinations(*f).size() == 2 * 3 * 3 * 2);

  auto p = ParseParams(*f, "  order=rows, tile=64\nunroll=4 tail=loop <eos>");
  REQUIRE(p.ok);
  CHECK(FormatParams(*f, p.values) == "order=rows tile=64 unroll=4 tail=loop");
  const std::string src = Render(*f, p.values);
  CHECK(src.find("constexpr bool kRows = true;") != std::string::npos);
  CHECK(src.find("constexpr long kTile = 64;") != std::string::npos);
  CHECK(src.find("constexpr int kUnroll = 4;") != std::string::npos);
  CHECK(src.find("constexpr bool kTail = true;") != std::string::npos);
  CHECK(src.find("{{") == std::string::npos);
  CHECK(src.find("with order=rows tile=64 unroll=4 tail=loop") !=
        std::string::npos);

  CHECK_FALSE(ParseParams(*f, "order=rows tile=64 unroll=4").ok);
  CHECK(ParseParams(*f, "order=rows tile=64 unroll=4").error ==
        "missing parameters: tail");
  auto bad = ParseParams(*f, "order=diag tile=64 unroll=4 tail=loop");
  CHECK_FALSE(bad.ok);
  CHECK(bad.error.find("'diag' is not one of cols, rows") != std::string::npos);
  CHECK(ParseParams(*f, "tile=64 tile=16").error.find("twice") !=
        std::string::npos);
  CHECK(ParseParams(*f, "speed=max").error.find("unknown parameter") !=
        std::string::npos);
  CHECK_FALSE(ParseParams(*f, "").ok);
  // Cut before the last parameter: the limit holds.
  CHECK_FALSE(ParseParams(*f, "order=rows tile=64 unroll=4 tail=loop", 30).ok);
  CHECK(FamilyInstructions(*f).find("- unroll: 1 2 4") != std::string::npos);

  auto cuda = LoadTaskFamily(kTasks + "/sum_dim1_fp32.cuda.json");
  REQUIRE(cuda.ok());
  CHECK(cuda->language == "cuda");
  auto all = AllCombinations(*cuda);
  CHECK(all.size() == 2 * 4 * 3 * 2);
  CHECK(Render(*cuda, all[0]).find("{{") == std::string::npos);
}

TEST_CASE("family files with errors are refused with the reason") {
  skilldb::trainer::ScopedTempDir temp("skilldb_family_test");
  const std::string dir = temp.path();
  REQUIRE(WriteFile(dir + "/t.tmpl", "int x = {{a}} + {{b}};").ok());
  REQUIRE(WriteFile(dir + "/f.json",
                    R"({"name":"n","task":"t","backend":"host","language":"cpp",
                        "template":"t.tmpl","description":"d",
                        "params":[{"name":"a","values":{"1":"1"}}]})")
              .ok());
  auto f = LoadTaskFamily(dir + "/f.json");
  REQUIRE_FALSE(f.ok());
  CHECK(f.status().message().find("{{b}}") != std::string::npos);
  REQUIRE(WriteFile(dir + "/g.json", R"({"name":"n"})").ok());
  CHECK(LoadTaskFamily(dir + "/g.json").status().message().find("'task'") !=
        std::string::npos);
  CHECK(LoadTaskFamily(dir + "/none.json").status().code() ==
        StatusCode::kNotFound);
}

SftRecord Rec(std::string agent, std::string task, std::string completion) {
  return {agent, task, {{"user", "write " + task}}, completion};
}

TEST_CASE("MinHash estimates Jaccard similarity") {
  const std::string a =
      "the quick brown fox jumps over the lazy dog near the river bank";
  const std::string b =
      "the quick brown fox jumps over the lazy cat near the river bank";
  const std::string c = "completely different text about kernels and tiles";
  const double exact = ShingleJaccard(a, b, 5);
  auto sa = MinHashSignature(a, 5, 256, 7), sb = MinHashSignature(b, 5, 256, 7),
       sc = MinHashSignature(c, 5, 256, 7);
  CHECK(EstimatedJaccard(sa, sb) == doctest::Approx(exact).epsilon(0.15));
  CHECK(EstimatedJaccard(sa, sc) < 0.1);
  CHECK(EstimatedJaccard(sa, sa) == 1.0);
  CHECK(ShingleJaccard(a, a, 5) == 1.0);
}

TEST_CASE("the SFT filter drops near-duplicates and applies caps, counted") {
  std::vector<SftRecord> in = {
      Rec("policy", "A", "order=rows tile=64 unroll=4 tail=loop, because rows"),
      Rec("policy", "A",
          "order=rows tile=64 unroll=4 tail=loop, because rows!"),
      Rec("policy", "A", "order=cols tile=16 unroll=1 tail=none"),
      Rec("policy", "B", "order=rows tile=256 unroll=2 tail=loop"),
      Rec("policy", "A", "a completely different answer with other words"),
      Rec("summary", "A", "{\"title\": \"row-wise reduction\"}"),
      Rec("summary", "B", "{\"title\": \"a tiled column walk\"}"),
  };
  SftFilterOptions o;
  o.max_per_task = 2;
  o.max_per_agent = 3;
  SftFilterReport rep;
  auto out = FilterSft(in, o, &rep);
  REQUIRE(out.ok());
  CHECK(rep.read == 7);
  CHECK(rep.near_duplicates == 1);  // record 2
  // Task A: records 1 and 3 kept, record 5 and the A summary over the cap.
  CHECK(rep.over_task_cap == 2);
  CHECK(rep.over_agent_cap == 0);
  CHECK(rep.kept == 4);
  CHECK(out->size() == 4);
  CHECK((*out)[0].completion == in[0].completion);
  CHECK((*out)[1].completion == in[2].completion);
  CHECK(rep.kept_per_agent["policy"] == 3);
  CHECK(rep.kept_per_agent["summary"] == 1);
  CHECK(rep.ToJson().find("\"near_duplicates\":1") != std::string::npos);

  o = {};
  o.max_per_agent = 1;
  out = FilterSft(in, o, &rep);
  REQUIRE(out.ok());
  CHECK(rep.kept == 2);
  CHECK(rep.over_agent_cap == 4);
  o = {};
  o.max_similarity = 1.01;  // keeps everything
  out = FilterSft(in, o, &rep);
  REQUIRE(out.ok());
  CHECK(rep.kept == 7);
  o.bands = 5;  // 64 % 5 != 0
  CHECK_FALSE(FilterSft(in, o, &rep).ok());
}

TEST_CASE("with prompts compared, one answer under two different prompts is "
          "kept twice and under the same prompt once") {
  const std::string answer = "order=rows tile=64 unroll=4 tail=loop";
  SftRecord plain = Rec("policy", "A", answer);
  plain.messages = {{"user", "Answer the kernel template's parameters."}};
  SftRecord same = plain;
  SftRecord with_skill = plain;
  with_skill.messages[0].content +=
      "\nSkill: rows beat columns | code: " + answer;
  SftFilterOptions o;
  o.compare_prompts = true;
  SftFilterReport rep;
  auto out = FilterSft({plain, same, with_skill}, o, &rep);
  REQUIRE(out.ok());
  CHECK(rep.near_duplicates == 1);  // `same`
  CHECK(rep.kept == 2);
  CHECK((*out)[1].messages[0].content == with_skill.messages[0].content);
  o.compare_prompts = false;  // completions alone: one is kept
  out = FilterSft({plain, same, with_skill}, o, &rep);
  REQUIRE(out.ok());
  CHECK(rep.kept == 1);
}

TEST_CASE("SFT JSONL round-trips and names bad lines") {
  skilldb::trainer::ScopedTempDir temp("skilldb_sft_test");
  const std::string path = temp.path() + "/d.jsonl";
  SftRecord r = Rec("policy", "A", "order=rows tile=64 unroll=4 tail=loop");
  REQUIRE(
      WriteFile(path, SftRecordToJson(r) + "\n\n" + SftRecordToJson(r) + "\n")
          .ok());
  auto read = ReadSftJsonl(path);
  REQUIRE(read.ok());
  REQUIRE(read->size() == 2);
  CHECK((*read)[1].completion == r.completion);
  CHECK((*read)[1].messages[0].content == "write A");
  REQUIRE(WriteFile(path, SftRecordToJson(r) + "\n{\"agent\":\"p\"}\n").ok());
  auto bad = ReadSftJsonl(path);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("d.jsonl:2: 'messages'") !=
        std::string::npos);
}

TEST_CASE("the configuration refuses unknown keys and bad values") {
  auto c = TrainConfigFromJson(
      R"({"steps": 3, "advantages": {"baseline": "batch_mean",
          "normalization": "none"}, "optim": {"aggregation": "sequence_mean",
          "kl_coef": 0.1}, "rewards": {"speedup_cap": 2}})");
  REQUIRE(c.ok());
  CHECK(c->steps == 3);
  CHECK(c->advantages.baseline == Baseline::kBatchMean);
  CHECK(c->advantages.normalization == Normalization::kNone);
  CHECK(c->optim.aggregation == LossAggregation::kSequenceMean);
  CHECK(c->rewards.speedup_cap == 2);
  // What is written back reads to the same configuration.
  auto again = TrainConfigFromJson(TrainConfigToJson(*c));
  REQUIRE(again.ok());
  CHECK(TrainConfigToJson(*again) == TrainConfigToJson(*c));

  auto unknown = TrainConfigFromJson(R"({"optim": {"learning_rate": 1}})");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().message() ==
        "config: unknown key 'optim.learning_rate'");
  CHECK(TrainConfigFromJson(R"({"steps": "3"})").status().message() ==
        "config: 'steps' must be an integer between 0 and 1000000");
  CHECK(TrainConfigFromJson(R"({"groups": 0})")
            .status()
            .message()
            .find("groups") != std::string::npos);
  CHECK(TrainConfigFromJson(R"({"advantages": {"baseline": "x"}})")
            .status()
            .message()
            .find("advantages.baseline") != std::string::npos);
  CHECK_FALSE(TrainConfigFromJson("[").ok());
}

TEST_CASE("config integers are read whole and within their ranges") {
  // Each used to wrap: 4294967297 read as 1, 2147483648 as INT_MIN.
  for (const char* text :
       {R"({"steps": 4294967297})", R"({"steps": 2147483648})",
        R"({"steps": -1})", R"({"steps": 18446744073709551615})"}) {
    CAPTURE(text);
    auto c = TrainConfigFromJson(text);
    REQUIRE_FALSE(c.ok());
    CHECK(c.status().code() == StatusCode::kInvalidArgument);
    CHECK(c.status().message() ==
          "config: 'steps' must be an integer between 0 and 1000000");
  }
  // Each bound is a size something allocates: refused before the run.
  auto workers = TrainConfigFromJson(R"({"host_workers": 2000000000})");
  REQUIRE_FALSE(workers.ok());
  CHECK(workers.status().message().find("'host_workers' must be an integer "
                                        "between 1 and 256") !=
        std::string::npos);
  for (const char* text :
       {R"({"groups": 4097})", R"({"max_new_tokens": 1048577})",
        R"({"optim": {"micro_batch": 4097}})",
        R"({"sft_filter": {"num_hashes": 1025}})",
        R"({"sft_filter": {"shingle_chars": 65}})"}) {
    CAPTURE(text);
    CHECK(TrainConfigFromJson(text).status().code() ==
          StatusCode::kInvalidArgument);
  }
  // The edges are accepted.
  auto edges = TrainConfigFromJson(
      R"({"steps": 1000000, "host_workers": 256, "groups": 4096})");
  REQUIRE_MESSAGE(edges.ok(), edges.status().ToString());
  CHECK(edges->host_workers == 256);
  // Configs built in code are held to the same ranges.
  TrainConfig code;
  code.host_workers = 2000000000;
  CHECK(ValidateTrainConfig(code).code() == StatusCode::kInvalidArgument);
}

TEST_CASE("the loop's counts have one range, read from JSON or set in code") {
  auto edge = TrainConfigFromJson(
      R"({"loop": {"answer_bytes": 1048576, "skill_code_bytes": 0}})");
  REQUIRE_MESSAGE(edge.ok(), edge.status().ToString());
  CHECK(edge->loop.answer_bytes == 1048576);
  CHECK(TrainConfigFromJson(R"({"loop": {"answer_bytes": 1048577}})")
            .status()
            .code() == StatusCode::kInvalidArgument);
  CHECK(
      TrainConfigFromJson(R"({"loop": {"answer_bytes": 0}})").status().code() ==
      StatusCode::kInvalidArgument);
  // A config built in code is held to the same bounds, above as below.
  TrainConfig code;
  code.loop.answer_bytes = 1048577;
  CHECK(ValidateTrainConfig(code).code() == StatusCode::kInvalidArgument);
  code.loop.answer_bytes = 0;
  CHECK(ValidateTrainConfig(code).code() == StatusCode::kInvalidArgument);
  code.loop.answer_bytes = 200;
  code.loop.summaries_per_step = -1;
  CHECK(ValidateTrainConfig(code).code() == StatusCode::kInvalidArgument);
  code.loop.summaries_per_step = 0;
  CHECK(ValidateTrainConfig(code).ok());
}

TEST_CASE("a repeated config key and an infinite number are refused") {
  auto twice = TrainConfigFromJson(R"({"steps": 1, "steps": 2})");
  REQUIRE_FALSE(twice.ok());
  CHECK(twice.status().message().find("duplicate key 'steps'") !=
        std::string::npos);
  // nlohmann refuses 1e400 while parsing (an overflow): an error naming
  // the file's text, never an infinite learning rate.
  auto inf = TrainConfigFromJson(R"({"optim": {"lr": 1e400}})");
  REQUIRE_FALSE(inf.ok());
  INFO(inf.status().ToString());
  CHECK(inf.status().code() == StatusCode::kInvalidArgument);
  CHECK(inf.status().message().find("overflow") != std::string::npos);
}

TEST_CASE("a checkpoint's loop state is checked before a resumed run") {
  std::mt19937_64 rng(7);
  std::ostringstream state;
  state << rng;
  const std::string good_rng = state.str();
  auto extra = [&](const std::string& step, const std::string& rng_text) {
    return "{\"loop_step\": " + step + ", \"rng\": \"" + rng_text + "\"}";
  };
  auto point = ResumePointFromJson(extra("4", good_rng), "ckpt/meta.json");
  REQUIRE_MESSAGE(point.ok(), point.status().ToString());
  CHECK(point->loop_step == 4);
  CHECK(point->rng == rng);
  CHECK(point->pending_json.empty());
  for (const std::string& bad :
       {extra("-3", good_rng), extra("1099511627776", good_rng),
        extra("2", "0123456789"), std::string(R"({"loop_step": 2})"),
        std::string(R"({"rng": "1 2 3"})"), std::string("[1]")}) {
    CAPTURE(bad);
    auto p = ResumePointFromJson(bad, "ckpt/meta.json");
    REQUIRE_FALSE(p.ok());
    CHECK(p.status().code() == StatusCode::kInvalidArgument);
    CHECK(p.status().message().find("ckpt/meta.json") != std::string::npos);
  }
}

TEST_CASE("train's words are found in any order") {
  auto line = SplitTrainCommand({"--out", "X", "--config", "F"});
  REQUIRE(line.ok());
  CHECK(line->command == "config");
  CHECK(line->rest == std::vector<std::string>{"--out", "X", "--config", "F"});
  line = SplitTrainCommand({"--json", "report", "RUN"});
  REQUIRE(line.ok());
  CHECK(line->command == "report");
  CHECK(line->rest == std::vector<std::string>{"--json", "RUN"});
  line = SplitTrainCommand({"--steps", "3", "demo", "--seed", "2"});
  REQUIRE(line.ok());
  CHECK(line->command == "demo");
  // An option's value is never the command: --out report is a path.
  line = SplitTrainCommand({"--out", "report", "--config", "F"});
  REQUIRE(line.ok());
  CHECK(line->command == "config");
  CHECK(SplitTrainCommand({"--help"})->command == "help");
  auto unknown = SplitTrainCommand({"serve"});
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().message().find("'serve'") != std::string::npos);
  CHECK_FALSE(SplitTrainCommand({}).ok());
}

}  // namespace
}  // namespace skilldb::trainer
