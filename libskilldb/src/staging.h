// Staging: a large commit (or merge) loads its bulk as table files before
// the final batch that makes it visible (batch_writer.h). If the process
// died in between, or the write failed, the bulk is unreachable garbage:
// the revisions and changes of the version that never committed, and every
// segment numbered from the persisted next_segment on. Internal.
#ifndef SKILLDB_LIBSKILLDB_STAGING_H_
#define SKILLDB_LIBSKILLDB_STAGING_H_

#include <cstdint>

#include "storage.h"

namespace skilldb::internal {

// Deletes what an interrupted commit or merge staged, if its marker is
// there. `next_segment`: the persisted counter (every segment the manifest
// names is below it). REQUIRES: the library's write lock held, or the
// library being opened.
Status RecoverStaging(Storage& storage, uint32_t next_segment);

// The same once a failed write of this process left its staging behind
// (Storage::staging_abandoned); nothing otherwise. REQUIRES: the write lock.
Status RecoverAbandonedStaging(Storage& storage, uint32_t next_segment);

}  // namespace skilldb::internal

#endif  // SKILLDB_LIBSKILLDB_STAGING_H_
