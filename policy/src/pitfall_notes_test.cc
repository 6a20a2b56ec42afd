#include "skilldb/policy/pitfall_notes.h"

#include <doctest/doctest.h>

namespace skilldb::policy {
namespace {

PitfallNote Note(const std::string& text) {
  return PitfallNote{text, "t-1", "sum_dim1_fp32", "wrong", 42};
}

TEST_CASE(
    "a pitfall note is added first and the skill's other extra fields stay") {
  auto extra = AddPitfall(R"({"owner":"team","pitfalls":[]})", Note("first"));
  REQUIRE(extra.ok());
  extra = AddPitfall(*extra, Note("second"));
  REQUIRE(extra.ok());
  CHECK(extra->find("\"owner\":\"team\"") != std::string::npos);
  CHECK(extra->find("\"unverified\":true") != std::string::npos);
  std::vector<PitfallNote> notes = ReadPitfalls(*extra);
  REQUIRE(notes.size() == 2);
  CHECK(notes[0] == Note("second"));
  CHECK(notes[1] == Note("first"));
}

TEST_CASE("only the newest pitfall notes are kept") {
  std::string extra;
  for (int i = 0; i < 5; ++i) {
    auto next = AddPitfall(extra, Note("n" + std::to_string(i)), /*keep=*/3);
    REQUIRE(next.ok());
    extra = *next;
  }
  std::vector<PitfallNote> notes = ReadPitfalls(extra);
  REQUIRE(notes.size() == 3);
  CHECK(notes[0].note == "n4");
  CHECK(notes[2].note == "n2");
}

TEST_CASE("malformed extras and notes are refused or skipped") {
  CHECK(AddPitfall("[1,2]", Note("x")).status().IsInvalidArgument());
  CHECK(AddPitfall("", Note("")).status().IsInvalidArgument());
  CHECK(ReadPitfalls("{not json").empty());
  CHECK(ReadPitfalls(R"({"pitfalls":[{"note":5},{"note":"ok"}]})").size() == 1);
}

}  // namespace
}  // namespace skilldb::policy
