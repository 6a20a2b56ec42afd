// The search of one segment, shared by the three algorithms (internal to
// retrieval/): the cursors of the query's terms and filters, the bounds
// that decide what may still enter the top k, and scoring. Each algorithm
// lives in its own file:
//   search_exhaustive.cc        every match scored (the oracle)
//   search_block_max_wand.cc    block-max WAND (Ding and Suel)
//   search_block_max_maxscore.cc  windowed block-max MaxScore (the default)
// and searcher.cc opens a segment's cursors and runs one of them per
// segment. The per-document steps every algorithm calls (Evaluate, Score,
// the bounds) are defined here, inline, so that splitting the algorithms
// into files costs no call per posting.
//
// A SegmentSearch is used by one thread, for one segment of one query.
#ifndef SKILLDB_RETRIEVAL_SRC_SEGMENT_SEARCH_H_
#define SKILLDB_RETRIEVAL_SRC_SEGMENT_SEARCH_H_

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "posting_list.h"
#include "skilldb/retrieval/searcher.h"
#include "top_k.h"

namespace skilldb::retrieval::internal {

// A bound within this relative margin of the threshold is treated as able to
// reach it: bounds and scores are summed in different orders, and rounding
// must never prune a document that would have entered (ties enter on id).
inline bool MayReach(double bound, double threshold) {
  return bound * (1.0 + 1e-9) >= threshold;
}

struct TermCursor {
  PostingCursor cursor;
  std::unique_ptr<Blob> blob;
  // Every block's bound under this query's statistics (from the list's
  // BlockBoundCache), or null: then each bound comes from the cursor.
  BlockBoundCache::Table bounds;
  double idf = 0.0;
  double max_score = 0.0;     // bound over the whole list in this segment
  double window_bound = 0.0;  // bound in the current MaxScore window
  // The last docid of the block window_bound comes from (kNoMoreDocs once
  // the list has ended).
  uint32_t block_last = 0;
  // Tables for the decoded block (blocks_decoded() when they were filled):
  // entry tf is the smallest length the block allows for that tf, and the
  // bound of a posting with that tf.
  static constexpr uint32_t kTfTable = 16;
  uint64_t table_block = ~uint64_t{0};
  uint32_t tf_min_length[kTfTable] = {};
  double tf_bound[kTfTable] = {};
  size_t order = 0;  // index in request.terms: the summation order
};

// Lists of at most this many postings (8 blocks) are short: their documents
// are scored first (see EvaluateShortLists).
constexpr uint32_t kShortList = 1024;
// Few cursors and mostly sorted input (the order of the step before): a
// stable insertion sort beats std::sort here.
template <typename Less>
void InsertionSort(std::vector<TermCursor*>* v, Less less) {
  for (size_t i = 1; i < v->size(); ++i) {
    TermCursor* t = (*v)[i];
    size_t j = i;
    while (j > 0 && less(t, (*v)[j - 1])) {
      (*v)[j] = (*v)[j - 1];
      --j;
    }
    (*v)[j] = t;
  }
}

class SegmentSearch {
 public:
  SegmentSearch(const SearchRequest& request, const Bm25& bm25,
                const SegmentDocs& docs, internal::TopK* top)
      : request_(request), bm25_(bm25), docs_(docs), top_(top) {}

  // Opens the cursors; returns false (and OK) if nothing can match here.
  Result<bool> Open(PostingSource* source);
  void RunExhaustive();
  void RunBlockMaxWand();
  void RunBlockMaxMaxScore();
  Status Finish(SearchStats* stats) const;

 private:
  // Moves the filter cursors to their first common doc >= target.
  uint32_t AlignFilters(uint32_t target);
  double BlockBound(TermCursor& t);
  // Moves t's block pointer to the block holding lo (or the next one) and
  // sets its window_bound and block_last from it.
  void NextBlock(TermCursor& t, uint32_t lo);
  // The bound of t's current posting from its tf and its block's frontier:
  // BM25 of the tf at the smallest length the block allows for it.
  double PostingBound(TermCursor& t);
  // The cursor's MinLength through the same tables.
  uint32_t MinLength(TermCursor& t);
  // PostingBound tightened by `floor`, a lower bound of the document's
  // length (its length floor): BM25 of the tf at the larger of the two.
  double FloorBound(TermCursor& t, uint32_t floor);
  void FillTables(TermCursor& t);
  // Scores every document of the short lists (if the query also has long
  // ones), then removes the short lists from terms_ and records their
  // documents in done_ (see the definition).
  void EvaluateShortLists();
  void EvaluateShortDoc(uint32_t doc, const std::vector<TermCursor*>& shorts,
                        const std::vector<TermCursor*>& longs);
  void RunOneList(TermCursor& t);
  // The first docid block `b` of t's list can hold: the segment's first, or
  // one past the previous block's last.
  uint32_t FirstDocOf(const TermCursor& t, uint32_t b) const {
    return b == 0 ? docs_.base() : t.cursor.LastDocOf(b - 1) + 1;
  }
  // RunOneList's window: block `block` of t's list, walked by position.
  // REQUIRES: filters_.empty().
  void EvaluateBlock(TermCursor& t, uint32_t block);
  // Evaluates the MaxScore window [lo, hi].
  void EvaluateWindow(uint32_t lo, uint32_t hi,
                      std::vector<TermCursor*>* order);
  // `prune`: skip documents the postings bound below the threshold (the
  // exhaustive oracle scores every match).
  void Evaluate(uint32_t doc, bool prune);
  void SortByDoc();
  // The last stages of Evaluate, for a document every cursor has been moved
  // to (at or past it): with `prune`, the bound from the length floor; then
  // the exact length, score, liveness and id.
  void Score(uint32_t doc, double threshold, bool prune);

