// Top-k BM25 search over a set of segments, as of a version.
//
// The caller supplies the statistics of the version being queried (N, avgdl
// and each term's idf), the segments, and a way to fetch a term's posting
// list in a segment; the searcher returns exactly the k best live documents
// by (score descending, id ascending). Three algorithms give identical
// results: windowed block-max MaxScore (the default), block-max WAND (both
// skip blocks whose impact bound cannot reach the current k-th score) and
// exhaustive evaluation (scores every match; the oracle in tests).
//
// Filters are extra required posting lists walked during traversal, so a
// filter narrows the candidates before scoring and pruning stays effective.
//
// Search is reentrant; the inputs must not change during a call, except
// SegmentDocs ends, which may advance past the queried version.
#ifndef SKILLDB_RETRIEVAL_SEARCHER_H_
#define SKILLDB_RETRIEVAL_SEARCHER_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/retrieval/bm25.h"
#include "skilldb/retrieval/segment.h"
#include "skilldb/status.h"

namespace skilldb::retrieval {

// The block bounds of one posting list under given statistics (BM25
// parameters, avgdl and the term's idf), kept beside a cached list so that
// the queries under the same statistics (every query at the head between
// two commits, or at one old version) compute them once. Holds the tables
// of the last kWays statistics. Each entry is the block's bound rounded up
// to a float, so it stays an upper bound. Safe for concurrent use.
class BlockBoundCache {
 public:
  static constexpr size_t kWays = 4;
  using Table = std::shared_ptr<const std::vector<float>>;

  // `blocks`: the list's block count (for MaxBytes).
  explicit BlockBoundCache(size_t blocks) : blocks_(blocks) {}

  // The table kept for these statistics, or null.
  Table Find(const Bm25& bm25, double idf) const;
  // Keeps `table` (blocks() entries) for these statistics, replacing the
  // oldest kept one.
  void Put(const Bm25& bm25, double idf, Table table);
  size_t blocks() const { return blocks_; }
  // The most memory the tables can take.
  size_t MaxBytes() const { return kWays * blocks_ * sizeof(float); }

 private:
  struct Entry {
    bool Matches(const Bm25& bm25, double for_idf) const;
    double idf = 0.0, avgdl = 0.0, k1 = 0.0, b = 0.0;
    Table table;
  };
  const size_t blocks_;
  mutable std::mutex mu_;
  Entry entries_[kWays];
  size_t next_ = 0;
};

// Bytes of a posting list kept valid while the Blob lives.
class Blob {
 public:
  virtual ~Blob() = default;
  virtual std::string_view data() const = 0;
  // The bound tables kept with this list, or null if it is not cached.
  virtual BlockBoundCache* bound_cache() const { return nullptr; }
};

// Fetches the posting lists of one segment.
class PostingSource {
 public:
  virtual ~PostingSource() = default;
  // Sets *blob to the posting list of `term`, or to null if the segment has
  // no posting for it. Errors are storage errors.
  virtual Status Get(std::string_view term, std::unique_ptr<Blob>* blob) = 0;
};

struct SegmentInput {
  const SegmentDocs* docs = nullptr;  // not owned
  PostingSource* postings = nullptr;  // not owned
};

enum class SearchAlgorithm { kBlockMaxMaxScore, kBlockMaxWand, kExhaustive };

struct QueryTerm {
  std::string term;
  double idf = 0.0;  // under the queried version's statistics
};

struct SearchRequest {
  // Distinct terms; their order is the order scores are summed in.
  std::vector<QueryTerm> terms;
  // Every document must hold all of these (see FilterTerm).
  std::vector<std::string> filter_terms;
  DocVersion as_of = 0;  // only documents live at this version count
  size_t k = 10;
  SearchAlgorithm algorithm = SearchAlgorithm::kBlockMaxMaxScore;
};

struct ScoredDoc {
  uint32_t docid = 0;
  double score = 0.0;
  std::string_view id;  // points into the segment's SegmentDocs
};

// Work counters, for benchmarks and tests of pruning.
struct SearchStats {
  uint64_t docs_scored = 0;  // full score evaluations
  uint64_t blocks_decoded = 0;
};

// Returns the top `request.k` documents, best first. Ties in score are
// ordered by id ascending. Corruption if a posting list is malformed.
Result<std::vector<ScoredDoc>> Search(const SearchRequest& request,
                                      const Bm25& bm25,
                                      const std::vector<SegmentInput>& segments,
                                      SearchStats* stats = nullptr);

// The number of blocks of `posting_list` (0 if its header is malformed):
// what a BlockBoundCache for it is sized by.
size_t PostingListBlocks(std::string_view posting_list);

}  // namespace skilldb::retrieval

#endif  // SKILLDB_RETRIEVAL_SEARCHER_H_
