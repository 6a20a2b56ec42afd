// RerankCache: model judgments kept by (query, candidate ids and revisions,
// model, mode and the judge's options), so that the same selection asked
// across a training batch costs one model call.
//
// Concurrent callers asking for the same key while its judgment is being
// computed wait for that one computation instead of starting their own
// (single flight). Only successful judgments are kept; a failed one is
// handed to the callers that waited for it and then forgotten, so the next
// caller tries the model again. Bounded by entries and bytes, least
// recently used first out.
//
// A RerankCache is safe for concurrent use by multiple threads.
#ifndef SKILLDB_RERANK_CACHE_H_
#define SKILLDB_RERANK_CACHE_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "skilldb/library.h"
#include "skilldb/rerank/judge.h"

namespace skilldb::rerank {

struct CacheOptions {
  // Judgments kept at most (>= 1). Default: 4096.
  size_t max_entries = 4096;
  // Bytes of keys and judgments kept at most (approximate). Default: 64 MiB.
  size_t max_bytes = size_t{64} << 20;
};

struct CacheStats {
  uint64_t hits = 0;       // answered from a kept judgment
  uint64_t misses = 0;     // computed by the caller
  uint64_t joins = 0;      // waited for another caller's computation
  uint64_t evictions = 0;  // dropped for the bounds
  size_t entries = 0;      // kept now
  size_t bytes = 0;        // kept now (approximate)
};

// The key of a judgment: the mode, model and judge fingerprint, the query,
// and each candidate's id, revision and filled fields, in order. A
// candidate without a revision (fields carried no record field) is keyed by
// `version`, the library version the candidates come from, instead. Exact
// (no hash), so distinct requests never share an entry.
std::string CacheKey(std::string_view mode, std::string_view model,
                     std::string_view fingerprint, std::string_view query,
                     const std::vector<Hit>& candidates, Version version);

class RerankCache {
 public:
  explicit RerankCache(const CacheOptions& options = CacheOptions());
  RerankCache(const RerankCache&) = delete;
  RerankCache& operator=(const RerankCache&) = delete;

  struct Lookup {
    // For a cached or joined judgment, its generations are empty (the
    // model calls belong to the caller that made them).
    Judgment judgment;
    bool from_cache = false;  // true unless this caller ran `compute`
  };

  // The judgment kept for `key`; else the one another caller is computing
  // for it (waits for it); else runs `compute` on this thread, keeps its
  // result if OK, and returns it. `compute` must not call back into this
  // cache with the same key.
  Lookup GetOrCompute(const std::string& key,
                      const std::function<Judgment()>& compute);

  CacheStats Stats() const;
  void Clear();  // drops every kept judgment (in-flight ones finish)

 private:
  struct Flight;  // one computation in progress
  struct Entry {
    std::vector<double> scores;
    std::string note;
    size_t bytes = 0;
    std::list<std::string>::iterator lru;  // position in lru_
  };
  void Keep(const std::string& key, const Judgment& judgment);  // mu_ held
  void Evict();                                                 // mu_ held

  const CacheOptions options_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry> entries_;  // GUARDED_BY(mu_)
  std::list<std::string> lru_;  // GUARDED_BY(mu_); most recent first
  std::unordered_map<std::string, std::shared_ptr<Flight>>
      flights_;       // GUARDED_BY(mu_)
  CacheStats stats_;  // GUARDED_BY(mu_)
};

}  // namespace skilldb::rerank

#endif  // SKILLDB_RERANK_CACHE_H_
