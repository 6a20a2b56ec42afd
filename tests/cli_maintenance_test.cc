// Golden tests of the maintenance commands: propose, audit, usage, prune,
// revert, tags, gc, set-status and export --sqlite.
#include <sqlite3.h>

#include "cli_util.h"

namespace skilldb {
namespace {

using testing::Fixture;
using testing::Json;
using testing::Run;

std::string Report(double speedup, bool correct = true,
                   const char* task = "softmax_rows_fp32") {
  VerificationReport r;
  r.verifier = "cuda";
  r.verifier_version = "skilldb-verify/1";
  r.device = "NVIDIA H200";
  r.device_class = "sm_90";
  r.task = task;
  r.compiled = true;
  r.correctness = {true, correct, 4, 1e-7, 1e-6, {}};
  for (int i = 0; i < 3; ++i) {
    RoundTiming t;
    t.baseline_median_ms = 1.0;
    t.candidate_median_ms = 1.0 / speedup;
    t.speedup_ratio = speedup;
    r.rounds.push_back(t);
  }
  r.speedup = {speedup, speedup * 0.98, speedup * 1.02, 0.95};
  r.passed = correct && speedup >= 1.05;
  return ReportToJson(r);
}

const char* kCandidate =
    R"({"id":"online-softmax","title":"Online softmax in one pass","body":"Keep a running max and a running sum, rescaling the sum whenever the max grows, so the row is read once.","tags":["softmax","fusion"],"ops":["softmax"],"language":"cuda"})";

TEST_CASE("propose accepts a skill with passing evidence and logs it") {
  Fixture cli;
  cli.Init();
  std::ofstream(cli.dir.Sub("good.json")) << Report(1.4);
  Run r =
      cli({"propose", "-", "--evidence", cli.dir.Sub("good.json"), "--json"},
          kCandidate);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  Json j = Json::parse(r.out);
  CHECK(j["outcome"] == "accepted");
  CHECK(j["version"] == 2);
  Run show = cli({"show", "online-softmax", "--json"});
  Json s = Json::parse(show.out);
  CHECK(s["trust"] == "provisional");
  CHECK(s["skill"]["evidence"].size() == 1);
  Run audit = cli({"audit", "--json"});
  Json log = Json::parse(audit.out);
  REQUIRE(log.size() == 2);
  CHECK(log[1]["event"] == "accepted");
  CHECK(log[1]["version"] == 2);
}

TEST_CASE("propose rejects failing evidence and duplicates, writing nothing") {
  Fixture cli;
  cli.Init();
  std::ofstream(cli.dir.Sub("slow.json")) << Report(1.01);
  Run r =
      cli({"propose", "-", "--evidence", cli.dir.Sub("slow.json"), "--json"},
          kCandidate);
  CHECK(r.code == 1);
  Json j = Json::parse(r.out);
  CHECK(j["outcome"] == "rejected");
  CHECK_FALSE(j["reasons"].empty());
  // A copy of an existing skill, with passing evidence: a duplicate.
  std::ofstream(cli.dir.Sub("good.json")) << Report(1.4);
  const std::string copy =
      R"({"id":"smem-tiling-2","title":"Tile the K loop through shared memory","summary":"Stage tiles of A and B in shared memory.","body":"Load a tile, sync, multiply, repeat.","tags":["shared-memory","tiling"],"ops":["matmul"],"language":"cuda"})";
  r = cli({"propose", "-", "--evidence", cli.dir.Sub("good.json"), "--json"},
          copy);
  CHECK(r.code == 1);
  j = Json::parse(r.out);
  CHECK(j["duplicates"][0]["id"] == "smem-tiling");
  CHECK(j["duplicates"][0]["kind"] == "exact");
  CHECK(Json::parse(cli({"log", "--json"}).out).size() ==
        1);  // nothing committed
  // With --dedup supersede it lands and deprecates the old one.
  r = cli({"propose", "-", "--evidence", cli.dir.Sub("good.json"), "--dedup",
           "supersede", "--json"},
          copy);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(Json::parse(r.out)["deprecated"][0] == "smem-tiling");
  // Bad policy and missing evidence are user errors.
  CHECK(cli({"propose", "-", "--evidence", cli.dir.Sub("good.json"), "--policy",
             "speed=2"},
            kCandidate)
            .code == 1);
  CHECK(cli({"propose", "-"}, kCandidate).code == 1);
}

TEST_CASE("usage can be recorded beside a writer and shows in show and query") {
  Fixture cli;
  cli.Init();
  Run r = cli(
      {"usage", "warp-shuffle-reduce", "--record", "applied", "--count", "3"});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  REQUIRE(cli({"usage", "warp-shuffle-reduce", "--record", "succeeded",
               "--count", "3"})
              .code == 0);
  Json u = Json::parse(cli({"usage", "warp-shuffle-reduce", "--json"}).out);
  CHECK(u["applied"] == 3);
  CHECK(u["utility"].get<double>() == doctest::Approx(0.8));
  Json q = Json::parse(cli({"query", "warp shuffle", "--json"}).out);
  CHECK(q["hits"][0]["utility"].get<double>() == doctest::Approx(0.8));
  CHECK(cli({"usage", "nope", "--record", "applied"}).code == 1);
}

TEST_CASE("prune is a dry run unless --apply, and revert undoes it") {
  Fixture cli;
  cli.Init();
  REQUIRE(cli({"set-status", "deprecated", "bank-padding"}).code == 0);
  Run dry = cli({"prune", "--policy", "superseded", "--json"});
  REQUIRE(dry.code == 0);
  Json plan = Json::parse(dry.out);
  CHECK(plan["applied"] == false);
  REQUIRE(plan["actions"].size() == 1);
  CHECK(plan["actions"][0]["id"] == "bank-padding");
  CHECK(Json::parse(cli({"log", "--json"}).out).size() == 2);  // unchanged
  Run applied = cli({"prune", "--policy", "superseded", "--apply", "--json"});
  REQUIRE(applied.code == 0);
  const int v = Json::parse(applied.out)["version"].get<int>();
  CHECK(Json::parse(
            cli({"show", "bank-padding", "--json"}).out)["skill"]["status"] ==
        "pruned");
  REQUIRE(cli({"revert", std::to_string(v)}).code == 0);
  CHECK(Json::parse(
            cli({"show", "bank-padding", "--json"}).out)["skill"]["status"] ==
        "deprecated");
  CHECK(cli({"prune", "--policy", "bogus"}).code == 1);
}

TEST_CASE("tags survive gc, which reports what it freed") {
  Fixture cli;
  cli.Init();
  for (int i = 0; i < 6; ++i) {
    REQUIRE(cli({"add", "-"}, R"({"id":"churn","title":"version )" +
                                  std::to_string(i) + "\"}")
                .code == 0);
  }
  REQUIRE(cli({"tag", "ckpt", "2"}).code == 0);
  Json tags = Json::parse(cli({"tags", "--json"}).out);
  CHECK(tags[0]["name"] == "ckpt");
  Run gc = cli({"gc", "--keep-last", "2", "--json"});
  REQUIRE_MESSAGE(gc.code == 0, gc.err);
  Json r = Json::parse(gc.out);
  CHECK(r["new_oldest"] == 6);
  CHECK(r["tagged"][0] == 2);
  CHECK(r["revisions_dropped"].get<int>() > 0);
  CHECK(cli({"show", "churn", "--as-of", "2"}).code == 0);
  CHECK(cli({"show", "churn", "--as-of", "4"}).code == 1);
  CHECK(cli({"gc"}).code == 1);
}

TEST_CASE("export --sqlite writes tables that SQL and FTS5 can query") {
  Fixture cli;
  cli.Init();
  std::ofstream(cli.dir.Sub("good.json")) << Report(1.4);
  REQUIRE(
      cli({"propose", "-", "--evidence", cli.dir.Sub("good.json")}, kCandidate)
          .code == 0);
  REQUIRE(cli({"usage", "online-softmax", "--record", "applied"}).code == 0);
  const std::string db_path = cli.dir.Sub("lib.sqlite");
  Run r = cli({"export", "--sqlite", db_path, "--json"});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(db_path.c_str(), &db) == SQLITE_OK);
  auto scalar = [&](const char* sql) {
    sqlite3_stmt* stmt = nullptr;
    REQUIRE_MESSAGE(
        sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) == SQLITE_OK, sql);
    REQUIRE(sqlite3_step(stmt) == SQLITE_ROW);
    std::string out =
        reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    sqlite3_finalize(stmt);
    return out;
  };
  CHECK(scalar("SELECT count(*) FROM skills") == "5");
  CHECK(scalar("SELECT count(*) FROM commits") == "2");
  CHECK(scalar("SELECT task FROM evidence WHERE skill_id='online-softmax'") ==
        "softmax_rows_fp32");
  CHECK(scalar("SELECT applied FROM usage WHERE skill_id='online-softmax'") ==
        "1");
  CHECK(scalar("SELECT event FROM audit ORDER BY seq DESC LIMIT 1") ==
        "accepted");
  CHECK(
      scalar(
          "SELECT id FROM skills_fts WHERE skills_fts MATCH 'running max' ") ==
      "online-softmax");
  CHECK(scalar("SELECT count(*) FROM revisions") == "5");
  sqlite3_close(db);
}

}  // namespace
}  // namespace skilldb
