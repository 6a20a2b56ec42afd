// The in-memory side of the index: segments (doc tables loaded on first
// use) and the immutable read state published after every commit. Internal.
//
// A ReadState is never modified after publication; readers hold it by
// shared_ptr for the duration of a read, so a read sees one version's
// segment list and one RocksDB snapshot. Segment doc tables are shared
// between states; their only mutable part, the per-document end versions,
// changes monotonically under the writer (see Segment::ApplyEnd).
#ifndef SKILLDB_LIBSKILLDB_INDEX_STATE_H_
#define SKILLDB_LIBSKILLDB_INDEX_STATE_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "blob_cache.h"
#include "records.h"
#include "skilldb/library.h"
#include "skilldb/retrieval/searcher.h"
#include "skilldb/retrieval/segment.h"
#include "storage.h"

namespace skilldb::internal {

// One manifest entry.
struct SegmentMeta {
  uint32_t id = 0;
  uint32_t base = 0;   // first docid
  uint32_t count = 0;  // docids [base, base + count)
};

std::string EncodeManifest(const std::vector<SegmentMeta>& segments);
Result<std::vector<SegmentMeta>> DecodeManifest(std::string_view value);

class Segment {
 public:
  explicit Segment(SegmentMeta meta) : meta_(meta) {}
  // A segment whose doc table the writer already holds.
  Segment(SegmentMeta meta, std::unique_ptr<retrieval::SegmentDocs> docs);

  const SegmentMeta& meta() const { return meta_; }

  // The doc table with current end versions, loaded on first use from the
  // latest database state. Thread-safe. The writer loads every segment
  // before a merge retires it, so a segment still reachable from an old
  // ReadState never needs its (by then deleted) keys.
  Result<const retrieval::SegmentDocs*> Docs(const Storage& storage);

  // The writer calls this after the batch ending `docid` is durable. A
  // segment not loaded yet will read the end from storage when it loads.
  void ApplyEnd(uint32_t docid, Version end);

 private:
  const SegmentMeta meta_;
  std::atomic<retrieval::SegmentDocs*> loaded_{nullptr};
  std::mutex mu_;
  std::unique_ptr<retrieval::SegmentDocs> docs_;  // guarded by mu_
};

// Reads one segment's posting lists from storage under a snapshot, through
// the cache (segments are immutable and their ids never reused, so cached
// lists, and cached absences, never go stale).
class StoragePostingSource : public retrieval::PostingSource {
 public:
  StoragePostingSource(const Storage& storage, BlobCache* cache,
                       uint32_t segment, const rocksdb::Snapshot* snapshot)
      : storage_(storage),
        cache_(cache),
        segment_(segment),
        snapshot_(snapshot) {}
  Status Get(std::string_view term,
             std::unique_ptr<retrieval::Blob>* blob) override;

 private:
  const Storage& storage_;
  BlobCache* cache_;  // may be null
  uint32_t segment_;
  const rocksdb::Snapshot* snapshot_;
  std::string key_;
};

// A bounded memo of Key -> Value for one read state (what a state's queries
// ask again and again). A copied state starts empty: entries are cheap to
// refill. Safe for concurrent use.
template <typename Key, typename Value, size_t kMaxEntries>
class MemoMap {
 public:
  MemoMap() = default;
  MemoMap(const MemoMap&) {}
  MemoMap& operator=(const MemoMap&) {
    std::lock_guard<std::mutex> lock(mu_);
    map_.clear();
    return *this;
  }

  bool Lookup(const Key& key, Value* value) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(key);
    if (it == map_.end()) return false;
    *value = it->second;
    return true;
  }
  void Insert(const Key& key, Value value) const {
    std::lock_guard<std::mutex> lock(mu_);
    if (map_.size() >= kMaxEntries) map_.clear();  // bounded, simply
    map_.emplace(key, std::move(value));
  }

 private:
  mutable std::mutex mu_;
  mutable std::unordered_map<Key, Value> map_;
};

// Document frequencies, by term (at the head) or by df-history key.
using DfCache = MemoMap<std::string, uint64_t, size_t{1} << 20>;

// What scoring as of one version needs: its number of skills (for idf) and
// its BM25 context (whose length-normalization table costs a thousand
// divisions to build, so it is built once per version, not per query).
struct VersionStats {
  uint64_t num_skills = 0;
  // Set when the version has skills and a non-zero total length.
  std::optional<retrieval::Bm25> bm25;
};
using StatsCache =
    MemoMap<Version, std::shared_ptr<const VersionStats>, 1024>;

// Everything a read needs, fixed at one commit.
struct ReadState {
  Version head = 0;
  Version oldest = 0;
  CommitInfo head_commit;       // statistics of the head version
  // The head's skills by status and language; unset when its commit record
  // predates the counts (then they are counted from the index).
  std::optional<SkillCounts> head_counts;
  std::vector<Version> tagged;  // sorted; retained even when < oldest
  DfCache head_dfs;             // dfs at `head`, filled by queries
  // dfs at older versions, by their df-history key (term and version):
  // the history of a past version never changes, and queries as of one
  // version ask for the same terms again.
  DfCache past_dfs;
  StatsCache stats;             // scoring contexts, by version
  std::shared_ptr<const rocksdb::Snapshot> snapshot;
  std::vector<std::shared_ptr<Segment>> segments;  // ascending docids

  const rocksdb::Snapshot* snap() const { return snapshot.get(); }

  bool Retained(Version v) const;
  // Whether some retained version lies in [from, to) (to may be
  // kLiveForever): the test for whether anything valid in that interval
  // must be kept.
  bool CoversRetained(Version from, Version to) const;
};

// The version a read as of `as_of` sees in `state` (its head when unset),
// or NotFound naming why: beyond the head, or no longer retained.
Result<Version> ResolveVersion(const ReadState& state,
                               std::optional<Version> as_of);

}  // namespace skilldb::internal

#endif  // SKILLDB_LIBSKILLDB_INDEX_STATE_H_
