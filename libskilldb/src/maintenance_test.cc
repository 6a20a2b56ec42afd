// Usage feedback, pruning, revert, tags and garbage collection.
#include <doctest/doctest.h>

#include <map>
#include <thread>

#include "../../tests/test_util.h"
#include "skilldb/library.h"

namespace skilldb {
namespace {

using testing::TempLibrary;

Skill Text(const std::string& id, const std::string& title) {
  Skill s = Skill::Make(id, title);
  s.body = "body of " + id;
  return s;
}

TEST_CASE("usage counters are exact under concurrent increments from threads") {
  TempLibrary lib;
  REQUIRE(lib->PutMany({Text("a", "alpha"), Text("b", "beta")}).ok());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        REQUIRE(lib->RecordUsage(i % 2 ? "a" : "b", UsageEvent::kApplied).ok());
        if (t == 0)
          REQUIRE(lib->RecordUsage("a", UsageEvent::kSucceeded, 2).ok());
      }
    });
  }
  for (auto& t : threads) t.join();
  auto a = lib->GetUsage("a");
  REQUIRE(a.ok());
  CHECK(a->count(UsageEvent::kApplied) == 1000);
  CHECK(a->count(UsageEvent::kSucceeded) == 1000);
  CHECK(a->last_used_version == 1);
  lib.Reopen();
  CHECK(lib->GetUsage("b")->count(UsageEvent::kApplied) == 1000);
  CHECK(lib->RecordUsage("nope", UsageEvent::kApplied).code() ==
        StatusCode::kNotFound);
}

TEST_CASE("utility is the posterior mean success rate") {
  UsageCounters c;
  CHECK(c.utility() == doctest::Approx(0.5));
  c.counts[static_cast<int>(UsageEvent::kSucceeded)] = 8;
  c.counts[static_cast<int>(UsageEvent::kFailed)] = 0;
  CHECK(c.utility() == doctest::Approx(0.9));
}

TEST_CASE(
    "usage recorded by read-only openers is counted and folded exactly once") {
  TempLibrary lib;
  REQUIRE(lib->Put(Text("a", "alpha")).ok());
  lib.Close();
  Options ro;
  ro.read_only = true;
  {
    auto reader = Library::Open(ro, lib.path());
    REQUIRE(reader.ok());
    for (int i = 0; i < 7; ++i)
      REQUIRE((*reader)->RecordUsage("a", UsageEvent::kRetrieved).ok());
    CHECK((*reader)->GetUsage("a")->count(UsageEvent::kRetrieved) == 7);
  }
  lib.Reopen();  // the writer folds the finished spool
  CHECK(lib->GetUsage("a")->count(UsageEvent::kRetrieved) == 7);
  lib.Reopen();  // and never twice
  CHECK(lib->GetUsage("a")->count(UsageEvent::kRetrieved) == 7);
}

