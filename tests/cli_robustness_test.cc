// The skilldb binary under bad and hostile input (issue 14): numbers out of
// range, mistyped commands and options, output that cannot be written,
// control characters in stored text, and progress on stderr. Each case runs
// the real binary and asserts exit codes and JSON; messages are checked only
// for the option, word or errno text they must name.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "cli_util.h"

namespace skilldb {
namespace {

using testing::Contains;

using testing::Cli;
using testing::Fixture;
using testing::Json;
using testing::Run;

size_t Lines(const std::string& text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

// The line of `help` that documents `flag`.
std::string HelpLine(const std::string& help, const std::string& flag) {
  const size_t at = help.find(flag);
  if (at == std::string::npos) return "";
  const size_t start = help.rfind('\n', at) + 1;
  return help.substr(start, help.find('\n', at) - start);
}

struct Refusal {
  std::vector<std::string> args;
  std::string names;  // what the message must name
};

TEST_CASE("numeric arguments out of range are refused by name, never wrapped") {
  Fixture cli;
  cli.Init();
  const std::vector<Refusal> cases = {
      {{"query", "tiling", "--k", "-1"}, "--k must be between 1 and 100000"},
      {{"query", "tiling", "--k", "100001"},
       "--k must be between 1 and 100000"},
      {{"query", "tiling", "-k", "99999999999999999999999"}, "--k"},
      {{"query", "tiling", "--k", "ten"}, "--k"},
      {{"query", "tiling", "--k", "0"}, "--k"},
      {{"query", "--file", "-", "--threads", "-1"}, "--threads"},
      {{"query", "tiling", "--as-of", "18446744073709551616"}, "--as-of"},
      {{"query", "tiling", "--as-of", "-1"}, "--as-of"},
      {{"show", "smem-tiling", "--as-of", "abc"}, "--as-of"},
      {{"export", "--as-of", "1.5"}, "--as-of"},
      {{"stats", "--as-of", "-2"}, "--as-of"},
      {{"usage", "smem-tiling", "--record", "succeeded", "--count", "-1"},
       "--count"},
      {{"usage", "smem-tiling", "--record", "applied", "--count", "4294967297"},
       "--count"},
      {{"usage", "smem-tiling", "--record", "applied", "--count", "0"},
       "--count"},
      {{"tag", "foo", "-1"}, "VERSION"},
      {{"tag", "foo", "0"}, "VERSION"},
      {{"revert", "-1"}, "VERSION"},
      {{"revert", "0"}, "VERSION"},
      {{"diff", "-1", "1"}, "FROM"},
      {{"diff", "0", "x"}, "TO"},
      {{"log", "--limit", "-1"}, "--limit"},
      {{"log", "-n", "0"}, "--limit"},
      {{"audit", "-n", "-3"}, "--limit"},
      {{"gc", "--keep-last", "-1"}, "--keep-last"},
      {{"gc", "--keep-since", "-1"}, "--keep-since"},
      {{"--lock-timeout", "-5", "rm", "smem-tiling"}, "--lock-timeout"},
      {{"verify", "--rounds", "-1", "--list-tasks"}, "--rounds"},
      {{"propose", "-", "--rounds", "1000"}, "--rounds"},
      {{"propose", "-", "--near-jaccard", "0"}, "--near-jaccard"},
      {{"propose", "-", "--near-jaccard", "nan"}, "--near-jaccard"},
      {{"propose", "-", "--policy", "min-rounds=1e100"}, "min-rounds"},
      {{"propose", "-", "--policy", "min-speedup=-1"}, "min-speedup"},
      {{"prune", "--policy", "low-utility=nan"}, "low-utility"},
      {{"prune", "--policy", "unused=-1"}, "unused"},
      {{"prune", "--policy", "low-utility=0.5:-1"}, "MIN_APPLIED"},
  };
  for (const Refusal& c : cases) {
    CAPTURE(c.args);
    Run r = cli(c.args);
    CHECK(r.code == 1);
    CHECK_MESSAGE(Contains(r.err, c.names), r.err);
    // A bounded message: the range in words, not a 309-digit number.
    CHECK(r.err.size() < 400);
    std::vector<std::string> json_args = c.args;
    json_args.push_back("--json");
    Run j = cli(json_args);
    CHECK(j.code == 1);
    CHECK(Contains(j.err, "\"invalid_argument\""));
  }
  // Nothing was stored by any of them: no commit, no tag, no usage.
  CHECK(Json::parse(cli({"log", "--json"}).out).size() == 1);
  CHECK(Json::parse(cli({"tags", "--json"}).out).empty());
  Json usage = Json::parse(cli({"usage", "smem-tiling", "--json"}).out);
  CHECK(usage["succeeded"] == 0);
  CHECK(usage["applied"] == 0);
}

TEST_CASE("init refuses BM25 parameters out of range and creates nothing") {
  Fixture cli;
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"init", "--b", "2"},
                                             {"init", "--b", "-0.1"},
                                             {"init", "--k1", "nan"},
                                             {"init", "--k1", "inf"},
                                             {"init", "--k1", "-1"}}) {
    CAPTURE(args);
    Run r = cli(args);
    CHECK(r.code == 1);
    CHECK(Contains(r.err, args[1]));
  }
  CHECK_FALSE(std::filesystem::exists(cli.db));
}

