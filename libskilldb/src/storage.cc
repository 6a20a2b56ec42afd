#include "storage.h"

#include <rocksdb/cache.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/sst_file_reader.h>
#include <rocksdb/sst_file_writer.h>
#include <rocksdb/table.h>
#include <rocksdb/transaction_log.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <thread>

#include "open_lock.h"
#include "usage_codec.h"

namespace skilldb::internal {
namespace {

namespace fs = std::filesystem;

rocksdb::ColumnFamilyOptions CfOptions(
    Cf which, const std::shared_ptr<rocksdb::Cache>& cache) {
  rocksdb::ColumnFamilyOptions cf;
  cf.write_buffer_size = 32 << 20;
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = cache;
  table.cache_index_and_filter_blocks = true;
  table.pin_l0_filter_and_index_blocks_in_cache = true;
  table.format_version = 5;
  switch (which) {
    case kPostings:
    case kDocTables:
    case kDfs:
      // The posting data is already packed, but a block also holds keys,
      // their 8-byte sequence trailers (zero once compacted) and the small
      // lists of rare terms, which ZSTD shrinks well. Blocks are cached
      // uncompressed, so warm queries never decompress. Keys are looked up
      // once per query term, so a restart point every 32 keys (not 16)
      // costs a few more key comparisons and saves key bytes. No filter:
      // every read of these families is an iterator seek (a df as of a
      // version is the first entry at or after (term, version)), which a
      // whole-key bloom filter never serves.
      cf.compression = rocksdb::kZSTD;
      table.block_size = size_t{16} * 1024;
      table.block_restart_interval = 32;
      break;
    case kRevisions:
    case kEnds:
      cf.compression = rocksdb::kLZ4Compression;
      table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
      table.whole_key_filtering = true;
      break;
    case kUsage:
      cf.merge_operator = NewUsageMergeOperator();
      cf.compression = rocksdb::kLZ4Compression;
      break;
    default:
      cf.compression = rocksdb::kLZ4Compression;
      break;
  }
  cf.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  return cf;
}

bool IsLockError(const rocksdb::Status& s) {
  return s.IsIOError() &&
         (s.ToString().find("lock") != std::string::npos ||
          s.ToString().find("Resource temporarily unavailable") !=
              std::string::npos);
}

// Refuse to turn a directory that holds something else into a library.
Status CheckPath(const std::string& path, bool* exists) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  *exists = false;
  if (ec && ec != std::errc::no_such_file_or_directory) {
    return Status::IOError("cannot access '" + path + "': " + ec.message());
  }
  if (!fs::exists(st)) return Status::Ok();
  if (!fs::is_directory(st)) {
    return Status::InvalidArgument("'" + path +
                                   "' exists and is not a directory");
  }
  if (fs::exists(fs::path(path) / "CURRENT", ec)) {
    *exists = true;
    return Status::Ok();
  }
  if (!fs::is_empty(path, ec)) {
    return Status::InvalidArgument("'" + path +
                                   "' is a non-empty directory that is not a "
                                   "skilldb library");
  }
  return Status::Ok();
}

// What identifies the MANIFEST's state: the name in CURRENT and that
// file's size (every flush, compaction or ingestion appends to it, and a new
// MANIFEST changes CURRENT).
std::string ManifestFingerprint(const std::string& path) {
  std::error_code ec;
  std::string current;
  if (FILE* f = std::fopen((fs::path(path) / "CURRENT").c_str(), "rb")) {
    char buf[256];
    const size_t n = std::fread(buf, 1, sizeof(buf), f);
    std::fclose(f);
    current.assign(buf, n);
  }
  while (!current.empty() && (current.back() == '\n' || current.back() == '\r'))
    current.pop_back();
  const uint64_t size = fs::file_size(fs::path(path) / current, ec);
  return current + ":" + (ec ? std::string("?") : std::to_string(size));
}

// The write-ahead logs in the library directory, sorted.
std::vector<std::string> LogFiles(const std::string& path) {
  std::vector<std::string> logs;
  std::error_code ec;
  for (auto it = fs::directory_iterator(path, ec);
       !ec && it != fs::directory_iterator(); it.increment(ec)) {
    if (it->path().extension() == ".log") {
      logs.push_back(it->path().filename().string());
    }
  }
  std::sort(logs.begin(), logs.end());
  return logs;
}

// Whether a log of `before` is missing from `after`.
bool LostLog(const std::vector<std::string>& before,
             const std::vector<std::string>& after) {
  return !std::includes(after.begin(), after.end(), before.begin(),
                        before.end());
}

// Whether the newest bulk commit's final batch, if visible, comes with its
// last ingested table (see kBulkLoadedKey). Read errors are left to the
// reads that follow.
bool BulkIsWhole(rocksdb::DB* db,
                 const std::vector<rocksdb::ColumnFamilyHandle*>& handles) {
  std::string committed, loaded;
  rocksdb::ReadOptions ro;
  const rocksdb::Status c =
      db->Get(ro, handles[kMeta], std::string(kBulkCommittedKey), &committed);
  if (!c.ok() || committed.size() != 8) return true;
  const rocksdb::Status l =
      db->Get(ro, handles[kMeta], std::string(kBulkLoadedKey), &loaded);
  if (l.IsNotFound()) return false;
  if (!l.ok() || loaded.size() != 8) return true;
  return GetBe64(loaded.data()) >= GetBe64(committed.data());
}

// The table files in `path` that cannot even be opened (footer, index or
// properties damaged), by name.
std::vector<std::string> UnopenableTables(const std::string& path) {
  std::vector<std::string> damaged;
  std::error_code ec;
  rocksdb::Options options;
  for (auto it = fs::directory_iterator(path, ec);
       !ec && it != fs::directory_iterator(); it.increment(ec)) {
    if (it->path().extension() != ".sst") continue;
    const std::string name = it->path().filename().string();
    if (name.starts_with("ingest-")) continue;
    rocksdb::SstFileReader reader(options);
    if (!reader.Open(it->path().string()).ok()) damaged.push_back(name);
  }
  std::sort(damaged.begin(), damaged.end());
  return damaged;
}

// "000123.ldb" (RocksDB's fallback name, tried after .sst) names the .sst.
// When RocksDB names only the MANIFEST (a table whose properties block is
// damaged), the table files that do not open are named here.
std::string DamageMessage(const std::string& path, const rocksdb::Status& s) {
  std::string detail = s.ToString();
  for (size_t at = detail.find(".ldb"); at != std::string::npos;
       at = detail.find(".ldb", at)) {
    detail.replace(at, 4, ".sst");
  }
  if (detail.find(".sst") == std::string::npos) {
    const std::vector<std::string> damaged = UnopenableTables(path);
    for (size_t i = 0; i < damaged.size(); ++i) {
      detail += (i == 0 ? " (damaged table file: " : ", ") + damaged[i];
    }
    if (!damaged.empty()) detail += ")";
  }
  return "library at '" + path +
         "' is damaged (a table file is missing or unreadable; run 'skilldb "
         "check'): " +
         detail;
}

// The info log of a reader: nothing (a reader never writes into the
// library directory).
class SilentLogger : public rocksdb::Logger {
 public:
  using rocksdb::Logger::Logv;
  void Logv(const char*, va_list) override {}
};

// The writer's info log (LOG in the library directory). RocksDB's own
// logger asserts that its writes succeed, so a full disk aborted the
// process inside it; this one drops what it cannot write (the write that
// matters fails on its own, with its file's name) and keeps the file to
// about 1 MiB, the previous one as LOG.old.
class TolerantFileLogger : public rocksdb::Logger {
 public:
  explicit TolerantFileLogger(std::string path)
      : rocksdb::Logger(rocksdb::InfoLogLevel::WARN_LEVEL),
        path_(std::move(path)) {}
  ~TolerantFileLogger() override {
    if (file_ != nullptr) std::fclose(file_);
  }
  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (file_ == nullptr && !Reopen()) return;
    if (written_ > (1u << 20)) {
      std::fclose(file_);
      file_ = nullptr;
      std::error_code ec;
      fs::rename(path_, path_ + ".old", ec);
      if (!Reopen()) return;
    }
    const int n = std::vfprintf(file_, format, ap);
    if (n > 0) written_ += static_cast<uint64_t>(n);
    std::fputc('\n', file_);
    if (std::fflush(file_) != 0) std::clearerr(file_);
  }

