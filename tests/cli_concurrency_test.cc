// Processes racing to create a library (issue 14, part 4): several commands
// using the default library for the first time at once, and parallel
// `init`. Exactly one creates it, nobody sees it half-made, and no build or
// reader directories are left behind.
#include <filesystem>
#include <thread>

#include "cli_util.h"

namespace skilldb {
namespace {

using testing::Contains;

namespace fs = std::filesystem;
using testing::Cli;
using testing::Json;
using testing::Run;

// Runs each argument list in its own process, all at once.
std::vector<Run> Parallel(const std::string& home,
                          const std::vector<std::vector<std::string>>& runs,
                          const std::vector<std::string>& env = {}) {
  std::vector<Run> results(runs.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < runs.size(); ++i) {
    threads.emplace_back([&, i] { results[i] = Cli(home, runs[i], "", env); });
  }
  for (auto& t : threads) t.join();
  return results;
}

std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    names.push_back(e.path().filename().string());
  }
  return names;
}

TEST_CASE(
    "first use of the default library by many processes at once creates it "
    "once") {
  testing::TempDir dir;
  const std::string home = dir.Sub("home");
  const std::string tmp = dir.Sub("tmp");
  fs::create_directories(home);
  fs::create_directories(tmp);
  std::vector<std::vector<std::string>> runs;
  for (int i = 0; i < 6; ++i) {
    runs.push_back(i % 2 ? std::vector<std::string>{"stats", "--json"}
                         : std::vector<std::string>{"query", "shared", "memory",
                                                    "--json"});
  }
  const std::vector<Run> results = Parallel(home, runs, {"TMPDIR=" + tmp});
  int creators = 0;
  uint64_t skills = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    CAPTURE(i);
    CHECK_MESSAGE(results[i].code == 0, results[i].err);
    if (Contains(results[i].err, "creating the default library")) ++creators;
    if (i % 2 && results[i].code == 0) {
      const uint64_t n = Json::parse(results[i].out)["skills"];
      CHECK(n > 0);  // the seed, never a half-made or empty library
      if (skills != 0) CHECK(n == skills);
      skills = n;
    }
  }
  CHECK(creators == 1);
  // Only the library and its lock beside it; nothing left in $TMPDIR.
  const std::string parent = home + "/.local/share/skilldb";
  for (const std::string& name : Entries(parent)) {
    CHECK_MESSAGE((name == "library" || name == "library.lock"), name);
  }
  CHECK(Entries(tmp).empty());
  // A later command does not create it again.
  Run again = Cli(home, {"stats", "--json"});
  CHECK(again.code == 0);
  CHECK_FALSE(Contains(again.err, "creating"));
  CHECK(Json::parse(again.out)["skills"] == skills);
}

TEST_CASE("parallel init: one creates the library, the others say it exists") {
  testing::TempDir dir;
  const std::string home = dir.Sub("home");
  fs::create_directories(home);
  const std::string db = dir.Sub("lib");
  std::vector<std::vector<std::string>> runs(6, {"--db", db, "init"});
  const std::vector<Run> results = Parallel(home, runs);
  int created = 0;
  for (const Run& r : results) {
    if (r.code == 0) {
      ++created;
    } else {
      CHECK(r.code == 1);
      CHECK_MESSAGE(Contains(r.err, "already exists"), r.err);
    }
  }
  CHECK(created == 1);
  for (const std::string& name : Entries(dir.path())) {
    CHECK_MESSAGE(!Contains(name, "creating"), name);
  }
  Run stats = Cli(home, {"--db", db, "stats", "--json"});
  CHECK_MESSAGE(stats.code == 0, stats.err);
}

}  // namespace
}  // namespace skilldb
