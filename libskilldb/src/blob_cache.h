// A sharded LRU cache of posting lists: their bytes, and the block-bound
// tables queries keep with them. Internal.
//
// Values are shared (shared_ptr), so an entry evicted while a query still
// reads it stays alive until that query lets go. Safe for concurrent use.
#ifndef SKILLDB_LIBSKILLDB_BLOB_CACHE_H_
#define SKILLDB_LIBSKILLDB_BLOB_CACHE_H_

#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "skilldb/retrieval/searcher.h"

namespace skilldb::internal {

// One cached posting list. The bound tables are filled by queries after
// the list is cached; its charge counts their largest size up front.
struct CachedList {
  explicit CachedList(std::string list)
      : bytes(std::move(list)), bounds(retrieval::PostingListBlocks(bytes)) {}
  std::string bytes;
  mutable retrieval::BlockBoundCache bounds;
};

class BlobCache {
 public:
  using Value = std::shared_ptr<const CachedList>;  // null = known absent

  explicit BlobCache(size_t capacity_bytes)
      : shard_capacity_(capacity_bytes / kShards) {}

  // Looks `key` up; on a hit sets *value (null for a cached absence).
  bool Lookup(std::string_view key, Value* value) {
    Shard& s = ShardOf(key);
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.map.find(key);
    if (it == s.map.end()) return false;
    s.lru.splice(s.lru.begin(), s.lru, it->second);
    *value = it->second->value;
    return true;
  }

  void Insert(std::string_view key, Value value) {
    if (shard_capacity_ == 0) return;
    Shard& s = ShardOf(key);
    const size_t charge = Charge(key, value);
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.map.count(key)) return;
    s.lru.push_front(Entry{std::string(key), std::move(value), charge});
    s.map.emplace(s.lru.front().key, s.lru.begin());
    s.bytes += charge;
    while (s.bytes > shard_capacity_ && s.lru.size() > 1) {
      Entry& victim = s.lru.back();
      s.bytes -= victim.charge;
      s.map.erase(victim.key);
      s.lru.pop_back();
    }
  }

 private:
  static constexpr size_t kShards = 16;
  struct Entry {
    std::string key;
    Value value;
    size_t charge;
  };
  struct Shard {
    std::mutex mu;
    std::list<Entry> lru;  // most recent first
    std::unordered_map<std::string_view, std::list<Entry>::iterator> map;
    size_t bytes = 0;
  };

  static size_t Charge(std::string_view key, const Value& value) {
    return 96 + 2 * key.size() +
           (value ? value->bytes.size() + value->bounds.MaxBytes() : 0);
  }
  Shard& ShardOf(std::string_view key) {
    return shards_[std::hash<std::string_view>()(key) % kShards];
  }

  size_t shard_capacity_;
  Shard shards_[kShards];
};

}  // namespace skilldb::internal

#endif  // SKILLDB_LIBSKILLDB_BLOB_CACHE_H_
