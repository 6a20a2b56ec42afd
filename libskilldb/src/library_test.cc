#include "skilldb/library.h"

#include <doctest/doctest.h>

#include <cmath>
#include <map>

#include "../../tests/test_util.h"

namespace skilldb {
namespace {

using testing::TempLibrary;

double ReferenceBm25(double n, double df, double tf, double dl, double avgdl) {
  const double idf = std::log(1 + (n - df + 0.5) / (df + 0.5));
  return idf * tf / (tf + 1.2 * (1 - 0.75 + 0.75 * dl / avgdl));
}

Options Whitespace() {
  Options o = TempLibrary::DefaultOptions();
  o.analyzer = Analyzer::kWhitespace;
  return o;
}

TEST_CASE("Library returns the newest version after reopen") {
  TempLibrary lib;
  REQUIRE(lib->Put(Skill::Make("a", "one")).ok());
  REQUIRE(lib->Put(Skill::Make("b", "two")).ok());
  CHECK(lib->CurrentVersion() == 2);
  lib.Reopen();
  CHECK(lib->CurrentVersion() == 2);
  auto b = lib->Get("b");
  REQUIRE(b.ok());
  CHECK(b->title == "two");
}

TEST_CASE(
    "a query as of an old version scores with that version's statistics") {
  TempLibrary lib(Whitespace());
  REQUIRE(lib->Put(Skill::Make("a", "shared memory tiling")).ok());
  const Version v1 = lib->CurrentVersion();
  REQUIRE(lib->Put(Skill::Make("b", "shared memory bank conflicts")).ok());
  auto old_hits = lib->Query(QueryOptions{.as_of = v1}, "shared");
  REQUIRE(old_hits.ok());
  REQUIRE(old_hits->hits.size() == 1);
  CHECK(old_hits->hits[0].score ==
        doctest::Approx(ReferenceBm25(1, 1, 1, 3, 3)).epsilon(1e-12));
  auto new_hits = lib->Query(QueryOptions{}, "shared");
  REQUIRE(new_hits.ok());
  REQUIRE(new_hits->hits.size() == 2);
  CHECK(new_hits->version == 2);
  // The shorter document wins; both share df = 2, avgdl = 3.5.
  CHECK(new_hits->hits[0].id == "a");
  CHECK(new_hits->hits[0].score ==
        doctest::Approx(ReferenceBm25(2, 2, 1, 3, 3.5)).epsilon(1e-12));
  CHECK(new_hits->hits[1].score ==
        doctest::Approx(ReferenceBm25(2, 2, 1, 4, 3.5)).epsilon(1e-12));
  CHECK(new_hits->hits[0].title == "shared memory tiling");
}

TEST_CASE("updates and deletes create versions and keep history") {
  TempLibrary lib;
  REQUIRE(lib->Put(Skill::Make("a", "first title")).ok());
  REQUIRE(lib->Put(Skill::Make("a", "second title")).ok());
  REQUIRE(lib->Delete("a").ok());
  CHECK(lib->CurrentVersion() == 3);
  CHECK(lib->Get("a").status().code() == StatusCode::kNotFound);
  auto v1 = lib->Get("a", ReadOptions{.as_of = 1});
  REQUIRE(v1.ok());
  CHECK(v1->title == "first title");
  auto history = lib->History("a");
  REQUIRE(history.ok());
  REQUIRE(history->size() == 3);
  CHECK((*history)[0].deleted);
  CHECK((*history)[1].skill.title == "second title");
  CHECK((*history)[2].version == 1);
  auto log = lib->Log({});
  REQUIRE(log.ok());
  REQUIRE(log->size() == 3);
  CHECK((*log)[0].version == 3);
  CHECK((*log)[0].kind == "delete");
  CHECK((*log)[0].num_skills == 0);
  CHECK((*log)[1].updated == 1);
  auto diff = lib->Diff(1, 2);
  REQUIRE(diff.ok());
  REQUIRE(diff->size() == 1);
  CHECK((*diff)[0].kind == ChangeKind::kUpdated);
  CHECK(lib->Query({}, "title")->hits.empty());
  CHECK(lib->Query(QueryOptions{.as_of = 2}, "title")->hits.size() == 1);
}

TEST_CASE("queries as of old versions score with that version's statistics, "
          "however often and in whatever order they are asked") {
  // Each version has its own N, avgdl and dfs; the state memoizes the
  // statistics of past versions, so asking versions in turn must give the
  // scores each one gives when it is asked first.
  TempLibrary lib(Whitespace());
  REQUIRE(lib->Put(Skill::Make("a", "tile tile smem")).ok());
  REQUIRE(lib->PutMany({Skill::Make("b", "tile smem smem swizzle"),
                        Skill::Make("c", "swizzle tile")}).ok());
  REQUIRE(lib->Put(Skill::Make("a", "tile vector loads")).ok());
  REQUIRE(lib->Delete("c").ok());
  const Version head = lib->CurrentVersion();
  REQUIRE(head == 4);
  auto ask = [&](Version v) {
    auto r = lib->Query(QueryOptions{.as_of = v}, "tile smem swizzle");
    REQUIRE(r.ok());
    std::vector<std::pair<std::string, double>> hits;
    for (const Hit& h : r->hits) hits.emplace_back(h.id, h.score);
    return hits;
  };
  // First answers, each version asked once in a fresh state (a commit
  // publishes a fresh state, so make one before each).
  std::map<Version, std::vector<std::pair<std::string, double>>> first;
  for (Version v = 1; v <= head; ++v) {
    REQUIRE(lib->Put(Skill::Make("z" + std::to_string(v), "unrelated")).ok());
    first[v] = ask(v);
  }
  // v1: only "a" (tile x2, smem), N 1.
  REQUIRE(first[1].size() == 1);
  CHECK(first[1][0].second ==
        doctest::Approx(ReferenceBm25(1, 1, 2, 3, 3) +
                        ReferenceBm25(1, 1, 1, 3, 3)));
  for (const Version v : {1, 3, 2, 1, 4, 2, 3, 1}) {
    const auto again = ask(v);
    REQUIRE(again.size() == first[v].size());
    for (size_t i = 0; i < again.size(); ++i) {
      CHECK(again[i].first == first[v][i].first);
      CHECK(again[i].second == first[v][i].second);
    }
  }
}

TEST_CASE("deleting a missing skill is NotFound and writes nothing") {
  TempLibrary lib;
  CHECK(lib->Delete("nope").status().code() == StatusCode::kNotFound);
  CHECK(lib->CurrentVersion() == 0);
}

TEST_CASE("a large import keeps every skill's text, docid and terms together") {
  // 2,500 puts: several chunks of the commit's prepare-ahead pipeline, the
  // last one partial. Each skill has a unique word, so a query for it must
  // find exactly that skill, with the stored text it was given.
  TempLibrary lib(Whitespace());
  std::vector<Skill> skills;
  for (int i = 0; i < 2500; ++i) {
    skills.push_back(
        Skill::Make("s" + std::to_string(i),
                    "shared words uniq" + std::to_string(i) + " " +
                        std::string(static_cast<size_t>(1 + i % 7), 'x')));
  }
  REQUIRE(lib->PutMany(skills).ok());
  for (int i = 0; i < 2500; i += 37) {
    const std::string id = "s" + std::to_string(i);
    auto got = lib->Get(id, ReadOptions{});
    REQUIRE(got.ok());
    CHECK(got->title == skills[static_cast<size_t>(i)].title);
    auto hits = lib->Query({.k = 3}, "uniq" + std::to_string(i));
    REQUIRE(hits.ok());
    REQUIRE(hits->hits.size() == 1);
    CHECK(hits->hits[0].id == id);
  }
  auto all = lib->Query({.k = 3000}, "shared");
  REQUIRE(all.ok());
  CHECK(all->hits.size() == 2500);
}

TEST_CASE("an import with one bad skill writes nothing") {
  TempLibrary lib;
  std::vector<Skill> skills = {Skill::Make("a", "ok"), Skill::Make("B", "bad")};
  CHECK(lib->PutMany(skills).status().code() == StatusCode::kInvalidArgument);
  skills = {Skill::Make("a", "ok"), Skill::Make("a", "dup")};
  CHECK(lib->PutMany(skills).status().code() == StatusCode::kInvalidArgument);
  CHECK(lib->CurrentVersion() == 0);
  CHECK(lib->Get("a").status().code() == StatusCode::kNotFound);
}

// A SkillSource over a vector that fails with `error` once `fail_at`
// skills were read (never when fail_at is 0).
class VectorSource final : public SkillSource {
 public:
  explicit VectorSource(const std::vector<Skill>& skills, size_t fail_at = 0)
      : skills_(skills), fail_at_(fail_at) {}
  Result<bool> Next(Skill* skill) override {
    if (fail_at_ != 0 && next_ == fail_at_) {
      return Status::IOError("input.jsonl: line " + std::to_string(next_ + 1) +
                             ": read failed");
    }
    if (next_ == skills_.size()) return false;
    *skill = skills_[next_++];
    return true;
  }

