// The open lock: how a read-only open and a live writer in other processes
// take turns. Internal.
//
// A read-only open reads the MANIFEST, the logs and the table files at
// different moments. Beside a writer that deletes files meanwhile (the
// tables a compaction replaced, the logs a flush emptied) or publishes a
// bulk commit (tables through the MANIFEST, the final batch through the
// log), it can read a set that never existed; storage.cc detects that and
// opens again, but beside a writer that never pauses (and under a sanitizer,
// where an open is slow) it could retry until its deadline. The file
// kOpenLockFile in the library directory makes the two take turns:
//  - a reader holds it shared while it opens;
//  - the writer holds it exclusive while it deletes a file of the library
//    and while it publishes a bulk commit.
// So an open sees every file it listed and no half-published commit, and
// succeeds at its first attempt. The lock is for progress only: correctness
// still rests on the reader's checks. Neither side waits without bound: a
// reader past its deadline opens without the lock, and a writer that waited
// its lock_timeout_ms for readers goes on without it (and does not wait
// again until it next gets the lock at once), so a reader stopped in the
// middle of an open cannot stall a writer.
#ifndef SKILLDB_LIBSKILLDB_OPEN_LOCK_H_
#define SKILLDB_LIBSKILLDB_OPEN_LOCK_H_

#include <rocksdb/file_system.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

namespace skilldb::internal {

inline constexpr char kOpenLockFile[] = "skilldb-open.lock";

// The writer's side. Holds nest and may overlap across threads (RocksDB's
// background threads delete files while a commit publishes): the first takes
// the lock, the last releases it. Thread-safe.
class WriterOpenLock {
 public:
  // Opens the lock file in `dir`, creating it; where it cannot (a read-only
  // directory) every Hold does nothing. A Hold waits at most `wait_ms` for
  // the readers that are opening.
  WriterOpenLock(const std::string& dir, int wait_ms);
  ~WriterOpenLock();
  WriterOpenLock(const WriterOpenLock&) = delete;
  WriterOpenLock& operator=(const WriterOpenLock&) = delete;

  class Hold {
   public:
    explicit Hold(WriterOpenLock* lock) : lock_(lock) {
      if (lock_) lock_->Acquire();
    }
    ~Hold() {
      if (lock_) lock_->Release();
    }
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;

   private:
    WriterOpenLock* lock_;
  };

 private:
  void Acquire();
  void Release();

  int fd_ = -1;
  const int wait_ms_;
  std::mutex mu_;
  int holds_ = 0;          // guarded by mu_
  bool locked_ = false;    // the flock is held; guarded by mu_
  bool gave_up_ = false;   // the last wait timed out; guarded by mu_
};

// The reader's side: holds the lock shared from construction to
// destruction, waiting for it until `deadline`. Does nothing where the
// library has no lock file (one made before it existed) or it cannot be
// opened; creates nothing.
class ReaderOpenLock {
 public:
  ReaderOpenLock(const std::string& dir,
                 std::chrono::steady_clock::time_point deadline);
  ~ReaderOpenLock();
  ReaderOpenLock(const ReaderOpenLock&) = delete;
  ReaderOpenLock& operator=(const ReaderOpenLock&) = delete;

  // Whether the lock is held (false without a lock file or past the
  // deadline).
  bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// `base`, with every file deletion made under a Hold of `lock`.
std::shared_ptr<rocksdb::FileSystem> DeletingUnderLock(
    std::shared_ptr<rocksdb::FileSystem> base,
    std::shared_ptr<WriterOpenLock> lock);

}  // namespace skilldb::internal

#endif  // SKILLDB_LIBSKILLDB_OPEN_LOCK_H_
