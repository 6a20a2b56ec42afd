// Readers and writers on one Library across threads, and a read-only
// process beside a writing process: every read sees one consistent version.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "model.h"
#include "test_util.h"

namespace skilldb {
namespace {

using testing::TempLibrary;

// What must hold for any single version v, whatever else runs: WAND and
// exhaustive queries agree, every hit is readable as of v, and the number of
// skills a scan sees is the number the commit record states.
bool ConsistentAt(Library& lib, Version v, std::string* why) {
  for (const char* q : {"warp shuffle", "memory tiling", "tensor core async"}) {
    auto fast =
        lib.Query(QueryOptions{.k = 15, .as_of = v, .fields = HitFields::None()}, q);
    auto full = lib.Query(
        QueryOptions{
            .k = 15, .as_of = v, .fields = HitFields::None(), .exhaustive = true},
        q);
    if (!fast.ok() || !full.ok()) {
      *why = "query failed";
      return false;
    }
    if (fast->hits.size() != full->hits.size()) {
      *why = "pruned and exhaustive queries differ in size";
      return false;
    }
    for (size_t i = 0; i < fast->hits.size(); ++i) {
      if (fast->hits[i].id != full->hits[i].id ||
          fast->hits[i].score != full->hits[i].score) {
        *why = "pruned and exhaustive queries differ";
        return false;
      }
      if (!lib.Get(fast->hits[i].id, ReadOptions{.as_of = v}).ok()) {
        *why = "a hit is not readable at its version";
        return false;
      }
    }
  }
  uint64_t scanned = 0;
  if (!lib.Scan(ReadOptions{.as_of = v},
                [&](const Skill&) {
                  ++scanned;
                  return true;
                })
           .ok()) {
    *why = "scan failed";
    return false;
  }
  auto stats = lib.Stats(ReadOptions{.as_of = v});
  if (!stats.ok() || stats->num_skills != scanned) {
    *why = "scan count differs from the commit record";
    return false;
  }
  return true;
}

TEST_CASE("readers see consistent versions while writers commit in threads") {
  Options o = TempLibrary::DefaultOptions();
  o.merge_factor = 3;
  TempLibrary lib(o);
  REQUIRE(lib->Put(Skill::Make("seed", "warp shuffle seed")).ok());
  std::atomic<bool> writing{true};
  std::atomic<int> failures{0};
  std::string failure;
  std::mutex failure_mu;

  auto writer = [&](int w) {
    for (int i = 0; i < 120; ++i) {
      const std::string id =
          "w" + std::to_string(w) + "-" + std::to_string(i % 17);
      Status s;
      if (i % 5 == 4) {
        s = lib->Delete(id).status();
        if (s.code() == StatusCode::kNotFound) s = Status::Ok();
      } else {
        s = lib->Put(Skill::Make(
                         id, testing::ScriptText(static_cast<uint64_t>(i), w)))
                .status();
      }
      if (!s.ok()) {
        ++failures;
        std::lock_guard<std::mutex> l(failure_mu);
        failure = s.ToString();
      }
    }
  };
  auto reader = [&] {
    while (writing.load()) {
      const Version v = lib->CurrentVersion();
      std::string why;
      if (!ConsistentAt(*lib, v, &why)) {
        ++failures;
        std::lock_guard<std::mutex> l(failure_mu);
        failure = why;
      }
    }
  };
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) readers.emplace_back(reader);
  std::thread w1(writer, 1), w2(writer, 2);
  w1.join();
  w2.join();
  writing = false;
  for (auto& t : readers) t.join();
  CHECK_MESSAGE(failures.load() == 0, failure);
  // 1 seed + 2 writers x 120 commits, minus deletes of absent skills.
  auto log = lib->Log({});
  REQUIRE(log.ok());
  CHECK(log->size() == lib->CurrentVersion());
  std::string why;
  for (Version v = 1; v <= lib->CurrentVersion(); v += 7) {
    CHECK_MESSAGE(ConsistentAt(*lib, v, &why), why);
  }
}

TEST_CASE(
    "a read-only process sees consistent versions beside a writer process") {
  testing::TempDir dir;
  const std::string path = dir.Sub("lib");
  Options o;
  o.create_if_missing = true;
  o.sync_commits = false;
  {
    auto lib = Library::Open(o, path);
    REQUIRE(lib.ok());
    REQUIRE((*lib)->Put(Skill::Make("seed", "warp shuffle seed")).ok());
  }
  // Fork before this process opens the database again: the child must not
  // inherit RocksDB's threads or file locks.
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    Options ro;
    ro.read_only = true;
    for (int i = 0; i < 15; ++i) {
      auto lib = Library::Open(ro, path);
      if (!lib.ok()) _exit(10);
      std::string why;
      if (!ConsistentAt(**lib, (*lib)->CurrentVersion(), &why)) _exit(11);
    }
    _exit(0);
  }
  auto lib = Library::Open(o, path);
  REQUIRE(lib.ok());
  int status = 0;
  uint64_t v = 1;
  // Write while the reader works (a bounded number of commits, so a slow
  // reader cannot make the log it replays grow without end).
  while (waitpid(pid, &status, WNOHANG) == 0 && v < 3000) {
    auto c = testing::Script(++v, {}, 25);
    if (c.deletes.empty()) REQUIRE((*lib)->Commit(c.puts, {}).ok());
  }
  if (v >= 3000) waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK((*lib)->CurrentVersion() > 2);  // the writer really wrote meanwhile
}

