#include "skilldb/rerank/dense.h"

#include <doctest/doctest.h>

#include <sqlite3.h>

#include <cmath>
#include <map>

#include "test_util.h"

namespace skilldb::rerank {
namespace {

StoredEmbedding Row(std::string id, Version revision, std::vector<float> v) {
  StoredEmbedding e;
  e.key.id = std::move(id);
  e.key.revision = revision;
  e.vector = std::move(v);
  return e;
}

using skilldb::testing::TempDir;
using skilldb::testing::TempLibrary;

// A scripted encoder: one dimension per concept, each concept a set of
// words, so "smem" and "shared" embed alike while BM25 sees different
// terms. Counts its calls; fails on demand.
class ConceptEncoder : public llm::TextEncoder {
 public:
  Result<std::vector<std::vector<float>>> Embed(
      const std::vector<std::string>& texts) override {
    ++calls;
    embedded += texts.size();
    if (fail) return Status::Unavailable("scripted encoder failure");
    std::vector<std::vector<float>> out;
    for (const std::string& t : texts) {
      std::vector<float> v(kConcepts.size() + 1, 0.0f);
      v.back() = 0.05f;  // nothing in common is still not orthogonal
      std::string word;
      auto flush = [&] {
        for (size_t c = 0; c < kConcepts.size(); ++c) {
          for (const char* w : kConcepts[c]) {
            if (word == w) v[c] += 1.0f;
          }
        }
        word.clear();
      };
      for (char ch : t) {
        if (std::isalnum(static_cast<unsigned char>(ch))) {
          word +=
              static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        } else {
          flush();
        }
      }
      flush();
      out.push_back(v);
    }
    return out;
  }
  const std::string& model_id() const override { return id_; }
  const std::string& weights_sha256() const override { return sha_; }
  int dimension() const override {
    return static_cast<int>(kConcepts.size() + 1);
  }

  bool fail = false;
  int calls = 0;
  size_t embedded = 0;

