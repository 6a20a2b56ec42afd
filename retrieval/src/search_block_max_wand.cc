#include "segment_search.h"

namespace skilldb::retrieval::internal {

// Block-max WAND (Ding and Suel, SIGIR 2011), with filters checked at the
// pivot before scoring and ties allowed to enter (see MayReach).
void SegmentSearch::RunBlockMaxWand() {
  const size_t n = by_doc_.size();
  while (true) {
    SortByDoc();
    const double threshold = top_->threshold();
    // Pivot: the first cursor at which the summed list bounds may reach the
    // threshold. Documents before it cannot enter.
    double bound = 0.0;
    size_t pivot = n;
    for (size_t i = 0; i < n; ++i) {
      if (by_doc_[i]->cursor.doc() == kNoMoreDocs) break;
      bound += by_doc_[i]->max_score;
      if (MayReach(bound, threshold)) {
        pivot = i;
        break;
      }
    }
    if (pivot == n) return;
    const uint32_t pivot_doc = by_doc_[pivot]->cursor.doc();
    while (pivot + 1 < n && by_doc_[pivot + 1]->cursor.doc() == pivot_doc) {
      ++pivot;
    }
    // Refine with the block bounds of the blocks holding pivot_doc.
    double block_bound = 0.0;
    for (size_t i = 0; i <= pivot; ++i) {
      // A list with no block reaching pivot_doc contributes nothing there.
      if (by_doc_[i]->cursor.ShallowAdvance(pivot_doc)) {
        block_bound += BlockBound(*by_doc_[i]);
      }
    }
    if (MayReach(block_bound, threshold)) {
      if (by_doc_[0]->cursor.doc() == pivot_doc) {
        const uint32_t aligned = AlignFilters(pivot_doc);
        if (aligned == pivot_doc) Evaluate(pivot_doc, /*prune=*/true);
        if (aligned == kNoMoreDocs) return;
        const uint32_t next = aligned == pivot_doc ? pivot_doc + 1 : aligned;
        for (size_t i = 0; i <= pivot; ++i) by_doc_[i]->cursor.Advance(next);
      } else {
        // Move the cursor with the largest bound among those before the
        // pivot up to it.
        size_t best = 0;
        for (size_t i = 1; i < pivot && by_doc_[i]->cursor.doc() < pivot_doc;
             ++i) {
          if (by_doc_[i]->max_score > by_doc_[best]->max_score) best = i;
        }
        by_doc_[best]->cursor.Advance(pivot_doc);
      }
      continue;
    }
    // No document up to the end of the smallest current block can enter:
    // jump past it (or to the next cursor's doc, whichever comes first).
    uint32_t next = kNoMoreDocs;
    for (size_t i = 0; i <= pivot; ++i) {
      const uint32_t last = by_doc_[i]->cursor.BlockLastDoc();
      next = std::min(next, last == kNoMoreDocs ? last : last + 1);
    }
    if (pivot + 1 < n) next = std::min(next, by_doc_[pivot + 1]->cursor.doc());
    if (next <= pivot_doc) next = pivot_doc + 1;  // always make progress
    size_t best = 0;
    for (size_t i = 1; i <= pivot; ++i) {
      if (by_doc_[i]->max_score > by_doc_[best]->max_score) best = i;
    }
    by_doc_[best]->cursor.Advance(next);
  }
}
}  // namespace skilldb::retrieval::internal
