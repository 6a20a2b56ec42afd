// Tags and garbage collection of old history.
//
// Retained versions are [oldest, head] plus every tagged version. A stored
// item valid over an interval of versions (a revision from its version to
// the next revision of the same skill, a df entry likewise, an indexed
// document from start to end) is needed exactly when some retained version
// falls in that interval; Gc deletes the rest. Reads as of a retained
// version land on the same items before and after, so they return exactly
// what they returned before.
#include <algorithm>

#include "batch_writer.h"
#include "retention.h"

namespace skilldb {

namespace internal {

Status Retention::Tag(std::string_view name, Version version) {
  SKILLDB_RETURN_IF_ERROR(ValidateTagName(name));
  if (storage_.read_only())
    return Status::FailedPrecondition("library is open read-only");
  auto s = published_.Get();
  if (version == 0)
    return Status::InvalidArgument(
        "version 0 (the empty library) cannot be tagged");
  SKILLDB_RETURN_IF_ERROR(ResolveVersion(*s, version).status());
  SKILLDB_ASSIGN_OR_RETURN(auto existing, storage_.Get(kTags, name));
  if (existing) {
    return Status::AlreadyExists("tag '" + std::string(name) +
                                 "' already names version " +
                                 std::to_string(GetBe64(existing->data())));
  }
  rocksdb::WriteBatch batch;
  batch.Put(storage_.cf(kTags), rocksdb::Slice(name.data(), name.size()),
            Be64(version));
  SKILLDB_RETURN_IF_ERROR(storage_.Write(&batch, /*sync=*/true));
  auto next = std::make_shared<ReadState>(*s);
  next->snapshot = storage_.NewSnapshot();
  next->tagged.insert(
      std::upper_bound(next->tagged.begin(), next->tagged.end(), version),
      version);
  published_.Publish(std::move(next));
  return Status::Ok();
}

Status Retention::DeleteTag(std::string_view name) {
  SKILLDB_RETURN_IF_ERROR(ValidateTagName(name));
  if (storage_.read_only())
    return Status::FailedPrecondition("library is open read-only");
  auto s = published_.Get();
  SKILLDB_ASSIGN_OR_RETURN(auto existing, storage_.Get(kTags, name));
  if (!existing) return Status::NotFound("no tag '" + std::string(name) + "'");
  rocksdb::WriteBatch batch;
  batch.Delete(storage_.cf(kTags), rocksdb::Slice(name.data(), name.size()));
  SKILLDB_RETURN_IF_ERROR(storage_.Write(&batch, /*sync=*/true));
  auto next = std::make_shared<ReadState>(*s);
  next->snapshot = storage_.NewSnapshot();
  auto it = std::find(next->tagged.begin(), next->tagged.end(),
                      GetBe64(existing->data()));
  if (it != next->tagged.end()) next->tagged.erase(it);
  published_.Publish(std::move(next));
  return Status::Ok();
}

Result<std::vector<TagInfo>> Retention::Tags() const {
  auto s = published_.Get();
  std::vector<TagInfo> out;
  auto it = storage_.NewIterator(kTags, s->snap());
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    out.push_back(TagInfo{it->key().ToString(), GetBe64(it->value().data())});
  }
  SKILLDB_RETURN_IF_ERROR(FromRocks(it->status(), "reading tags"));
  return out;
}

namespace {

// Walks a column family whose keys are `name \0 ~version`, in groups per
// name (newest entry first), and deletes the entries no retained version
// reads. `is_tombstone` marks entries that only matter when an older one is
// kept (revision deletes).
template <typename IsTombstone>
Status DropUnretained(const Storage& storage, Cf cf, const ReadState& gc_state,
                      rocksdb::WriteBatch* batch, uint64_t* dropped,
                      IsTombstone is_tombstone) {
  auto it = storage.NewIterator(cf);
  std::string group;
  struct Entry {
    std::string key;
    Version version;
    bool keep;
    bool tombstone;
  };
  std::vector<Entry> entries;
  auto flush = [&] {
    // entries: newest first; entry i is read for versions [v_i, v_{i-1}).
    for (size_t i = 0; i < entries.size(); ++i) {
      const Version until =
          i == 0 ? retrieval::kLiveForever : entries[i - 1].version;
      entries[i].keep = gc_state.CoversRetained(entries[i].version, until);
    }
    for (size_t i = 0; i < entries.size(); ++i) {
      if (entries[i].keep && entries[i].tombstone) {
        bool older_kept = false;
        for (size_t j = i + 1; j < entries.size(); ++j)
          older_kept |= entries[j].keep;
        entries[i].keep = older_kept;
      }
      if (!entries[i].keep) {
        batch->Delete(storage.cf(cf), entries[i].key);
        ++*dropped;
      }
    }
    entries.clear();
  };
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const rocksdb::Slice key = it->key();
    if (key.size() < 9 || key[key.size() - 9] != '\0') {
      return Status::Corruption("malformed versioned key");
    }
    const std::string name(key.data(), key.size() - 9);
    if (name != group) {
      flush();
      group = name;
    }
    entries.push_back(Entry{key.ToString(),
                            ~GetBe64(key.data() + key.size() - 8), false,
                            is_tombstone(it->value())});
  }
  flush();
  return FromRocks(it->status(), "collecting garbage");
}

}  // namespace