 private:
  static inline const std::vector<std::vector<const char*>> kConcepts = {
      {"smem", "shared", "tiling", "tile"},
      {"warp", "shuffle", "shfl"},
      {"softmax", "exp", "normalizer"},
  };
  std::string id_ = "concept-encoder";
  std::string sha_ = std::string(64, 'c');
};

Skill MakeSkill(std::string id, std::string title, std::string body) {
  Skill s = Skill::Make(std::move(id), std::move(title));
  s.summary = "About " + s.title;
  s.body = std::move(body);
  return s;
}

void Fill(TempLibrary& lib) {
  REQUIRE(lib->PutMany({MakeSkill("tile", "shared memory tiling",
                                  "stage tiles of A and B in shared memory"),
                        MakeSkill("shfl", "warp shuffle reduction",
                                  "reduce within a warp with shfl"),
                        MakeSkill("softmax", "online softmax",
                                  "one pass with a running normalizer")})
              .ok());
}

struct Fixture {
  TempLibrary lib;
  TempDir dir;
  ConceptEncoder encoder;
  std::unique_ptr<EmbeddingStore> store;
  Fixture() {
    Fill(lib);
    auto s = EmbeddingStore::Open(dir.Sub("e.sqlite"));
    REQUIRE_MESSAGE(s.ok(), s.status().ToString());
    store = std::move(s).value();
  }
  std::unique_ptr<DenseRetriever> Retriever(DenseOptions o = {}) {
    auto r = DenseRetriever::Create(lib.operator->(), &encoder, store.get(), o);
    REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    return std::move(r).value();
  }
};

TEST_CASE("dense alone finds what BM25 cannot: a synonym the encoder knows") {
  Fixture f;
  DenseOptions o;
  o.fusion = DenseFusion::kNone;
  auto r = f.Retriever(o);
  QueryOptions q;
  q.k = 2;
  auto bm25 = f.lib->Query(q, "smem");
  REQUIRE(bm25.ok());
  CHECK(bm25->hits.empty());  // no skill says "smem"
  auto d = r->Retrieve("smem", q);
  REQUIRE_MESSAGE(d.ok(), d.status().ToString());
  CHECK(d->result.applied);
  CHECK(d->result.mode == "dense");
  REQUIRE(d->result.hits.size() == 2);
  CHECK(d->result.hits[0].hit.id == "tile");
  CHECK(d->result.hits[0].bm25_rank == 0);
  CHECK(d->result.hits[0].hit.title == "shared memory tiling");  // fields
  CHECK(d->result.hits[0].rerank_score > d->result.hits[1].rerank_score);
  CHECK(d->live == 3);
  CHECK(d->embedded_now == 3);  // nothing was stored: embedded and stored
  CHECK(*f.store->Count(f.encoder.weights_sha256()) == 3);
}

TEST_CASE("rrf fuses both lists: BM25 hits and dense-only hits, ranks kept") {
  Fixture f;
  DenseOptions o;
  o.fusion = DenseFusion::kRrf;
  auto r = f.Retriever(o);
  QueryOptions q;
  q.k = 3;
  auto d = r->Retrieve("warp smem", q);
  REQUIRE(d.ok());
  REQUIRE(d->result.hits.size() == 3);
  std::map<std::string, const RankedHit*> by;
  for (const auto& h : d->result.hits) by[h.hit.id] = &h;
  REQUIRE(by.count("shfl"));
  REQUIRE(by.count("tile"));
  CHECK(by["shfl"]->bm25_rank == 1);  // BM25 found "warp" only
  CHECK(by["tile"]->bm25_rank == 0);
  // The query is half about each: shfl and tile take dense ranks 1 and 2
  // (in some order); shfl adds BM25's rank 1, so it leads, and the two
  // scores are 1/61 + 1/(60 + r) and 1/(60 + r') with {r, r'} = {1, 2}.
  CHECK(d->result.hits[0].hit.id == "shfl");
  CHECK(by["shfl"]->score + by["tile"]->score ==
        doctest::Approx(2.0 / 61.0 + 1.0 / 62.0));
  CHECK(by["tile"]->score < by["shfl"]->score);
}

TEST_CASE("a query as of an old version uses that version's revisions") {
  Fixture f;
  const Version v1 = f.lib->CurrentVersion();
  // "tile" is rewritten about softmax: at the head it no longer matches.
  REQUIRE(
      f.lib->Put(MakeSkill("tile", "softmax with exp", "normalizer after exp"))
          .ok());
  DenseOptions o;
  o.fusion = DenseFusion::kNone;
  auto r = f.Retriever(o);
  QueryOptions q;
  q.k = 1;
  auto head = r->Retrieve("shared tiling", q);
  REQUIRE(head.ok());
  q.as_of = v1;
  auto old = r->Retrieve("shared tiling", q);
  REQUIRE(old.ok());
  REQUIRE(old->result.hits.size() == 1);
  CHECK(old->result.hits[0].hit.id == "tile");
  CHECK(old->result.hits[0].hit.title == "shared memory tiling");
  CHECK(old->result.hits[0].hit.revision == v1);
  CHECK(old->result.hits[0].rerank_score > 0.9);
  REQUIRE(head->result.hits.size() == 1);
  CHECK(head->result.hits[0].rerank_score < 0.2);
  // Four revisions embedded in all (three at v1, the new "tile"), each once.
  CHECK(*f.store->Count(f.encoder.weights_sha256()) == 4);
  CHECK(f.encoder.embedded == 4 + 2);  // + the two query texts
}

TEST_CASE("the background pass embeds every retained revision once") {
  Fixture f;
  REQUIRE(f.lib->Put(MakeSkill("shfl", "warp shuffle v2", "shfl xor")).ok());
  REQUIRE(f.lib->Delete("softmax").ok());
  std::vector<EmbedProgress> seen;
  EmbedOptions o;
  o.batch_size = 2;
  o.progress = [&](const EmbedProgress& p) { seen.push_back(p); };
  auto rep = EmbedRevisions(f.lib.operator->(), &f.encoder, f.store.get(), o);
  REQUIRE_MESSAGE(rep.ok(), rep.status().ToString());
  CHECK(rep->revisions == 4);  // tile, shfl x2, softmax (its deletion is not)
  CHECK(rep->embedded == 4);
  CHECK(rep->present == 0);
  REQUIRE(!seen.empty());
  CHECK(seen.back().done == 4);
  CHECK(seen.back().total == 4);
  auto again = EmbedRevisions(f.lib.operator->(), &f.encoder, f.store.get());
  REQUIRE(again.ok());
  CHECK(again->embedded == 0);
  CHECK(again->present == 4);
  // A query after the pass embeds only its own text.
  const size_t before = f.encoder.embedded;
  auto r = f.Retriever();
  auto d = r->Retrieve("warp", QueryOptions{});
  REQUIRE(d.ok());
  CHECK(d->embedded_now == 0);
  CHECK(f.encoder.embedded == before + 1);
  CHECK(d->live == 2);  // softmax is deleted at the head
}

TEST_CASE("a stored NaN or torn vector is never scored, and embed repairs it") {
  Fixture f;
  REQUIRE(EmbedRevisions(f.lib.operator->(), &f.encoder, f.store.get()).ok());
  // Through SQLite itself: one vector all NaN, one cut to 2 bytes.
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(f.dir.Sub("e.sqlite").c_str(), &db) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db,
                       "UPDATE embedding SET vector = zeroblob(16) WHERE id = "
                       "'shfl'; UPDATE embedding SET vector = x'0000' WHERE "
                       "id = 'softmax'",
                       nullptr, nullptr, nullptr) == SQLITE_OK);
  const float nan = std::nanf("");
  sqlite3_stmt* st = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, "UPDATE embedding SET vector = ? WHERE id = "
                                 "'tile'",
                             -1, &st, nullptr) == SQLITE_OK);
  const float nans[4] = {nan, nan, nan, nan};
  sqlite3_bind_blob(st, 1, nans, sizeof nans, SQLITE_TRANSIENT);
  REQUIRE(sqlite3_step(st) == SQLITE_DONE);
  sqlite3_finalize(st);
  sqlite3_close(db);
  DenseOptions o;
  o.fusion = DenseFusion::kNone;
  o.embed_missing = false;  // a read-only query: nothing embedded again
  auto d = f.Retriever(o)->Retrieve("shared tiling", QueryOptions{});
  REQUIRE(d.ok());
  for (const RankedHit& h : d->result.hits) {
    CHECK(std::isfinite(h.rerank_score));
    CHECK(h.hit.id != "tile");
  }
  auto rep = EmbedRevisions(f.lib.operator->(), &f.encoder, f.store.get());
  REQUIRE(rep.ok());
  CHECK(rep->repaired == 2);  // the NaN and the torn one; zeros are finite
  CHECK(rep->embedded == 2);
  CHECK(rep->present == 1);
}