// Issue 14: queries in another process while `compact` runs failed with
// "doc table of segment N is missing" (a read-only opener that lost the race
// with a table file the compaction deleted fell back to an older table set
// and mixed it with the newer log). Every open must see one whole state.
TEST_CASE(
    "read-only processes see whole states while commits and compactions run") {
  testing::TempDir dir;
  const std::string path = dir.Sub("lib");
  Options o;
  o.create_if_missing = true;
  o.sync_commits = false;
  o.merge_factor = 3;
  o.stage_bytes = 1;  // every commit takes the bulk (table ingestion) path
  {
    auto lib = Library::Open(o, path);
    REQUIRE(lib.ok());
    REQUIRE((*lib)->Put(Skill::Make("seed", "warp shuffle seed")).ok());
    REQUIRE((*lib)->Compact().ok());
  }
  int pipe_fds[2];
  REQUIRE(pipe(pipe_fds) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(pipe_fds[0]);
    Options ro;
    ro.read_only = true;
    ro.lock_timeout_ms = 60000;
    std::string why;
    int opens = 0;
    for (; opens < 300; ++opens) {
      auto lib = Library::Open(ro, path);
      if (!lib.ok()) {
        why = "open: " + lib.status().ToString();
        break;
      }
      if (!ConsistentAt(**lib, (*lib)->CurrentVersion(), &why)) break;
      why.clear();
    }
    if (!why.empty()) {
      why = "after " + std::to_string(opens) + " opens: " + why;
      (void)!write(pipe_fds[1], why.data(), why.size());
      _exit(1);
    }
    _exit(0);
  }
  close(pipe_fds[1]);
  auto lib = Library::Open(o, path);
  REQUIRE(lib.ok());
  int status = 0;
  int rounds = 0;
  for (uint64_t v = 1; waitpid(pid, &status, WNOHANG) == 0; ++v) {
    std::vector<Skill> puts;
    for (int j = 0; j < 30; ++j) {
      puts.push_back(
          Skill::Make("c-" + std::to_string(v % 7) + "-" + std::to_string(j),
                      testing::ScriptText(v, j)));
    }
    REQUIRE((*lib)->Commit(puts, {}).ok());
    if (v % 2 == 0) {
      REQUIRE((*lib)->Compact().ok());
      ++rounds;
    }
    usleep(2000);
  }
  std::string why(4096, '\0');
  const ssize_t n = read(pipe_fds[0], why.data(), why.size());
  why.resize(n > 0 ? static_cast<size_t>(n) : 0);
  close(pipe_fds[0]);
  REQUIRE(WIFEXITED(status));
  CHECK_MESSAGE(WEXITSTATUS(status) == 0, why);
  CHECK(rounds > 3);  // the reader really overlapped compactions
}

}  // namespace
}  // namespace skilldb
