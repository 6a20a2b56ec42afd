// RocksDB behind the engine: opening (read-write or read-only, with the
// column families of keys.h), snapshots, reads and atomic batch writes.
// Internal.
//
// A Storage is safe for concurrent use; write ordering is the caller's job
// (LibraryImpl serializes commits).
#ifndef SKILLDB_LIBSKILLDB_STORAGE_H_
#define SKILLDB_LIBSKILLDB_STORAGE_H_

#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/file_system.h>
#include <rocksdb/write_batch.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "keys.h"
#include "kv_buffer.h"
#include "open_lock.h"
#include "skilldb/options.h"
#include "skilldb/status.h"

namespace skilldb::internal {

// Converts a RocksDB status, prefixing `context` to the message.
Status FromRocks(const rocksdb::Status& s, std::string_view context);

// Tests: every Storage opened afterwards does its file I/O through `fs`
// (null restores the default). Not thread-safe against concurrent opens.
void SetFileSystemForTesting(std::shared_ptr<rocksdb::FileSystem> fs);

class Storage {
 public:
  // Opens the database at `path`. Sets *created when it did not exist.
  // See Library::Open for the errors.
  static Result<std::unique_ptr<Storage>> Open(const Options& options,
                                               const std::string& path,
                                               bool* created);
  ~Storage();

  bool read_only() const { return read_only_; }
  // Set when a writer staged bulk it never made visible (batch_writer.h);
  // the library removes it before its next write. Guarded by the
  // library's write lock.
  bool staging_abandoned() const { return staging_abandoned_; }
  void set_staging_abandoned(bool abandoned) { staging_abandoned_ = abandoned; }
  const std::string& path() const { return path_; }
  rocksdb::DB* db() const { return db_.get(); }
  rocksdb::ColumnFamilyHandle* cf(Cf which) const { return handles_[which]; }

  // A consistent view of the database as it is now; released when the last
  // reference goes. Null in read-only mode, where nothing changes.
  std::shared_ptr<const rocksdb::Snapshot> NewSnapshot();

  // Reads `key`; nullopt if absent.
  Result<std::optional<std::string>> Get(
      Cf which, std::string_view key,
      const rocksdb::Snapshot* snapshot = nullptr) const;
  // Reads `key` into a pinned slice (no copy from the block cache). Sets
  // *found.
  Status GetPinned(Cf which, std::string_view key,
                   const rocksdb::Snapshot* snapshot,
                   rocksdb::PinnableSlice* value, bool* found) const;
  std::unique_ptr<rocksdb::Iterator> NewIterator(
      Cf which, const rocksdb::Snapshot* snapshot = nullptr) const;

  // Applies `batch` atomically; with `sync`, after syncing the log. Here and
  // in IngestSorted, a write that fails for want of space says how many
  // bytes it needed and how many the library's file system has free.
  Status Write(rocksdb::WriteBatch* batch, bool sync);

  // Sorts `kvs` by key, writes them as one table file and ingests it into
  // `cf` (bypassing the log and the memtable: the bulk-load path). Keys must
  // be distinct. The data is durable when this returns. Clears `kvs`.
  // Safe to call from two threads at once for different column families.
  Status IngestSorted(Cf cf, KvBuffer* kvs);

  // Keeps read-only opens in other processes out until the result is
  // destroyed (open_lock.h): for a publication that must reach them whole.
  // Nothing in read-only mode.
  WriterOpenLock::Hold ExcludeReaderOpens();

  // Bytes of every file in the library directory.
  uint64_t DiskBytes() const;

  // Flushes the memtables if the write-ahead log has grown past a few MiB,
  // so the next opener (every read-only CLI command is one) does not replay
  // it. Best effort: a failure only leaves the log to be replayed.
  void FlushIfLogIsLarge();

 private:
  Storage() = default;
  // FromRocks(s, context), with the space figures when s is "no space".
  Status WriteError(const rocksdb::Status& s, std::string_view context,
                    uint64_t bytes) const;

  std::shared_ptr<WriterOpenLock> open_lock_;  // a writer's; outlives env_
  std::unique_ptr<rocksdb::Env> env_;  // the file system; outlives db_
  std::string path_;
  bool read_only_ = false;
  bool staging_abandoned_ = false;
  std::unique_ptr<rocksdb::DB> db_;
  // Only in ThreadSanitizer builds (scripts/tsan.sh): Write calls take this
  // in turn. RocksDB's write group hands one thread's batch to another (the
  // leader) through atomics inside an uninstrumented librocksdb, which TSan
  // reports as a race on the batch's bytes; taking turns here keeps TSan's
  // reports about skilldb's own code. Other builds write concurrently.
#if defined(__SANITIZE_THREAD__)
  std::mutex tsan_write_mu_;
#endif
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
  rocksdb::DBOptions db_options_;
  std::vector<rocksdb::ColumnFamilyOptions> cf_options_;
  std::atomic<uint64_t> ingest_counter_{0};
};

}  // namespace skilldb::internal

#endif  // SKILLDB_LIBSKILLDB_STORAGE_H_
