#include "skilldb/policy/selection.h"

#include <doctest/doctest.h>

#include "agents_test_util.h"
#include "skilldb/policy/pitfall_notes.h"

namespace skilldb::policy {
namespace {

Skill Make(const std::string& id, const std::string& title,
           std::vector<std::string> ops, Language language = Language::kCuda) {
  Skill s = Skill::Make(id, title);
  s.summary = title;
  s.ops = std::move(ops);
  s.language = language;
  return s;
}

// A reranker that reverses the order and says so.
class ReverseReranker : public Reranker {
 public:
  std::string_view Mode() const override { return "reverse"; }
  Result<RerankResult> Rerank(const RerankRequest& r) override {
    RerankResult out;
    out.applied = true;
    out.mode = "reverse";
    for (size_t i = r.candidates.size(); i-- > 0;) {
      RankedHit h;
      h.hit = r.candidates[i];
      h.bm25_rank = i + 1;
      h.score = static_cast<double>(r.candidates.size() - i);
      out.hits.push_back(h);
    }
    if (r.k > 0 && out.hits.size() > r.k) out.hits.resize(r.k);
    out.generations = {GenerationRecord{
        "judge", {{"user", r.query}}, "", {}, "3,2,1", {}, {}}};
    return out;
  }
};

struct Fixture {
  skilldb::testing::TempLibrary lib;
  Fixture() {
    REQUIRE(
        lib->PutMany(
               {Make("red", "row reduction with warp shuffles", {"reduction"}),
                Make("sum", "row reduction in shared memory", {"reduction"}),
                Make("gemm", "row reduction free tiled gemm", {"matmul"}),
                Make("tri", "row reduction in triton", {"reduction"},
                     Language::kTriton)})
            .ok());
  }
};

TEST_CASE(
    "filters come first and relaxed stages fill the rest without repeats") {
  Fixture f;
  SelectionOptions o;
  o.retrieve_k = 4;
  o.select_k = 2;
  Bm25Selector sel(&*f.lib, o);
  SelectionRequest r;
  r.query = "row reduction";
  r.ops = {"reduction"};
  r.language = Language::kCuda;
  auto s = sel.Select(r);
  REQUIRE(s.ok());
  const auto& got = s->record.retrieved;
  REQUIRE(got.size() == 4);
  // Stage 1 (reduction, cuda): red and sum; stage 2 (cuda): gemm; stage 3: tri.
  CHECK(((got[0].id == "red" && got[1].id == "sum") ||
         (got[0].id == "sum" && got[1].id == "red")));
  CHECK(got[2].id == "gemm");
  CHECK(got[3].id == "tri");
  CHECK(got[3].bm25_rank == 4);
  REQUIRE(s->skills.size() == 2);
  CHECK(s->record.selected[0].id == got[0].id);
  CHECK(s->skills[0].hit.summary == s->skills[0].hit.title);
  CHECK(s->record.library_version == f.lib->CurrentVersion());
}

TEST_CASE("without backfill only the filtered stage runs") {
  Fixture f;
  SelectionOptions o;
  o.retrieve_k = 4;
  o.select_k = 1;
  o.backfill = false;
  SelectionRequest r{"row reduction", {"matmul"}, {}, std::nullopt, {}};
  auto s = Bm25Selector(&*f.lib, o).Select(r);
  REQUIRE(s.ok());
  REQUIRE(s->record.retrieved.size() == 1);
  CHECK(s->record.retrieved[0].id == "gemm");
}

TEST_CASE("excluded skills are never retrieved") {
  Fixture f;
  SelectionRequest r{"row reduction", {}, {}, std::nullopt, {"red", "sum"}};
  auto s = Bm25Selector(&*f.lib).Select(r);
  REQUIRE(s.ok());
  for (const SkillRef& ref : s->record.retrieved) {
    CHECK(ref.id != "red");
    CHECK(ref.id != "sum");
  }
}

TEST_CASE("a reranker reorders the candidates and its model calls are kept") {
  Fixture f;
  ReverseReranker rr;
  SelectionOptions o;
  o.retrieve_k = 3;
  o.select_k = 2;
  RerankingSelector sel(&*f.lib, &rr, o);
  auto s =
      sel.Select(SelectionRequest{"row reduction", {}, {}, std::nullopt, {}});
  REQUIRE(s.ok());
  REQUIRE(s->record.retrieved.size() == 3);
  REQUIRE(s->record.selected.size() == 2);
  CHECK(s->record.selected[0].id == s->record.retrieved[2].id);
  CHECK(s->record.selected[0].bm25_rank == 3);
  CHECK(s->record.reranked);
  CHECK(s->record.rerank_mode == "reverse");
  CHECK(s->record.generations.size() == 1);
}

TEST_CASE("pitfall notes of the selected skills come with the selection") {
  Fixture f;
  Skill red = *f.lib->Get("red");
  red.extra_json =
      *AddPitfall("", PitfallNote{"mind the tail", "t-1", "x", "wrong", 1});
  REQUIRE(f.lib->Put(red).ok());
  SelectionOptions o;
  o.select_k = 4;
  auto s =
      Bm25Selector(&*f.lib, o)
          .Select(SelectionRequest{"warp shuffles", {}, {}, std::nullopt, {}});
  REQUIRE(s.ok());
  REQUIRE(!s->skills.empty());
  CHECK(s->skills[0].hit.id == "red");
  REQUIRE(s->skills[0].pitfalls.size() == 1);
  CHECK(s->skills[0].pitfalls[0] == "mind the tail");
}

TEST_CASE("a selection larger than the retrieval is refused") {
  Fixture f;
  SelectionOptions o;
  o.retrieve_k = 1;
  o.select_k = 2;
  CHECK(Bm25Selector(&*f.lib, o)
            .Select(SelectionRequest{"row", {}, {}, std::nullopt, {}})
            .status()
            .IsInvalidArgument());
}

}  // namespace
}  // namespace skilldb::policy
