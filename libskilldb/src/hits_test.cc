// Hits an agent can use: fields as of the queried version, usage on hits,
// batched usage events and queries that record what they returned.
#include <doctest/doctest.h>

#include "../../tests/test_util.h"
#include "skilldb/library.h"

namespace skilldb {
namespace {

using testing::TempLibrary;

Skill Full(const std::string& id, const std::string& title,
           const std::string& body) {
  Skill s = Skill::Make(id, title);
  s.summary = "summary of " + id;
  s.body = body;
  s.code = "code of " + id;
  s.language = Language::kCuda;
  s.tags = {"tiling"};
  s.ops = {"matmul"};
  s.arch = {"sm_90"};
  return s;
}

TEST_CASE("hits carry the fields asked for, as of the version queried") {
  TempLibrary lib;
  auto v1 = lib->PutMany({Full("a", "shared memory tiling", "first body"),
                          Full("b", "register blocking", "other")});
  REQUIRE(v1.ok());
  Skill revised = Full("a", "shared memory tiling v2", "second body");
  revised.tags = {"tiling", "smem"};
  auto v2 = lib->Put(revised);
  REQUIRE(v2.ok());

  QueryOptions o;
  o.fields = HitFields::All();
  o.as_of = *v1;
  auto old_hits = lib->Query(o, "shared memory tiling");
  REQUIRE(old_hits.ok());
  REQUIRE(old_hits->hits.size() >= 1);
  const Hit& old_a = old_hits->hits[0];
  CHECK(old_a.id == "a");
  CHECK(old_a.fields == HitFields::All());
  CHECK(old_a.revision == *v1);
  CHECK(old_a.title == "shared memory tiling");
  CHECK(old_a.body == "first body");
  CHECK(old_a.summary == "summary of a");
  CHECK(old_a.code == "code of a");
  CHECK(old_a.tags == std::vector<std::string>{"tiling"});
  CHECK(old_a.ops == std::vector<std::string>{"matmul"});
  CHECK(old_a.arch == std::vector<std::string>{"sm_90"});
  CHECK(old_a.language == Language::kCuda);
  CHECK(old_a.status == SkillStatus::kActive);
  REQUIRE(old_a.usage.has_value());

  o.as_of.reset();
  auto new_hits = lib->Query(o, "shared memory tiling");
  REQUIRE(new_hits.ok());
  CHECK(new_hits->hits[0].revision == *v2);
  CHECK(new_hits->hits[0].body == "second body");
  CHECK(new_hits->hits[0].tags == std::vector<std::string>{"tiling", "smem"});
}

TEST_CASE("hits carry nothing beyond id and score when no field is asked") {
  TempLibrary lib;
  REQUIRE(lib->Put(Full("a", "shared memory tiling", "b")).ok());
  auto r = lib->Query({.fields = HitFields::None()}, "tiling");
  REQUIRE(r.ok());
  REQUIRE(r->hits.size() == 1);
  CHECK(r->hits[0].title.empty());
  CHECK(r->hits[0].revision == 0);
  CHECK_FALSE(r->hits[0].usage.has_value());
  // Usage alone needs no record read, and reports the counters.
  REQUIRE(lib->RecordUsage("a", UsageEvent::kSucceeded, 3).ok());
  auto u = lib->Query({.fields = {HitField::kUsage}}, "tiling");
  REQUIRE(u.ok());
  REQUIRE(u->hits[0].usage.has_value());
  CHECK(u->hits[0].usage->count(UsageEvent::kSucceeded) == 3);
  CHECK(u->hits[0].title.empty());
}

TEST_CASE("a batch of usage records is applied whole, or not at all") {
  TempLibrary lib;
  REQUIRE(lib->PutMany({Full("a", "x", "y"), Full("b", "x", "y")}).ok());
  REQUIRE(lib->RecordUsage({{"a", UsageEvent::kApplied, 2},
                            {"b", UsageEvent::kFailed, 1},
                            {"a", UsageEvent::kSucceeded, 1}})
              .ok());
  CHECK(lib->GetUsage("a")->count(UsageEvent::kApplied) == 2);
  CHECK(lib->GetUsage("a")->count(UsageEvent::kSucceeded) == 1);
  CHECK(lib->GetUsage("b")->count(UsageEvent::kFailed) == 1);
  // One unknown id: nothing of the batch is recorded.
  Status bad = lib->RecordUsage(
      {{"a", UsageEvent::kApplied, 5}, {"missing", UsageEvent::kApplied, 1}});
  CHECK(bad.code() == StatusCode::kNotFound);
  CHECK(lib->GetUsage("a")->count(UsageEvent::kApplied) == 2);
  // A wrapped negative count is refused.
  CHECK(lib->RecordUsage({{"a", UsageEvent::kApplied, ~uint64_t{0}}})
            .IsInvalidArgument());
  CHECK(lib->GetUsage("a")->count(UsageEvent::kApplied) == 2);
}

TEST_CASE("a read-only opener's batch goes to its spool and is counted") {
  TempLibrary lib;
  REQUIRE(lib->PutMany({Full("a", "x", "y"), Full("b", "x", "y")}).ok());
  lib.Close();
  Options ro;
  ro.read_only = true;
  auto reader = Library::Open(ro, lib.path());
  REQUIRE(reader.ok());
  REQUIRE((*reader)
              ->RecordUsage({{"a", UsageEvent::kSelected, 4},
                             {"b", UsageEvent::kSelected, 1}})
              .ok());
  CHECK((*reader)->GetUsage("a")->count(UsageEvent::kSelected) == 4);
  reader->reset();
  lib.Reopen();
  CHECK(lib->GetUsage("a")->count(UsageEvent::kSelected) == 4);
  CHECK(lib->GetUsage("b")->count(UsageEvent::kSelected) == 1);
}

TEST_CASE("a query can record retrieved events for the hits it returns") {
  TempLibrary lib;
  REQUIRE(lib->PutMany({Full("a", "shared memory tiling", "y"),
                        Full("b", "shared memory banks", "y"),
                        Full("c", "warp shuffle", "y")})
              .ok());
  auto r = lib->Query({.k = 5, .record_retrieved = true}, "shared memory");
  REQUIRE(r.ok());
  CHECK(r->hits.size() == 2);
  CHECK(lib->GetUsage("a")->count(UsageEvent::kRetrieved) == 1);
  CHECK(lib->GetUsage("b")->count(UsageEvent::kRetrieved) == 1);
  CHECK(lib->GetUsage("c")->count(UsageEvent::kRetrieved) == 0);
  auto batch = lib->QueryBatch({.record_retrieved = true},
                               {"shared", "warp shuffle"}, 2);
  REQUIRE(batch.ok());
  CHECK(lib->GetUsage("a")->count(UsageEvent::kRetrieved) == 2);
  CHECK(lib->GetUsage("c")->count(UsageEvent::kRetrieved) == 1);
  // Without the option, queries record nothing.
  REQUIRE(lib->Query({}, "shared memory").ok());
  CHECK(lib->GetUsage("a")->count(UsageEvent::kRetrieved) == 2);
}

TEST_CASE("k above the documented bound is InvalidArgument") {
  TempLibrary lib;
  REQUIRE(lib->Put(Full("a", "x", "y")).ok());
  CHECK(lib->Query({.k = kMaxQueryK}, "x").ok());
  CHECK(lib->Query({.k = kMaxQueryK + 1}, "x").status().IsInvalidArgument());
}

}  // namespace
}  // namespace skilldb
