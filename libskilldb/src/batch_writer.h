// Accumulates one commit's (or merge's) writes and stages them when large.
// Internal.
#ifndef SKILLDB_LIBSKILLDB_BATCH_WRITER_H_
#define SKILLDB_LIBSKILLDB_BATCH_WRITER_H_

#include <rocksdb/write_batch.h>

#include <string>
#include <string_view>

#include "keys.h"
#include "skilldb/options.h"
#include "storage.h"

namespace skilldb::internal {

// Staging protocol: before the first staged write, a marker
// (version, first segment, end segment) goes into the meta column family in
// the same batch. Staged keys are invisible until the final batch (their
// version is above the head; their segments are not in the manifest), which
// also deletes the marker. After a crash, RecoverStaging deletes what the
// marker names.
class BatchWriter {
 public:
  BatchWriter(Storage& storage, const Options& options, Version version,
              uint32_t first_segment)
      : storage_(storage),
        options_(options),
        version_(version),
        first_segment_(first_segment) {}

  void Put(Cf cf, std::string_view key, std::string_view value) {
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

  // Writes the batch so far as a staged batch if it has grown past
  // options.stage_bytes. Segments numbered below `end_segment` may be in it.
  // Call only between writes that may stay invisible until Finish.
  Status MaybeStage(uint32_t end_segment) {
    if (batch_.GetDataSize() < options_.stage_bytes) return Status::Ok();
    std::string marker = Be64(version_);
    PutBe32(&marker, first_segment_);
    PutBe32(&marker, end_segment + 1);  // also covers a segment in progress
    Put(kMeta, kStagingKey, marker);
    staged_ = true;
    SKILLDB_RETURN_IF_ERROR(storage_.Write(&batch_, /*sync=*/false));
    batch_.Clear();
    return Status::Ok();
  }

  // Writes the final batch, which makes everything visible at once.
  Status Finish(bool sync) {
    if (staged_) Delete(kMeta, kStagingKey);
    return storage_.Write(&batch_, sync);
  }

 private:
  Storage& storage_;
  const Options& options_;
  Version version_;
  uint32_t first_segment_;
  bool staged_ = false;
  rocksdb::WriteBatch batch_;
};

}  // namespace skilldb::internal

#endif  // SKILLDB_LIBSKILLDB_BATCH_WRITER_H_