TEST_CASE(
    "prune policies each select what they name, and dry runs write nothing") {
  TempLibrary lib;
  Skill old = Text("old", "warp reduction old");
  Skill fresh = Text("new", "warp reduction new");
  fresh.lineage.supersedes = {"old"};
  Skill bad = Text("bad", "a skill that fails");
  Skill dep = Text("dep", "deprecated one");
  dep.status = SkillStatus::kDeprecated;
  Skill dup1 = Text(
      "dup1", "tile the k loop through shared memory and sync between tiles");
  dup1.body =
      "load a tile of a and b into shared memory, synchronize, multiply, "
      "repeat";
  Skill dup2 = dup1;
  dup2.id = "dup2";
  dup2.body += " for every tile";
  REQUIRE(lib->PutMany({old, fresh, bad, dep, dup1, dup2}).ok());
  for (int i = 0; i < 12; ++i)
    REQUIRE(lib->RecordUsage("bad", UsageEvent::kApplied).ok());
  REQUIRE(lib->RecordUsage("bad", UsageEvent::kFailed, 12).ok());
  REQUIRE(lib->RecordUsage("dup2", UsageEvent::kSucceeded, 3).ok());
  for (int i = 0; i < 5; ++i)
    REQUIRE(lib->Put(Text("filler" + std::to_string(i), "x")).ok());

  auto ids = [](const std::vector<PruneAction>& plan) {
    std::vector<std::string> out;
    for (const auto& a : plan) out.push_back(a.id);
    return out;
  };
  PrunePolicy low;
  low.low_utility_threshold = 0.2;
  low.low_utility_min_applied = 10;
  CHECK(ids(*lib->PlanPrune(low)) == std::vector<std::string>{"bad"});
  low.low_utility_min_applied = 13;
  CHECK(lib->PlanPrune(low)->empty());

  PrunePolicy superseded;
  superseded.superseded = true;
  CHECK(ids(*lib->PlanPrune(superseded)) ==
        std::vector<std::string>{"dep", "old"});

  PrunePolicy unused;
  unused.unused_versions = 5;  // head is 6; the import was version 1
  auto plan = lib->PlanPrune(unused);
  REQUIRE(plan.ok());
  CHECK(plan->size() == 6);  // the six imported skills; fillers are recent
  unused.unused_versions = 6;
  CHECK(lib->PlanPrune(unused)->empty());

  PrunePolicy near;
  near.near_duplicate_jaccard = 0.5;
  // dup2 has the better utility (3 successes), so dup1 goes.
  CHECK(ids(*lib->PlanPrune(near)) == std::vector<std::string>{"dup1"});

  const Version before = lib->CurrentVersion();
  auto everything = lib->PlanPrune(superseded);
  CHECK(lib->CurrentVersion() == before);  // planning wrote nothing
  auto applied = lib->ApplyPrune(*everything);
  REQUIRE(applied.ok());
  CHECK(*applied == before + 1);
  CHECK(lib->Get("old")->status == SkillStatus::kPruned);
  CHECK(lib->Get("dep")->status == SkillStatus::kPruned);
  CHECK(lib->Query({}, "old")->hits.empty());  // hidden from default queries
  CHECK(
      lib->PlanPrune(superseded)->empty());  // pruned skills are not re-pruned

  // Undo from history.
  auto reverted = lib->Revert(*applied);
  REQUIRE(reverted.ok());
  CHECK(lib->Get("old")->status == SkillStatus::kActive);
  CHECK(lib->Get("dep")->status == SkillStatus::kDeprecated);
}

TEST_CASE("gc keeps tagged versions and everything the policy keeps") {
  Options o = TempLibrary::DefaultOptions();
  o.analyzer = Analyzer::kWhitespace;
  o.merge_factor = 3;
  TempLibrary lib(o);
  for (int v = 1; v <= 30; ++v) {
    const std::string id = "s" + std::to_string(v % 7);
    if (v % 5 == 0) {
      (void)lib->Delete(id);  // may be absent: then no version is made
      if (lib->CurrentVersion() != static_cast<Version>(v))
        REQUIRE(lib->Put(Text(id, "w")).ok());
    } else {
      REQUIRE(lib->Put(Text(id, "word" + std::to_string(v % 4) + " common v" +
                                    std::to_string(v)))
                  .ok());
    }
  }
  REQUIRE(lib->CurrentVersion() == 30);
  REQUIRE(lib->Tag("checkpoint", 8).ok());
  CHECK(lib->Tag("checkpoint", 9).code() == StatusCode::kAlreadyExists);
  CHECK(lib->Tag("bad name", 9).code() == StatusCode::kInvalidArgument);

  struct Snapshot {
    std::map<std::string, std::string> skills;
    std::vector<std::pair<std::string, double>> hits;
  };
  auto capture = [&](Version v) {
    Snapshot s;
    REQUIRE(lib->Scan({.as_of = v},
                      [&](const Skill& k) {
                        s.skills[k.id] = SkillToJson(k);
                        return true;
                      })
                .ok());
    auto r = lib->Query({.k = 50, .as_of = v}, "common word1 word2");
    REQUIRE(r.ok());
    for (const Hit& h : r->hits) s.hits.emplace_back(h.id, h.score);
    return s;
  };
  std::map<Version, Snapshot> before;
  for (Version v : {Version{8}, Version{20}, Version{25}, Version{30}})
    before[v] = capture(v);

  auto report = lib->Gc({.keep_last = 11});  // keeps 20..30 and the tag
  REQUIRE_MESSAGE(report.ok(), report.status().ToString());
  CHECK(report->new_oldest == 20);
  CHECK(report->tagged == std::vector<Version>{8});
  CHECK(report->revisions_dropped > 0);
  CHECK(report->commits_dropped == 18);  // 1..19 except 8
  CHECK(report->documents_dropped > 0);
  for (auto& [v, snap] : before) {
    const Version version = v;  // clang 14 captures no structured binding
    CAPTURE(version);
    Snapshot now = capture(v);
    CHECK(now.skills == snap.skills);
    CHECK(now.hits == snap.hits);
  }
  CHECK(lib->Get("s1", {.as_of = 10}).status().code() == StatusCode::kNotFound);
  CHECK(lib->Query({.as_of = 19}, "common").status().code() ==
        StatusCode::kNotFound);
  CHECK(lib->Log({})->size() == 12);  // 20..30 and 8
  lib.Reopen();
  for (auto& [v, snap] : before) CHECK(capture(v).hits == snap.hits);
  CHECK(lib->Info().oldest_retained == 20);
  // Deleting the tag lets the next gc drop it.
  REQUIRE(lib->DeleteTag("checkpoint").ok());
  auto again = lib->Gc({.keep_since = 21});
  REQUIRE(again.ok());
  CHECK(lib->Query({.as_of = 8}, "common").status().code() ==
        StatusCode::kNotFound);
  CHECK(capture(25).hits == before[25].hits);
}

}  // namespace
}  // namespace skilldb

