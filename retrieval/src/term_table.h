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

  // ids[i] = the id of terms[i], adding it if new, for i < n in order (ids
  // are dense, in first-seen order). Built for a document's worth of terms:
  // the table is far larger than the caches, so each lookup is a chain of
  // cache misses (slot, entry, term bytes); every term's slot, then entry,
  // then bytes are prefetched before any is needed, so the misses overlap.
  void InternMany(const std::string_view* terms, size_t n, uint32_t* ids) {
    while ((size() + n) * 2 > slots_.size()) Grow();
    hashes_.resize(n);
    const size_t mask = slots_.size() - 1;
    for (size_t i = 0; i < n; ++i) {
      hashes_[i] = Hash(terms[i]);
      __builtin_prefetch(&slots_[hashes_[i] & mask]);
    }
    for (size_t i = 0; i < n; ++i) {
      const uint64_t slot = slots_[hashes_[i] & mask];
      if (slot != kEmpty && (slot >> 32) == (hashes_[i] >> 32)) {
        __builtin_prefetch(&entries_[static_cast<uint32_t>(slot)]);
      }
    }
    for (size_t i = 0; i < n; ++i) {
      const uint64_t slot = slots_[hashes_[i] & mask];
      if (slot != kEmpty && (slot >> 32) == (hashes_[i] >> 32)) {
        __builtin_prefetch(arena_.data() + entries_[static_cast<uint32_t>(slot)].offset);
      }
    }
    for (size_t i = 0; i < n; ++i) ids[i] = InternHashed(terms[i], hashes_[i]);
  }

  size_t size() const { return entries_.size(); }
  std::string_view Term(uint32_t id) const {
    return std::string_view(arena_).substr(entries_[id].offset, entries_[id].length);
  }
  size_t memory_bytes() const {
    return arena_.capacity() + slots_.capacity() * 8 + entries_.capacity() * 8;
  }

 private:
  // A slot: (high 32 bits of the term's hash) << 32 | id. No term has id
  // 0xffffffff (ids stay below the 4G postings a segment can hold), so an
  // all-ones slot is free.
  static constexpr uint64_t kEmpty = ~uint64_t{0};

  struct Entry {
    uint32_t offset;  // of the term's bytes in arena_
    uint32_t length;
  };

  // REQUIRES: room for one more term at load <= 1/2; h == Hash(term).
  uint32_t InternHashed(std::string_view term, uint64_t h) {
    const uint64_t tag = h >> 32;
    const size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      const uint64_t slot = slots_[i];
      if (slot == kEmpty) {
        const auto id = static_cast<uint32_t>(entries_.size());
        slots_[i] = (tag << 32) | id;
        entries_.push_back({static_cast<uint32_t>(arena_.size()),
                            static_cast<uint32_t>(term.size())});
        arena_.append(term);
        return id;
      }
      // The tag (high hash bits) rules out nearly every other term without
      // touching the term's bytes.
      if ((slot >> 32) == tag) {
        const Entry& e = entries_[static_cast<uint32_t>(slot)];
        if (e.length == term.size() &&
            std::memcmp(arena_.data() + e.offset, term.data(), term.size()) == 0) {
          return static_cast<uint32_t>(slot);
        }
      }
    }
  }

  // 64-bit multiply-xorshift over 8-byte words: terms are short; the low
  // bits pick the slot and the high bits are the tag.
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

  // Doubles the slots (load stays at or below one half). Rehashes from the
  // arena: growth is rare (log2 of the term count), lookups are not.
  void Grow() {
    std::vector<uint64_t> bigger(slots_.size() * 2, kEmpty);
    const size_t mask = bigger.size() - 1;
    for (uint32_t id = 0; id < entries_.size(); ++id) {
      const uint64_t h = Hash(Term(id));
      size_t i = h & mask;
      while (bigger[i] != kEmpty) i = (i + 1) & mask;
      bigger[i] = ((h >> 32) << 32) | id;
    }
    slots_.swap(bigger);
  }

  std::vector<uint64_t> slots_;
  std::vector<Entry> entries_;
  std::string arena_;
  std::vector<uint64_t> hashes_;  // InternMany's scratch
};

}  // namespace skilldb::retrieval::internal

#endif  // SKILLDB_RETRIEVAL_TERM_TABLE_H_
