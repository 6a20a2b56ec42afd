// Tags and garbage collection of old history (gc.cc): which versions stay
// readable, and the deletion of everything no retained version reads.
// Internal.
//
// Retained versions are [oldest, head] plus every tagged version; tags are
// kept in their own column family and, sorted, in the published state.
#ifndef SKILLDB_LIBSKILLDB_RETENTION_H_
#define SKILLDB_LIBSKILLDB_RETENTION_H_

#include <string_view>
#include <vector>

#include "merger.h"
#include "published_state.h"
#include "storage.h"

namespace skilldb::internal {

// Tag, DeleteTag and Gc REQUIRE the library's write lock held; Tags is a
// read of the published state. `storage`, `published` and `merger` must
// outlive the Retention.
class Retention {
 public:
  Retention(Storage& storage, PublishedState& published, Merger& merger)
      : storage_(storage), published_(published), merger_(merger) {}

  // Contracts as Library::Tag, DeleteTag, Tags and Gc.
  Status Tag(std::string_view name, Version version);
  Status DeleteTag(std::string_view name);
  Result<std::vector<TagInfo>> Tags() const;
  Result<GcReport> Gc(const GcOptions& options);

 private:
  Storage& storage_;
  PublishedState& published_;
  Merger& merger_;
};

}  // namespace skilldb::internal

#endif  // SKILLDB_LIBSKILLDB_RETENTION_H_
