// Golden tests of the skilldb binary: outputs, exit codes and error messages
// for good and bad input, run as a real process.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_util.h"

namespace skilldb {
namespace {

using testing::Cli;
using testing::Fixture;
using testing::Json;
using testing::kFixture;
using testing::Run;

TEST_CASE("query --json prints the version and ranked hits") {
  Fixture cli;
  cli.Init();
  Run r = cli({"query", "shared memory tiling", "--json"});
  REQUIRE(r.code == 0);
  Json j = Json::parse(r.out);
  CHECK(j["version"] == 1);
  REQUIRE(j["hits"].size() == 2);
  CHECK(j["hits"][0]["id"] == "smem-tiling");
  CHECK(j["hits"][1]["id"] == "bank-padding");
  CHECK(j["hits"][0]["title"] == "Tile the K loop through shared memory");
  CHECK(j["hits"][0]["score"].get<double>() >
        j["hits"][1]["score"].get<double>());
}

TEST_CASE("query filters and the code analyzer find identifiers") {
  Fixture cli;
  cli.Init();
  Run r = cli({"query", "shfl_down_sync", "--json"});
  REQUIRE(r.code == 0);
  CHECK(Json::parse(r.out)["hits"][0]["id"] == "warp-shuffle-reduce");
  r = cli({"query", "shared memory", "--op", "transpose", "--json"});
  REQUIRE(r.code == 0);
  Json j = Json::parse(r.out);
  REQUIRE(j["hits"].size() == 1);
  CHECK(j["hits"][0]["id"] == "bank-padding");
  r = cli({"query", "block sizes", "--language", "triton", "--json"});
  CHECK(Json::parse(r.out)["hits"].size() == 1);
}

TEST_CASE("query --file prints one JSON object per line") {
  Fixture cli;
  cli.Init();
  Run r = cli({"query", "--file", "-", "--json", "--threads", "2"},
              "shared memory\nwarp reduction\nnothing-matches-this\n");
  REQUIRE(r.code == 0);
  std::vector<Json> lines;
  size_t pos = 0;
  while (pos < r.out.size()) {
    size_t end = r.out.find('\n', pos);
    lines.push_back(Json::parse(r.out.substr(pos, end - pos)));
    pos = end + 1;
  }
  REQUIRE(lines.size() == 3);
  CHECK(lines[0]["query"] == "shared memory");
  CHECK(lines[1]["hits"][0]["id"] == "warp-shuffle-reduce");
  CHECK(lines[2]["hits"].empty());
  CHECK(lines[2]["version"] == 1);
}

TEST_CASE("export writes JSONL that import reads back to the same skills") {
  Fixture cli;
  cli.Init();
  Run exported = cli({"export"});
  REQUIRE(exported.code == 0);
  Fixture other;
  REQUIRE(other({"init"}).code == 0);
  REQUIRE(other({"import", "-"}, exported.out).code == 0);
  Run again = other({"export"});
  REQUIRE(again.code == 0);
  CHECK(again.out == exported.out);
  CHECK(std::count(exported.out.begin(), exported.out.end(), '\n') == 4);
}

TEST_CASE("versions: add, rm, log, diff, history, show and --as-of") {
  Fixture cli;
  cli.Init();
  Run r = cli(
      {"add", "-"},
      R"({"id":"warp-shuffle-reduce","title":"Warp shuffle reduction v2"})");
  REQUIRE(r.code == 0);
  REQUIRE(cli({"rm", "bank-padding", "-m", "obsolete"}).code == 0);
  r = cli({"log", "--json"});
  REQUIRE(r.code == 0);
  Json log = Json::parse(r.out);
  REQUIRE(log.size() == 3);
  CHECK(log[0]["version"] == 3);
  CHECK(log[0]["message"] == "obsolete");
  CHECK(log[2]["added"] == 4);
  r = cli({"diff", "1", "3", "--json"});
  Json diff = Json::parse(r.out);
  REQUIRE(diff["changes"].size() == 2);
  CHECK(diff["changes"][0]["id"] == "bank-padding");
  CHECK(diff["changes"][0]["change"] == "deleted");
  CHECK(diff["changes"][1]["change"] == "updated");
  r = cli({"history", "warp-shuffle-reduce", "--json"});
  CHECK(Json::parse(r.out).size() == 2);
  r = cli({"show", "bank-padding", "--as-of", "1", "--json"});
  REQUIRE(r.code == 0);
  CHECK(Json::parse(r.out)["skill"]["title"] ==
        "Pad shared memory rows to avoid bank conflicts");
  CHECK(cli({"show", "bank-padding"}).code == 1);
  r = cli({"query", "bank conflicts", "--as-of", "1", "--json"});
  CHECK(Json::parse(r.out)["hits"].size() == 1);
  r = cli({"query", "bank conflicts", "--json"});
  CHECK(Json::parse(r.out)["hits"].empty());
  r = cli({"stats", "--json"});
  Json stats = Json::parse(r.out);
  CHECK(stats["skills"] == 3);
  CHECK(stats["version"] == 3);
}

TEST_CASE("every command accepts --json and prints valid JSON") {
  Fixture cli;
  Run init = cli({"init", "--json"});
  REQUIRE(init.code == 0);
  CHECK(Json::parse(init.out)["analyzer"] == "code");
  CHECK(Json::parse(cli({"import", cli.file, "--json"}).out)["version"] == 1);
  CHECK(Json::parse(cli({"add", "-", "--json"}, R"({"id":"x","title":"y"})")
                        .out)["change"] == "added");
  CHECK(Json::parse(cli({"rm", "x", "--json"}).out)["change"] == "deleted");
  for (auto args :
       std::vector<std::vector<std::string>>{{"show", "smem-tiling"},
                                             {"history", "smem-tiling"},
                                             {"log"},
                                             {"diff", "1", "2"},
                                             {"stats"},
                                             {"query", "tiling"}}) {
    args.push_back("--json");
    Run r = cli(args);
    CAPTURE(args[0]);
    CHECK(r.code == 0);
    CHECK(Json::accept(r.out));
  }
}

TEST_CASE(
    "bad input fails with exit code 1, a message naming it, and no commit") {
  Fixture cli;
  cli.Init();
  struct Case {
    std::string input;
    std::string expect;  // what the message must name
  };
  const std::vector<Case> cases = {
      {"{\"id\":\"a\",\"title\":\"ok\"}\n{\"id\":\"b\",\"title\":", ":2:"},
      {"{\"id\":\"a\",\"title\":\"t\",\"colour\":\"red\"}\n", "colour"},
      {"{\"id\":\"Bad Id\",\"title\":\"t\"}\n", "Bad Id"},
      {"{\"id\":\"a\",\"title\":\"   \"}\n", "title"},
      {"{\"id\":\"a\",\"title\":\"caf\xc3\"}\n", ":1:"},
      {"{\"id\":\"a\",\"title\":\"x\"}\n{\"id\":\"a\",\"title\":\"y\"}\n",
       "line 1"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.input);
    Run r = cli({"import", "-"}, c.input);
    CHECK(r.code == 1);
    CHECK(r.err.find(c.expect) != std::string::npos);
    Run json_err = cli({"import", "-", "--json"}, c.input);
    CHECK(json_err.err.find("\"invalid_argument\"") != std::string::npos);
  }
  Run missing = cli({"import", cli.dir.Sub("nope.jsonl")});
  CHECK(missing.code == 1);
  CHECK(missing.err.find("nope.jsonl") != std::string::npos);
  Run future = cli({"query", "tiling", "--as-of", "42"});
  CHECK(future.code == 1);
  CHECK(future.err.find("42") != std::string::npos);
  Run bad_version = cli({"show", "smem-tiling", "--as-of", "-3"});
  CHECK(bad_version.code == 1);
  Run bad_lang = cli({"query", "x", "--language", "rust"});
  CHECK(bad_lang.code == 1);
  Run no_cmd = cli({});
  CHECK(no_cmd.code == 1);
  // Nothing was committed by any of the failures.
  CHECK(Json::parse(cli({"log", "--json"}).out).size() == 1);
}

TEST_CASE(
    "a library that is not one fails with exit code 2 or 1, never a crash") {
  Fixture cli;
  std::filesystem::create_directories(cli.db);
  std::ofstream(cli.db + "/CURRENT") << "garbage\n";
  Run r = cli({"query", "x"});
  CHECK(r.code == 2);
  CHECK_FALSE(r.err.empty());
  std::filesystem::create_directories(cli.dir.Sub("docs"));
  std::ofstream(cli.dir.Sub("docs/notes.txt")) << "mine";
  Run r2 = Cli(cli.home, {"--db", cli.dir.Sub("docs"), "init"});
  CHECK(r2.code == 1);
  CHECK(std::filesystem::exists(cli.dir.Sub("docs/notes.txt")));
}

TEST_CASE(
    "a read-only command works while another process holds the library for "
    "writing") {
  Fixture cli;
  cli.Init();
  Options o;
  auto writer = Library::Open(o, cli.db);  // holds the write lock
  REQUIRE(writer.ok());
  REQUIRE((*writer)->Put(Skill::Make("held", "written by the holder")).ok());
  Run r = cli({"query", "holder", "--json"});
  REQUIRE(r.code == 0);
  Json j = Json::parse(r.out);
  CHECK(j["version"] == 2);
  CHECK(j["hits"][0]["id"] == "held");
  Run w = cli({"--lock-timeout", "100", "rm", "held"});
  CHECK(w.code == 1);
  CHECK(w.err.find("another process") != std::string::npos);
}

TEST_CASE("the default library is created from the seed library on first use") {
  testing::TempDir dir;
  std::filesystem::create_directories(dir.Sub("home"));
  std::filesystem::create_directories(dir.Sub("seed"));
  std::ofstream(dir.Sub("seed/a.jsonl")) << kFixture;
  Run r = Cli(dir.Sub("home"), {"query", "shared-memory tiling", "--json"}, "",
              {"SKILLDB_SEED_DIR=" + dir.Sub("seed")});
  REQUIRE(r.code == 0);
  CHECK(Json::parse(r.out)["hits"][0]["id"] == "smem-tiling");
  CHECK(std::filesystem::exists(
      dir.Sub("home/.local/share/skilldb/library/CURRENT")));
  // Second use: no re-import, same version.
  Run again = Cli(dir.Sub("home"), {"log", "--json"}, "",
                  {"SKILLDB_SEED_DIR=" + dir.Sub("seed")});
  CHECK(Json::parse(again.out).size() == 1);
}

TEST_CASE("help explains the commands and exits 0") {
  testing::TempDir dir;
  Run r = Cli(dir.path(), {"--help"});
  CHECK(r.code == 0);
  CHECK(r.out.find("query") != std::string::npos);
  Run q = Cli(dir.path(), {"query", "--help"});
  CHECK(q.code == 0);
  CHECK(q.out.find("--as-of") != std::string::npos);
}

TEST_CASE("re-importing identical content makes no new version and says so") {
  Fixture cli;
  cli.Init();
  Run again = cli({"import", cli.file, "-m", "same again", "--json"});
  REQUIRE_MESSAGE(again.code == 0, again.err);
  Json j = Json::parse(again.out);
  CHECK(j["committed"] == false);
  CHECK(j["version"] == 1);
  CHECK(j["unchanged"] == 4);
  Run human = cli({"import", cli.file});
  CHECK(human.code == 0);
  CHECK(human.out.find("nothing to commit") != std::string::npos);
  Run log = cli({"log", "--json"});
  REQUIRE(log.code == 0);
  CHECK(Json::parse(log.out).size() == 1);
  Run history = cli({"history", "smem-tiling", "--json"});
  REQUIRE(history.code == 0);
  CHECK(Json::parse(history.out).size() == 1);
  // One changed skill among the same ones: one updated revision.
  std::string changed = testing::kFixture;
  changed.replace(changed.find("Load a tile"), 11, "Load a TILE");
  std::ofstream(cli.file) << changed;
  Run one = cli({"import", cli.file, "--json"});
  REQUIRE(one.code == 0);
  Json k = Json::parse(one.out);
  CHECK(k["committed"] == true);
  CHECK(k["version"] == 2);
  CHECK(k["updated"] == 1);
  CHECK(k["unchanged"] == 3);
}

TEST_CASE("--version prints the version and exits 0") {
  testing::TempDir dir;
  Run r = Cli(dir.path(), {"--version"});
  CHECK(r.code == 0);
  CHECK(r.out.starts_with("skilldb 0."));
}

TEST_CASE("train is a command of --help, and global options before it work") {
  testing::TempDir dir;
  Run help = Cli(dir.path(), {"--help"});
  REQUIRE(help.code == 0);
  CHECK(help.out.find("train") != std::string::npos);
  // The CLI itself refuses --db for train (before any hand-over).
  Run db = Cli(dir.path(), {"--db", dir.Sub("lib"), "train", "demo"});
  CHECK(db.code == 1);
  CHECK(db.err.find("RUN_DIR/library") != std::string::npos);
  // Options before the config flag: the config file is what is missing.
  Run config = Cli(dir.path(), {"train", "--out", dir.Sub("run"), "--config",
                                dir.Sub("missing.json")});
  if (config.err.find("skilldb-ml") != std::string::npos &&
      config.err.find("none was found") != std::string::npos) {
    // The sanitized build has no libtorch, so no companion to hand over to.
    MESSAGE("SKIPPED: this build has no skilldb-ml (libtorch): " << config.err);
    return;
  }
  CHECK(config.code == 1);
  CHECK(config.err.find("missing.json") != std::string::npos);
  CHECK(config.err.find("unknown command") == std::string::npos);
  // --json before train reaches report.
  const std::string run = dir.Sub("run");
  std::filesystem::create_directories(run);
  std::ofstream(run + "/steps.jsonl") << "{\"step\":1}\n";
  Run report = Cli(dir.path(), {"--json", "train", "report", run});
  REQUIRE_MESSAGE(report.code == 0, report.err);
  CHECK(Json::parse(report.out)["steps"] == 1);
}

TEST_CASE("verify on the cuda backend without a driver says to use host") {
  testing::TempDir dir;
  const std::string candidate = dir.Sub("k.cu");
  std::ofstream(candidate) << "extern \"C\" int launch() { return 0; }\n";
  Run r = Cli(dir.path(), {"verify", "--backend", "cuda", "--task",
                           "sum_dim1_fp32", "--candidate", candidate});
  if (r.err.find("libcuda") == std::string::npos) {
    MESSAGE("SKIPPED: this machine has the NVIDIA driver");
    return;
  }
  CHECK(r.code == 1);
  CHECK(r.err.find("--backend host") != std::string::npos);
}

}  // namespace
}  // namespace skilldb