 private:
  bool Reopen() {
    file_ = std::fopen(path_.c_str(), "a");
    if (file_ == nullptr) return false;
    std::error_code ec;
    const uint64_t size = fs::file_size(path_, ec);
    written_ = ec ? 0 : size;
    return true;
  }

  const std::string path_;
  std::mutex mu_;
  FILE* file_ = nullptr;
  uint64_t written_ = 0;
};

std::shared_ptr<rocksdb::FileSystem>& TestFileSystem() {
  static std::shared_ptr<rocksdb::FileSystem> fs;
  return fs;
}

}  // namespace

Status FromRocks(const rocksdb::Status& s, std::string_view context) {
  if (s.ok()) return Status::Ok();
  std::string message(context);
  message += ": ";
  message += s.ToString();
  if (s.IsNotFound()) return Status::NotFound(message);
  if (s.IsCorruption()) return Status::Corruption(message);
  if (s.IsIOError()) return Status::IOError(message);
  if (s.IsInvalidArgument()) return Status::InvalidArgument(message);
  if (s.IsNotSupported()) return Status::NotSupported(message);
  if (s.IsBusy() || s.IsTryAgain()) return Status::Unavailable(message);
  return Status::Internal(message);
}

void SetFileSystemForTesting(std::shared_ptr<rocksdb::FileSystem> fs) {
  TestFileSystem() = std::move(fs);
}

