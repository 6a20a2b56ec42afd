#include "segment_search.h"

namespace skilldb::retrieval::internal {
namespace {

// A MaxScore window: docids [lo, hi] and the sum of the terms' block bounds
// there.
struct Window {
  uint32_t lo;
  uint32_t hi;
  double bound;
};

// Windows evaluated first, best bound first (see RunBlockMaxMaxScore).
constexpr size_t kSeedWindows = 16;
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

}  // namespace

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
      [&](uint32_t i) {
        EvaluateWindow(windows[i].lo, windows[i].hi, &order);
      });
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
}  // namespace skilldb::retrieval::internal