TEST_CASE("an encoder failure keeps BM25's order, flagged, never an error") {
  Fixture f;
  f.encoder.fail = true;
  auto r = f.Retriever();
  QueryOptions q;
  q.k = 2;
  auto d = r->Retrieve("warp shuffle", q);
  REQUIRE(d.ok());
  CHECK_FALSE(d->result.applied);
  CHECK(d->result.reason.find("scripted encoder failure") != std::string::npos);
  REQUIRE(!d->result.hits.empty());
  CHECK(d->result.hits[0].hit.id == "shfl");
}

TEST_CASE("filters apply to the dense list as to BM25's") {
  Fixture f;
  REQUIRE(f.lib->SetStatus({"tile"}, SkillStatus::kDeprecated).ok());
  DenseOptions o;
  o.fusion = DenseFusion::kNone;
  auto r = f.Retriever(o);
  auto d = r->Retrieve("smem", QueryOptions{});
  REQUIRE(d.ok());
  for (const auto& h : d->result.hits) CHECK(h.hit.id != "tile");
  CHECK(d->live == 2);
  QueryOptions all;
  all.all_statuses = true;
  auto d2 = r->Retrieve("smem", all);
  REQUIRE(d2.ok());
  REQUIRE(!d2->result.hits.empty());
  CHECK(d2->result.hits[0].hit.id == "tile");
}