Result<std::unique_ptr<Storage>> Storage::Open(const Options& options,
                                               const std::string& path,
                                               bool* created) {
  bool exists = false;
  SKILLDB_RETURN_IF_ERROR(CheckPath(path, &exists));
  *created = false;
  if (exists && options.error_if_exists) {
    return Status::AlreadyExists("a library already exists at '" + path + "'");
  }
  if (!exists && (!options.create_if_missing || options.read_only)) {
    return Status::NotFound("no library at '" + path + "'");
  }
  if (!exists) {
    std::error_code ec;
    fs::create_directories(path, ec);  // RocksDB does not create parents
    if (ec) {
      return Status::IOError("cannot create '" + path + "': " + ec.message());
    }
  }

  auto cache = rocksdb::NewLRUCache(options.block_cache_bytes);
  rocksdb::DBOptions db_options;
  db_options.create_if_missing = !exists;
  db_options.create_missing_column_families = true;
  db_options.paranoid_checks = true;
  // Read-only openers may outlive SST files the writer compacts away; with
  // every table opened up front they keep them readable.
  db_options.max_open_files = options.read_only ? -1 : 512;
  db_options.wal_recovery_mode = rocksdb::WALRecoveryMode::kPointInTimeRecovery;
  db_options.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  db_options.keep_log_file_num = 2;
  db_options.IncreaseParallelism(2);
  // Bound the log a reader (or a reopen) has to replay: column families
  // whose data sits in older logs are flushed once the logs pass this.
  db_options.max_total_wal_size = 64 << 20;
  // A writer's open replays the log into the memtable without writing a
  // table first: it needs no free space to start (on a nearly full disk a
  // large log made every write command fail to open), and it schedules no
  // background work (a new library's second open would otherwise start
  // RocksDB's thread pool, which a process that forks must not have).
  db_options.avoid_flush_during_recovery = true;

  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  descriptors.reserve(kNumCfs);
  for (int i = 0; i < kNumCfs; ++i) {
    descriptors.emplace_back(kColumnFamilies[i],
                             CfOptions(static_cast<Cf>(i), cache));
  }

  auto storage = std::unique_ptr<Storage>(new Storage());
  storage->path_ = path;
  storage->read_only_ = options.read_only;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(options.lock_timeout_ms);
  if (!options.read_only) {
    // The writer deletes files only under the open lock (open_lock.h),
    // from its own open on.
    storage->open_lock_ =
        std::make_shared<WriterOpenLock>(path, options.lock_timeout_ms);
    storage->env_ = rocksdb::NewCompositeEnv(DeletingUnderLock(
        TestFileSystem() ? TestFileSystem() : rocksdb::FileSystem::Default(),
        storage->open_lock_));
    db_options.env = storage->env_.get();
  } else if (TestFileSystem()) {
    storage->env_ = rocksdb::NewCompositeEnv(TestFileSystem());
    db_options.env = storage->env_.get();
  }
  if (options.read_only) {
    // A reader writes nothing into the library (no LOG of its own).
    db_options.info_log = std::make_shared<SilentLogger>();
  } else {
    db_options.info_log =
        std::make_shared<TolerantFileLogger>((fs::path(path) / "LOG").string());
  }
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s;
  while (true) {
    bool retry = false;
    if (options.read_only) {
      // Beside a live writer in another process, the open lock keeps its
      // deletions and bulk publications out until this attempt is done
      // (open_lock.h), so the checks below rarely find anything to retry.
      ReaderOpenLock opening(path, deadline);
      // OpenForReadOnly, not a secondary instance: a secondary recovers "to
      // a point in time" and silently drops every table it cannot open (a
      // deleted or damaged file, or one a compaction removed while it
      // listed them), answering from an older state; a read-only open fails
      // with the file's name instead. It reads the MANIFEST and the logs at
      // different moments, so beside a live writer it opens again when
      //  - it failed and the MANIFEST changed meanwhile (a compaction
      //    removed a table it listed), or a log vanished as it read it;
      //  - the MANIFEST changed and a log it could have missed was deleted
      //    (a flush moved that log's data into a table it did not list);
      //  - it sees a bulk commit's final batch (from the log) but not its
      //    last ingested table (from the MANIFEST): see kBulkLoadedKey.
      const std::string before = ManifestFingerprint(path);
      const std::vector<std::string> logs_before = LogFiles(path);
      s = rocksdb::DB::OpenForReadOnly(db_options, path, descriptors,
                                       &storage->handles_, &raw);
      const bool moved = ManifestFingerprint(path) != before;
      if (s.ok()) {
        bool consistent = !moved || !LostLog(logs_before, LogFiles(path));
        if (consistent) consistent = BulkIsWhole(raw, storage->handles_);
        if (!consistent) {
          for (auto* h : storage->handles_) raw->DestroyColumnFamilyHandle(h);
          storage->handles_.clear();
          delete raw;
          raw = nullptr;
          s = rocksdb::Status::TryAgain("the library changed while it opened");
        }
        retry = !consistent;
      } else {
        const bool log_vanished =
            s.ToString().find("No such file") != std::string::npos &&
            s.ToString().find(".log") != std::string::npos;
        retry = moved || log_vanished || s.IsPathNotFound();
      }
    } else {
      s = rocksdb::DB::Open(db_options, path, descriptors, &storage->handles_,
                            &raw);
      retry = IsLockError(s);
    }
    if (s.ok() || !retry || std::chrono::steady_clock::now() >= deadline) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!s.ok()) {
    if (IsLockError(s)) {
      return Status::Unavailable("library at '" + path +
                                 "' is open for writing by another process");
    }
    if (s.IsInvalidArgument() && exists) {
      return Status::Corruption("'" + path + "' is not a skilldb library (" +
                                s.ToString() + ")");
    }
    if (s.IsCorruption() || s.IsPathNotFound() ||
        (s.IsIOError() &&
         s.ToString().find("No such file") != std::string::npos)) {
      return Status::Corruption(DamageMessage(path, s));
    }
    return FromRocks(s, "opening '" + path + "'");
  }
  storage->db_.reset(raw);
  if (!options.read_only) {
    // Table files a bulk load wrote but never ingested (a writer killed in
    // an import or a compaction): only the writer, which holds the lock,
    // makes them, so every one found now is a dead writer's leftover.
    std::error_code ec;
    for (auto it = fs::directory_iterator(path, ec);
         !ec && it != fs::directory_iterator(); it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name.starts_with("ingest-") && name.ends_with(".sst")) {
        std::error_code ignored;
        fs::remove(it->path(), ignored);
      }
    }
  }
  storage->db_options_ = db_options;
  for (const auto& d : descriptors) storage->cf_options_.push_back(d.options);
  *created = !exists;
  return storage;
}