TEST_CASE("numbers at the edges of their ranges are accepted") {
  Fixture cli;
  cli.Init();
  Run r = cli({"query", "shared", "--k", "100000", "--json"});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(Json::parse(r.out)["hits"].size() == 2);
  CHECK(cli({"query", "tiling", "-k", "1", "--as-of", "1", "--json"}).code ==
        0);
  r = cli({"usage", "smem-tiling", "--record", "applied", "--count",
           "4294967296", "--json"});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(Json::parse(r.out)["applied"] == 4294967296ull);
  CHECK(cli({"log", "-n", "1", "--json"}).code == 0);
  CHECK(cli({"tag", "first", "1"}).code == 0);
}

TEST_CASE("a mistyped command is named, with the nearest commands") {
  Fixture cli;
  cli.Init();
  Run r = cli({"serch", "x"});
  CHECK(r.code == 1);
  CHECK(Contains(r.err, "unknown command 'serch'"));
  CHECK(Contains(r.err, "'search'"));
  CHECK(Contains(r.err, "'query'"));
  r = cli({"qurey", "tiling"});
  CHECK(r.code == 1);
  CHECK(Contains(r.err, "unknown command 'qurey'"));
  CHECK(Contains(r.err, "'query'"));
  r = cli({"xyzzy"});
  CHECK(r.code == 1);
  CHECK(Contains(r.err, "unknown command 'xyzzy'"));
  r = cli({"serch", "x", "--json"});
  CHECK(r.code == 1);
  CHECK(Contains(r.err, "\"invalid_argument\""));
  // search is query.
  r = cli({"search", "shared", "memory", "--json"});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(Json::parse(r.out)["hits"].size() == 2);
}

TEST_CASE("an unknown option or an extra argument is named, exit 1") {
  Fixture cli;
  cli.Init();
  Run r = cli({"query", "tiling", "--bogus"});
  CHECK(r.code == 1);
  CHECK(Contains(r.err, "'--bogus'"));
  r = cli({"query", "tiling", "--as-off", "1"});
  CHECK(r.code == 1);
  CHECK(Contains(r.err, "'--as-off'"));
  CHECK(Contains(r.err, "'--as-of'"));
  r = cli({"--verbose", "log"});
  CHECK(r.code == 1);
  CHECK(Contains(r.err, "'--verbose'"));
  r = cli({"rm", "smem-tiling", "bank-padding"});
  CHECK(r.code == 1);
  CHECK(Contains(r.err, "'bank-padding'"));
  CHECK(cli({"query", "tiling", "--k"}).code == 1);  // a value is missing
  CHECK(cli({}).code == 1);
  CHECK(cli({"--json"}).code == 1);
  CHECK(Json::parse(cli({"log", "--json"}).out).size() == 1);
}

TEST_CASE("query joins several unquoted words into one query") {
  Fixture cli;
  cli.Init();
  Run words = cli({"query", "shared", "memory", "tiling", "--json"});
  Run quoted = cli({"query", "shared memory tiling", "--json"});
  REQUIRE(words.code == 0);
  CHECK(Json::parse(words.out) == Json::parse(quoted.out));
}