  const SearchRequest& request_;
  const Bm25& bm25_;
  const SegmentDocs& docs_;
  internal::TopK* top_;
  std::vector<TermCursor> terms_;    // in request order
  std::vector<TermCursor*> by_doc_;  // sorted by current doc
  std::vector<PostingCursor> filters_;
  std::vector<std::unique_ptr<Blob>> filter_blobs_;
  // Documents already evaluated with every term (ascending): never offered
  // again.
  std::vector<uint32_t> done_;
  uint64_t docs_scored_ = 0;
};

inline uint32_t SegmentSearch::AlignFilters(uint32_t target) {
  if (filters_.empty()) return target;
  bool moved = true;
  while (moved && target != kNoMoreDocs) {
    moved = false;
    for (PostingCursor& f : filters_) {
      f.Seek(target);  // MaxScore's windows come out of docid order
      if (f.doc() != target) {
        target = f.doc();
        moved = true;
      }
    }
  }
  return target;
}

// Scores `doc` (which at least one cursor is on) if it is live and passes
// the filters, summing term scores in request order. With `prune`, the
// document table is read in order of need: first the postings alone bound
// the score (each tf at the smallest length its block's frontier allows),
// then Score's length floor tightens that bound, and only a document that
// can still reach the threshold has its exact length read; liveness and the
// id are read only for a score that can enter. Every bound is BM25 of the
// same tf at a length no greater than the document's, so it is never below
// the score (TermScore is monotone, and so is the sum).
inline void SegmentSearch::Evaluate(uint32_t doc, bool prune) {
  const double threshold = top_->threshold();
  if (prune && threshold > 0.0) {
    double bound = 0.0;
    for (TermCursor& t : terms_) {
      if (t.cursor.doc() == doc) bound += PostingBound(t);
    }
    if (!MayReach(bound, threshold)) return;
  }
  Score(doc, threshold, prune);
}

inline void SegmentSearch::Score(uint32_t doc, double threshold, bool prune) {
  if (prune && threshold > 0.0) {
    const uint32_t floor = docs_.length_floor(doc);
    double bound = 0.0;
    for (TermCursor& t : terms_) {
      if (t.cursor.doc() == doc) bound += FloorBound(t, floor);
    }
    if (!MayReach(bound, threshold)) return;
  }
  const uint32_t dl = docs_.length(doc);
  double score = 0.0;
  for (const TermCursor& t : terms_) {
    if (t.cursor.doc() == doc) {
      score += bm25_.TermScore(t.idf, t.cursor.tf(), dl);
    }
  }
  ++docs_scored_;
  // Below the k-th score: cannot enter (an equal score may, on id).
  if (score < threshold) return;
  if (!docs_.LiveAt(doc, request_.as_of)) return;
  if (!done_.empty() && std::binary_search(done_.begin(), done_.end(), doc))
    return;
  top_->Offer(doc, score, &docs_);
}

inline void SegmentSearch::SortByDoc() {
  InsertionSort(&by_doc_, [](const TermCursor* a, const TermCursor* b) {
    return a->cursor.doc() < b->cursor.doc();
  });
}

inline void SegmentSearch::NextBlock(TermCursor& t, uint32_t lo) {
  if (t.cursor.ShallowSeek(lo)) {
    t.window_bound = BlockBound(t);
    t.block_last = t.cursor.BlockLastDoc();
  } else {
    t.window_bound = 0.0;  // the list has ended before lo
    t.block_last = kNoMoreDocs;
  }
}

inline double SegmentSearch::BlockBound(TermCursor& t) {
  if (t.bounds != nullptr) return (*t.bounds)[t.cursor.shallow_block()];
  return t.cursor.BlockMaxScore(bm25_, t.idf);
}

inline double SegmentSearch::PostingBound(TermCursor& t) {
  const uint32_t tf = t.cursor.tf();
  if (tf >= TermCursor::kTfTable) {
    return bm25_.TermScore(t.idf, tf, t.cursor.MinLength());
  }
  if (t.table_block != t.cursor.blocks_decoded()) FillTables(t);
  return t.tf_bound[tf];
}

inline double SegmentSearch::FloorBound(TermCursor& t, uint32_t floor) {
  return bm25_.TermScore(t.idf, t.cursor.tf(), std::max(floor, MinLength(t)));
}

inline uint32_t SegmentSearch::MinLength(TermCursor& t) {
  const uint32_t tf = t.cursor.tf();
  if (tf >= TermCursor::kTfTable) return t.cursor.MinLengthFor(tf);
  if (t.table_block != t.cursor.blocks_decoded()) FillTables(t);
  return t.tf_min_length[tf];
}

inline void SegmentSearch::FillTables(TermCursor& t) {
  // Once per block: a block holds up to 128 postings, most with a small tf.
  for (uint32_t f = 1; f < TermCursor::kTfTable; ++f) {
    t.tf_min_length[f] = t.cursor.MinLengthFor(f);
    t.tf_bound[f] = bm25_.TermScore(t.idf, f, t.tf_min_length[f]);
  }
  t.table_block = t.cursor.blocks_decoded();
}

}  // namespace skilldb::retrieval::internal

#endif  // SKILLDB_RETRIEVAL_SRC_SEGMENT_SEARCH_H_