Storage::~Storage() {
  for (auto* handle : handles_) {
    if (db_) db_->DestroyColumnFamilyHandle(handle);
  }
  handles_.clear();
  if (db_ && !read_only_) db_->Close().PermitUncheckedError();
  db_.reset();
}

std::shared_ptr<const rocksdb::Snapshot> Storage::NewSnapshot() {
  if (read_only_) return nullptr;
  rocksdb::DB* db = db_.get();
  return std::shared_ptr<const rocksdb::Snapshot>(
      db->GetSnapshot(),
      [db](const rocksdb::Snapshot* s) { db->ReleaseSnapshot(s); });
}

Result<std::optional<std::string>> Storage::Get(
    Cf which, std::string_view key, const rocksdb::Snapshot* snapshot) const {
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot;
  std::string value;
  rocksdb::Status s = db_->Get(ro, handles_[which],
                               rocksdb::Slice(key.data(), key.size()), &value);
  if (s.IsNotFound()) return std::optional<std::string>();
  if (!s.ok()) return FromRocks(s, "read");
  return std::optional<std::string>(std::move(value));
}

Status Storage::GetPinned(Cf which, std::string_view key,
                          const rocksdb::Snapshot* snapshot,
                          rocksdb::PinnableSlice* value, bool* found) const {
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot;
  rocksdb::Status s = db_->Get(ro, handles_[which],
                               rocksdb::Slice(key.data(), key.size()), value);
  *found = s.ok();
  if (s.IsNotFound()) return Status::Ok();
  return FromRocks(s, "read");
}