TEST_CASE("help shows the defaults of the options") {
  testing::TempDir dir;
  Run q = Cli(dir.path(), {"query", "--help"});
  REQUIRE(q.code == 0);
  // CLI11 shows a default as TYPE=VALUE.
  CHECK(Contains(HelpLine(q.out, "--k "), "=10 "));
  CHECK(Contains(HelpLine(q.out, "--threads"), "=0 "));
  CHECK(Contains(HelpLine(q.out, "--fields"), "=title,usage "));
  CHECK_FALSE(Contains(q.out, "=[]"));  // no noise for empty lists
  Run p = Cli(dir.path(), {"propose", "--help"});
  REQUIRE(p.code == 0);
  CHECK(Contains(p.out, "=replay"));
  CHECK(Contains(HelpLine(p.out, "--rounds"), "=3 "));
  CHECK(Contains(HelpLine(p.out, "--near-jaccard"), "=0.6 "));
  CHECK(Contains(p.out, "=reject"));
  Run top = Cli(dir.path(), {"--help"});
  REQUIRE(top.code == 0);
  CHECK(Contains(HelpLine(top.out, "--lock-timeout"), "=10000 "));
  Run v = Cli(dir.path(), {"verify", "--help"});
  CHECK(Contains(v.out, "=cuda"));
  Run i = Cli(dir.path(), {"init", "--help"});
  CHECK(Contains(HelpLine(i.out, "--k1"), "=1.2 "));
  CHECK(Contains(HelpLine(i.out, "--b "), "=0.75 "));
  CHECK(Contains(i.out, "=code"));
}

TEST_CASE("a failed write of stdout is an error naming stdout and errno") {
  if (!std::filesystem::exists("/dev/full")) return;
  Fixture cli;
  cli.Init();
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"export"},
                                             {"log"},
                                             {"log", "--json"},
                                             {"query", "tiling", "--json"},
                                             {"query", "tiling"},
                                             {"show", "smem-tiling"},
                                             {"stats", "--json"},
                                             {"tags"},
                                             {"--help"}}) {
    CAPTURE(args);
    Run r = cli.With(args, {}, "/dev/full");
    CHECK(r.code == 2);
    CHECK(Contains(r.err, "stdout"));
    CHECK(Contains(r.err, "No space left on device"));
  }
}

TEST_CASE("a large export into a full stdout stops with an error") {
  if (!std::filesystem::exists("/dev/full")) return;
  Fixture cli;
  REQUIRE(cli({"init"}).code == 0);
  std::string jsonl;
  for (int i = 0; i < 3000; ++i) {
    jsonl += R"({"id":"s)" + std::to_string(i) + R"(","title":"skill )" +
             std::to_string(i) + R"( with a body","body":")" +
             std::string(64, 'x') + "\"}\n";
  }
  REQUIRE(cli({"import", "-"}, jsonl).code == 0);
  Run r = cli.With({"export"}, {}, "/dev/full");
  CHECK(r.code == 2);
  CHECK(Contains(r.err, "No space left on device"));
  // One error, not one per skill.
  CHECK(Lines(r.err) == 1);
}

TEST_CASE("export -o reports why the file cannot be written") {
  Fixture cli;
  cli.Init();
  Run r = cli({"export", "-o", cli.file + "/sub/out.jsonl"});
  CHECK(r.code == 2);
  CHECK(Contains(r.err, "Not a directory"));
  r = cli({"export", "-o", cli.dir.Sub("out.jsonl"), "--json"});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(Json::parse(r.out)["skills"] == 4);
  CHECK_FALSE(std::filesystem::exists(cli.dir.Sub("out.jsonl.tmp")));
}

TEST_CASE("an unreadable input file is reported with the reason") {
  Fixture cli;
  REQUIRE(cli({"init"}).code == 0);
  // ENOTDIR: a reason root cannot override, unlike a chmod.
  Run r = cli({"import", cli.file + "/x.jsonl"});
  CHECK(r.code == 2);
  CHECK(Contains(r.err, "x.jsonl"));
  CHECK(Contains(r.err, "Not a directory"));
  r = cli({"add", cli.dir.path()});
  CHECK(r.code == 1);
  CHECK(Contains(r.err, "directory"));
  if (geteuid() != 0) {
    const std::string locked = cli.dir.Sub("locked.jsonl");
    std::ofstream(locked) << testing::kFixture;
    chmod(locked.c_str(), 0);
    r = cli({"import", locked});
    CHECK(r.code == 2);
    CHECK(Contains(r.err, "Permission denied"));
  }
}

