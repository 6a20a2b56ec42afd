// A damaged library (issue 14, part 1): every table file of a real library
// deleted, or its bytes flipped, in turn. No read command may turn the damage
// into an empty or different answer: it fails with exit 2 and names the
// file, or (a flip in a block the command never reads) gives exactly the
// answer of the undamaged library. `check` finds every one of them.
#include <algorithm>
#include <filesystem>
#include <fstream>

#include "cli_util.h"

namespace skilldb {
namespace {

using testing::Contains;

namespace fs = std::filesystem;
using testing::Cli;
using testing::Fixture;
using testing::Run;

std::vector<std::string> TableFiles(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".sst") names.push_back(e.path().filename());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Overwrites 8 bytes of `file` at `offset` (from the end when negative).
void Flip(const std::string& file, long offset) {
  const auto size = static_cast<long>(fs::file_size(file));
  const long at = offset < 0 ? size + offset : std::min(offset, size - 8);
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  REQUIRE(f);
  f.seekg(at);
  char bytes[8];
  f.read(bytes, 8);
  for (char& b : bytes) b = static_cast<char>(~b);
  f.seekp(at);
  f.write(bytes, 8);
}

// The read commands, each as arguments after --db.
std::vector<std::vector<std::string>> ReadCommands(const std::string& sqlite) {
  return {{"query", "shared", "memory", "--json"},
          {"query", "warp", "shuffle"},
          {"show", "smem-tiling", "--json"},
          {"show", "triton-autotune"},
          {"export"},
          {"export", "--sqlite", sqlite},
          {"log", "--json"},
          {"stats", "--json"},
          {"history", "bank-padding"}};
}

// stats prints disk sizes, which differ between copies: compare the rest.
std::string Comparable(const std::vector<std::string>& args,
                       const std::string& out) {
  if (args[0] != "stats") return out;
  auto j = testing::Json::parse(out, nullptr, false);
  if (j.is_discarded()) return out;
  j.erase("disk_bytes");
  j.erase("path");
  for (auto it = j.begin(); it != j.end();) {
    if (Contains(it.key(), "bytes")) {
      it = j.erase(it);
    } else {
      ++it;
    }
  }
  return j.dump();
}

TEST_CASE(
    "every read command fails naming a deleted or damaged table file, never "
    "an empty answer; check finds each") {
  Fixture cli;
  cli.Init();
  // A second version, then compact: every family's data sits in tables.
  REQUIRE(cli({"rm", "warp-shuffle-reduce", "-m", "gone"}).code == 0);
  REQUIRE(cli({"import", cli.file, "-m", "back"}).code == 0);
  REQUIRE(cli({"compact"}).code == 0);
  const std::string sqlite = cli.dir.Sub("out.sqlite");
  const auto commands = ReadCommands(sqlite);
  std::vector<std::string> baseline;
  for (const auto& args : commands) {
    fs::remove(sqlite);
    Run r = cli(args);
    REQUIRE_MESSAGE(r.code == 0, args[0], ": ", r.err);
    baseline.push_back(Comparable(args, r.out));
  }
  {
    Run r = cli({"check", "--json"});
    REQUIRE_MESSAGE(r.code == 0, r.err);
    CHECK(testing::Json::parse(r.out)["ok"] == true);
  }

  const std::vector<std::string> tables = TableFiles(cli.db);
  REQUIRE(tables.size() >= 6);  // one per column family at least
  const std::string copy = cli.dir.Sub("damaged");
  struct Damage {
    const char* name;
    long offset;  // 0: delete the file
  };
  const Damage damages[] = {{"deleted", 0},
                            {"footer flipped", -8},
                            {"first block flipped", 16},
                            {"middle flipped", -1}};
  int failed_reads = 0;
  for (const std::string& table : tables) {
    for (const Damage& damage : damages) {
      CAPTURE(table);
      const std::string damage_name = damage.name;
      CAPTURE(damage_name);
      fs::remove_all(copy);
      fs::copy(cli.db, copy, fs::copy_options::recursive);
      const std::string file = copy + "/" + table;
      if (damage.offset == 0) {
        fs::remove(file);
      } else if (damage.offset == -1) {
        Flip(file, static_cast<long>(fs::file_size(file) / 2));
      } else {
        Flip(file, damage.offset);
      }
      const std::string number = table.substr(0, table.find('.'));
      for (size_t i = 0; i < commands.size(); ++i) {
        std::vector<std::string> args = commands[i];
        CAPTURE(args[0]);
        fs::remove(sqlite);
        args.insert(args.begin(), {"--db", copy});
        Run r = Cli(cli.home, args);
        if (r.code == 0) {
          // Only a block this command never reads may be damaged.
          CHECK(damage.offset != 0);
          CHECK(damage.offset != -8);
          CHECK(Comparable(commands[i], r.out) == baseline[i]);
        } else {
          ++failed_reads;
          CHECK(r.code == 2);
          CHECK_MESSAGE(Contains(r.err, number), r.err);
        }
      }
      Run check = Cli(cli.home, {"--db", copy, "check", "--json"});
      CHECK(check.code == 2);
      auto report = testing::Json::parse(check.out, nullptr, false);
      REQUIRE_MESSAGE(!report.is_discarded(), check.out, check.err);
      CHECK(report["ok"] == false);
      CHECK_MESSAGE(Contains(report.dump(), number), report.dump());
    }
  }
  CHECK(failed_reads > 0);
}

TEST_CASE(
    "check passes on a sound library; a bad flag or no library is a user "
    "error") {
  Fixture cli;
  cli.Init();
  Run ok = cli({"check"});
  CHECK(ok.code == 0);
  CHECK(Contains(ok.out, "ok"));
  // Unknown flags and a missing library are user errors, not damage.
  CHECK(cli({"check", "--bogus"}).code == 1);
  Run none = Cli(cli.home, {"--db", cli.dir.Sub("none"), "check"});
  CHECK(none.code == 1);
}

}  // namespace
}  // namespace skilldb
