// Key-value pairs buffered for a bulk load (Storage::IngestSorted): the
// bytes in blocks of a few MiB, 16 bytes of bookkeeping per pair, where a
// vector of string pairs costs two strings (64 bytes and, past 15 bytes,
// a heap allocation each) per pair. A commit of 100k skills buffers about a
// million posting lists. Blocks never move, so growth copies nothing.
#ifndef SKILLDB_LIBSKILLDB_KV_BUFFER_H_
#define SKILLDB_LIBSKILLDB_KV_BUFFER_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace skilldb::internal {

class KvBuffer {
 public:
  static constexpr size_t kBlockBytes = size_t{4} << 20;

  // REQUIRES: key.size() + value.size() < 4 GiB.
  void Add(std::string_view key, std::string_view value) {
    const size_t need = key.size() + value.size();
    if (blocks_.empty() ||
        blocks_.back().capacity() - blocks_.back().size() < need) {
      blocks_.emplace_back();
      blocks_.back().reserve(std::max(kBlockBytes, need));
    }
    std::string& block = blocks_.back();
    refs_.push_back({static_cast<uint32_t>(blocks_.size() - 1),
                     static_cast<uint32_t>(block.size()),
                     static_cast<uint32_t>(key.size()),
                     static_cast<uint32_t>(value.size())});
    block.append(key);
    block.append(value);
  }

  size_t size() const { return refs_.size(); }
  bool empty() const { return refs_.empty(); }
  // Bytes of keys and values.
  uint64_t data_bytes() const {
    uint64_t bytes = 0;
    for (const Ref& r : refs_) bytes += r.key_size + r.value_size;
    return bytes;
  }
  std::string_view key(size_t i) const { return KeyOf(refs_[i]); }
  std::string_view value(size_t i) const {
    const Ref& r = refs_[i];
    return std::string_view(blocks_[r.block])
        .substr(r.offset + r.key_size, r.value_size);
  }

  // Orders the pairs by key (bytewise, as RocksDB's default comparator).
  void SortByKey() {
    std::sort(refs_.begin(), refs_.end(), [this](const Ref& a, const Ref& b) {
      return KeyOf(a) < KeyOf(b);
    });
  }

  // Empties the buffer and returns its memory.
  void Clear() {
    blocks_.clear();
    blocks_.shrink_to_fit();
    refs_.clear();
    refs_.shrink_to_fit();
  }

 private:
  struct Ref {
    uint32_t block;
    uint32_t offset;
    uint32_t key_size;
    uint32_t value_size;
  };
  std::string_view KeyOf(const Ref& r) const {
    return std::string_view(blocks_[r.block]).substr(r.offset, r.key_size);
  }

  std::vector<std::string> blocks_;
  std::vector<Ref> refs_;
};

}  // namespace skilldb::internal

#endif  // SKILLDB_LIBSKILLDB_KV_BUFFER_H_
