// Merging and compaction (merge.cc): the logarithmic merge policy, the
// merges that carry it out and the compaction of the table files. A merge
// changes the physical layout, never the content, and writes no version.
// Internal.
#ifndef SKILLDB_LIBSKILLDB_MERGER_H_
#define SKILLDB_LIBSKILLDB_MERGER_H_

#include <cstddef>

#include "published_state.h"
#include "storage.h"

namespace skilldb::internal {

// Every call REQUIRES the library's write lock held. `storage`, `options`,
// `published` and `counters` must outlive the Merger.
class Merger {
 public:
  Merger(Storage& storage, const Options& options, PublishedState& published,
         WriterCounters& counters)
      : storage_(storage),
        options_(options),
        published_(published),
        counters_(counters) {}

  // Merges runs of segments while the policy finds one (after a commit).
  Status MaybeMerge();
  // Merges state.segments[first, first + count) into one new segment,
  // dropping the documents no retained version of `state` sees, and
  // publishes the state with it. `state` must be the published one.
  Status MergeRun(const ReadState& state, size_t first, size_t count);
  // Merges every segment into one, then compacts the table files.
  Status MergeAllAndCompact();
  // Compacts every column family's table files.
  Status CompactStorage();

 private:
  Storage& storage_;
  const Options& options_;
  PublishedState& published_;
  WriterCounters& counters_;
};

}  // namespace skilldb::internal

#endif  // SKILLDB_LIBSKILLDB_MERGER_H_
