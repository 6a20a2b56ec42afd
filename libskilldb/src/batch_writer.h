// Accumulates one commit's (or merge's) writes: small ones in one atomic
// batch, large ones through the bulk-load path. Internal.
#ifndef SKILLDB_LIBSKILLDB_BATCH_WRITER_H_
#define SKILLDB_LIBSKILLDB_BATCH_WRITER_H_

#include <rocksdb/write_batch.h>

#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "keys.h"
#include "skilldb/options.h"
#include "storage.h"

namespace skilldb::internal {

// Staging protocol. A small commit is one WriteBatch. A large one (an
// import of many skills, a merge of big segments) first writes its bulk,
// the revisions and changes of its version and the data of its new
// segments, as sorted table files ingested into RocksDB, then the final
// batch (head, manifest, statistics, dfs, hashes, ends, commit record)
// that makes all of it visible at once. Until that batch lands the bulk is
// invisible: its revisions and changes carry a version above the head and
// its segments are not in the manifest. A marker (the version) written
// before the first bulk write lets RecoverStaging delete such orphans after
// a crash; segments numbered from the persisted next_segment on are garbage
// whenever no commit references them.
//
// The bulk column families' puts are buffered from the start: a writer that
// never passes options.stage_bytes adds them to its one batch at Finish; one
// that does (MaybeStage) switches to the bulk path then, so a commit whose
// size is not known in advance (a streamed import) never sends more than
// stage_bytes of bulk through the log.
class BatchWriter {
 public:
  BatchWriter(Storage& storage, const Options& options, Version version)
      : storage_(storage), options_(options), version_(version) {}
  // A writer that staged bulk and never finished leaves it for
  // LibraryImpl::RecoverStaging, which must run before the next commit or
  // merge (they build the same version and segment numbers).
  ~BatchWriter() {
    if (bulk_ && !finished_) storage_.set_staging_abandoned(true);
  }
  BatchWriter(const BatchWriter&) = delete;
  BatchWriter& operator=(const BatchWriter&) = delete;

  // Switches to the bulk-load path. Writes the marker durably.
  Status StartBulk() {
    if (bulk_) return Status::Ok();
    rocksdb::WriteBatch marker;
    const std::string key(kStagingKey);
    marker.Put(storage_.cf(kMeta), key, Be64(version_));
    SKILLDB_RETURN_IF_ERROR(storage_.Write(&marker, /*sync=*/true));
    bulk_ = true;
    return Status::Ok();
  }
  bool bulk() const { return bulk_; }

  void Put(Cf cf, std::string_view key, std::string_view value) {
    if (IsBulk(cf)) {
      buffered_bytes_ += key.size() + value.size();
      for (auto& buffer : buffers_) {
        if (buffer.first == cf) buffer.second.Add(key, value);
      }
      return;
    }
    batch_.Put(storage_.cf(cf), rocksdb::Slice(key.data(), key.size()),
               rocksdb::Slice(value.data(), value.size()));
  }
  void Delete(Cf cf, std::string_view key) {
    batch_.Delete(storage_.cf(cf), rocksdb::Slice(key.data(), key.size()));
  }
  void DeleteRange(Cf cf, std::string_view begin, std::string_view end) {
    batch_.DeleteRange(storage_.cf(cf),
                       rocksdb::Slice(begin.data(), begin.size()),
                       rocksdb::Slice(end.data(), end.size()));
  }

  // Loads the buffered bulk once it passes options.stage_bytes, switching
  // to the bulk path first if need be. Call only between writes that may
  // stay invisible until Finish.
  Status MaybeStage() {
    if (buffered_bytes_ < options_.stage_bytes) return Status::Ok();
    SKILLDB_RETURN_IF_ERROR(StartBulk());
    return LoadBuffers();
  }

  // Loads what is buffered, then writes the final batch, which makes
  // everything visible at once (and clears the marker).
  Status Finish(bool sync) {
    if (bulk_) {
      SKILLDB_RETURN_IF_ERROR(LoadBuffers());
      // A read-only open in another process from here to the final batch
      // could see the batch without a table (storage.cc would open again):
      // it waits instead. One that began before stays consistent: this
      // waits for it to finish, so it cannot see the batch.
      auto excluded = storage_.ExcludeReaderOpens();
      // The ingestions and the final batch reach a reader by two paths (the
      // MANIFEST and the log), which a read-only open reads at different
      // moments: this last table file tells it whether it has all the bulk
      // that the final batch it sees refers to (LibraryImpl::LoadState).
      // The token increases from one bulk write to the next (a merge's and
      // the next commit's may share a version; never a sequence number).
      const std::string token = Be64(storage_.db()->GetLatestSequenceNumber());
      KvBuffer loaded;
      loaded.Add(kBulkLoadedKey, token);
      SKILLDB_RETURN_IF_ERROR(storage_.IngestSorted(kMeta, &loaded));
      batch_.Put(storage_.cf(kMeta), std::string(kBulkCommittedKey), token);
      const std::string key(kStagingKey);
      batch_.Delete(storage_.cf(kMeta), key);
      SKILLDB_RETURN_IF_ERROR(storage_.Write(&batch_, sync));
      finished_ = true;
      return Status::Ok();
    }
    for (auto& [cf, kvs] : buffers_) {
      for (size_t i = 0; i < kvs.size(); ++i) {
        const std::string_view key = kvs.key(i), value = kvs.value(i);
        batch_.Put(storage_.cf(cf), rocksdb::Slice(key.data(), key.size()),
                   rocksdb::Slice(value.data(), value.size()));
      }
      kvs.Clear();
    }
    return storage_.Write(&batch_, sync);
  }

 private:
  static bool IsBulk(Cf cf) {
    return cf == kRevisions || cf == kChanges || cf == kPostings ||
           cf == kDocTables;
  }
  // The postings (the most pairs) are sorted and written as a table on a
  // second thread while this one does the other column families.
  Status LoadBuffers() {
    Status postings = Status::Ok();
    std::thread helper([&] {
      for (auto& [cf, kvs] : buffers_) {
        if (cf == kPostings) postings = storage_.IngestSorted(cf, &kvs);
      }
    });
    Status rest = Status::Ok();
    for (auto& [cf, kvs] : buffers_) {
      if (cf != kPostings && rest.ok()) rest = storage_.IngestSorted(cf, &kvs);
    }
    helper.join();
    SKILLDB_RETURN_IF_ERROR(rest);
    SKILLDB_RETURN_IF_ERROR(postings);
    buffered_bytes_ = 0;
    return Status::Ok();
  }

  Storage& storage_;
  const Options& options_;
  Version version_;
  bool bulk_ = false;
  bool finished_ = false;
  size_t buffered_bytes_ = 0;
  std::vector<std::pair<Cf, KvBuffer>> buffers_ = {
      {kRevisions, {}}, {kChanges, {}}, {kPostings, {}}, {kDocTables, {}}};
  rocksdb::WriteBatch batch_;
};

}  // namespace skilldb::internal

#endif  // SKILLDB_LIBSKILLDB_BATCH_WRITER_H_
