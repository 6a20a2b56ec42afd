// The merge policy: logarithmic, like Lucene's LogMergePolicy.
//
// Every commit adds a segment; left alone, a library of many small commits
// would make every query walk hundreds of tiny segments. A segment's level is
// floor(log_F(docids)) for the merge factor F; whenever F adjacent segments
// share a level they are merged into one, so there are at most F - 1
// segments per level and O(F log_F N) segments in all, and each document is
// rewritten O(log_F N) times over its life.
//
// Merging keeps docids (segments are adjacent ranges) and drops documents
// dead at every retained version (end <= oldest retained). It writes no new
// version: the library's content is unchanged, only its physical layout.
#include <algorithm>
#include <atomic>
#include <thread>

#include "batch_writer.h"
#include "merger.h"
#include "skilldb/retrieval/segment_merger.h"
#include "staging.h"

namespace skilldb::internal {
namespace {

constexpr uint64_t kBulkMergeDocs = 20000;

int Level(uint32_t count, int factor) {
  int level = 0;
  uint64_t cap = static_cast<uint64_t>(factor);
  while (count >= cap) {
    ++level;
    cap *= static_cast<uint64_t>(factor);
  }
  return level;
}

// Walks one segment's posting lists under a snapshot.
class StorageTermIterator : public retrieval::TermIterator {
 public:
  StorageTermIterator(const Storage& storage, uint32_t segment,
                      const rocksdb::Snapshot* snapshot)
      : it_(storage.NewIterator(kPostings, snapshot)), prefix_(Be32(segment)) {
    it_->Seek(prefix_);
  }
  bool Valid() const override {
    return it_->Valid() && it_->key().starts_with(prefix_);
  }
  std::string_view term() const override {
    return std::string_view(it_->key().data() + 4, it_->key().size() - 4);
  }
  std::string_view posting_list() const override {
    return std::string_view(it_->value().data(), it_->value().size());
  }
  void Next() override { it_->Next(); }
  Status status() const override {
    return FromRocks(it_->status(), "reading postings to merge");
  }