TEST_CASE("embedding store: validation, read-only, persistence, prune") {
  TempDir dir;
  const std::string path = dir.Sub("e.sqlite");
  CHECK(EmbeddingStore::Open(path, {.read_only = true}).status().code() ==
        StatusCode::kNotFound);
  {
    auto s = EmbeddingStore::Open(path);
    REQUIRE(s.ok());
    CHECK((*s)->RegisterModel({"w", "m", 0}).code() ==
          StatusCode::kInvalidArgument);
    REQUIRE((*s)->RegisterModel({"w", "m", 2}).ok());
    REQUIRE((*s)->RegisterModel({"w", "m", 2}).ok());  // idempotent
    CHECK((*s)->RegisterModel({"w", "m", 3}).code() ==
          StatusCode::kInvalidArgument);
    // Named rows, not braced temporaries: GCC 12 at -O3 reports the strings
    // of an initializer list of these as maybe-uninitialized.
    const std::vector<StoredEmbedding> short_row = {Row("a", 1, {1.0f})};
    const std::vector<StoredEmbedding> nan_row = {Row("a", 1, {1.0f, NAN})};
    const std::vector<StoredEmbedding> good_row = {Row("a", 1, {1.0f, 2.0f})};
    const std::vector<StoredEmbedding> two_rows = {Row("a", 1, {1.0f, 2.0f}),
                                                   Row("b", 2, {3.0f, 4.0f})};
    CHECK((*s)->Put("w", short_row).code() ==
          StatusCode::kInvalidArgument);  // wrong size
    CHECK((*s)->Put("w", nan_row).code() == StatusCode::kInvalidArgument);
    CHECK((*s)->Put("x", good_row).code() ==
          StatusCode::kInvalidArgument);  // unregistered
    REQUIRE((*s)->Put("w", two_rows).ok());
  }
  auto s = EmbeddingStore::Open(path, {.read_only = true});
  REQUIRE(s.ok());
  auto got = (*s)->Get("w", {{"a", 1}, {"a", 2}, {"b", 2}});
  REQUIRE(got.ok());
  REQUIRE((*got)[0]);
  CHECK((*got)[0]->at(1) == 2.0f);
  CHECK_FALSE((*got)[1]);
  CHECK((*got)[2]->at(0) == 3.0f);
  CHECK((*s)->Put("w", {}).code() == StatusCode::kFailedPrecondition);
  s->reset();
  auto w = EmbeddingStore::Open(path);
  REQUIRE(w.ok());
  auto pruned = (*w)->Prune("w", {{"b", 2}});
  REQUIRE(pruned.ok());
  CHECK(*pruned == 1);
  CHECK(*(*w)->Count("w") == 1);
}

TEST_CASE("a file that is not an embedding store is refused") {
  TempDir dir;
  const std::string path = dir.Sub("junk.sqlite");
  FILE* f = std::fopen(path.c_str(), "w");
  REQUIRE(f);
  std::fputs("this is not a database, just text long enough to be a header", f);
  std::fclose(f);
  auto s = EmbeddingStore::Open(path);
  CHECK_FALSE(s.ok());
  CHECK(s.status().code() == StatusCode::kCorruption);
  CHECK(s.status().message().find(path) != std::string::npos);
}

TEST_CASE("dense options are validated") {
  DenseOptions o;
  o.candidates = 0;
  CHECK(ValidateDenseOptions(o).code() == StatusCode::kInvalidArgument);
  o = {};
  o.rrf_k = 0;
  CHECK_FALSE(ValidateDenseOptions(o).ok());
  o = {};
  o.dense_weight = 1.5;
  CHECK_FALSE(ValidateDenseOptions(o).ok());
  CHECK(ParseDenseFusion("rrf").value() == DenseFusion::kRrf);
  CHECK(ParseDenseFusion("bogus").status().message().find(
            "none, rrf or blend") != std::string::npos);
}

}  // namespace
}  // namespace skilldb::rerank
