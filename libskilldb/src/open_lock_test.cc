// The open lock's turns (open_lock.h). Different open file descriptions
// conflict under flock even within one process, so one process plays both
// sides here; tests/concurrency_test.cc has the processes.
#include "open_lock.h"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "../../tests/test_util.h"
#include "skilldb/util/clock.h"

namespace skilldb::internal {
namespace {

using Clock = std::chrono::steady_clock;

TEST_CASE("a reader opening holds off the writer's deletions, within a bound") {
  testing::TempDir dir;
  WriterOpenLock writer(dir.path(), /*wait_ms=*/300);
  std::atomic<bool> deleted{false};
  {
    ReaderOpenLock reader(dir.path(), Clock::now() + std::chrono::seconds(5));
    REQUIRE(reader.held());
    std::thread t([&] {
      WriterOpenLock::Hold hold(&writer);
      deleted = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK(!deleted);  // waits for the reader
    t.join();         // and goes on without it once the bound passes
    CHECK(deleted);
    // After giving up it does not wait again while the reader stays.
    const auto t0 = Clock::now();
    { WriterOpenLock::Hold again(&writer); }
    CHECK(util::MsSince(t0) < 250);
  }
  // The reader has finished: the writer gets the lock again, and a reader
  // now waits for it.
  WriterOpenLock::Hold hold(&writer);
  ReaderOpenLock late(dir.path(), Clock::now() + std::chrono::milliseconds(50));
  CHECK(!late.held());
}

TEST_CASE("a reader waits for a publication, then opens") {
  testing::TempDir dir;
  WriterOpenLock writer(dir.path(), 1000);
  std::atomic<bool> published{false};
  std::atomic<bool> holding{false};
  std::thread t([&] {
    WriterOpenLock::Hold outer(&writer);
    {
      WriterOpenLock::Hold nested(&writer);  // holds nest
    }
    holding = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    published = true;
  });
  while (!holding) std::this_thread::yield();
  ReaderOpenLock reader(dir.path(), Clock::now() + std::chrono::seconds(5));
  CHECK(reader.held());
  CHECK(published);  // it got the lock only after the outer hold ended
  t.join();
}

TEST_CASE("a library without a lock file is opened without one") {
  testing::TempDir dir;
  ReaderOpenLock reader(dir.path(), Clock::now() + std::chrono::seconds(1));
  CHECK(!reader.held());
  CHECK(!std::filesystem::exists(std::filesystem::path(dir.path()) /
                                 kOpenLockFile));  // a reader creates nothing
}

}  // namespace
}  // namespace skilldb::internal