// A title, a commit message and an id-free field crafted to spoof output:
// an ANSI "clear screen", a fake hit line and an OSC title sequence.
constexpr const char* kEvilTitle =
    "evil \\u001b[2J\\n 2  9.9999  fake-hit  Fake\\u001b]0;owned\\u0007";

TEST_CASE("human output escapes control characters in stored text") {
  Fixture cli;
  cli.Init();
  const std::string skill = std::string(R"({"id":"evil","title":")") +
                            kEvilTitle +
                            R"(","summary":"s\u001b[31m","body":"b\u001b[0m",)"
                            R"("tags":["t\u001b[1m"]})";
  Run add = cli({"add", "-", "-m", "line one\n v9  fake commit"}, skill);
  REQUIRE_MESSAGE(add.code == 0, add.err);
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"query", "evil"},
                                             {"show", "evil"},
                                             {"history", "evil"},
                                             {"log"},
                                             {"diff", "1", "2"},
                                             {"query", "--file", "-"}}) {
    CAPTURE(args);
    Run r = cli(args, "evil\n");
    REQUIRE_MESSAGE(r.code == 0, r.err);
    CHECK(r.out.find('\x1b') == std::string::npos);
    CHECK(r.out.find('\x07') == std::string::npos);
  }
  // One header and one hit; one line per commit: nothing spoofed a line.
  CHECK(Lines(cli({"query", "evil"}).out) == 2);
  CHECK(Lines(cli({"log"}).out) == 2);
  CHECK(Lines(cli({"history", "evil"}).out) == 1);
  // JSON keeps the text exactly.
  Json j = Json::parse(cli({"show", "evil", "--json"}).out);
  CHECK(j["skill"]["title"] ==
        "evil \x1b[2J\n 2  9.9999  fake-hit  Fake\x1b]0;owned\x07");
}

TEST_CASE("error messages escape the input they quote") {
  Fixture cli;
  cli.Init();
  Run r = cli({"show", "no\x1b[2Jpe"});
  CHECK(r.code == 1);
  CHECK(r.err.find('\x1b') == std::string::npos);
  r = cli({"serch\x1b[2J"});
  CHECK(r.code == 1);
  CHECK(r.err.find('\x1b') == std::string::npos);
}

TEST_CASE("a streamed import refuses what it cannot read whole, by line") {
  Fixture cli;
  cli.Init();
  auto log_lines = [&] { return Lines(cli({"log"}).out); };
  const size_t versions = log_lines();
  auto write = [&](const std::string& name, const std::string& text) {
    const std::string path = cli.dir.Sub(name);
    std::ofstream(path, std::ios::binary) << text;
    return path;
  };
  const std::string line = R"({"id":"ok-1","title":"fine"})";
  // A line past the record limit is refused before it is read whole.
  const std::string huge =
      R"({"id":"huge","title":")" + std::string(size_t{5} << 20, 'x') + "\"}";
  Run r = cli({"import", write("huge.jsonl", line + "\n" + huge + "\n")});
  CHECK(r.code == 1);
  CHECK_MESSAGE(Contains(r.err, "huge.jsonl:2: the line is longer than a "
                                "skill record may be (4194304 bytes)"),
                r.err);
  // Blank lines only: nothing to import, said as such.
  r = cli({"import", write("blank.jsonl", "\n  \n\n")});
  CHECK(r.code == 1);
  CHECK_MESSAGE(Contains(r.err, "holds no skills"), r.err);
  r = cli({"import", write("empty.jsonl", "")});
  CHECK(r.code == 1);
  CHECK_MESSAGE(Contains(r.err, "holds no skills"), r.err);
  // A repeated id names both lines, far apart (different chunks).
  std::string many;
  for (int i = 0; i < 3000; ++i) {
    many += R"({"id":"m-)" + std::to_string(i) + R"(","title":"t"})" "\n";
  }
  many += R"({"id":"m-5","title":"again"})" "\n";
  r = cli({"import", write("dup.jsonl", many)});
  CHECK(r.code == 1);
  CHECK_MESSAGE(Contains(r.err, "dup.jsonl:3001: id 'm-5' already appears "
                                "on line 6"),
                r.err);
  // A directory and a missing file are named with the reason.
  r = cli({"import", cli.dir.path()});
  CHECK(r.code == 1);
  CHECK_MESSAGE(Contains(r.err, "is a directory"), r.err);
  r = cli({"import", cli.dir.Sub("missing.jsonl")});
  CHECK(r.code == 1);
  CHECK_MESSAGE(Contains(r.err, "missing.jsonl"), r.err);
  CHECK(log_lines() == versions);  // none of them committed
  // Piped input streams the same way.
  r = cli({"import", "-"}, line + "\n");
  CHECK_MESSAGE(r.code == 0, r.err);
  CHECK(log_lines() == versions + 1);
}

