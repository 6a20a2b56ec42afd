// The k best (score, id) pairs seen so far. Internal to the retrieval module.
#ifndef SKILLDB_RETRIEVAL_TOP_K_H_
#define SKILLDB_RETRIEVAL_TOP_K_H_

#include <algorithm>
#include <limits>
#include <string_view>
#include <vector>

#include "skilldb/retrieval/searcher.h"
#include "skilldb/retrieval/segment.h"

namespace skilldb::retrieval::internal {

// A candidate: its id is looked up only when needed (a tie, or Take), as
// most documents that enter are pushed out again by better scores and an id
// costs two reads of the document table.
struct Candidate {
  uint32_t docid;
  double score;
  const SegmentDocs* docs;
  std::string_view id() const { return docs->id(docid); }
};

// Better = higher score, then smaller id. Ids are unique among the documents
// live at one version, so this is a total order and the result is unique.
inline bool Better(const Candidate& a, const Candidate& b) {
  if (a.score != b.score) return a.score > b.score;
  if (a.docs == b.docs && a.docs->ids_ascend()) return a.docid < b.docid;
  return a.id() < b.id();
}

class TopK {
 public:
  explicit TopK(size_t k) : k_(k) { heap_.reserve(k); }

  // Scores below this cannot enter; a score equal to it may (on id).
  double threshold() const {
    return heap_.size() < k_ ? 0.0 : heap_.front().score;
  }

  // For a document of `docs` whose score equals threshold(): it can enter
  // only if its docid is below the returned one, as far as docids tell
  // (kNoMoreDocs when they do not: the k-th is in another segment, or ids
  // do not ascend with docids there, or there is room).
  uint32_t TieLimit(const SegmentDocs* docs) const {
    if (heap_.size() < k_ || heap_.front().docs != docs || !docs->ids_ascend())
      return std::numeric_limits<uint32_t>::max();
    return heap_.front().docid;
  }

  // REQUIRES: docs outlives this TopK and the ScoredDocs Take returns.
  void Offer(uint32_t docid, double score, const SegmentDocs* docs) {
    const Candidate doc{docid, score, docs};
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
    std::vector<ScoredDoc> out;
    out.reserve(heap_.size());
    for (const Candidate& c : heap_) out.push_back({c.docid, c.score, c.id()});
    heap_.clear();
    return out;
  }

 private:
  size_t k_;
  std::vector<Candidate> heap_;  // heap with the worst element in front
};

}  // namespace skilldb::retrieval::internal

#endif  // SKILLDB_RETRIEVAL_TOP_K_H_