 private:
  const std::vector<Skill>& skills_;
  size_t fail_at_;
  size_t next_ = 0;
};

std::vector<Skill> ImportSkills(int n, const std::string& prefix) {
  std::vector<Skill> skills;
  for (int i = 0; i < n; ++i) {
    Skill s = Skill::Make(prefix + std::to_string(i),
                          "tiled gemm variant uniq" + prefix + std::to_string(i));
    s.body = "shared memory staging double buffering " +
             std::string(static_cast<size_t>(200 + i % 50), 'b');
    skills.push_back(std::move(s));
  }
  return skills;
}

TEST_CASE("Import from a source makes the same library as PutMany") {
  // 2,500 skills: several of the source's chunks, the last one partial.
  const std::vector<Skill> skills = ImportSkills(2500, "s");
  TempLibrary a(Whitespace()), b(Whitespace());
  REQUIRE(a->Put(Skill::Make("s7", "an older revision")).ok());
  REQUIRE(b->Put(Skill::Make("s7", "an older revision")).ok());
  REQUIRE(a->PutMany(skills).ok());
  VectorSource source(skills);
  auto version = b->Import(source);
  REQUIRE(version.ok());
  CHECK(*version == 2);
  auto ca = a->GetCommit(2), cb = b->GetCommit(2);
  REQUIRE(ca.ok());
  REQUIRE(cb.ok());
  CHECK(cb->kind == "import");
  CHECK(cb->added == 2499);
  CHECK(cb->updated == 1);
  CHECK(cb->num_skills == ca->num_skills);
  CHECK(cb->total_length == ca->total_length);
  for (const char* q : {"gemm", "uniqs7", "uniqs2499 shared", "older"}) {
    auto ha = a->Query({.k = 50}, q), hb = b->Query({.k = 50}, q);
    REQUIRE(ha.ok());
    REQUIRE(hb.ok());
    REQUIRE(ha->hits.size() == hb->hits.size());
    for (size_t i = 0; i < ha->hits.size(); ++i) {
      CHECK(ha->hits[i].id == hb->hits[i].id);
      CHECK(ha->hits[i].score == hb->hits[i].score);
    }
  }
  auto old = b->Get("s7", ReadOptions{.as_of = 1});
  REQUIRE(old.ok());
  CHECK(old->title == "an older revision");
}

TEST_CASE("Import names the bad skill by position and writes nothing") {
  TempLibrary lib;
  std::vector<Skill> skills = ImportSkills(1500, "s");
  skills[1200].id = "Bad";
  VectorSource bad(skills);
  auto r = lib->Import(bad);
  CHECK(r.status().code() == StatusCode::kInvalidArgument);
  CHECK(r.status().message().find("skill 1201 ('Bad')") != std::string::npos);
  skills[1200].id = "s3";
  VectorSource dup(skills);
  r = lib->Import(dup);
  CHECK(r.status().code() == StatusCode::kInvalidArgument);
  CHECK(r.status().message().find("'s3' appears more than once (skill 1201)") !=
        std::string::npos);
  const std::vector<Skill> none;
  VectorSource empty(none);
  CHECK(lib->Import(empty).status().code() == StatusCode::kInvalidArgument);
  CHECK(lib->CurrentVersion() == 0);
  CHECK(lib->Get("s0").status().code() == StatusCode::kNotFound);
}

TEST_CASE("a commit past segment_build_bytes is cut into segments that "
          "answer as one") {
  // 64 KB of segment builder: the 3000-skill commit and import are cut into
  // many segments (merge_factor keeps them apart); every query scores as in
  // the one-segment library, before and after compacting.
  const std::vector<Skill> skills = ImportSkills(3000, "s");
  Options small = Whitespace();
  small.segment_build_bytes = 64 << 10;
  small.merge_factor = 1000;
  TempLibrary one(Whitespace()), cut(small), streamed(small);
  REQUIRE(one->PutMany(skills).ok());
  REQUIRE(cut->PutMany(skills).ok());
  VectorSource source(skills);
  REQUIRE(streamed->Import(source).ok());
  CHECK(one->Stats({})->num_segments == 1);
  CHECK(cut->Stats({})->num_segments > 3);
  CHECK(streamed->Stats({})->num_segments == cut->Stats({})->num_segments);
  const std::vector<std::string> queries = {
      "shared staging", "uniqs17 double tiled",
      std::string(217, 'b') + " gemm", "uniqs2999 uniqs0 variant"};
  auto same = [&](Library& a, Library& b) {
    for (const auto& q : queries) {
      auto x = a.Query({.k = 20}, q), y = b.Query({.k = 20}, q);
      REQUIRE(x.ok());
      REQUIRE(y.ok());
      REQUIRE(x->hits.size() == y->hits.size());
      CHECK(!x->hits.empty());
      for (size_t i = 0; i < x->hits.size(); ++i) {
        CHECK(x->hits[i].id == y->hits[i].id);
        CHECK(x->hits[i].score == y->hits[i].score);
      }
    }
  };
  same(*one, *cut);
  same(*one, *streamed);
  REQUIRE(cut->Compact().ok());
  CHECK(cut->Stats({})->num_segments == 1);
  same(*one, *cut);

  Options zero = Whitespace();
  zero.segment_build_bytes = 0;
  testing::TempDir dir;
  auto refused = Library::Open(zero, dir.path() + "/lib");
  CHECK(refused.status().code() == StatusCode::kInvalidArgument);
  CHECK(refused.status().message().find("segment_build_bytes") !=
        std::string::npos);
}

TEST_CASE("an import that fails after staging tables leaves nothing behind, "
          "in this process and after reopening") {
  // stage_bytes of 64 KB: the failing import loads several tables of
  // revisions and documents for version 2 before its source fails. The next
  // commit in the same process makes version 2 again and must not pick up
  // those rows.
  Options o = Whitespace();
  o.stage_bytes = 64 << 10;
  TempLibrary lib(o);
  REQUIRE(lib->Put(Skill::Make("base", "the first skill")).ok());
  const std::vector<Skill> skills = ImportSkills(4000, "s");
  VectorSource failing(skills, 3500);
  auto r = lib->Import(failing);
  REQUIRE(r.status().code() == StatusCode::kIOError);
  CHECK(r.status().message().find("line 3501") != std::string::npos);
  CHECK(lib->CurrentVersion() == 1);
  CHECK(lib->Get("s10").status().code() == StatusCode::kNotFound);

  REQUIRE(lib->Put(Skill::Make("next", "tiled after the failure")).ok());
  CHECK(lib->CurrentVersion() == 2);
  auto check = [&] {
    CHECK(lib->Get("s10").status().code() == StatusCode::kNotFound);
    CHECK(lib->Get("s10", ReadOptions{.as_of = 2}).status().code() ==
          StatusCode::kNotFound);
    auto hits = lib->Query({.k = 10}, "tiled");
    REQUIRE(hits.ok());
    REQUIRE(hits->hits.size() == 1);
    CHECK(hits->hits[0].id == "next");
    auto history = lib->History("s10");
    CHECK((!history.ok() || history->empty()));
    auto stats = lib->Stats({});
    REQUIRE(stats.ok());
    CHECK(stats->num_skills == 2);
  };
  check();
  lib.Reopen();
  check();
  VectorSource whole(skills);
  REQUIRE(lib->Import(whole).ok());
  CHECK(lib->Stats({})->num_skills == 4002);
}

TEST_CASE("versions beyond the head are NotFound for every read") {
  TempLibrary lib;
  REQUIRE(lib->Put(Skill::Make("a", "x")).ok());
  CHECK(lib->Get("a", {.as_of = 5}).status().code() == StatusCode::kNotFound);
  CHECK(lib->Query({.as_of = 5}, "x").status().code() == StatusCode::kNotFound);
  CHECK(lib->Diff(1, 7).status().code() == StatusCode::kNotFound);
  CHECK(lib->Stats({.as_of = 2}).status().code() == StatusCode::kNotFound);
}

TEST_CASE("expected_head and preconditions abort commits") {
  TempLibrary lib;
  REQUIRE(lib->Put(Skill::Make("a", "x")).ok());
  CommitOptions stale;
  stale.expected_head = 0;
  CHECK(lib->Put(Skill::Make("b", "y"), stale).status().code() ==
        StatusCode::kAborted);
  CommitOptions refuse;
  refuse.precondition = [&](Version head) {
    CHECK(head == 1);
    return lib->Get("a", {.as_of = head}).ok()
               ? Status::Aborted("a already there")
               : Status::Ok();
  };
  CHECK(lib->Put(Skill::Make("b", "y"), refuse).status().code() ==
        StatusCode::kAborted);
  CHECK(lib->CurrentVersion() == 1);
}

TEST_CASE("filters restrict hits by tag, op, language and status") {
  TempLibrary lib;
  Skill a = Skill::Make("a", "warp shuffle reduction");
  a.tags = {"Warp"};
  a.ops = {"reduction"};
  a.language = Language::kCuda;
  Skill b = Skill::Make("b", "warp specialization");
  b.tags = {"warp", "hopper"};
  b.language = Language::kTriton;
  Skill c = Skill::Make("c", "warp level old trick");
  c.status = SkillStatus::kDeprecated;
  REQUIRE(lib->PutMany({a, b, c}).ok());
  auto ids = [&](const QueryOptions& o) {
    std::vector<std::string> out;
    auto result = lib->Query(o, "warp");
    REQUIRE(result.ok());
    for (const Hit& h : result->hits) out.push_back(h.id);
    std::sort(out.begin(), out.end());
    return out;
  };
  CHECK(ids({}) == std::vector<std::string>{"a", "b"});
  CHECK(ids({.tags = {"warp"}}) == std::vector<std::string>{"a", "b"});
  CHECK(ids({.tags = {"warp", "hopper"}}) == std::vector<std::string>{"b"});
  CHECK(ids({.ops = {"reduction"}}) == std::vector<std::string>{"a"});
  CHECK(ids({.language = Language::kTriton}) == std::vector<std::string>{"b"});
  CHECK(ids({.status = SkillStatus::kDeprecated}) ==
        std::vector<std::string>{"c"});
}

TEST_CASE("many small commits are merged and queries stay exact") {
  Options o = Whitespace();
  o.merge_factor = 3;
  TempLibrary lib(o);
  for (int i = 0; i < 60; ++i) {
    Skill s = Skill::Make("s" + std::to_string(i % 25),
                          "term" + std::to_string(i % 7) + " common word" +
                              std::string(static_cast<size_t>(i % 5), 'x'));
    REQUIRE(lib->Put(s).ok());
    if (i % 9 == 8) REQUIRE(lib->Delete("s" + std::to_string(i % 25)).ok());
  }
  auto stats = lib->Stats({});
  REQUIRE(stats.ok());
  CHECK(stats->num_segments < 10);
  for (Version v : {Version{5}, Version{30}, lib->CurrentVersion()}) {
    QueryOptions full{.k = 7, .as_of = v, .exhaustive = true};
    auto y = lib->Query(full, "term3 common term5");
    REQUIRE(y.ok());
    for (bool wand : {false, true}) {
      QueryOptions pruned{.k = 7, .as_of = v, .block_max_wand = wand};
      auto x = lib->Query(pruned, "term3 common term5");
      REQUIRE(x.ok());
      REQUIRE(x->hits.size() == y->hits.size());
      for (size_t i = 0; i < x->hits.size(); ++i) {
        CHECK(x->hits[i].id == y->hits[i].id);
        CHECK(x->hits[i].score == y->hits[i].score);
      }
    }
  }
  lib.Reopen();
  CHECK(lib->Query({}, "common")->hits.size() > 0);
  // Compacting to one segment changes no result.
  auto before = lib->Query({.k = 20}, "term3 common term5");
  REQUIRE(lib->Compact().ok());
  CHECK(lib->Stats({})->num_segments == 1);
  auto after = lib->Query({.k = 20}, "term3 common term5");
  REQUIRE(before->hits.size() == after->hits.size());
  for (size_t i = 0; i < before->hits.size(); ++i) {
    CHECK(before->hits[i].id == after->hits[i].id);
    CHECK(before->hits[i].score == after->hits[i].score);
  }
  auto old = lib->Query({.k = 7, .as_of = 5, .exhaustive = true},
                        "term3 common term5");
  auto old_pruned = lib->Query({.k = 7, .as_of = 5}, "term3 common term5");
  REQUIRE(old->hits.size() == old_pruned->hits.size());
  for (size_t i = 0; i < old->hits.size(); ++i)
    CHECK(old->hits[i].id == old_pruned->hits[i].id);
}

TEST_CASE("a read-only open sees the data and refuses writes") {
  TempLibrary lib;
  REQUIRE(lib->Put(Skill::Make("a", "x")).ok());
  Options ro;
  ro.read_only = true;
  auto reader = Library::Open(ro, lib.path());
  REQUIRE_MESSAGE(reader.ok(), reader.status().ToString());
  CHECK((*reader)->Get("a").ok());
  CHECK((*reader)->Put(Skill::Make("b", "y")).status().code() ==
        StatusCode::kFailedPrecondition);
}

TEST_CASE("opening creation settings are validated and stored") {
  testing::TempDir dir;
  Options bad = TempLibrary::DefaultOptions();
  bad.analyzer = static_cast<Analyzer>(99);
  CHECK(Library::Open(bad, dir.Sub("x")).status().code() ==
        StatusCode::kInvalidArgument);
  bad = TempLibrary::DefaultOptions();
  bad.b = 1.5;
  CHECK(Library::Open(bad, dir.Sub("x")).status().code() ==
        StatusCode::kInvalidArgument);
  Options plain;
  CHECK(Library::Open(plain, dir.Sub("missing")).status().code() ==
        StatusCode::kNotFound);
  Options ws = Whitespace();
  ws.k1 = 0.9;
  {
    auto lib = Library::Open(ws, dir.Sub("w"));
    REQUIRE(lib.ok());
  }
  auto again = Library::Open(TempLibrary::DefaultOptions(), dir.Sub("w"));
  REQUIRE(again.ok());
  CHECK((*again)->Info().analyzer == Analyzer::kWhitespace);
  CHECK((*again)->Info().k1 == 0.9);
}

TEST_CASE(
    "an unchanged skill makes no revision; a commit of nothing new makes no "
    "version") {
  TempLibrary lib;
  std::vector<Skill> skills = {Skill::Make("a", "shared memory tiling"),
                               Skill::Make("b", "warp shuffle reduction"),
                               Skill::Make("c", "tensor core async copy")};
  auto v1 = lib->PutMany(skills);
  REQUIRE(v1.ok());
  // The same import again: nothing changes.
  auto again = lib->PutMany(skills);
  REQUIRE(again.ok());
  CHECK(*again == *v1);
  CHECK(lib->CurrentVersion() == *v1);
  auto same = lib->Put(skills[1]);
  REQUIRE(same.ok());
  CHECK(*same == *v1);
  // One changed among unchanged ones: one new revision, one change.
  skills[2].body = "cp.async with a pipeline";
  auto v2 = lib->PutMany(skills);
  REQUIRE(v2.ok());
  CHECK(*v2 == *v1 + 1);
  auto commit = lib->GetCommit(*v2);
  REQUIRE(commit.ok());
  CHECK(commit->added == 0);
  CHECK(commit->updated == 1);
  CHECK(commit->num_skills == 3);
  auto changes = lib->CommitChanges(*v2);
  REQUIRE(changes.ok());
  REQUIRE(changes->size() == 1);
  CHECK((*changes)[0].id == "c");
  auto history = lib->History("a");
  REQUIRE(history.ok());
  CHECK(history->size() == 1);
  auto diff = lib->Diff(*v1, *v2);
  REQUIRE(diff.ok());
  CHECK(diff->size() == 1);
  // Still indexed once: queries see each skill once.
  auto hits = lib->Query(QueryOptions{.k = 10}, "shared memory tiling");
  REQUIRE(hits.ok());
  CHECK(hits->hits.size() == 1);
  auto report = lib->Check();
  REQUIRE(report.ok());
  CHECK(report->ok());
  CHECK(report->skills == 3);
  // A delete of a live skill is still a change.
  auto v3 = lib->Commit(skills, {"x-missing"});
  CHECK(v3.status().code() == StatusCode::kNotFound);
}

}  // namespace
}  // namespace skilldb