Result<GcReport> Retention::Gc(const GcOptions& options) {
  if (storage_.read_only())
    return Status::FailedPrecondition("library is open read-only");
  if (options.keep_last.has_value() == options.keep_since.has_value()) {
    return Status::InvalidArgument(
        "give exactly one of keep_last and keep_since");
  }
  auto s = published_.Get();
  GcReport report;
  report.old_oldest = s->oldest;
  report.disk_bytes_before = storage_.DiskBytes();
  Version target = 0;
  if (options.keep_last) {
    if (*options.keep_last == 0)
      return Status::InvalidArgument("keep_last must be at least 1");
    target =
        s->head >= *options.keep_last ? s->head - *options.keep_last + 1 : 0;
  } else {
    if (*options.keep_since > s->head) {
      return Status::InvalidArgument(
          "keep_since " + std::to_string(*options.keep_since) +
          " is beyond the newest version " + std::to_string(s->head));
    }
    target = *options.keep_since;
  }
  const Version new_oldest = std::max(target, s->oldest);
  report.new_oldest = new_oldest;
  for (Version t : s->tagged) {
    if (t < new_oldest) report.tagged.push_back(t);
  }
  if (new_oldest == s->oldest) {
    report.disk_bytes_after = report.disk_bytes_before;
    return report;
  }
  ReadState after = *s;
  after.oldest = new_oldest;

  rocksdb::WriteBatch batch;
  SKILLDB_RETURN_IF_ERROR(DropUnretained(
      storage_, kRevisions, after, &batch, &report.revisions_dropped,
      [](const rocksdb::Slice& v) {
        return v.size() > 0 && static_cast<uint8_t>(v[0]) ==
                                   static_cast<uint8_t>(RevisionKind::kDelete);
      }));
  SKILLDB_RETURN_IF_ERROR(
      DropUnretained(storage_, kDfs, after, &batch, &report.df_entries_dropped,
                     [](const rocksdb::Slice&) { return false; }));
  // Commit records of versions no longer retained; change lists of versions
  // at or below the lowest retained one (higher ones still serve Diff
  // between retained versions across a gap).
  const Version lowest = after.tagged.empty()
                             ? new_oldest
                             : std::min(new_oldest, after.tagged.front());
  for (Version v = 1; v < new_oldest; ++v) {
    if (after.Retained(v)) continue;
    batch.Delete(storage_.cf(kCommits), Be64(v));
    ++report.commits_dropped;
  }
  batch.DeleteRange(storage_.cf(kChanges), Be64(1), Be64(lowest + 1));
  batch.Put(storage_.cf(kMeta), std::string(kOldestKey), Be64(new_oldest));
  SKILLDB_RETURN_IF_ERROR(storage_.Write(&batch, /*sync=*/true));

  auto next = std::make_shared<ReadState>(after);
  next->snapshot = storage_.NewSnapshot();
  published_.Publish(next);

  // Rewrite every segment holding documents no retained version sees.
  for (size_t i = 0; i < next->segments.size(); ++i) {
    auto current = published_.Get();
    SKILLDB_ASSIGN_OR_RETURN(const retrieval::SegmentDocs* docs,
                             current->segments[i]->Docs(storage_));
    uint64_t dead = 0;
    for (uint32_t d = docs->base(); d < docs->limit(); ++d) {
      if (!docs->dropped(d) &&
          !current->CoversRetained(docs->start(d), docs->end(d)))
        ++dead;
    }
    if (dead == 0) continue;
    SKILLDB_RETURN_IF_ERROR(merger_.MergeRun(*current, i, 1));
    report.documents_dropped += dead;
  }
  // Reclaim the space now rather than at some later compaction.
  SKILLDB_RETURN_IF_ERROR(merger_.CompactStorage());
  report.disk_bytes_after = storage_.DiskBytes();
  return report;
}

}  // namespace internal
}  // namespace skilldb
