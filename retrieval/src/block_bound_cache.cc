// BlockBoundCache (searcher.h): per posting list, the block bounds of the
// last few (idf, avgdl, k1, b) combinations the queries used.
#include "skilldb/retrieval/searcher.h"

namespace skilldb::retrieval {

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

}  // namespace skilldb::retrieval