std::unique_ptr<rocksdb::Iterator> Storage::NewIterator(
    Cf which, const rocksdb::Snapshot* snapshot) const {
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot;
  return std::unique_ptr<rocksdb::Iterator>(
      db_->NewIterator(ro, handles_[which]));
}

Status Storage::Write(rocksdb::WriteBatch* batch, bool sync) {
  if (read_only_) {
    return Status::FailedPrecondition("library is open read-only");
  }
  rocksdb::WriteOptions wo;
  wo.sync = sync;
#if defined(__SANITIZE_THREAD__)
  std::lock_guard<std::mutex> tsan_turn(tsan_write_mu_);
#endif
  return WriteError(db_->Write(wo, batch), "commit", batch->GetDataSize());
}

Status Storage::WriteError(const rocksdb::Status& s, std::string_view context,
                           uint64_t bytes) const {
  Status status = FromRocks(s, context);
  if (!s.IsNoSpace()) return status;
  std::string hint = " (this write needs about " + std::to_string(bytes) +
                     " bytes; ";
  struct statvfs fsinfo;
  if (statvfs(path_.c_str(), &fsinfo) == 0) {
    hint += "the file system of '" + path_ + "' has " +
            std::to_string(uint64_t{fsinfo.f_bavail} * fsinfo.f_frsize) +
            " bytes free)";
  } else {
    hint += "the free space of '" + path_ + "' is unknown)";
  }
  return Status::IOError(std::string(status.message()) + hint);
}

Status Storage::IngestSorted(Cf cf, KvBuffer* kvs) {
  if (read_only_)
    return Status::FailedPrecondition("library is open read-only");
  if (kvs->empty()) return Status::Ok();
  kvs->SortByKey();
  const uint64_t bytes = kvs->data_bytes();
  const std::string file =
      (fs::path(path_) / ("ingest-" + std::to_string(getpid()) + "-" +
                          std::to_string(++ingest_counter_) + ".sst"))
          .string();
  rocksdb::Options options(db_options_, cf_options_[cf]);
  rocksdb::SstFileWriter writer(rocksdb::EnvOptions(), options);
  rocksdb::Status s = writer.Open(file);
  for (size_t i = 0; s.ok() && i < kvs->size(); ++i) {
    const std::string_view key = kvs->key(i), value = kvs->value(i);
    s = writer.Put(rocksdb::Slice(key.data(), key.size()),
                   rocksdb::Slice(value.data(), value.size()));
  }
  if (s.ok()) s = writer.Finish();
  if (s.ok()) {
    rocksdb::IngestExternalFileOptions ingest;
    ingest.move_files = true;
    s = db_->IngestExternalFile(handles_[cf], {file}, ingest);
  }
  std::error_code ec;
  fs::remove(file, ec);  // moved on success; leftovers on failure
  kvs->Clear();
  return WriteError(s, "bulk load", bytes);
}

WriterOpenLock::Hold Storage::ExcludeReaderOpens() {
  return WriterOpenLock::Hold(open_lock_.get());
}

void Storage::FlushIfLogIsLarge() {
  rocksdb::VectorLogPtr logs;
  if (!db_->GetSortedWalFiles(logs).ok()) return;
  uint64_t bytes = 0;
  for (const auto& log : logs) bytes += log->SizeFileBytes();
  if (bytes < (4u << 20)) return;
  rocksdb::FlushOptions flush;
  db_->Flush(flush, handles_).PermitUncheckedError();
}

uint64_t Storage::DiskBytes() const {
  // Everything in the directory: SST files, logs and manifests alike.
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(path_, ec)) {
    if (entry.is_regular_file(ec)) total += entry.file_size(ec);
  }
  return total;
}

}  // namespace skilldb::internal
