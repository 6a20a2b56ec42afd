#include "skilldb/rerank/selection_agent.h"

#include <doctest/doctest.h>

#include "skilldb/rerank/fake_backbone.h"
#include "skilldb/rerank/listwise.h"
#include "test_util.h"

namespace skilldb::rerank {
namespace {

using skilldb::testing::TempLibrary;
using testing::FakeBackbone;
using testing::ModelOnly;
using testing::TextSample;

Skill MakeSkill(std::string id, std::string title, std::string body,
                std::vector<std::string> ops = {}) {
  Skill s = Skill::Make(std::move(id), std::move(title));
  s.summary = "How to " + s.title;
  s.body = std::move(body);
  s.ops = std::move(ops);
  return s;
}

// Four skills about tiling with near BM25 scores, one about softmax.
void Fill(TempLibrary& lib) {
  REQUIRE(lib->PutMany({MakeSkill("tile-a", "shared memory tiling a",
                                  "tiling body a", {"matmul"}),
                        MakeSkill("tile-b", "shared memory tiling b",
                                  "tiling body b", {"matmul"}),
                        MakeSkill("tile-c", "shared memory tiling c",
                                  "tiling body c", {"conv"}),
                        MakeSkill("tile-d", "shared memory tiling d",
                                  "tiling body d", {"matmul"}),
                        MakeSkill("softmax", "online softmax",
                                  "one pass softmax", {"softmax"})})
              .ok());
}

// A model that ranks the candidates in reverse of how they were shown.
FakeBackbone Reverser() {
  return FakeBackbone([](const llm::Chat& chat, const llm::SamplingOptions&) {
    const size_t n = testing::NumberedIds(chat).size();
    std::string answer;
    for (size_t i = n; i >= 1; --i) {
      answer += "[" + std::to_string(i) + "]" + (i > 1 ? " > " : "");
    }
    return TextSample(answer);
  });
}

TEST_CASE("a selection retrieves, reranks and returns the model's calls") {
  TempLibrary lib;
  Fill(lib);
  FakeBackbone backbone = Reverser();
  auto reranker = MakeListwiseReranker(&backbone, {}, ModelOnly());
  REQUIRE(reranker.ok());
  SelectionAgent agent(&*lib, reranker->get());
  auto bm25 = lib->Query(QueryOptions{.k = 4}, "shared memory tiling");
  REQUIRE(bm25.ok());
  auto s = agent.Select("shared memory tiling",
                        SelectionOptions{.k = 2, .candidates = 4});
  REQUIRE(s.ok());
  CHECK(s->version == lib->CurrentVersion());
  CHECK(s->num_candidates == 4);
  CHECK(s->result.applied);
  REQUIRE(s->result.hits.size() == 2);
  // Reversed: the 4th BM25 hit first, then the 3rd.
  CHECK(s->result.hits[0].hit.id == bm25->hits[3].id);
  CHECK(s->result.hits[0].bm25_rank == 4);
  CHECK(s->result.hits[1].hit.id == bm25->hits[2].id);
  // The prompt carried the fields a prompt needs, as of the version.
  CHECK(!s->result.hits[0].hit.body.empty());
  CHECK(s->result.hits[0].hit.revision != 0);
  REQUIRE(s->result.generations.size() == 1);
  CHECK(s->result.generations[0].prompt[1].content.find("tiling body") !=
        std::string::npos);
}

TEST_CASE(
    "a selection records retrieved for every candidate and selected "
    "for the chosen in one call") {
  TempLibrary lib;
  Fill(lib);
  FakeBackbone backbone = Reverser();
  auto reranker = MakeListwiseReranker(&backbone, {}, ModelOnly());
  SelectionAgent agent(&*lib, reranker->get());
  auto s = agent.Select("shared memory tiling",
                        SelectionOptions{.k = 1, .candidates = 3});
  REQUIRE(s.ok());
  CHECK(s->usage.ok());
  size_t retrieved = 0, selected = 0;
  REQUIRE(lib->ScanUsage([&](const std::string& id, const UsageCounters& c) {
               retrieved += c.counts[static_cast<int>(UsageEvent::kRetrieved)];
               const uint64_t sel =
                   c.counts[static_cast<int>(UsageEvent::kSelected)];
               if (sel > 0) CHECK(id == s->result.hits[0].hit.id);
               selected += sel;
               return true;
             })
              .ok());
  CHECK(retrieved == 3);
  CHECK(selected == 1);
}

TEST_CASE("a selection without usage recording leaves the counters alone") {
  TempLibrary lib;
  Fill(lib);
  SelectionAgent agent(&*lib, nullptr);
  auto s =
      agent.Select("tiling", SelectionOptions{.k = 2, .record_usage = false});
  REQUIRE(s.ok());
  auto usage = lib->GetUsage(s->result.hits[0].hit.id);
  REQUIRE(usage.ok());
  CHECK(usage->counts[static_cast<int>(UsageEvent::kRetrieved)] == 0);
}

TEST_CASE("a selection applies the caller's filters before reranking") {
  TempLibrary lib;
  Fill(lib);
  FakeBackbone backbone = Reverser();
  auto reranker = MakeListwiseReranker(&backbone, {}, ModelOnly());
  SelectionAgent agent(&*lib, reranker->get());
  SelectionOptions o{.k = 5, .candidates = 10};
  o.query.ops = {"matmul"};
  auto s = agent.Select("shared memory tiling", o);
  REQUIRE(s.ok());
  CHECK(s->num_candidates == 3);
  for (const RankedHit& h : s->result.hits) CHECK(h.hit.id != "tile-c");
}

TEST_CASE("a selection as of an old version sees that version's skills") {
  TempLibrary lib;
  Fill(lib);
  const Version v1 = lib->CurrentVersion();
  REQUIRE(lib->Put(MakeSkill("tile-e", "shared memory tiling e", "e")).ok());
  SelectionAgent agent(&*lib, nullptr);
  SelectionOptions o{.k = 10, .candidates = 10};
  o.query.as_of = v1;
  auto s = agent.Select("tiling", o);
  REQUIRE(s.ok());
  CHECK(s->version == v1);
  for (const RankedHit& h : s->result.hits) CHECK(h.hit.id != "tile-e");
}

TEST_CASE("without a reranker a selection is BM25's top k") {
  TempLibrary lib;
  Fill(lib);
  SelectionAgent agent(&*lib, nullptr);
  auto s = agent.Select("shared memory tiling", SelectionOptions{.k = 2});
  REQUIRE(s.ok());
  CHECK(!s->result.applied);
  CHECK(s->result.mode == "bm25");
  auto bm25 = lib->Query(QueryOptions{.k = 2}, "shared memory tiling");
  REQUIRE(bm25.ok());
  CHECK(s->result.hits[0].hit.id == bm25->hits[0].id);
  CHECK(s->result.hits[1].hit.id == bm25->hits[1].id);
}

TEST_CASE("a model that is down still yields a BM25 selection and its usage") {
  TempLibrary lib;
  Fill(lib);
  FakeBackbone down(
      [](const llm::Chat&, const llm::SamplingOptions&) -> Result<llm::Sample> {
        return Status::Unavailable("server gone");
      });
  auto reranker = MakeListwiseReranker(&down, {}, {});
  SelectionAgent agent(&*lib, reranker->get());
  auto s = agent.Select("shared memory tiling",
                        SelectionOptions{.k = 2, .candidates = 4});
  REQUIRE(s.ok());
  CHECK(!s->result.applied);
  CHECK(s->result.reason.find("server gone") != std::string::npos);
  CHECK(s->result.hits.size() == 2);
  CHECK(s->usage.ok());
}

TEST_CASE("bad selection options are refused") {
  TempLibrary lib;
  SelectionAgent agent(&*lib, nullptr);
  CHECK(agent.Select("x", SelectionOptions{.k = 0}).status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(agent.Select("x", SelectionOptions{.k = 5, .candidates = 2})
            .status()
            .code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace skilldb::rerank
