// Kills a writer process with SIGKILL at random points and checks that the
// reopened library holds every acknowledged commit, no partial commit, and
// an index consistent with its records.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <thread>

#include "model.h"
#include "reference_bm25.h"
#include "test_util.h"

namespace skilldb {
namespace {

using testing::ModelAt;
using testing::ModelState;
using testing::ReferenceIndex;

Options CrashOptions(size_t stage_bytes) {
  Options o;
  o.create_if_missing = true;
  o.analyzer = Analyzer::kWhitespace;
  o.sync_commits = true;  // acknowledged means durable
  o.merge_factor = 3;     // merges happen often
  o.stage_bytes = stage_bytes;
  return o;
}

// The child: commit the script forever, acknowledging each durable commit
// by writing its version to `fd`. Never returns.
[[noreturn]] void Writer(const std::string& path, int fd, size_t stage_bytes,
                         int import_size) {
  auto opened = Library::Open(CrashOptions(stage_bytes), path);
  if (!opened.ok()) _exit(3);
  Library& lib = **opened;
  ModelState state = ModelAt(lib.CurrentVersion(), import_size);
  while (true) {
    const Version v = lib.CurrentVersion() + 1;
    auto commit = testing::Script(v, state, import_size);
    auto done = lib.Commit(commit.puts, commit.deletes);
    if (!done.ok() || *done != v) _exit(4);
    testing::ApplyScript(commit, &state);
    const uint64_t ack = v;
    if (write(fd, &ack, sizeof(ack)) != sizeof(ack)) _exit(5);
  }
}

// Runs a writer, kills it after `delay`, returns the last acknowledged
// version (0 if none).
Version RunAndKill(const std::string& path, std::chrono::microseconds delay,
                   size_t stage_bytes, int import_size) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    Writer(path, fds[1], stage_bytes, import_size);
  }
  close(fds[1]);
  std::this_thread::sleep_for(delay);  // the kill point, not synchronization
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  // A writer that failed on its own (rather than being killed) is a bug.
  CHECK_MESSAGE(WIFSIGNALED(status), "writer exited with ",
                WEXITSTATUS(status));
  Version last = 0;
  uint64_t ack = 0;
  while (read(fds[0], &ack, sizeof(ack)) == sizeof(ack)) last = ack;
  close(fds[0]);
  return last;
}

void CheckVersion(Library& lib, Version v, int import_size) {
  CAPTURE(v);
  const ModelState model = ModelAt(v, import_size);
  ModelState stored;
  REQUIRE(lib.Scan(ReadOptions{.as_of = v},
                   [&](const Skill& s) {
                     stored[s.id] = s.title;
                     return true;
                   })
              .ok());
  CHECK(stored == model);
  auto stats = lib.Stats(ReadOptions{.as_of = v});
  REQUIRE(stats.ok());
  CHECK(stats->num_skills == model.size());
  ReferenceIndex ref;
  for (const auto& [id, title] : model) ref.Put(id, title);
  for (const char* q : {"warp shuffle", "tiling", "bank conflict async"}) {
    auto hits =
        lib.Query(QueryOptions{.k = 20, .as_of = v, .fields = HitFields::None()}, q);
    REQUIRE(hits.ok());
    auto want = ref.TopK(q, 20);
    REQUIRE(hits->hits.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      CHECK(hits->hits[i].id == want[i].first);
      CHECK(hits->hits[i].score ==
            doctest::Approx(want[i].second).epsilon(1e-9));
    }
  }
}

// `known` is the newest version known to exist before the killed writer
// started: the head seen after the previous round, or its last ack. The
// round may add acknowledged commits and at most one more in flight.
// Returns the head found.
Version CheckAfterCrash(const std::string& path, Version known,
                        Version last_ack, int import_size, std::mt19937& rng) {
  // create_if_missing: a kill during creation leaves nothing acknowledged,
  // and the library is then created afresh.
  Options o = CrashOptions(size_t{128} << 20);
  auto opened = Library::Open(o, path);
  REQUIRE_MESSAGE(opened.ok(), opened.status().ToString());
  Library& lib = **opened;
  const Version head = lib.CurrentVersion();
  // Every acknowledged commit is there; at most the one in flight more.
  CHECK(head >= std::max(known, last_ack));
  CHECK(head <= std::max(known, last_ack) + 1);
  CheckVersion(lib, head, import_size);
  if (head > 1) CheckVersion(lib, 1 + rng() % (head - 1), import_size);
  return head;
}

TEST_CASE("a writer killed at random points never leaves a partial commit") {
  testing::TempDir dir;
  const std::string path = dir.Sub("lib");
  std::mt19937 rng(5150);
  Version last_ack = 0;
  Version known = 0;
  for (int round = 0; round < 12; ++round) {
    CAPTURE(round);
    const auto delay = std::chrono::microseconds(20000 + rng() % 250000);
    // Small stage_bytes: the 40-skill imports are written in stages, so
    // kills also land between staged batches and the final one.
    const Version acked = RunAndKill(path, delay, 4096, 40);
    last_ack = std::max(last_ack, acked);
    known = CheckAfterCrash(path, known, acked, 40, rng);
  }
  CHECK(last_ack > 10);  // the writer made progress between kills
}

TEST_CASE("a writer killed during a large staged import leaves nothing of it") {
  testing::TempDir dir;
  const std::string path = dir.Sub("lib");
  std::mt19937 rng(99);
  // Imports of 3000 skills in 16 KiB stages: long enough to be killed inside.
  Version known = 0;
  for (int round = 0; round < 6; ++round) {
    const auto delay = std::chrono::microseconds(30000 + rng() % 400000);
    const Version acked = RunAndKill(path, delay, 16384, 3000);
    known = CheckAfterCrash(path, known, acked, 3000, rng);
  }
}

}  // namespace
}  // namespace skilldb