TEST_CASE("--progress reports long work on stderr, never on stdout") {
  Fixture cli;
  REQUIRE(cli({"init"}).code == 0);
  Run imported = cli({"import", cli.file, "--progress", "--json"});
  REQUIRE_MESSAGE(imported.code == 0, imported.err);
  CHECK(Json::accept(imported.out));
  // The import streams: its progress is the share of the file read.
  CHECK(Contains(imported.err, "skilldb: importing "));
  CHECK(Contains(imported.err, " bytes (100%)"));
  Run plain = cli({"export"});
  REQUIRE(plain.code == 0);
  CHECK(plain.err.empty());  // stderr is a pipe: no progress unasked
  Run exported = cli({"export", "--progress"});
  REQUIRE(exported.code == 0);
  CHECK(exported.out == plain.out);
  CHECK(Contains(exported.err, "skilldb: exporting: 4/4 skills (100%)"));
  Run compacted = cli({"compact", "--progress", "--json"});
  REQUIRE(compacted.code == 0);
  CHECK(Json::accept(compacted.out));
  CHECK(Contains(compacted.err, "skilldb: compacting"));
  Run off = cli({"export", "--progress", "--no-progress"});
  CHECK(off.err.empty());
}

TEST_CASE("a read-only command never dies of an exception") {
  Fixture cli;
  cli.Init();
  // An unusable TMPDIR once made every read abort with an uncaught
  // filesystem_error: now it works or fails with a message and exit 2.
  Run r = cli.With({"query", "tiling", "--json"}, {"TMPDIR=/nonexistent/tmp"});
  CHECK(r.code < 128);
  CHECK((r.code == 0 || r.code == 2));
  if (r.code != 0) CHECK_FALSE(r.err.empty());
}

// Every line of `out` parses as JSON (one document, or one per line).
bool AllJson(const std::string& out) {
  if (Json::accept(out)) return true;
  size_t pos = 0;
  while (pos < out.size()) {
    const size_t end = out.find('\n', pos);
    if (!Json::accept(out.substr(pos, end - pos))) return false;
    pos = end == std::string::npos ? out.size() : end + 1;
  }
  return !out.empty();
}

TEST_CASE("every command that prints data prints valid JSON with --json") {
  Fixture cli;
  cli.Init();
  const std::vector<std::vector<std::string>> commands = {
      {"add", "-"},
      {"show", "smem-tiling"},
      {"history", "smem-tiling"},
      {"log"},
      {"diff", "1", "2"},
      {"stats"},
      {"query", "tiling"},
      {"search", "tiling"},
      {"query", "--file", "-"},
      {"export"},
      {"export", "-o", cli.dir.Sub("out.jsonl")},
      {"export", "--sqlite", cli.dir.Sub("out.sqlite")},
      {"audit"},
      {"usage"},
      {"usage", "smem-tiling"},
      {"usage", "smem-tiling", "--record", "applied"},
      {"set-status", "deprecated", "bank-padding"},
      {"prune", "--policy", "superseded"},
      {"prune", "--policy", "superseded", "--apply"},
      {"revert", "4"},
      {"tag", "ckpt"},
      {"tags"},
      {"tag", "ckpt", "-d"},
      {"gc", "--keep-last", "3"},
      {"compact"},
      {"rm", "added"},
      {"verify", "--list-tasks"},
  };
  for (std::vector<std::string> args : commands) {
    args.push_back("--json");
    CAPTURE(args);
    Run r = cli(args, args[0] == "add" ? R"({"id":"added","title":"t"})"
                                       : "tiling\nwarp\n");
    CHECK_MESSAGE(r.code == 0, r.err);
    CHECK(AllJson(r.out));
  }
}

}  // namespace
}  // namespace skilldb