 private:
  std::unique_ptr<rocksdb::Iterator> it_;
  std::string prefix_;
};

}  // namespace

Status Merger::MaybeMerge() {
  const int factor = options_.merge_factor;
  // Each merge removes factor - 1 segments, so this loop ends; the bound is
  // a guard against a policy bug, not a limit in practice.
  for (int round = 0; round < 1000; ++round) {
    auto s = published_.Get();
    const auto& segs = s->segments;
    size_t run_start = 0;
    bool found = false;
    for (size_t i = 0; i < segs.size(); ++i) {
      if (i > 0 && Level(segs[i]->meta().count, factor) !=
                       Level(segs[i - 1]->meta().count, factor)) {
        run_start = i;
      }
      if (i + 1 - run_start >= static_cast<size_t>(factor)) {
        found = true;
        break;
      }
    }
    if (!found) return Status::Ok();
    SKILLDB_RETURN_IF_ERROR(
        MergeRun(*s, run_start, static_cast<size_t>(factor)));
  }
  return Status::Ok();
}

Status Merger::MergeRun(const ReadState& state, size_t first, size_t count) {
  std::vector<const retrieval::SegmentDocs*> inputs;
  for (size_t i = first; i < first + count; ++i) {
    // Loading every input now is what lets old ReadStates keep using these
    // Segment objects after their keys are deleted below.
    SKILLDB_ASSIGN_OR_RETURN(const retrieval::SegmentDocs* docs,
                             state.segments[i]->Docs(storage_));
    inputs.push_back(docs);
  }
  auto owner = [&](uint32_t docid) -> const retrieval::SegmentDocs* {
    for (const auto* docs : inputs) {
      if (docs->Contains(docid)) return docs;
    }
    return nullptr;
  };
  auto keep = [&](uint32_t docid) {
    const auto* docs = owner(docid);
    return docs != nullptr && !docs->dropped(docid) &&
           state.CoversRetained(docs->start(docid), docs->end(docid));
  };
  retrieval::SegmentMerger merger(inputs, keep);
  SKILLDB_RETURN_IF_ERROR(merger.Validate());

  SKILLDB_RETURN_IF_ERROR(
      RecoverAbandonedStaging(storage_, counters_.next_segment));
  const uint32_t id = counters_.next_segment;
  BatchWriter writer(storage_, options_, state.head + 1);
  uint64_t docs_in = 0;
  for (const auto* docs : inputs) docs_in += docs->count();
  // A big merge loads its new segment as table files (invisible until the
  // manifest names it), like a big commit.
  if (docs_in >= kBulkMergeDocs) SKILLDB_RETURN_IF_ERROR(writer.StartBulk());
  const std::string table = merger.EncodeDocTable();
  SKILLDB_ASSIGN_OR_RETURN(auto merged_docs,
                           retrieval::SegmentDocs::Decode(table));
  writer.Put(kDocTables, Be32(id), table);

  std::vector<std::unique_ptr<StorageTermIterator>> iterators;
  std::vector<retrieval::TermIterator*> raw;
  for (size_t i = first; i < first + count; ++i) {
    iterators.push_back(std::make_unique<StorageTermIterator>(
        storage_, state.segments[i]->meta().id, state.snap()));
    raw.push_back(iterators.back().get());
  }
  Status staged = Status::Ok();
  SKILLDB_RETURN_IF_ERROR(
      merger.MergePostings(raw, [&](std::string_view term,
                                    const std::string& list) {
        writer.Put(kPostings, PostingKey(id, term), list);
        if (staged.ok()) staged = writer.MaybeStage();
      }));
  SKILLDB_RETURN_IF_ERROR(staged);

  // Retire the inputs: their keys, and the ends of dropped documents.
  const uint32_t base = inputs.front()->base();
  const uint32_t limit = inputs.back()->limit();
  for (size_t i = first; i < first + count; ++i) {
    const uint32_t old_id = state.segments[i]->meta().id;
    writer.Delete(kDocTables, Be32(old_id));
    writer.DeleteRange(kPostings, Be32(old_id), Be32(old_id + 1));
  }
  for (uint32_t d = base; d < limit; ++d) {
    const auto* docs = owner(d);
    if (merged_docs->dropped(d)) {
      if (!docs->dropped(d)) writer.Delete(kEnds, Be32(d));
    } else if (docs->end(d) != retrieval::kLiveForever) {
      merged_docs->SetEnd(d, docs->end(d));
    }
  }
  std::vector<std::shared_ptr<Segment>> segments;
  std::vector<SegmentMeta> manifest;
  for (size_t i = 0; i < state.segments.size(); ++i) {
    if (i == first) {
      segments.push_back(std::make_shared<Segment>(
          SegmentMeta{id, base, limit - base}, std::move(merged_docs)));
    }
    if (i >= first && i < first + count) continue;
    segments.push_back(state.segments[i]);
  }
  manifest.reserve(manifest.size() + segments.size());
  for (const auto& seg : segments) manifest.push_back(seg->meta());
  writer.Put(kMeta, kManifestKey, EncodeManifest(manifest));
  writer.Put(kMeta, kNextSegmentKey, Be32(id + 1));
  // A merge changes no content: if a crash loses it, the library is as it
  // was before, so there is no need to wait for the log sync.
  SKILLDB_RETURN_IF_ERROR(writer.Finish(/*sync=*/false));
  counters_.next_segment = id + 1;

  auto next = std::make_shared<ReadState>(state);
  next->snapshot = storage_.NewSnapshot();
  next->segments = std::move(segments);
  published_.Publish(std::move(next));
  return Status::Ok();
}

Status Merger::CompactStorage() {
  // The column families are independent: two threads compact them, the
  // three largest (postings, df history, records) first, so that the long
  // compactions overlap. Not exclusive: RocksDB then runs two manual
  // compactions at once, one on each of its two background threads.
  rocksdb::CompactRangeOptions compact;
  compact.bottommost_level_compaction =
      rocksdb::BottommostLevelCompaction::kForce;
  compact.exclusive_manual_compaction = false;
  std::vector<Cf> order = {kPostings, kDfs, kRevisions};
  for (int cf = 0; cf < kNumCfs; ++cf) {
    if (std::find(order.begin(), order.end(), cf) == order.end()) {
      order.push_back(static_cast<Cf>(cf));
    }
  }
  std::atomic<size_t> next{0};
  std::vector<Status> results(order.size(), Status::Ok());
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < order.size();) {
      results[i] =
          FromRocks(storage_.db()->CompactRange(
                        compact, storage_.cf(order[i]), nullptr, nullptr),
                    "compacting");
    }
  };
  std::thread helper(work);
  work();
  helper.join();
  for (const Status& s : results) SKILLDB_RETURN_IF_ERROR(s);
  return Status::Ok();
}

Status Merger::MergeAllAndCompact() {
  {
    auto s = published_.Get();
    if (s->segments.size() > 1) {
      SKILLDB_RETURN_IF_ERROR(MergeRun(*s, 0, s->segments.size()));
    }
  }
  // The state from before the merge is released first: its snapshot would
  // keep the merged-away segments visible, and the compaction could not
  // drop them (the library ended larger than it started).
  return CompactStorage();
}

}  // namespace skilldb::internal
