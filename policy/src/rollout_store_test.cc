#include "skilldb/policy/rollout_store.h"

#include <doctest/doctest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "test_util.h"
#include "trajectory_fixture.h"

namespace skilldb::policy {
namespace {

using skilldb::testing::TempDir;

std::unique_ptr<RolloutStore> Open(const std::string& path,
                                   RolloutStoreOptions o = {}) {
  auto s = RolloutStore::Open(path, o);
  REQUIRE_MESSAGE(s.ok(), s.status().ToString());
  return std::move(*s);
}

// One value from the database through plain SQLite, as an outside reader.
std::string Query(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) ==
          SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK);
  std::string out;
  if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) != nullptr)
    out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

// Runs `sql` on the store's file with SQLite itself, as a user with the
// sqlite3 shell would.
void Exec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  char* error = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  INFO(sql << ": " << (error ? error : ""));
  sqlite3_free(error);
  sqlite3_close(db);
  REQUIRE(rc == SQLITE_OK);
}

// A store holding the fixture trajectory, closed.
std::string StoreWithFixture(TempDir& dir) {
  std::string path = dir.Sub("r.sqlite");
  auto store = Open(path);
  REQUIRE(store->PutTrajectory(testing::FixtureTrajectory()).ok());
  return path;
}

TEST_CASE("a table re-created with other columns is refused, never a crash") {
  // Each was a segfault: a statement that did not prepare was reset.
  const char* damage[] = {
      "DROP TABLE samples; CREATE TABLE samples(trajectory_id TEXT, turn "
      "INTEGER, sample INTEGER, verdict TEXT)",
      "DROP TABLE turns; CREATE TABLE turns(trajectory_id TEXT, turn INTEGER, "
      "times_json TEXT, query TEXT)",
      "DROP TABLE turn_skills",
  };
  for (const char* sql : damage) {
    CAPTURE(sql);
    TempDir dir;
    const std::string path = StoreWithFixture(dir);
    Exec(path, sql);
    for (bool read_only : {true, false}) {
      auto s = RolloutStore::Open(path, {.read_only = read_only});
      if (!read_only && std::string(sql).starts_with("DROP TABLE turn_skills")) {
        // A missing table is created again by a writable open.
        REQUIRE(s.ok());
        continue;
      }
      REQUIRE_FALSE(s.ok());
      CHECK(s.status().code() == StatusCode::kCorruption);
      CHECK(s.status().message().find("rollout store '" + path + "'") !=
            std::string::npos);
      CHECK(s.status().message().find("this build expects") !=
            std::string::npos);
    }
  }
}

TEST_CASE("a version 1 store is upgraded and its trajectories read back") {
  TempDir dir;
  const std::string path = StoreWithFixture(dir);
  // What a version 1 build wrote: no owner, no heartbeat.
  Exec(path,
       "ALTER TABLE trajectories DROP COLUMN owner;"
       "ALTER TABLE trajectories DROP COLUMN heartbeat_ms;"
       "UPDATE meta SET value = '1' WHERE key = 'schema_version'");
  auto store = Open(path, {.read_only = true});
  auto back = store->LoadTrajectory(testing::FixtureTrajectory().id);
  REQUIRE_MESSAGE(back.ok(), back.status().ToString());
  CHECK(*back == testing::FixtureTrajectory());
  CHECK(Query(path, "SELECT value FROM meta WHERE key = 'schema_version'") ==
        "2");
}

TEST_CASE("opening a missing store without create leaves no file behind") {
  TempDir dir;
  const std::string path = dir.Sub("typo.sqlite");
  CHECK(RolloutStore::Open(path, {.create = false}).status().code() ==
        StatusCode::kNotFound);
  CHECK(RolloutStore::Open(path, {.read_only = true}).status().code() ==
        StatusCode::kNotFound);
  CHECK_FALSE(std::filesystem::exists(path));
}