namespace skilldb {
namespace {

TEST_CASE("a field of weight w scores as its text repeated w times") {
  Options weighted = testing::TempLibrary::DefaultOptions();
  weighted.analyzer = Analyzer::kWhitespace;
  weighted.field_weights.title = 3;
  weighted.field_weights.code = 0;
  testing::TempLibrary a(weighted);
  Options plain = testing::TempLibrary::DefaultOptions();
  plain.analyzer = Analyzer::kWhitespace;
  testing::TempLibrary b(plain);
  Skill s1 = Skill::Make("s1", "warp shuffle");
  s1.body = "reduce values in a warp";
  s1.code = "warp warp warp";  // unindexed in `a`
  Skill s2 = Skill::Make("s2", "block reduce");
  s2.body = "shared memory and a warp";
  REQUIRE(a->PutMany({s1, s2}).ok());
  Skill r1 = s1, r2 = s2;
  r1.title = "warp shuffle warp shuffle warp shuffle";
  r1.code.clear();
  r2.title = "block reduce block reduce block reduce";
  r2.code.clear();
  REQUIRE(b->PutMany({r1, r2}).ok());
  auto x = a->Query({}, "warp reduce");
  auto y = b->Query({}, "warp reduce");
  REQUIRE(x.ok());
  REQUIRE(y.ok());
  REQUIRE(x->hits.size() == 2);
  REQUIRE(y->hits.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(x->hits[i].id == y->hits[i].id);
    CHECK(x->hits[i].score == doctest::Approx(y->hits[i].score).epsilon(1e-12));
  }
  CHECK(a->Info().field_weights.title == 3);
  a.Reopen();
  CHECK(a->Info().field_weights == weighted.field_weights);
}

TEST_CASE("field weights are parsed, validated and formatted") {
  auto w = ParseFieldWeights("title=3,code=0");
  REQUIRE(w.ok());
  CHECK(w->title == 3);
  CHECK(w->code == 0);
  CHECK(w->body == 1);
  CHECK(FormatFieldWeights(*w) ==
        "title=3,summary=1,body=1,tags=1,ops=1,code=0");
  CHECK(ParseFieldWeights("titel=3").status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(ParseFieldWeights("title=x").status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(ParseFieldWeights("title=17").status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(ParseFieldWeights("title=0,summary=0,body=0,tags=0,ops=0,code=0")
            .status()
            .code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace skilldb
