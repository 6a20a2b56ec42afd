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

#include "test_util.h"

#ifndef SKILLDB_CLI_PATH
#error "SKILLDB_CLI_PATH must name the skilldb binary"
#endif

namespace skilldb {
namespace {

using Json = nlohmann::json;

struct Run {
  int code = -1;
  std::string out;
  std::string err;
};

// Runs the CLI with `args`, feeding `input` on stdin, with HOME pointing at
// `home` so the default library never touches the real one.
Run Cli(const std::string& home, const std::vector<std::string>& args,
        const std::string& input = "",
        const std::vector<std::string>& extra_env = {}) {
  int in[2], out[2], err[2];
  REQUIRE(pipe(in) == 0);
  REQUIRE(pipe(out) == 0);
  REQUIRE(pipe(err) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) close(fd);
    std::vector<std::string> env = {"HOME=" + home, "PATH=/usr/bin:/bin",
                                    "USER=tester"};
    env.insert(env.end(), extra_env.begin(), extra_env.end());
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::vector<std::string> argv_s = {SKILLDB_CLI_PATH};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  close(err[1]);
  if (!input.empty()) {
    REQUIRE(write(in[1], input.data(), input.size()) ==
            static_cast<ssize_t>(input.size()));
  }
  close(in[1]);
  Run r;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[4096];
  while (open_fds > 0) {
    poll(fds, 2, -1);
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof(buf));
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
      }
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

const char* kFixture =
    R"({"id":"smem-tiling","title":"Tile the K loop through shared memory","summary":"Stage tiles of A and B in shared memory.","body":"Load a tile, sync, multiply, repeat.","tags":["shared-memory","tiling"],"ops":["matmul"],"arch":["sm_80","sm_90"],"language":"cuda"}
{"id":"warp-shuffle-reduce","title":"Warp shuffle reduction","body":"Use __shfl_down_sync to reduce within a warp.","tags":["warp"],"ops":["reduction"],"language":"cuda"}
{"id":"bank-padding","title":"Pad shared memory rows to avoid bank conflicts","body":"Add one element of padding per row of the shared-memory tile.","tags":["shared-memory","bank-conflicts"],"ops":["transpose"],"language":"cuda"}
{"id":"triton-autotune","title":"Autotune Triton block sizes","body":"Use triton.autotune over BLOCK_M, BLOCK_N and num_warps.","tags":["triton"],"ops":["matmul"],"language":"triton"}
)";

struct Fixture {
  testing::TempDir dir;
  std::string home = dir.Sub("home");
  std::string db = dir.Sub("lib");
  std::string file = dir.Sub("skills.jsonl");
  Fixture() {
    std::filesystem::create_directories(home);
    std::ofstream(file) << kFixture;
  }
  Run operator()(std::vector<std::string> args, const std::string& input = "") {
    args.insert(args.begin(), {"--db", db});
    return Cli(home, args, input);
  }
  void Init() {
    REQUIRE(operator()({"init"}).code == 0);
    REQUIRE(operator()({"import", file, "-m", "fixture"}).code == 0);
  }
};

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
  CHECK(j["hits"][0]["score"].get<double>() > j["hits"][1]["score"].get<double>());
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
  Run r = cli({"add", "-"}, R"({"id":"warp-shuffle-reduce","title":"Warp shuffle reduction v2"})");
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
  CHECK(Json::parse(cli({"add", "-", "--json"}, R"({"id":"x","title":"y"})").out)
            ["change"] == "added");
  CHECK(Json::parse(cli({"rm", "x", "--json"}).out)["change"] == "deleted");
  for (auto args : std::vector<std::vector<std::string>>{
           {"show", "smem-tiling"}, {"history", "smem-tiling"}, {"log"},
           {"diff", "1", "2"}, {"stats"}, {"query", "tiling"}}) {
    args.push_back("--json");
    Run r = cli(args);
    CAPTURE(args[0]);
    CHECK(r.code == 0);
    CHECK(Json::accept(r.out));
  }
}

TEST_CASE("bad input fails with exit code 1, a message naming it, and no commit") {
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
      {"{\"id\":\"a\",\"title\":\"x\"}\n{\"id\":\"a\",\"title\":\"y\"}\n", "line 1"},
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

TEST_CASE("a library that is not one fails with exit code 2 or 1, never a crash") {
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

TEST_CASE("a read-only command works while another process holds the library for writing") {
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
  CHECK(std::filesystem::exists(dir.Sub("home/.local/share/skilldb/library/CURRENT")));
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

}  // namespace
}  // namespace skilldb