TEST_CASE("a running trajectory whose writer died reads as interrupted") {
  TempDir dir;
  const std::string path = dir.Sub("r.sqlite");
  Trajectory header = testing::FixtureTrajectory();
  header.turns.clear();
  header.best_turn = header.best_sample = -1;  // no turn stored yet
  header.solved = false;
  header.finished_ms = 0;
  {
    auto store = Open(path);
    REQUIRE(store->BeginTrajectory(header).ok());
  }
  // Still running while its writer (this process) lives.
  {
    auto store = Open(path, {.read_only = true});
    auto rows = store->List({});
    REQUIRE(rows.ok());
    REQUIRE(rows->size() == 1);
    CHECK((*rows)[0].status == "running");
  }
  // The same row written by a process of this host that has ended: a child
  // that exited, so its pid names no process.
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  REQUIRE(child > 0);
  int wstatus = 0;
  REQUIRE(::waitpid(child, &wstatus, 0) == child);
  const std::string owner = Query(path, "SELECT owner FROM trajectories");
  const size_t b = owner.rfind(':');
  const size_t a = owner.rfind(':', b - 1);
  REQUIRE(a != std::string::npos);
  Exec(path, "UPDATE trajectories SET owner = '" + owner.substr(0, a) + ":" +
                 std::to_string(child) + ":1'");
  {
    auto store = Open(path, {.read_only = true});
    auto rows = store->List({});
    REQUIRE(rows.ok());
    CHECK((*rows)[0].status == "interrupted");
    auto t = store->LoadTrajectory(header.id);
    REQUIRE_MESSAGE(t.ok(), t.status().ToString());
    CHECK(t->status == "interrupted");
    CHECK(t->error == kInterruptedError);
  }
  Open(path);  // a writable open records it
  CHECK(Query(path, "SELECT status FROM trajectories") == "interrupted");
}

TEST_CASE("indexes that point past what a trajectory holds are corruption") {
  TempDir dir;
  const std::string path = StoreWithFixture(dir);
  Exec(path, "UPDATE turns SET best_sample = 7 WHERE turn = 0");
  auto store = Open(path, {.read_only = true});
  auto t = store->LoadTrajectory(testing::FixtureTrajectory().id);
  CHECK(t.status().code() == StatusCode::kCorruption);
  Exec(path,
       "UPDATE turns SET best_sample = 0; UPDATE trajectories SET best_turn "
       "= 5");
  t = store->LoadTrajectory(testing::FixtureTrajectory().id);
  CHECK(t.status().code() == StatusCode::kCorruption);
}

TEST_CASE(
    "a trajectory written turn by turn reads back whole after reopening") {
  TempDir dir;
  const std::string path = dir.Sub("r.sqlite");
  const Trajectory t = testing::FixtureTrajectory();
  {
    auto store = Open(path);
    Trajectory header = t;
    header.turns.clear();
    header.finished_ms = 0;
    REQUIRE(store->BeginTrajectory(header).ok());
    CHECK(Query(path, "SELECT status FROM trajectories") == "running");
    Trajectory partial = header;
    for (const TurnRecord& turn : t.turns) {
      partial.turns.push_back(turn);
      REQUIRE(store->AppendTurn(partial, turn).ok());
    }
    REQUIRE(store->FinishTrajectory(t).ok());
  }
  auto store = Open(path, RolloutStoreOptions{.read_only = true});
  auto back = store->LoadTrajectory(t.id);
  REQUIRE_MESSAGE(back.ok(), back.status().ToString());
  CHECK(*back == t);
  CHECK(Query(path, "PRAGMA journal_mode") == "wal");
  CHECK(Query(path, "SELECT status FROM trajectories") == "finished");
  CHECK(Query(path, "SELECT count(*) FROM samples") == "4");
  CHECK(Query(path,
              "SELECT group_concat(skill_id) FROM turn_skills WHERE "
              "turn=1 AND role='retrieved' ORDER BY rank") == "a,b");
  CHECK(Query(path,
              "SELECT completion_token_ids_json FROM samples WHERE "
              "turn=0 AND sample=1") == "[1,2,1]");
  CHECK(Query(path, "SELECT prompt_token_ids_json FROM turns WHERE turn=0") ==
        "[7,8,9]");
}

