#include "storage.h"

#include <rocksdb/cache.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/sst_file_writer.h>
#include <rocksdb/table.h>
#include <rocksdb/transaction_log.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

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
      table.block_size = 16 * 1024;
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

  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (int i = 0; i < kNumCfs; ++i) {
    descriptors.emplace_back(kColumnFamilies[i],
                             CfOptions(static_cast<Cf>(i), cache));
  }

  auto storage = std::unique_ptr<Storage>(new Storage());
  storage->path_ = path;
  storage->read_only_ = options.read_only;
  if (options.read_only) {
    SKILLDB_RETURN_IF_ERROR(storage->secondary_dir_.Create());
  }
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(options.lock_timeout_ms);
  while (true) {
    if (options.read_only) {
      // A secondary instance, not OpenForReadOnly: the latter may read the
      // MANIFEST and the log list at different moments of a live writer's
      // flush and see neither the old log nor the new table. A secondary
      // replays both consistently, whole write batches at a time.
      s = rocksdb::DB::OpenAsSecondary(db_options, path,
                                       storage->secondary_dir_.path(),
                                       descriptors, &storage->handles_, &raw);
      if (s.ok()) {
        s = raw->TryCatchUpWithPrimary();
        if (!s.ok()) {
          for (auto* h : storage->handles_) raw->DestroyColumnFamilyHandle(h);
          storage->handles_.clear();
          delete raw;
          raw = nullptr;
        }
      }
    } else {
      s = rocksdb::DB::Open(db_options, path, descriptors, &storage->handles_,
                            &raw);
    }
    // A read-only open can race the writer deleting a log or table file it
    // just listed (flush, compaction); the next attempt sees the new set.
    const bool vanished =
        s.ToString().find("No such file") != std::string::npos;
    const bool retry = options.read_only
                           ? s.IsIOError() || s.IsPathNotFound() ||
                                 (s.IsCorruption() && vanished)
                           : IsLockError(s);
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
    return FromRocks(s, "opening '" + path + "'");
  }
  storage->db_.reset(raw);
  storage->db_options_ = db_options;
  for (const auto& d : descriptors) storage->cf_options_.push_back(d.options);
  *created = !exists;
  return storage;
}

Status Storage::ScratchDir::Create() {
  std::string pattern =
      (fs::temp_directory_path() / "skilldb-reader-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    return Status::IOError("cannot create a temporary directory for a reader");
  }
  path_ = pattern;
  return Status::Ok();
}

Storage::ScratchDir::~ScratchDir() {
  if (path_.empty()) return;
  std::error_code ec;
  fs::remove_all(path_, ec);
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
  return FromRocks(db_->Write(wo, batch), "commit");
}

Status Storage::IngestSorted(
    Cf cf, std::vector<std::pair<std::string, std::string>>* kvs) {
  if (read_only_)
    return Status::FailedPrecondition("library is open read-only");
  if (kvs->empty()) return Status::Ok();
  std::sort(kvs->begin(), kvs->end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  const std::string file =
      (fs::path(path_) / ("ingest-" + std::to_string(getpid()) + "-" +
                          std::to_string(++ingest_counter_) + ".sst"))
          .string();
  rocksdb::Options options(db_options_, cf_options_[cf]);
  rocksdb::SstFileWriter writer(rocksdb::EnvOptions(), options);
  rocksdb::Status s = writer.Open(file);
  for (size_t i = 0; s.ok() && i < kvs->size(); ++i) {
    s = writer.Put((*kvs)[i].first, (*kvs)[i].second);
  }
  if (s.ok()) s = writer.Finish();
  if (s.ok()) {
    rocksdb::IngestExternalFileOptions ingest;
    ingest.move_files = true;
    s = db_->IngestExternalFile(handles_[cf], {file}, ingest);
  }
  std::error_code ec;
  fs::remove(file, ec);  // moved on success; leftovers on failure
  kvs->clear();
  return FromRocks(s, "bulk load");
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
