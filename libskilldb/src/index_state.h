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
#include <string>
#include <unordered_map>
#include <vector>

#include "blob_cache.h"
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

// Document frequencies at one version, memoized (the head's are asked for
// by every query). Safe for concurrent use.
class DfCache {
 public:
  DfCache() = default;
  // A copied state starts with an empty cache (entries are cheap to refill).
  DfCache(const DfCache&) {}
  DfCache& operator=(const DfCache&) {
    std::lock_guard<std::mutex> lock(mu_);
    map_.clear();
    return *this;
  }

  bool Lookup(const std::string& term, uint64_t* df) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(term);
    if (it == map_.end()) return false;
    *df = it->second;
    return true;
  }
  void Insert(const std::string& term, uint64_t df) const {
    std::lock_guard<std::mutex> lock(mu_);
    if (map_.size() >= kMaxEntries) map_.clear();  // bounded, simply
    map_.emplace(term, df);
  }

 private:
  static constexpr size_t kMaxEntries = 1 << 20;
  mutable std::mutex mu_;
  mutable std::unordered_map<std::string, uint64_t> map_;
};

// The statistics (commit records) of versions before the head, memoized
// for queries as of them. Safe for concurrent use.
class CommitCache {
 public:
  CommitCache() = default;
  CommitCache(const CommitCache&) {}  // a copied state starts empty
  CommitCache& operator=(const CommitCache&) {
    std::lock_guard<std::mutex> lock(mu_);
    map_.clear();
    return *this;
  }

  bool Lookup(Version version, CommitInfo* commit) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(version);
    if (it == map_.end()) return false;
    *commit = it->second;
    return true;
  }
  void Insert(Version version, const CommitInfo& commit) const {
    std::lock_guard<std::mutex> lock(mu_);
    if (map_.size() >= kMaxEntries) map_.clear();  // bounded, simply
    map_.emplace(version, commit);
  }

 private:
  static constexpr size_t kMaxEntries = 4096;
  mutable std::mutex mu_;
  mutable std::unordered_map<Version, CommitInfo> map_;
};

// Everything a read needs, fixed at one commit.
struct ReadState {
  Version head = 0;
  Version oldest = 0;
  CommitInfo head_commit;       // statistics of the head version
  std::vector<Version> tagged;  // sorted; retained even when < oldest
  DfCache head_dfs;             // dfs at `head`, filled by queries
  // dfs at older versions, by their df-history key (term and version):
  // the history of a past version never changes, and queries as of one
  // version ask for the same terms again.
  DfCache past_dfs;
  CommitCache past_commits;     // commit records of older versions
  std::shared_ptr<const rocksdb::Snapshot> snapshot;
  std::vector<std::shared_ptr<Segment>> segments;  // ascending docids

  const rocksdb::Snapshot* snap() const { return snapshot.get(); }

  bool Retained(Version v) const;
  // Whether some retained version lies in [from, to) (to may be
  // kLiveForever): the test for whether anything valid in that interval
  // must be kept.
  bool CoversRetained(Version from, Version to) const;
};

}  // namespace skilldb::internal

#endif  // SKILLDB_LIBSKILLDB_INDEX_STATE_H_
