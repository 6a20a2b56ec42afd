// Kills a writer process with SIGKILL at random points and checks that the
// reopened library holds every acknowledged commit, no partial commit, and
// an index consistent with its records.
#include <doctest/doctest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "crash_writer.h"
#include "model.h"
#include "process_util.h"
#include "reference_bm25.h"
#include "test_util.h"
#include "build_paths.h"

namespace skilldb {
namespace {

using testing::ModelAt;
using testing::ModelState;
using testing::ReferenceIndex;

// Runs a writer; once it has acknowledged `min_acks` commits, kills it after
// `delay`. Returns the last acknowledged version (0 if none). Waiting for
// acknowledgements, not only for time, keeps the kills inside commits on a
// loaded machine, where a writer can spend a whole fixed delay opening.
Version RunAndKill(const std::string& path, std::chrono::microseconds delay,
                   size_t stage_bytes, int import_size, int min_acks = 0) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  // The writer is a program of its own (tests/crash_writer.cc), exec'd:
  // RocksDB's thread pool does not survive a fork, and this process has
  // started it, so a writer that is only forked waits forever for the first
  // background flush it needs (an ingestion over a killed writer's log).
  const pid_t pid = testing::StartProgram(
      {SKILLDB_CRASH_WRITER, path, std::to_string(fds[1]),
       std::to_string(stage_bytes), std::to_string(import_size)},
      fds[0]);
  close(fds[1]);
  Version last = 0;
  uint64_t ack = 0;
  int acks = 0;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  while (acks < min_acks && std::chrono::steady_clock::now() < give_up) {
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    if (read(fds[0], &ack, sizeof(ack)) != sizeof(ack)) break;  // writer gone
    last = ack;
    ++acks;
  }
  CHECK_MESSAGE(acks >= min_acks, "the writer acknowledged only ", acks,
                " commits in 2 minutes");
  std::this_thread::sleep_for(delay);  // the kill point, not synchronization
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  // A writer that failed on its own (rather than being killed) is a bug.
  CHECK_MESSAGE(WIFSIGNALED(status), "writer exited with ",
                WEXITSTATUS(status));
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
  Options o = testing::CrashOptions(size_t{128} << 20);
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
  Version known = 0;
  for (int round = 0; round < 12; ++round) {
    CAPTURE(round);
    const auto delay = std::chrono::microseconds(rng() % 250000);
    // Small stage_bytes: the 40-skill imports are written in stages, so
    // kills also land between staged batches and the final one. Every
    // fourth round may kill the writer while it opens (no commit waited
    // for).
    const int min_acks = round % 4 == 3 ? 0 : 1;
    const Version acked = RunAndKill(path, delay, 4096, 40, min_acks);
    known = CheckAfterCrash(path, known, acked, 40, rng);
  }
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
