// The exhaustive search: every matching document scored, no pruning. The
// oracle the pruning algorithms are tested against (QueryOptions::exhaustive).
#include "segment_search.h"

namespace skilldb::retrieval::internal {

void SegmentSearch::RunExhaustive() {
  while (true) {
    uint32_t doc = kNoMoreDocs;
    for (TermCursor& t : terms_) doc = std::min(doc, t.cursor.doc());
    if (doc == kNoMoreDocs) return;
    const uint32_t aligned = AlignFilters(doc);
    if (aligned == doc) Evaluate(doc, /*prune=*/false);
    const uint32_t next = aligned == doc ? doc + 1 : aligned;
    for (TermCursor& t : terms_) t.cursor.Advance(next);
    if (aligned == kNoMoreDocs) return;
  }
}

}  // namespace skilldb::retrieval::internal
