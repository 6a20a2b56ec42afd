#include "skilldb/rerank/prompt.h"

#include <doctest/doctest.h>

#include "skilldb/rerank/fake_backbone.h"

namespace skilldb::rerank {
namespace {

using testing::MakeHit;

TEST_CASE("clipping collapses whitespace and keeps short text whole") {
  CHECK(Clip("  a \n\n b\t c  ", 100) == "a b c");
  CHECK(Clip("", 10) == "");
}

TEST_CASE("clipping cuts long text at a word boundary and marks the cut") {
  const std::string text = "shared memory tiling of the K loop";
  const std::string clipped = Clip(text, 20);
  CHECK(clipped == "shared memory tiling\xE2\x80\xA6");
  CHECK(clipped.size() <= 20 + 3);
}

TEST_CASE(
    "clipping never splits a UTF-8 character and replaces invalid "
    "bytes") {
  // "é" is two bytes: a 2-byte budget after "a" keeps "a" only.
  CHECK(Clip("a\xC3\xA9\xC3\xA9", 2) == "a\xE2\x80\xA6");
  CHECK(Clip("a\xFF"
             "b\xC3",
             10) == "a?b?");
  CHECK(Clip("\xED\xA0\x80", 10) == "???");  // a UTF-16 surrogate
}

TEST_CASE(
    "a candidate shows its id, title, summary and a bounded body "
    "excerpt") {
  Hit h = MakeHit("mem-tiling", 1, "Tiling");
  h.body = std::string(5000, 'x');
  PromptOptions o;
  o.max_excerpt_bytes = 100;
  const std::string text = CandidateText(h, o);
  CHECK(text.rfind("mem-tiling: Tiling\nsummary of mem-tiling\n", 0) == 0);
  CHECK(text.size() < 200);
  o.include_id = false;
  o.max_excerpt_bytes = 0;
  CHECK(CandidateText(h, o) == "Tiling\nsummary of mem-tiling");
  Hit bare;
  bare.id = "only-id";
  CHECK(CandidateText(bare, o) == "only-id");
}

TEST_CASE("the listwise prompt numbers the window's candidates from 1") {
  const Hit a = MakeHit("a", 2), b = MakeHit("b", 1);
  const llm::Chat chat = ListwisePrompt("tile the k loop", {&b, &a}, {});
  REQUIRE(chat.size() == 2);
  CHECK(chat[0].role == "system");
  CHECK(chat[1].role == "user");
  const auto ids = testing::NumberedIds(chat);
  CHECK(ids.size() == 2);
  CHECK(ids.at(1) == "b");
  CHECK(ids.at(2) == "a");
  CHECK(chat[1].content.find("tile the k loop") != std::string::npos);
  CHECK(chat[1].content.find("[2] > [1] > [3]") != std::string::npos);
}

TEST_CASE("the pointwise prompt follows Qwen3-Reranker's layout") {
  const llm::Chat chat = PointwisePrompt(
      "fuse bias gelu", MakeHit("fuse-gelu", 1), "Judge it", {});
  REQUIRE(chat.size() == 2);
  CHECK(chat[0].content.find("\"yes\" or \"no\"") != std::string::npos);
  CHECK(chat[1].content.rfind("<Instruct>: Judge it\n<Query>: fuse bias gelu"
                              "\n<Document>: fuse-gelu: ",
                              0) == 0);
  CHECK(testing::DocumentId(chat) == "fuse-gelu");
}

TEST_CASE("a long query is clipped in the prompt") {
  PromptOptions o;
  o.max_query_bytes = 10;
  const Hit a = MakeHit("a", 1);
  const llm::Chat chat = ListwisePrompt(std::string(1000, 'q'), {&a}, o);
  CHECK(chat[1].content.find(std::string(11, 'q')) == std::string::npos);
}

}  // namespace
}  // namespace skilldb::rerank
