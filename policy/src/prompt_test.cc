#include "skilldb/policy/prompt.h"

#include <doctest/doctest.h>

#include "agents_test_util.h"
#include "trajectory_fixture.h"

namespace skilldb::policy {
namespace {

SelectedSkill Selected(const std::string& id, const std::string& body) {
  SelectedSkill s;
  s.hit.id = id;
  s.hit.title = "Title of " + id;
  s.hit.summary = "Summary of " + id;
  s.hit.body = body;
  s.hit.code = "for (int k = 0; k < n; ++k) acc += row[k];";
  s.hit.ops = {"reduction"};
  s.pitfalls = {"Forgot the last row."};
  return s;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos;
       p = text.find(what, p + 1))
    ++n;
  return n;
}

TEST_CASE(
    "the first prompt holds the protocol, the task, its reference and the "
    "skills") {
  PolicyTask task = testing::HostTask("sum_dim1_fp32");
  PromptInput in;
  in.task = &task;
  in.new_skills = {Selected("walk-rows", "## When to use\nalways")};
  std::vector<ChatMessage> chat = KernelPromptBuilder().Build(in);
  REQUIRE(chat.size() == 2);
  CHECK(chat[0].role == "system");
  CHECK(chat[0].content.find(task.protocol) != std::string::npos);
  CHECK(chat[0].content.find("host CPU") != std::string::npos);
  CHECK(chat[1].role == "user");
  const std::string& user = chat[1].content;
  CHECK(user.find(task.task.description) != std::string::npos);
  CHECK(user.find(task.task.reference_cpp) != std::string::npos);
  CHECK(user.find("`x`: float32 [B, N, M]") != std::string::npos);
  CHECK(user.find("B=8, M=256, N=256") != std::string::npos);  // host dims
  CHECK(user.find("Title of walk-rows (`walk-rows`)") != std::string::npos);
  CHECK(user.find("Summary of walk-rows") != std::string::npos);
  CHECK(user.find("acc += row[k]") != std::string::npos);
  CHECK(user.find("unverified") != std::string::npos);
  CHECK(user.find("Forgot the last row.") != std::string::npos);
}

TEST_CASE(
    "later prompts replay each turn's answer and feedback and show each skill "
    "once") {
  PolicyTask task = testing::HostTask("sum_dim1_fp32");
  PromptInput in;
  in.task = &task;
  in.prior = {PriorTurn{{Selected("first", "b1")}, "answer one", "feedback one"},
              PriorTurn{{}, "answer two", "feedback two"}};
  in.new_skills = {Selected("third", "b3")};
  std::vector<ChatMessage> chat = KernelPromptBuilder().Build(in);
  REQUIRE(chat.size() == 6);
  CHECK(chat[2].role == "assistant");
  CHECK(chat[2].content == "answer one");
  CHECK(chat[3].content.find("feedback one") != std::string::npos);
  CHECK(chat[4].content == "answer two");
  CHECK(chat[5].content.find("feedback two") != std::string::npos);
  CHECK(chat[5].content.find("Title of third") != std::string::npos);
  std::string all;
  for (const ChatMessage& m : chat) all += m.content;
  CHECK(Count(all, "Title of first") == 1);
}

TEST_CASE("long skill bodies are cut to the configured size") {
  PolicyTask task = testing::HostTask("sum_dim1_fp32");
  KernelPromptOptions o;
  o.skill_body_bytes = 100;
  std::string body(5000, 'x');
  std::string text = FormatSkills({Selected("big", body)}, o);
  CHECK(text.size() < 2000);
  CHECK(text.find("bytes cut") != std::string::npos);
}

TEST_CASE(
    "feedback quotes the compiler verbatim, the wrong elements and the "
    "timings") {
  SampleRecord s = testing::FixtureSample(0, SampleVerdict::kCompileError, 0);
  s.report->compile_log =
      "candidate.cc:3:10: error: 'no_such' was not declared";
  CHECK(FormatFeedback(s).find(s.report->compile_log) != std::string::npos);

  s = testing::FixtureSample(0, SampleVerdict::kWrong, 0);
  s.report->correctness.trials = 4;
  s.report->correctness.max_abs_error = 0.5;
  s.report->correctness.errors = {"y[3, 7] = 1.5, expected 2.0 (allowed 1e-4)"};
  const std::string wrong = FormatFeedback(s);
  CHECK(wrong.find("y[3, 7] = 1.5, expected 2.0") != std::string::npos);
  CHECK(wrong.find("0.5") != std::string::npos);

  s = testing::FixtureSample(0, SampleVerdict::kNotFaster, 0.9);
  s.report->rounds.resize(3);
  s.report->rounds[0].speedup_ratio = 1.02;
  s.report->rounds[0].baseline_median_ms = 2.04;
  s.report->rounds[0].candidate_median_ms = 2.0;
  s.report->reasons = {"[not_faster] round 1 at 1.02x is below tau 1.05"};
  const std::string slow = FormatFeedback(s);
  CHECK(slow.find("1.02x") != std::string::npos);
  CHECK(slow.find("[1.1, 1.4]") != std::string::npos);
  CHECK(slow.find("[not_faster]") != std::string::npos);
}

TEST_CASE("huge compiler logs keep their head and tail") {
  SampleRecord s = testing::FixtureSample(0, SampleVerdict::kCompileError, 0);
  s.report->compile_log = "HEAD " + std::string(50000, '.') + " TAIL";
  const std::string f = FormatFeedback(s);
  CHECK(f.size() < 10000);
  CHECK(f.find("HEAD") != std::string::npos);
  CHECK(f.find("TAIL") != std::string::npos);
}

TEST_CASE("truncation never splits a UTF-8 sequence") {
  const std::string text = "ab\xc3\xa9\xc3\xa9\xc3\xa9";  // ab + three é
  const std::string cut = Truncate(text, 3);
  CHECK(cut.rfind("ab\n", 0) == 0);
}

}  // namespace
}  // namespace skilldb::policy
