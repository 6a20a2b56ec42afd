// `skilldb train`'s --kb-* flags (train_command.h ApplyKernelBenchFlags):
// parsed into the config's "kernelbench" object, and refused with the flag
// named.
#include "skilldb/trainer/train_command.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "skilldb/trainer/config.h"

namespace skilldb::trainer {
namespace {

// The flags that turn the task source on, with `extra` after them.
std::vector<std::string> Flags(std::vector<std::string> extra = {}) {
  std::vector<std::string> f = {"--kb-store",    "/tmp/store",   "--kb-train",
                                "1-3,7",         "--kb-heldout", "4,5",
                                "--kb-families", "/tmp/families"};
  f.insert(f.end(), extra.begin(), extra.end());
  return f;
}

bool Contains(const Status& s, std::string_view text) {
  return s.message().find(text) != std::string::npos;
}

TEST_CASE("the --kb flags build the config's kernelbench object") {
  TrainConfig c;
  REQUIRE_FALSE(c.kernelbench.enabled());
  const Status s = ApplyKernelBenchFlags(
      Flags({"--kb-level", "2", "--kb-eval-every", "5", "--kb-python",
             "/usr/bin/python3", "--kb-cache-dir", "/tmp/cache", "--kb-answers",
             "free"}),
      &c);
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  const KernelBenchConfig& k = c.kernelbench;
  CHECK(k.enabled());
  CHECK(k.store == "/tmp/store");
  CHECK(k.train == std::vector<int>{1, 2, 3, 7});
  CHECK(k.heldout == std::vector<int>{4, 5});
  CHECK(k.families == "/tmp/families");
  CHECK(k.level == 2);
  CHECK(k.eval_every == 5);
  CHECK(k.python == "/usr/bin/python3");
  CHECK(k.cache_dir == "/tmp/cache");
  CHECK(k.answers == "free");
  CHECK(k.format == "cpp");  // the default, for the default backend (host)
  // What the flags set survives the config's JSON (config.json of a run).
  auto back = TrainConfigFromJson(TrainConfigToJson(c));
  REQUIRE_MESSAGE(back.ok(), back.status().ToString());
  CHECK(back->kernelbench.train == k.train);
  CHECK(back->kernelbench.answers == "free");
}

TEST_CASE("a --kb flag overrides the value the config file gave") {
  TrainConfig c;
  c.backend = "cuda";
  c.device = "cuda";
  c.kernelbench.store = "/from/file";
  c.kernelbench.train = {1};
  c.kernelbench.heldout = {2};
  c.kernelbench.families = "/from/file/families";
  c.kernelbench.format = "cuda";
  REQUIRE(
      ApplyKernelBenchFlags({"--kb-format", "triton", "--kb-train", "3-4"}, &c)
          .ok());
  CHECK(c.kernelbench.format == "triton");
  CHECK(c.kernelbench.train == std::vector<int>{3, 4});
  CHECK(c.kernelbench.store == "/from/file");
}

TEST_CASE("a bad --kb range is refused naming the flag") {
  for (const char* bad : {"5-1", "1-x", "a", ",,", ""}) {
    CAPTURE(bad);
    TrainConfig c;
    const Status s = ApplyKernelBenchFlags(Flags({"--kb-train", bad}), &c);
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK(Contains(s, "--kb-train"));
  }
  TrainConfig c;
  const Status s = ApplyKernelBenchFlags(Flags({"--kb-heldout", "2-"}), &c);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(Contains(s, "--kb-heldout"));
}

TEST_CASE("overlapping --kb-train and --kb-heldout are refused naming both") {
  TrainConfig c;
  const Status s = ApplyKernelBenchFlags(Flags({"--kb-heldout", "3-5"}), &c);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(Contains(s, "--kb-heldout"));
  CHECK(Contains(s, "--kb-train"));
  CHECK(Contains(s, "problem 3"));
}

TEST_CASE("an unknown --kb-format, or one the backend cannot run, is refused") {
  TrainConfig c;
  Status s = ApplyKernelBenchFlags(Flags({"--kb-format", "hip"}), &c);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(Contains(s, "--kb-format"));
  CHECK(c.kernelbench.format == "cpp");
  // cuda answers need the cuda backend: ValidateTrainConfig's error, with
  // the flag named.
  s = ApplyKernelBenchFlags(Flags({"--kb-format", "cuda"}), &c);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(Contains(s, "--kb-format"));
  CHECK(Contains(s, "backend"));
}

TEST_CASE("other bad --kb values are refused naming the flag") {
  const std::vector<std::vector<std::string>> cases = {
      {"--kb-level", "0"},       {"--kb-level", "x"}, {"--kb-eval-every", "-1"},
      {"--kb-answers", "prose"}, {"--kb-store", ""},  {"--kb-level"},
  };
  for (const auto& extra : cases) {
    CAPTURE(extra.front());
    TrainConfig c;
    const Status s = ApplyKernelBenchFlags(Flags(extra), &c);
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK(Contains(s, extra.front()));
  }
  CHECK(IsKernelBenchFlag("--kb-train"));
  CHECK_FALSE(IsKernelBenchFlag("--kb-unknown"));
  // Without a store the flags leave the task source off; with one, the
  // templates' directory is required.
  TrainConfig c;
  const Status s = ApplyKernelBenchFlags(
      {"--kb-store", "/tmp/s", "--kb-train", "1", "--kb-heldout", "2"}, &c);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(Contains(s, "--kb-families"));
}

TEST_CASE("a --kb flag's value is never taken for the train command") {
  auto line = SplitTrainCommand(
      {"--kb-families", "demo", "--config", "F", "--kb-store", "report"});
  REQUIRE(line.ok());
  CHECK(line->command == "config");
  CHECK(line->rest == std::vector<std::string>{"--kb-families", "demo",
                                               "--config", "F", "--kb-store",
                                               "report"});
  line = SplitTrainCommand({"--kb-train", "1-3", "demo"});
  REQUIRE(line.ok());
  CHECK(line->command == "demo");
}

}  // namespace
}  // namespace skilldb::trainer