namespace skilldb {
namespace {

// Issue 14: `compact` grew a library (35.7 to 44.5 MB): the state from
// before the merge was still held, and its snapshot kept the merged-away
// segments from being dropped, so only a second compact shrank it.
TEST_CASE("compact ends no larger than it started, and leaves nothing to a second") {
  Options o = testing::TempLibrary::DefaultOptions();
  o.merge_factor = 100;  // the imports stay separate segments until compact
  o.stage_bytes = 64 << 10;  // each import takes the bulk (table) path
  testing::TempLibrary lib(o);
  for (int c = 0; c < 4; ++c) {
    std::vector<Skill> puts;
    for (int i = 0; i < 3000; ++i) {
      Skill s = Skill::Make("s" + std::to_string(c) + "-" + std::to_string(i),
                            "warp tiling shared memory variant " +
                                std::to_string(i * 7 + c));
      s.body = "coalesced loads bank conflicts async copy pipeline number " +
               std::to_string(i * 31 + c) + " of batch " + std::to_string(c);
      puts.push_back(std::move(s));
    }
    REQUIRE(lib->PutMany(puts).ok());
  }
  lib.Reopen();
  // The whole directory for the size (part of the data is still only in
  // the log before the compaction); table files only for what a second
  // compaction finds to drop (what the log holds depends on when RocksDB
  // rolls it).
  auto disk = [&] { return lib->Stats({})->disk_bytes; };
  auto tables = [&] {
    auto s = lib->Stats({});
    REQUIRE(s.ok());
    return s->index_table_bytes + s->record_table_bytes + s->other_table_bytes;
  };
  REQUIRE(lib->Stats({})->num_segments == 4);
  const uint64_t before = disk();
  REQUIRE(lib->Compact().ok());
  const uint64_t once = disk();
  const uint64_t tables_once = tables();
  CHECK(lib->Stats({})->num_segments == 1);
  REQUIRE(lib->Compact().ok());
  const uint64_t tables_twice = tables();
  CAPTURE(before);
  CAPTURE(once);
  CAPTURE(tables_once);
  CAPTURE(tables_twice);
  CHECK(once <= before);
  // What the first left for the second to drop: at most 2% (file metadata).
  CHECK(static_cast<double>(tables_twice) >=
        0.98 * static_cast<double>(tables_once));
}

}  // namespace
}  // namespace skilldb
