#include "index_state.h"

#include <algorithm>

namespace skilldb::internal {
namespace {

class PinnedBlob : public retrieval::Blob {
 public:
  std::string_view data() const override {
    return std::string_view(slice.data(), slice.size());
  }
  rocksdb::PinnableSlice slice;
};

}  // namespace

std::string EncodeManifest(const std::vector<SegmentMeta>& segments) {
  std::string out;
  PutBe32(&out, static_cast<uint32_t>(segments.size()));
  for (const SegmentMeta& s : segments) {
    PutBe32(&out, s.id);
    PutBe32(&out, s.base);
    PutBe32(&out, s.count);
  }
  return out;
}

Result<std::vector<SegmentMeta>> DecodeManifest(std::string_view value) {
  if (value.size() < 4) return Status::Corruption("manifest too short");
  const uint32_t n = GetBe32(value.data());
  if (value.size() != 4 + 12 * static_cast<size_t>(n)) {
    return Status::Corruption("manifest size does not match its count");
  }
  std::vector<SegmentMeta> out(n);
  for (uint32_t i = 0; i < n; ++i) {
    const char* p = value.data() + 4 + 12 * static_cast<size_t>(i);
    out[i] = {GetBe32(p), GetBe32(p + 4), GetBe32(p + 8)};
    if (i > 0 && out[i].base != out[i - 1].base + out[i - 1].count) {
      return Status::Corruption("manifest segments are not contiguous");
    }
  }
  return out;
}

Segment::Segment(SegmentMeta meta, std::unique_ptr<retrieval::SegmentDocs> docs)
    : meta_(meta), docs_(std::move(docs)) {
  loaded_.store(docs_.get(), std::memory_order_release);
}

Result<const retrieval::SegmentDocs*> Segment::Docs(const Storage& storage) {
  if (auto* docs = loaded_.load(std::memory_order_acquire)) return docs;
  std::lock_guard<std::mutex> lock(mu_);
  if (docs_) return docs_.get();
  // Read the latest state, not a snapshot: ends written after the reader's
  // snapshot are only ever later than its version, so they do not change
  // what it sees, and the writer's ApplyEnd (which takes mu_ after its write)
  // cannot slip between this read and the publication below.
  SKILLDB_ASSIGN_OR_RETURN(auto table, storage.Get(kDocTables, Be32(meta_.id)));
  if (!table) {
    return Status::Corruption("doc table of segment " +
                              std::to_string(meta_.id) + " is missing");
  }
  SKILLDB_ASSIGN_OR_RETURN(auto docs, retrieval::SegmentDocs::Decode(*table));
  if (docs->base() != meta_.base || docs->count() != meta_.count) {
    return Status::Corruption("doc table of segment " +
                              std::to_string(meta_.id) +
                              " does not match the manifest");
  }
  auto it = storage.NewIterator(kEnds);
  for (it->Seek(Be32(meta_.base)); it->Valid(); it->Next()) {
    if (it->key().size() != 4 || it->value().size() != 8) {
      return Status::Corruption("malformed end entry");
    }
    const uint32_t docid = GetBe32(it->key().data());
    if (docid >= meta_.base + meta_.count) break;
    if (!docs->dropped(docid)) docs->SetEnd(docid, GetBe64(it->value().data()));
  }
  if (!it->status().ok()) return FromRocks(it->status(), "reading ends");
  docs_ = std::move(docs);
  loaded_.store(docs_.get(), std::memory_order_release);
  return docs_.get();
}

void Segment::ApplyEnd(uint32_t docid, Version end) {
  std::lock_guard<std::mutex> lock(mu_);
  if (docs_ && !docs_->dropped(docid)) docs_->SetEnd(docid, end);
}

bool ReadState::Retained(Version v) const {
  return (v >= oldest && v <= head) ||
         std::binary_search(tagged.begin(), tagged.end(), v);
}

bool ReadState::CoversRetained(Version from, Version to) const {
  if (to > oldest && std::max(from, oldest) < to &&
      std::max(from, oldest) <= head) {
    return true;
  }
  auto it = std::lower_bound(tagged.begin(), tagged.end(), from);
  return it != tagged.end() && *it < to;
}

namespace {

class CachedBlob : public retrieval::Blob {
 public:
  explicit CachedBlob(BlobCache::Value value) : value_(std::move(value)) {}
  std::string_view data() const override { return value_->bytes; }
  retrieval::BlockBoundCache* bound_cache() const override {
    return &value_->bounds;
  }

 private:
  BlobCache::Value value_;
};

}  // namespace

Status StoragePostingSource::Get(std::string_view term,
                                 std::unique_ptr<retrieval::Blob>* blob) {
  key_.clear();
  PutBe32(&key_, segment_);
  key_.append(term);
  BlobCache::Value cached;
  if (cache_ != nullptr && cache_->Lookup(key_, &cached)) {
    if (cached) {
      *blob = std::make_unique<CachedBlob>(std::move(cached));
    } else {
      blob->reset();
    }
    return Status::Ok();
  }
  auto pinned = std::make_unique<PinnedBlob>();
  bool found = false;
  SKILLDB_RETURN_IF_ERROR(
      storage_.GetPinned(kPostings, key_, snapshot_, &pinned->slice, &found));
  if (cache_ == nullptr) {
    if (found) {
      *blob = std::move(pinned);
    } else {
      blob->reset();
    }
    return Status::Ok();
  }
  BlobCache::Value value;
  if (found) value = std::make_shared<const CachedList>(std::string(pinned->data()));
  cache_->Insert(key_, value);
  if (value) {
    *blob = std::make_unique<CachedBlob>(std::move(value));
  } else {
    blob->reset();
  }
  return Status::Ok();
}

Result<Version> ResolveVersion(const ReadState& state,
                               std::optional<Version> as_of) {
  if (!as_of) return state.head;
  if (*as_of > state.head) {
    return Status::NotFound("version " + std::to_string(*as_of) +
                            " does not exist (the newest is " +
                            std::to_string(state.head) + ")");
  }
  if (*as_of < state.oldest &&
      !std::binary_search(state.tagged.begin(), state.tagged.end(), *as_of)) {
    return Status::NotFound("version " + std::to_string(*as_of) +
                            " is no longer retained (the oldest is " +
                            std::to_string(state.oldest) + ")");
  }
  return *as_of;
}

}  // namespace skilldb::internal
