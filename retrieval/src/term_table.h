// A string -> dense id hash table for index building: open addressing with
// linear probing over an arena of term bytes. Several times faster than
// std::unordered_map<std::string, ...> for the millions of short terms a
// large import produces, and one allocation per growth instead of one per
// term. Internal to the retrieval module; single-threaded.
#ifndef SKILLDB_RETRIEVAL_TERM_TABLE_H_
#define SKILLDB_RETRIEVAL_TERM_TABLE_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace skilldb::retrieval::internal {

class TermTable {
 public:
  TermTable() { slots_.assign(1024, kEmpty); }

  // The id of `term`, adding it if new (ids are dense, in insertion order).
  uint32_t Intern(std::string_view term) {
    if ((size() + 1) * 4 > slots_.size() * 3) Grow();
    const uint64_t h = Hash(term);
    size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      const uint32_t id = slots_[i];
      if (id == kEmpty) {
        slots_[i] = static_cast<uint32_t>(offsets_.size());
        offsets_.push_back(static_cast<uint32_t>(arena_.size()));
        lengths_.push_back(static_cast<uint32_t>(term.size()));
        hashes_.push_back(h);
        arena_.append(term);
        return slots_[i];
      }
      if (hashes_[id] == h && term == Term(id)) return id;
    }
  }

  size_t size() const { return offsets_.size(); }
  std::string_view Term(uint32_t id) const {
    return std::string_view(arena_).substr(offsets_[id], lengths_[id]);
  }
  size_t memory_bytes() const {
    return arena_.capacity() + slots_.capacity() * 4 + offsets_.capacity() * 16;
  }

 private:
  static constexpr uint32_t kEmpty = 0xffffffffu;

  // 64-bit multiply-xorshift over 8-byte words: terms are short, and the
  // table only needs good low bits.
  static uint64_t Hash(std::string_view s) {
    uint64_t h = 0x9e3779b97f4a7c15ull ^ s.size();
    size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) {
      uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
      h ^= h >> 31;
    }
    uint64_t tail = 0;
    std::memcpy(&tail, s.data() + i, s.size() - i);
    h = (h ^ tail) * 0x94d049bb133111ebull;
    return h ^ (h >> 29);
  }

  void Grow() {
    std::vector<uint32_t> bigger(slots_.size() * 2, kEmpty);
    const size_t mask = bigger.size() - 1;
    for (uint32_t id = 0; id < offsets_.size(); ++id) {
      size_t i = hashes_[id] & mask;
      while (bigger[i] != kEmpty) i = (i + 1) & mask;
      bigger[i] = id;
    }
    slots_.swap(bigger);
  }

  std::vector<uint32_t> slots_;
  std::vector<uint32_t> offsets_;
  std::vector<uint32_t> lengths_;
  std::vector<uint64_t> hashes_;
  std::string arena_;
};

}  // namespace skilldb::retrieval::internal

#endif  // SKILLDB_RETRIEVAL_TERM_TABLE_H_
