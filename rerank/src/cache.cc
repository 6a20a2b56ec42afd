#include "skilldb/rerank/cache.h"

#include <algorithm>
#include <exception>
#include <utility>

namespace skilldb::rerank {

// One computation in progress: the callers that join it wait on `done`.
struct RerankCache::Flight {
  std::condition_variable done;
  bool finished = false;  // GUARDED_BY(RerankCache::mu_)
  Judgment judgment;      // GUARDED_BY(RerankCache::mu_), set when finished
};

namespace {

// Length-prefixed fields, so that no two distinct requests share a key
// ("ab" + "c" vs "a" + "bc").
void Append(std::string* key, std::string_view field) {
  *key += std::to_string(field.size());
  *key += ':';
  key->append(field);
}

Judgment WithoutGenerations(const Judgment& j) {
  Judgment out;
  out.status = j.status;
  out.scores = j.scores;
  out.note = j.note;
  return out;
}

// What a kept judgment costs: its key (twice: map and LRU list), scores,
// note and the containers' own overhead.
size_t EntryBytes(const std::string& key, const Judgment& j) {
  return 2 * key.size() + j.scores.size() * sizeof(double) + j.note.size() +
         128;
}

}  // namespace

std::string CacheKey(std::string_view mode, std::string_view model,
                     std::string_view fingerprint, std::string_view query,
                     const std::vector<Hit>& candidates, Version version) {
  std::string key;
  Append(&key, mode);
  Append(&key, model);
  Append(&key, fingerprint);
  Append(&key, query);
  for (const Hit& h : candidates) {
    Append(&key, h.id);
    key += h.revision != 0 ? "r" + std::to_string(h.revision)
                           : "v" + std::to_string(version);
    key += 'f' + std::to_string(h.fields.bits()) + ';';
  }
  return key;
}

RerankCache::RerankCache(const CacheOptions& options)
    : options_{std::max<size_t>(1, options.max_entries), options.max_bytes} {}

RerankCache::Lookup RerankCache::GetOrCompute(
    const std::string& key, const std::function<Judgment()>& compute) {
  std::unique_lock<std::mutex> lock(mu_);
  if (auto it = entries_.find(key); it != entries_.end()) {
    ++stats_.hits;
    lru_.splice(lru_.begin(), lru_, it->second.lru);
    Judgment j;
    j.scores = it->second.scores;
    j.note = it->second.note;
    return {std::move(j), true};
  }
  if (auto it = flights_.find(key); it != flights_.end()) {
    ++stats_.joins;
    std::shared_ptr<Flight> flight = it->second;
    flight->done.wait(lock, [&] { return flight->finished; });
    return {WithoutGenerations(flight->judgment), true};
  }
  ++stats_.misses;
  auto flight = std::make_shared<Flight>();
  flights_.emplace(key, flight);
  lock.unlock();

  // A computation that throws (out of memory) must still release the
  // callers waiting for it.
  Judgment judgment;
  try {
    judgment = compute();
  } catch (const std::exception& e) {
    judgment =
        Judgment{Status::Internal(std::string("reranking threw: ") + e.what()),
                 {},
                 {},
                 ""};
  } catch (...) {
    judgment = Judgment{Status::Internal("reranking threw"), {}, {}, ""};
  }

  lock.lock();
  flight->judgment = WithoutGenerations(judgment);
  flight->finished = true;
  flights_.erase(key);
  if (judgment.status.ok()) Keep(key, judgment);
  lock.unlock();
  flight->done.notify_all();
  return {std::move(judgment), false};
}

void RerankCache::Keep(const std::string& key, const Judgment& judgment) {
  const size_t bytes = EntryBytes(key, judgment);
  if (bytes > options_.max_bytes) return;  // would evict everything
  lru_.push_front(key);
  Entry e{judgment.scores, judgment.note, bytes, lru_.begin()};
  entries_.insert_or_assign(key, std::move(e));
  stats_.bytes += bytes;
  stats_.entries = entries_.size();
  Evict();
}

void RerankCache::Evict() {
  while (!lru_.empty() && (entries_.size() > options_.max_entries ||
                           stats_.bytes > options_.max_bytes)) {
    auto it = entries_.find(lru_.back());
    stats_.bytes -= it->second.bytes;
    entries_.erase(it);
    lru_.pop_back();
    ++stats_.evictions;
  }
  stats_.entries = entries_.size();
}

CacheStats RerankCache::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void RerankCache::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  entries_.clear();
  lru_.clear();
  stats_.bytes = 0;
  stats_.entries = 0;
}

}  // namespace skilldb::rerank
