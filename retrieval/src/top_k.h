// The k best (score, id) pairs seen so far. Internal to the retrieval module.
#ifndef SKILLDB_RETRIEVAL_TOP_K_H_
#define SKILLDB_RETRIEVAL_TOP_K_H_

#include <algorithm>
#include <vector>

#include "skilldb/retrieval/searcher.h"

namespace skilldb::retrieval::internal {

// Better = higher score, then smaller id. Ids are unique among the documents
// live at one version, so this is a total order and the result is unique.
inline bool Better(const ScoredDoc& a, const ScoredDoc& b) {
  return a.score != b.score ? a.score > b.score : a.id < b.id;
}

class TopK {
 public:
  explicit TopK(size_t k) : k_(k) { heap_.reserve(k); }

  // Scores below this cannot enter; a score equal to it may (on id).
  double threshold() const {
    return heap_.size() < k_ ? 0.0 : heap_.front().score;
  }

  void Offer(uint32_t docid, double score, std::string_view id) {
    ScoredDoc doc{docid, score, id};
    if (heap_.size() < k_) {
      heap_.push_back(doc);
      std::push_heap(heap_.begin(), heap_.end(), Better);
    } else if (k_ > 0 && Better(doc, heap_.front())) {
      std::pop_heap(heap_.begin(), heap_.end(), Better);
      heap_.back() = doc;
      std::push_heap(heap_.begin(), heap_.end(), Better);
    }
  }

  // The collected documents, best first.
  std::vector<ScoredDoc> Take() {
    std::sort(heap_.begin(), heap_.end(), Better);
    return std::move(heap_);
  }

 private:
  size_t k_;
  std::vector<ScoredDoc> heap_;  // heap with the worst element in front
};

}  // namespace skilldb::retrieval::internal

#endif  // SKILLDB_RETRIEVAL_TOP_K_H_
