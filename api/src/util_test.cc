// The shared helpers (skilldb/util/): the bounded JSON parser and typed
// readers, files, text for terminals and prompts, exit codes.
#include <doctest/doctest.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "skilldb/util/exit_code.h"
#include "skilldb/util/file.h"
#include "skilldb/util/json.h"
#include "skilldb/util/parallel.h"
#include "skilldb/util/text.h"

namespace skilldb::util {
namespace {

using nlohmann::json;

TEST_CASE("untrusted JSON is bounded in bytes, depth, values and keys") {
  CHECK(ParseUntrustedJson(R"({"a": [1, 2]})", "x").ok());
  CHECK(ParseUntrustedJson("[[[1]]]", "x", {.max_depth = 2}).status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(ParseUntrustedJson("[1,2,3]", "x", {.max_bytes = 3}).status().code() ==
        StatusCode::kInvalidArgument);
  // Four values: the array and its three entries.
  CHECK(ParseUntrustedJson("[1,2,3]", "x", {.max_values = 4}).ok());
  auto many = ParseUntrustedJson("[1,2,3]", "x", {.max_values = 3});
  REQUIRE_FALSE(many.ok());
  CHECK(many.status().message().find("more than 3 values") !=
        std::string::npos);
  auto twice = ParseUntrustedJson<nlohmann::ordered_json>(
      R"({"k": 1, "k": 2})", "x");
  REQUIRE_FALSE(twice.ok());
  CHECK(twice.status().message().find("duplicate key 'k'") !=
        std::string::npos);
  CHECK(ParseUntrustedJson("{\"a\":", "x").status().code() ==
        StatusCode::kInvalidArgument);
}

TEST_CASE("typed reads never truncate or throw") {
  json j = json::parse(
      R"({"big": 18446744073709551615, "wrap": 4294967297, "neg": -1,
          "s": "text", "ids": [1, 18446744073709551615]})");
  // Text cannot carry one (nlohmann refuses 1e400 as an overflow); a
  // document built in code can.
  j["inf"] = std::numeric_limits<double>::infinity();
  FieldReader in(j, "thing");
  int small = 0;
  CHECK(in.Int("wrap", &small).code() == StatusCode::kInvalidArgument);
  CHECK(small == 0);
  int64_t wide = 0;
  CHECK(in.Int64("big", &wide).code() == StatusCode::kInvalidArgument);
  CHECK(in.Int64("wrap", &wide).ok());
  CHECK(wide == 4294967297);
  CHECK(in.Int64("wrap", &wide, 0, 10).code() == StatusCode::kInvalidArgument);
  uint64_t count = 0;
  CHECK(in.Uint64("neg", &count).code() == StatusCode::kInvalidArgument);
  double real = 0;
  CHECK(in.Double("inf", &real).code() == StatusCode::kInvalidArgument);
  CHECK(in.Double("s", &real).message() == "thing field 's' must be a finite number");
  std::vector<int32_t> ids;
  CHECK(in.Int32s("ids", &ids).code() == StatusCode::kInvalidArgument);
  std::string text = "kept";
  CHECK(in.String("absent", &text).ok());
  CHECK(text == "kept");
  CHECK(in.Require("absent").code() == StatusCode::kInvalidArgument);
}

TEST_CASE("a lossy dump replaces bytes that are not UTF-8") {
  const json j = std::string("ok\xff");
  CHECK(DumpLossy(j) == "\"ok\xef\xbf\xbd\"");
}

TEST_CASE("a file is read whole, bounded, and missing or a directory says so") {
  const std::string path =
      "/tmp/skilldb-util-test-" + std::to_string(::getpid());
  REQUIRE(WriteFileAtomic(path, "hello").ok());
  CHECK(ReadFile(path).value() == "hello");
  CHECK(ReadFile(path, 3).status().code() == StatusCode::kInvalidArgument);
  CHECK(ReadFile("/tmp").status().code() == StatusCode::kInvalidArgument);
  std::remove(path.c_str());
  CHECK(ReadFile(path).status().code() == StatusCode::kNotFound);
  const std::string dirs = path + "-d/a/b";
  REQUIRE(MakeDirs(dirs).ok());
  CHECK(IsDirectory(dirs));
  RemoveTree(path + "-d");
  CHECK_FALSE(FileExists(path + "-d"));
}

TEST_CASE("a fence is longer than any backtick run inside what it quotes") {
  CHECK(FenceFor("plain") == "```");
  CHECK(FenceFor("a ```` b") == "`````");
  const std::string block = FencedBlock("cuda", "x\n```\ny");
  CHECK(block == "````cuda\nx\n```\ny\n````");
}

TEST_CASE("control characters are found, named and kept off one line") {
  CHECK(FindControlCharacter("plain\ttext\n", true).empty());
  CHECK(FindControlCharacter("tab\there", false) == "TAB (0x09) at byte 3");
  CHECK(FindControlCharacter("a\x1b[2J", true) == "ESC (0x1b) at byte 1");
  CHECK(FindControlCharacter("x\xe2\x80\xaey", true) == "U+202E at byte 1");
  CHECK(FindControlCharacter("bad\xff", true).find("not UTF-8") !=
        std::string::npos);
  CHECK(OneLine("a\nb\x1b\xe2\x80\xae!") == "a b !");
  CHECK(EscapeLine("a\x1b]0;x\x07") == "a\\x1b]0;x\\x07");
}

TEST_CASE("exit codes say whose fault a failure is") {
  CHECK(ExitCodeFor(StatusCode::kOk) == 0);
  CHECK(ExitCodeFor(StatusCode::kInvalidArgument) == 1);
  CHECK(ExitCodeFor(StatusCode::kUnavailable) == 1);
  CHECK(ExitCodeFor(StatusCode::kCorruption) == 2);
  CHECK(ExitCodeFor(StatusCode::kInternal) == 2);
}

// Makes every thread started while it lives ask for a stack the system
// cannot map (64 TiB), so std::thread throws std::system_error, as at a
// thread limit; the default comes back when it goes.
class RefusedThreads {
 public:
  RefusedThreads() {
    pthread_getattr_default_np(&old_);
    pthread_attr_t huge;
    pthread_attr_init(&huge);
    pthread_attr_setstacksize(&huge, size_t{1} << 46);
    ok_ = pthread_setattr_default_np(&huge) == 0;
    pthread_attr_destroy(&huge);
  }
  ~RefusedThreads() {
    pthread_setattr_default_np(&old_);
    pthread_attr_destroy(&old_);
  }
  bool ok() const { return ok_; }

