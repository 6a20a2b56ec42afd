#include "skilldb/retrieval/searcher.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "posting_list.h"
#include "top_k.h"

namespace skilldb::retrieval {
namespace {

using internal::Impact;
using internal::kNoMoreDocs;
using internal::PostingCursor;

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

// A MaxScore window: docids [lo, hi] and the sum of the terms' block bounds
// there.
struct Window {
  uint32_t lo;
  uint32_t hi;
  double bound;
};

// Windows evaluated first, best bound first (see RunBlockMaxMaxScore).
constexpr size_t kSeedWindows = 16;
// Lists of at most this many postings (8 blocks) are short: their documents
// are scored first (see EvaluateShortLists).
constexpr uint32_t kShortList = 1024;

// The indices of the kSeedWindows largest of bound(0) .. bound(n - 1), by
// bound descending (equal bounds: the lower index first).
template <typename BoundOf>
std::vector<uint32_t> BestIndices(size_t n, BoundOf bound) {
  const size_t seeds = std::min(kSeedWindows, n);
  std::vector<uint32_t> best;
  best.reserve(seeds);
  for (uint32_t i = 0; i < n && seeds > 0; ++i) {
    const double b = bound(i);
    if (best.size() == seeds && b <= bound(best.back())) continue;
    size_t j = best.size();
    if (best.size() < seeds) {
      best.push_back(i);
    } else {
      j = seeds - 1;
    }
    while (j > 0 && bound(best[j - 1]) < b) {
      best[j] = best[j - 1];
      --j;
    }
    best[j] = i;
  }
  return best;
}

// Calls evaluate(i) for each i in [0, n) whose bound(i) may still reach the
// threshold when its turn comes: the kSeedWindows best first (they bring the
// threshold near its final value at once), then the others in index order.
// An index skipped is below the threshold for good (it only rises).
template <typename BoundOf, typename Evaluate>
void BestFirstThenInOrder(size_t n, BoundOf bound, const internal::TopK& top,
                          Evaluate evaluate) {
  std::vector<uint32_t> best = BestIndices(n, bound);
  for (uint32_t i : best) {
    if (!MayReach(bound(i), top.threshold())) break;  // and every later one
    evaluate(i);
  }
  std::sort(best.begin(), best.end());
  size_t next_best = 0;
  for (uint32_t i = 0; i < n; ++i) {
    if (next_best < best.size() && best[next_best] == i) {
      ++next_best;  // a seed: evaluated, or below the threshold for good
      continue;
    }
    if (MayReach(bound(i), top.threshold())) evaluate(i);
  }
}

// Every block's bound, each rounded up to a float (so still a bound).
BlockBoundCache::Table BoundTable(const PostingCursor& cursor,
                                  const Bm25& bm25, double idf) {
  auto table = std::make_shared<std::vector<float>>(cursor.num_blocks());
  for (uint32_t b = 0; b < cursor.num_blocks(); ++b) {
    const double bound = cursor.BoundOf(b, bm25, idf);
    float f = static_cast<float>(bound);
    if (f < bound) f = std::nextafter(f, std::numeric_limits<float>::infinity());
    (*table)[b] = f;
  }
  return table;
}

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

Result<bool> SegmentSearch::Open(PostingSource* source) {
  terms_.resize(request_.terms.size());
  for (size_t i = 0; i < request_.terms.size(); ++i) {
    TermCursor& t = terms_[i];
    t.order = i;
    t.idf = request_.terms[i].idf;
    SKILLDB_RETURN_IF_ERROR(source->Get(request_.terms[i].term, &t.blob));
    if (t.blob == nullptr) continue;
    SKILLDB_RETURN_IF_ERROR(t.cursor.Init(t.blob->data()));
    const auto& frontier = t.cursor.TermFrontier();
    t.max_score =
        internal::MaxScore(bm25_, t.idf, frontier.data(), frontier.size());
    BlockBoundCache* cache = t.blob->bound_cache();
    // Short lists never walk windows (EvaluateShortLists).
    if (cache != nullptr && t.cursor.num_docs() > kShortList &&
        cache->blocks() == t.cursor.num_blocks()) {
      t.bounds = cache->Find(bm25_, t.idf);
      if (t.bounds == nullptr) {
        t.bounds = BoundTable(t.cursor, bm25_, t.idf);
        cache->Put(bm25_, t.idf, t.bounds);
      }
    }
  }
  std::erase_if(terms_, [](const TermCursor& t) { return t.blob == nullptr; });
  if (terms_.empty()) return false;
  for (const std::string& term : request_.filter_terms) {
    std::unique_ptr<Blob> blob;
    SKILLDB_RETURN_IF_ERROR(source->Get(term, &blob));
    if (blob == nullptr) return false;  // a required filter matches nothing
    PostingCursor filter;
    SKILLDB_RETURN_IF_ERROR(filter.Init(blob->data()));
    // A list holding every docid of the segment filters nothing (the
    // common case of the default "visible" filter): leave it out. Docids
    // strictly ascend, so count, first and last decide it.
    if (filter.num_docs() == docs_.count() && filter.doc() == docs_.base() &&
        filter.last_doc() == docs_.limit() - 1) {
      continue;
    }
    filters_.push_back(std::move(filter));
    filter_blobs_.push_back(std::move(blob));
  }
  for (TermCursor& t : terms_) by_doc_.push_back(&t);
  return true;
}

uint32_t SegmentSearch::AlignFilters(uint32_t target) {
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
void SegmentSearch::Evaluate(uint32_t doc, bool prune) {
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

void SegmentSearch::Score(uint32_t doc, double threshold, bool prune) {
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

void SegmentSearch::SortByDoc() {
  InsertionSort(&by_doc_, [](const TermCursor* a, const TermCursor* b) {
    return a->cursor.doc() < b->cursor.doc();
  });
}

void SegmentSearch::NextBlock(TermCursor& t, uint32_t lo) {
  if (t.cursor.ShallowSeek(lo)) {
    t.window_bound = BlockBound(t);
    t.block_last = t.cursor.BlockLastDoc();
  } else {
    t.window_bound = 0.0;  // the list has ended before lo
    t.block_last = kNoMoreDocs;
  }
}

double SegmentSearch::BlockBound(TermCursor& t) {
  if (t.bounds != nullptr) return (*t.bounds)[t.cursor.shallow_block()];
  return t.cursor.BlockMaxScore(bm25_, t.idf);
}

double SegmentSearch::PostingBound(TermCursor& t) {
  const uint32_t tf = t.cursor.tf();
  if (tf >= TermCursor::kTfTable) {
    return bm25_.TermScore(t.idf, tf, t.cursor.MinLength());
  }
  if (t.table_block != t.cursor.blocks_decoded()) FillTables(t);
  return t.tf_bound[tf];
}

double SegmentSearch::FloorBound(TermCursor& t, uint32_t floor) {
  return bm25_.TermScore(t.idf, t.cursor.tf(), std::max(floor, MinLength(t)));
}

uint32_t SegmentSearch::MinLength(TermCursor& t) {
  const uint32_t tf = t.cursor.tf();
  if (tf >= TermCursor::kTfTable) return t.cursor.MinLengthFor(tf);
  if (t.table_block != t.cursor.blocks_decoded()) FillTables(t);
  return t.tf_min_length[tf];
}

void SegmentSearch::FillTables(TermCursor& t) {
  // Once per block: a block holds up to 128 postings, most with a small tf.
  for (uint32_t f = 1; f < TermCursor::kTfTable; ++f) {
    t.tf_min_length[f] = t.cursor.MinLengthFor(f);
    t.tf_bound[f] = bm25_.TermScore(t.idf, f, t.tf_min_length[f]);
  }
  t.table_block = t.cursor.blocks_decoded();
}

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

// Block-max MaxScore over windows (after Turtle and Flood's MaxScore, with
// block bounds deciding per window as in Lucene's MaxScoreBulkScorer and
// Mallia et al.'s block-max variants). Short lists go first (see
// EvaluateShortLists); then the docid space is cut into windows inside
// which every remaining term's bound is constant: a window ends at the
// first block end among the terms. A first pass lists the windows with
// their summed block bounds; the kSeedWindows best are evaluated first,
// which brings the threshold near its final value at once (a docid-order
// walk raises it slowly, evaluating every window that reaches the threshold
// of its time); then the rest in docid order, each skipped if its bound
// cannot reach the threshold. Any order is exact: a window is skipped only
// when no document in it can enter, and the threshold only rises.
void SegmentSearch::RunBlockMaxMaxScore() {
  EvaluateShortLists();
  double total_max = 0.0;
  for (const TermCursor& t : terms_) total_max += t.max_score;
  if (!MayReach(total_max, top_->threshold())) return;
  if (terms_.size() == 1 && terms_[0].bounds != nullptr) {
    RunOneList(terms_[0]);
    return;
  }
  // Reused across calls on a thread: a query over frequent terms lists
  // thousands of windows.
  thread_local std::vector<Window> windows;
  windows.clear();
  const double start_threshold = top_->threshold();
  uint32_t lo = docs_.base();
  for (TermCursor& t : terms_) NextBlock(t, lo);
  while (true) {
    uint32_t hi = kNoMoreDocs;
    double total = 0.0;
    for (TermCursor& t : terms_) {
      if (t.block_last < lo) NextBlock(t, lo);
      hi = std::min(hi, t.block_last);
      total += t.window_bound;
    }
    if (hi == kNoMoreDocs) break;  // every list has ended
    if (MayReach(total, start_threshold)) windows.push_back({lo, hi, total});
    if (hi == kNoMoreDocs - 1) break;
    lo = hi + 1;
  }
  std::vector<TermCursor*> order(terms_.size());
  for (size_t i = 0; i < terms_.size(); ++i) order[i] = &terms_[i];
  BestFirstThenInOrder(
      windows.size(), [](uint32_t i) { return windows[i].bound; }, *top_,
      [&](uint32_t i) { EvaluateWindow(windows[i].lo, windows[i].hi, &order); });
}

// A query that pairs rare terms with frequent ones mostly takes its top
// documents from the rare terms' few postings, but a docid-order walk meets
// them spread over the whole docid space, so the threshold stays below the
// frequent terms' bounds for most of the walk and their postings are all
// candidates. Scoring the short lists' documents first (each with every
// term, in docid order) sets the threshold from them; the MaxScore pass then
// runs over the long lists alone, where a document holding a short-list
// term is already done (done_ keeps it from being offered twice, with a
// score missing that term) and any other document's score has no
// short-list part.
void SegmentSearch::EvaluateShortLists() {
  std::vector<TermCursor*> shorts, longs;
  for (TermCursor& t : terms_) {
    (t.cursor.num_docs() <= kShortList ? shorts : longs).push_back(&t);
  }
  if (shorts.empty() || longs.empty()) return;
  while (true) {
    uint32_t doc = kNoMoreDocs;
    for (TermCursor* t : shorts) doc = std::min(doc, t->cursor.doc());
    if (doc == kNoMoreDocs) break;
    EvaluateShortDoc(doc, shorts, longs);
    done_.push_back(doc);
    for (TermCursor* t : shorts) {
      if (t->cursor.doc() == doc) t->cursor.Next();
    }
  }
  by_doc_.clear();  // points into terms_
  std::erase_if(terms_, [](const TermCursor& t) {
    return t.cursor.num_docs() <= kShortList;
  });
}

// Cheapest bound first: the short lists' postings with the long lists'
// block bounds, then the same with the length floor, then each long list
// probed (a probe may decode a block), then the exact score.
void SegmentSearch::EvaluateShortDoc(uint32_t doc,
                                     const std::vector<TermCursor*>& shorts,
                                     const std::vector<TermCursor*>& longs) {
  const double threshold = top_->threshold();
  double long_bound = 0.0;
  for (TermCursor* t : longs) {
    t->window_bound = t->cursor.ShallowAdvance(doc) ? BlockBound(*t) : 0.0;
    long_bound += t->window_bound;
  }
  uint32_t floor = 0;
  if (threshold > 0.0) {
    double bound = long_bound;
    for (TermCursor* t : shorts) {
      if (t->cursor.doc() == doc) bound += PostingBound(*t);
    }
    if (!MayReach(bound, threshold)) return;
    floor = docs_.length_floor(doc);
    bound = long_bound;
    for (TermCursor* t : shorts) {
      if (t->cursor.doc() == doc) bound += FloorBound(*t, floor);
    }
    if (!MayReach(bound, threshold)) return;
    for (TermCursor* t : longs) {
      bound -= t->window_bound;
      t->cursor.Advance(doc);
      if (t->cursor.doc() == doc) bound += FloorBound(*t, floor);
      if (!MayReach(bound, threshold)) return;
    }
  }
  if (AlignFilters(doc) != doc) return;
  for (TermCursor* t : longs) t->cursor.Advance(doc);
  Score(doc, threshold, /*prune=*/false);
}

// RunBlockMaxMaxScore with one list whose block bounds are at hand: the
// windows are its blocks, and the table is the window list.
void SegmentSearch::RunOneList(TermCursor& t) {
  const std::vector<float>& bounds = *t.bounds;
  std::vector<TermCursor*> order = {&t};
  const auto evaluate = [&](uint32_t b) {
    if (filters_.empty()) {
      EvaluateBlock(t, b);
    } else {
      EvaluateWindow(FirstDocOf(t, b), t.cursor.LastDocOf(b), &order);
    }
  };
  BestFirstThenInOrder(
      bounds.size(), [&](uint32_t b) { return bounds[b]; }, *top_, evaluate);
}

// With one list and no filter, a candidate is a posting whose own bound
// may reach the threshold: the block's tfs are scanned in place, and only
// those postings move the cursor and are scored. One term's score is one
// TermScore, so its bound (the same function at a length no greater) is
// never below it, with no rounding margin: a bound below the threshold
// cannot enter, and a bound equal to it only as a tie won on id, which in a
// segment whose ids ascend with docids needs a docid below the k-th's.
void SegmentSearch::EvaluateBlock(TermCursor& t, uint32_t block) {
  t.cursor.Seek(FirstDocOf(t, block));
  if (t.cursor.doc() == kNoMoreDocs) return;  // a corrupt block
  if (t.table_block != t.cursor.blocks_decoded()) FillTables(t);
  const uint32_t* tfs = t.cursor.BlockTfs();
  const uint32_t n = t.cursor.block_size();
  double threshold = top_->threshold();
  uint32_t tie_limit = top_->TieLimit(&docs_);
  for (uint32_t i = t.cursor.position(); i < n; ++i) {
    const uint32_t tf = tfs[i];
    if (threshold > 0.0) {
      const double bound =
          tf < TermCursor::kTfTable
              ? t.tf_bound[tf]
              : bm25_.TermScore(t.idf, tf, t.cursor.MinLengthFor(tf));
      if (bound < threshold) continue;
      if (bound == threshold && t.cursor.DocAt(i) >= tie_limit) continue;
    }
    t.cursor.SetPosition(i);
    Score(t.cursor.doc(), threshold, /*prune=*/true);
    threshold = top_->threshold();
    tie_limit = top_->TieLimit(&docs_);
  }
}

// One window of the MaxScore pass, [lo, hi], inside which each list has one
// block and so one bound. Terms are ordered by that bound and the longest
// prefix whose bounds together cannot reach the threshold is non-essential:
// a document holding only those terms cannot enter, so candidates come from
// the essential lists alone. A candidate is dropped as soon as a bound says
// it cannot enter, cheapest first: its essential postings' bounds (tf at the
// smallest length the block allows) plus the non-essential block bounds,
// then the length floor, then each non-essential list probed in turn from
// the largest bound down, then Score's exact stages.
void SegmentSearch::EvaluateWindow(uint32_t lo, uint32_t hi,
                                   std::vector<TermCursor*>* order_ptr) {
  std::vector<TermCursor*>& order = *order_ptr;
  const size_t n = order.size();
  for (TermCursor& t : terms_) {
    if (t.cursor.ShallowSeek(lo)) {
      t.window_bound = BlockBound(t);
    } else {
      t.window_bound = 0.0;  // the list has ended before lo
    }
  }
  double threshold = top_->threshold();
  // By bound in the window; kept from window to window, so re-sorting it
  // is mostly a pass of insertion sort.
  InsertionSort(&order, [](const TermCursor* a, const TermCursor* b) {
    return a->window_bound < b->window_bound;
  });
  size_t first_essential = 0;
  double non_essential = 0.0;
  while (first_essential < n &&
         !MayReach(non_essential + order[first_essential]->window_bound,
                   threshold)) {
    non_essential += order[first_essential]->window_bound;
    ++first_essential;
  }
  for (size_t i = first_essential; i < n; ++i) order[i]->cursor.Seek(lo);
  while (true) {
    // The next candidate: the smallest essential doc in the window.
    uint32_t doc = kNoMoreDocs;
    for (size_t i = first_essential; i < n; ++i) {
      doc = std::min(doc, order[i]->cursor.doc());
    }
    if (doc > hi) return;
    double bound = non_essential;
    for (size_t i = first_essential; i < n; ++i) {
      TermCursor& t = *order[i];
      if (t.cursor.doc() == doc) bound += PostingBound(t);
    }
    bool may_enter = MayReach(bound, threshold);
    if (may_enter) {
      const uint32_t aligned = AlignFilters(doc);
      if (aligned > hi) return;  // nothing else in the window passes
      if (aligned != doc) {
        // No document before `aligned` passes the filters.
        for (size_t i = first_essential; i < n; ++i) {
          order[i]->cursor.Advance(aligned);
        }
        continue;
      }
    }
    uint32_t floor = 0;  // a lower bound of doc's length, once read
    // With lists to probe, the length-floor stage runs here, before the
    // probes, and Score skips it.
    const bool floored = may_enter && threshold > 0.0 && first_essential > 0;
    if (floored) {
      // The length floor costs one cached byte; a probe may cost a block
      // decode. Tighten the essential bounds with it first.
      floor = docs_.length_floor(doc);
      bound = non_essential;
      for (size_t i = first_essential; i < n; ++i) {
        TermCursor& t = *order[i];
        if (t.cursor.doc() == doc) bound += FloorBound(t, floor);
      }
      may_enter = MayReach(bound, threshold);
    }
    // Probe the non-essential lists, largest bound first, replacing each
    // block bound with the posting's own bound (nothing if absent).
    for (size_t i = first_essential; may_enter && i-- > 0;) {
      TermCursor& t = *order[i];
      bound -= t.window_bound;
      t.cursor.Seek(doc);
      if (t.cursor.doc() == doc) {
        bound += bm25_.TermScore(t.idf, t.cursor.tf(),
                                 std::max(floor, t.cursor.MinLength()));
      }
      may_enter = MayReach(bound, threshold);
    }
    if (may_enter) {
      Score(doc, threshold, /*prune=*/!floored);
      threshold = top_->threshold();
    }
    // Every list's block reaches hi: moving past it would decode a block
    // the window does not need.
    if (doc == hi) return;
    for (size_t i = first_essential; i < n; ++i) {
      if (order[i]->cursor.doc() == doc) order[i]->cursor.Next();
    }
  }
}

Status SegmentSearch::Finish(SearchStats* stats) const {
  for (const TermCursor& t : terms_) {
    if (t.cursor.corrupt())
      return Status::Corruption("malformed posting block");
  }
  for (const PostingCursor& f : filters_) {
    if (f.corrupt()) return Status::Corruption("malformed posting block");
  }
  if (stats != nullptr) {
    stats->docs_scored += docs_scored_;
    for (const TermCursor& t : terms_) {
      stats->blocks_decoded += t.cursor.blocks_decoded();
    }
    for (const PostingCursor& f : filters_) {
      stats->blocks_decoded += f.blocks_decoded();
    }
  }
  return Status::Ok();
}

}  // namespace

bool BlockBoundCache::Entry::Matches(const Bm25& bm25, double for_idf) const {
  return table != nullptr && idf == for_idf && avgdl == bm25.avgdl() &&
         k1 == bm25.params().k1 && b == bm25.params().b;
}

BlockBoundCache::Table BlockBoundCache::Find(const Bm25& bm25,
                                             double idf) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Entry& e : entries_) {
    if (e.Matches(bm25, idf)) return e.table;
  }
  return nullptr;
}

void BlockBoundCache::Put(const Bm25& bm25, double idf, Table table) {
  if (table == nullptr || table->size() != blocks_) return;
  std::lock_guard<std::mutex> lock(mu_);
  for (const Entry& e : entries_) {
    if (e.Matches(bm25, idf)) return;  // another query put it first
  }
  entries_[next_] = {idf, bm25.avgdl(), bm25.params().k1, bm25.params().b,
                     std::move(table)};
  next_ = (next_ + 1) % kWays;
}

size_t PostingListBlocks(std::string_view posting_list) {
  internal::PostingCursor cursor;
  if (!cursor.Init(posting_list).ok()) return 0;
  return cursor.num_blocks();
}

Result<std::vector<ScoredDoc>> Search(const SearchRequest& request,
                                      const Bm25& bm25,
                                      const std::vector<SegmentInput>& segments,
                                      SearchStats* stats) {
  internal::TopK top(request.k);
  if (request.k == 0 || request.terms.empty()) return top.Take();
  for (const SegmentInput& segment : segments) {
    const SegmentDocs& docs = *segment.docs;
    if (docs.count() == 0 || docs.min_start() > request.as_of) continue;
    SegmentSearch search(request, bm25, docs, &top);
    SKILLDB_ASSIGN_OR_RETURN(const bool any, search.Open(segment.postings));
    if (!any) continue;
    switch (request.algorithm) {
      case SearchAlgorithm::kExhaustive:
        search.RunExhaustive();
        break;
      case SearchAlgorithm::kBlockMaxWand:
        search.RunBlockMaxWand();
        break;
      case SearchAlgorithm::kBlockMaxMaxScore:
        search.RunBlockMaxMaxScore();
        break;
    }
    SKILLDB_RETURN_IF_ERROR(search.Finish(stats));
  }
  return top.Take();
}

Result<uint64_t> CountLive(std::string_view posting_list,
                           const SegmentDocs& docs, DocVersion as_of) {
  PostingCursor cursor;
  SKILLDB_RETURN_IF_ERROR(cursor.Init(posting_list));
  uint64_t count = 0;
  for (; cursor.doc() != kNoMoreDocs; cursor.Next()) {
    if (!docs.Contains(cursor.doc())) {
      return Status::Corruption("posting outside its segment's range");
    }
    if (docs.LiveAt(cursor.doc(), as_of)) ++count;
  }
  if (cursor.corrupt()) return Status::Corruption("malformed posting block");
  return count;
}

}  // namespace skilldb::retrieval