TEST_CASE("listing filters by task, group and outcome, newest first") {
  TempDir dir;
  auto store = Open(dir.Sub("r.sqlite"));
  for (int i = 0; i < 4; ++i) {
    Trajectory t = testing::FixtureTrajectory();
    t.id = "t-" + std::to_string(i);
    t.started_ms = 1000 + i;
    t.task = i % 2 ? "a" : "b";
    t.solved = i == 3;
    REQUIRE(store->PutTrajectory(t).ok());
  }
  auto all = store->List({});
  REQUIRE(all.ok());
  REQUIRE(all->size() == 4);
  CHECK(all->front().id == "t-3");
  CHECK(all->front().best_reward == doctest::Approx(1.125));
  CHECK(all->front().best_speedup == doctest::Approx(1.25));
  auto a = store->List(ListOptions{.task = "a"});
  REQUIRE(a.ok());
  CHECK(a->size() == 2);
  auto solved = store->List(ListOptions{.solved = true});
  REQUIRE(solved.ok());
  REQUIRE(solved->size() == 1);
  CHECK(solved->front().id == "t-3");
  auto one = store->List(ListOptions{.limit = 1});
  REQUIRE(one.ok());
  CHECK(one->size() == 1);
  std::vector<std::string> order;
  REQUIRE(store
              ->Scan({},
                     [&](const Trajectory& t) {
                       order.push_back(t.id);
                       return true;
                     })
              .ok());
  CHECK(order == std::vector<std::string>{"t-0", "t-1", "t-2", "t-3"});
}

TEST_CASE("many threads write trajectories at once and none is lost") {
  TempDir dir;
  auto store = Open(dir.Sub("r.sqlite"));
  std::vector<std::thread> threads;
  threads.reserve(8);
  for (int w = 0; w < 8; ++w) {
    threads.emplace_back([&, w] {
      for (int i = 0; i < 5; ++i) {
        Trajectory t = testing::FixtureTrajectory();
        t.id = "t-" + std::to_string(w) + "-" + std::to_string(i);
        Trajectory header = t;
        header.turns.clear();
        CHECK(store->BeginTrajectory(header).ok());
        for (const TurnRecord& turn : t.turns)
          CHECK(store->AppendTurn(t, turn).ok());
      }
    });
  }
  for (auto& t : threads) t.join();
  auto all = store->List({});
  REQUIRE(all.ok());
  CHECK(all->size() == 40);
  auto one = store->LoadTrajectory("t-7-4");
  REQUIRE(one.ok());
  CHECK(one->turns.size() == 2);
}

TEST_CASE("a read-only connection sees what another connection writes") {
  TempDir dir;
  const std::string path = dir.Sub("r.sqlite");
  auto writer = Open(path);
  REQUIRE(writer->PutTrajectory(testing::FixtureTrajectory()).ok());
  auto reader = Open(path, RolloutStoreOptions{.read_only = true});
  Trajectory t2 = testing::FixtureTrajectory();
  t2.id = "t-second";
  REQUIRE(writer->PutTrajectory(t2).ok());
  auto list = reader->List({});
  REQUIRE(list.ok());
  CHECK(list->size() == 2);
  CHECK(reader->PutTrajectory(t2).code() == StatusCode::kFailedPrecondition);
}

TEST_CASE(
    "unknown trajectories, missing stores and turns without a header are "
    "errors") {
  TempDir dir;
  auto store = Open(dir.Sub("r.sqlite"));
  CHECK(store->LoadTrajectory("t-none").status().IsNotFound());
  const Trajectory t = testing::FixtureTrajectory();
  CHECK(store->AppendTurn(t, t.turns[0]).IsNotFound());
  CHECK(RolloutStore::Open(dir.Sub("absent.sqlite"),
                           RolloutStoreOptions{.read_only = true})
            .status()
            .IsNotFound());
  CHECK(store->BeginTrajectory(t).ok());
  CHECK(store->BeginTrajectory(t).code() == StatusCode::kAlreadyExists);
}

TEST_CASE("distillation records keep their attempts and outcome") {
  TempDir dir;
  auto store = Open(dir.Sub("r.sqlite"));
  DistillationRecord d;
  d.id = "d-1";
  d.trajectory_id = "t-1";
  d.model = "m";
  d.started_ms = 5;
  d.finished_ms = 9;
  d.outcome = "rejected";
  d.skill_id = "sa-walk-rows";
  d.reasons = {"near duplicate of 'x' (Jaccard 0.70)"};
  d.candidate_json = R"({"id":"sa-walk-rows","title":"Walk rows"})";
  d.generations = {
      GenerationRecord{"m", {{"user", "distill"}}, "", {1}, "{}", {2}, {-1}}};
  d.errors = {"title: missing", ""};
  REQUIRE(store->PutDistillation(d).ok());
  auto back = store->Distillations("t-1");
  REQUIRE(back.ok());
  REQUIRE(back->size() == 1);
  CHECK(back->front() == d);
  CHECK(store->Distillations("t-2")->empty());
  CHECK(DefaultRolloutPath("/x/lib/") == "/x/lib.rollouts.sqlite");
}

}  // namespace
}  // namespace skilldb::policy