 private:
  pthread_attr_t old_;
  bool ok_ = false;
};

bool RefusesThreads() {
  std::vector<std::thread> t;
  const std::function<void()> nothing = [] {};
  const int n = StartThreads(1, nothing, &t);
  for (std::thread& x : t) x.join();
  return n == 0;
}

TEST_CASE(
    "work over threads is all done once, even where the system refuses "
    "threads") {
  std::vector<int> seen(1000, 0);
  CHECK(ParallelFor(seen.size(), 8, [&](size_t i) { ++seen[i]; }) == 8);
  // No more threads than the work.
  CHECK(ParallelFor(3, 8, [&](size_t i) { ++seen[i]; }) == 3);
  CHECK(ParallelFor(0, 8, [&](size_t) { FAIL("no work"); }) == 1);
  for (size_t i = 0; i < seen.size(); ++i) CHECK(seen[i] == (i < 3 ? 2 : 1));

  RefusedThreads refused;
  REQUIRE(refused.ok());
  if (!RefusesThreads()) {
    // A sanitizer's pthread_create makes its own attributes: nothing here
    // can refuse it a thread.
    MESSAGE(
        "threads are not refused in this build: the refusal is untested here");
    return;
  }
  std::vector<std::thread> pool;
  const std::function<void()> nothing = [] {};
  CHECK(StartThreads(4, nothing, &pool) == 0);
  CHECK(pool.empty());
  std::atomic<int> done{0};
  const auto count = [&](size_t i) {
    ++seen[i];
    ++done;
  };
  CHECK(ParallelFor(seen.size(), 8, count) == 1);
  CHECK(done.load() == 1000);
  for (size_t i = 0; i < seen.size(); ++i) CHECK(seen[i] == (i < 3 ? 3 : 2));
  CHECK(RunOnThreads(4, [&] { ++done; }) == 1);
  CHECK(done.load() == 1001);
}

}  // namespace
}  // namespace skilldb::util
