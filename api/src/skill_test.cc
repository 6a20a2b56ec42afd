#include "skilldb/skill.h"

#include <doctest/doctest.h>

namespace skilldb {
namespace {

TEST_CASE("a full skill survives a JSON round trip") {
  Skill s = Skill::Make("smem-tiling", "Tile the K loop through shared memory");
  s.summary = "Stage A and B tiles in shared memory.";
  s.body = "## When to use\nAlways.\n";
  s.code = "__shared__ float a[32][33];";
  s.language = Language::kCuda;
  s.tags = {"shared-memory", "tiling"};
  s.ops = {"matmul"};
  s.arch = {"sm_80", "sm_90"};
  s.provenance = {"summary-agent", "policy-v3", "r-12", "task-7", 4200};
  s.lineage.derived_from = {"naive-gemm"};
  s.status = SkillStatus::kCandidate;
  s.evidence_json = {R"({"passed":true,"speedup":{"ratio":1.4}})"};
  s.extra_json = R"({"code_kind":"cuda-fragment","n":[1,2]})";
  auto parsed = ParseSkillJson(SkillToJson(s));
  REQUIRE_MESSAGE(parsed.ok(), parsed.status().ToString());
  CHECK(*parsed == s);
}

TEST_CASE("defaults apply to absent optional fields") {
  auto parsed = ParseSkillJson(R"({"id":"a","title":"T"})");
  REQUIRE(parsed.ok());
  CHECK(parsed->language == Language::kAny);
  CHECK(parsed->status == SkillStatus::kActive);
  CHECK(parsed->tags.empty());
}

TEST_CASE("bad skills are rejected with InvalidArgument") {
  const char* bad[] = {
      R"({"id":"a"})",                                // no title
      R"({"title":"T"})",                             // no id
      R"({"id":"a","title":"  "})",                   // blank title
      R"({"id":"A","title":"T"})",                    // upper case id
      R"({"id":"-a","title":"T"})",                   // bad first char
      R"({"id":"a b","title":"T"})",                  // space in id
      R"({"id":"a","title":"T","colour":"red"})",     // unknown field
      R"({"id":"a","title":"T","tags":"x"})",         // wrong type
      R"({"id":"a","title":"T","tags":[1]})",         // wrong element type
      R"({"id":"a","title":"T","tags":[""]})",        // blank tag
      R"({"id":"a","title":"T","language":"rust"})",  // bad enum
      R"({"id":"a","title":"T","status":"gone"})",
      R"({"id":"a","title":"T","extra":[1]})",
      R"({"id":"a","title":"T","provenance":{"source":"x"}})",
      R"({"id":"a","title":"T","provenance":{"who":"x"}})",
      R"({"id":"a","title":"T","lineage":{"supersedes":["B"]}})",
      R"({"id":"a","title":"T")",  // malformed JSON
      "[1,2]",
      "{\"id\":\"a\",\"title\":\"\xff\xfe\"}",  // invalid UTF-8
  };
  for (const char* json : bad) {
    auto parsed = ParseSkillJson(json);
    CHECK_MESSAGE(parsed.status().code() == StatusCode::kInvalidArgument, json);
  }
}

TEST_CASE("ids follow the documented pattern") {
  CHECK(ValidateSkillId("a").ok());
  CHECK(ValidateSkillId("0.9_x-y").ok());
  CHECK(ValidateSkillId(std::string(128, 'a')).ok());
  CHECK_FALSE(ValidateSkillId(std::string(129, 'a')).ok());
  CHECK_FALSE(ValidateSkillId("").ok());
  CHECK_FALSE(ValidateSkillId("_a").ok());
  CHECK_FALSE(ValidateSkillId("a/b").ok());
}

TEST_CASE("indexed text joins title, summary, body, tags, ops and code") {
  Skill s = Skill::Make("a", "Title");
  s.summary = "sum";
  s.body = "body";
  s.tags = {"t1", "t2"};
  s.ops = {"matmul"};
  s.code = "x++;";
  s.arch = {"sm_90"};  // not indexed as text
  CHECK(IndexedText(s) == "Title sum body t1 t2 matmul x++;");
}

}  // namespace
}  // namespace skilldb
