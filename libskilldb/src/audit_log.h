// The audit log (audit.cc): an append-only record of every proposal
// outcome, keyed by a sequence number. Internal.
#ifndef SKILLDB_LIBSKILLDB_AUDIT_LOG_H_
#define SKILLDB_LIBSKILLDB_AUDIT_LOG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "skilldb/library.h"
#include "storage.h"

namespace skilldb::internal {

class BatchWriter;

// Owns the next sequence number. Writes (Add, Write) must be serialized by
// the caller: the library calls them under its write lock, so that an
// accepted proposal's entry lands in the batch of its commit. Reads need no
// lock.
class AuditLog {
 public:
  // REQUIRES: `storage` and `options` outlive this.
  AuditLog(Storage& storage, const Options& options)
      : storage_(storage), options_(options) {}
  AuditLog(const AuditLog&) = delete;
  AuditLog& operator=(const AuditLog&) = delete;

  // Reads the next sequence number from the log (a writer's open).
  Status Load();
  // Adds the entry (a JSON object; "seq" and "time_ms" are put first) to
  // `writer`'s batch and returns its sequence number: it exists once that
  // batch lands. A batch that never lands leaves a gap in the numbers.
  uint64_t Add(BatchWriter& writer, const std::string& entry_json);
  // Writes the entry in a batch of its own; `next_version` is the version
  // the next commit makes (what a BatchWriter is built for).
  Result<uint64_t> Write(const std::string& entry_json, Version next_version);
  // The entries AuditOptions asks for, as the log is now (it is not
  // versioned), oldest first.
  Result<std::vector<AuditEntry>> Read(const AuditOptions& options) const;

 private:
  Storage& storage_;
  const Options& options_;
  uint64_t next_seq_ = 1;
};

}  // namespace skilldb::internal

#endif  // SKILLDB_LIBSKILLDB_AUDIT_LOG_H_
