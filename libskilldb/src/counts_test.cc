// The skill counts by status, language and trust that `Stats` prints, kept
// in each commit record (issue 14: `stats` counted by scanning): they match a count
// of what a scan sees at every version, survive reopening, compaction and
// merging, and a library whose records predate them still reports them and
// starts keeping them at its next commit.
#include <doctest/doctest.h>

#include <random>

#include "../../tests/test_util.h"
#include "records.h"
#include "skilldb/json.h"
#include "skilldb/library.h"
#include "skilldb/verifier.h"
#include "keys.h"
#include "storage.h"

namespace skilldb {
namespace {

using internal::SkillCounts;
using testing::TempLibrary;

// What a scan at `v` sees, counted.
SkillCounts Scanned(Library& lib, Version v) {
  SkillCounts c;
  REQUIRE(lib.Scan(ReadOptions{.as_of = v},
                   [&](const Skill& s) {
                     REQUIRE(internal::CountSkill(s, +1, &c).ok());
                     return true;
                   })
              .ok());
  return c;
}

SkillCounts FromStats(const LibraryStats& s) {
  return {s.candidate,  s.active,      s.deprecated,
          s.pruned,     s.cuda,        s.triton,
          s.any_language, s.unverified, s.provisional,
          s.trusted};
}

void CheckEveryVersion(Library& lib) {
  for (Version v = 1; v <= lib.CurrentVersion(); ++v) {
    CAPTURE(v);
    auto stats = lib.Stats(ReadOptions{.as_of = v});
    REQUIRE(stats.ok());
    CHECK(FromStats(*stats) == Scanned(lib, v));
  }
}

// Commits of puts, updates that move a skill's status or language, and
// deletes, chosen by a seeded generator.
void RandomCommits(Library& lib, int commits, uint32_t seed) {
  std::mt19937 rng(seed);
  for (int c = 0; c < commits; ++c) {
    std::vector<Skill> puts;
    std::vector<std::string> deletes;
    const int n = 1 + static_cast<int>(rng() % 6);
    for (int i = 0; i < n; ++i) {
      const std::string id = "s" + std::to_string(rng() % 40);
      bool taken = false;
      for (const Skill& p : puts) taken |= p.id == id;
      for (const std::string& d : deletes) taken |= d == id;
      if (taken) continue;
      if (rng() % 5 == 0) {
        if (lib.Get(id).ok()) deletes.push_back(id);
        continue;
      }
      Skill s = Skill::Make(id, "warp tiling number " + std::to_string(rng() % 9));
      s.status = static_cast<SkillStatus>(rng() % 4);
      s.language = static_cast<Language>(rng() % 3);
      // None, one or two passing reports: unverified, provisional, trusted.
      const int reports = static_cast<int>(rng() % 3);
      for (int r = 0; r < reports; ++r) {
        VerificationReport report;
        report.passed = true;
        report.task = "task-" + std::to_string(r);
        s.evidence_json.push_back(ToJson(report));
      }
      puts.push_back(std::move(s));
    }
    if (puts.empty() && deletes.empty()) continue;
    REQUIRE(lib.Commit(puts, deletes).ok());
  }
}

TEST_CASE("stats counts by status and language are kept per version") {
  Options o = TempLibrary::DefaultOptions();
  o.merge_factor = 3;
  TempLibrary lib(o);
  RandomCommits(*lib, 80, 7);
  CheckEveryVersion(*lib);
  lib.Reopen();
  CheckEveryVersion(*lib);
  REQUIRE(lib->Compact().ok());
  CheckEveryVersion(*lib);
  // A commit that changes nothing leaves the counts as they were.
  auto head = lib->Get("s1");
  if (head.ok()) {
    const Version before = lib->CurrentVersion();
    REQUIRE(lib->Put(*head).ok());
    CHECK(lib->CurrentVersion() == before);
  }
  auto report = lib->Check();
  REQUIRE(report.ok());
  CHECK(report->problems.empty());
}

TEST_CASE("a commit record round-trips its counts, and one without has none") {
  CommitInfo info;
  info.version = 3;
  info.kind = "import";
  info.num_skills = 5;
  SkillCounts counts{1, 2, 1, 1, 3, 0, 2, 1, 3, 1};
  std::optional<SkillCounts> read;
  auto decoded = internal::DecodeCommit(internal::EncodeCommit(info, counts), &read);
  REQUIRE(decoded.ok());
  CHECK(*decoded == info);
  REQUIRE(read.has_value());
  CHECK(*read == counts);
  decoded = internal::DecodeCommit(internal::EncodeCommit(info), &read);
  REQUIRE(decoded.ok());
  CHECK(*decoded == info);
  CHECK_FALSE(read.has_value());
  // A counter that would go below zero is damage, not a wrapped number.
  SkillCounts empty;
  CHECK(internal::CountSkill(Skill::Make("a", "b"), -1, &empty).code() ==
        StatusCode::kCorruption);
}

TEST_CASE("a library whose commit records predate the counts still reports them") {
  TempLibrary lib;
  RandomCommits(*lib, 30, 11);
  const Version head = lib->CurrentVersion();
  lib.Close();
  {
    // Rewrite every commit record the way a library written before the
    // counts were kept holds it.
    Options o = TempLibrary::DefaultOptions();
    bool created = false;
    auto storage = internal::Storage::Open(o, lib.path(), &created);
    REQUIRE(storage.ok());
    rocksdb::WriteBatch batch;
    for (Version v = 1; v <= head; ++v) {
      std::string key;
      internal::PutBe64(&key, v);
      auto value = (*storage)->Get(internal::kCommits, key);
      REQUIRE(value.ok());
      REQUIRE(value->has_value());
      std::optional<SkillCounts> had;
      auto info = internal::DecodeCommit(**value, &had);
      REQUIRE(info.ok());
      CHECK(had.has_value());
      batch.Put((*storage)->cf(internal::kCommits), key,
                internal::EncodeCommit(*info));
    }
    REQUIRE((*storage)->Write(&batch, true).ok());
  }
  lib.Reopen();
  CheckEveryVersion(*lib);
  // The next commit counts its head once and keeps the counts from then on.
  RandomCommits(*lib, 10, 12);
  CHECK(lib->CurrentVersion() > head);
  CheckEveryVersion(*lib);
  lib.Reopen();
  CheckEveryVersion(*lib);
}

}  // namespace
}  // namespace skilldb
