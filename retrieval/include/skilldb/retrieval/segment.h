// Index segments: an immutable batch of documents with their posting lists.
//
// A document is one revision of a skill. Docids are global, assigned in
// ascending order, and each segment covers a contiguous docid range, so the
// segments of a library partition the docid space and queries walk them one
// after another. A document is live at version V when start <= V < end; the
// end is the one mutable per-document fact (set once, when the revision is
// replaced or deleted).
//
// SegmentBuilder is single-threaded. SegmentDocs is safe for concurrent
// readers alongside one writer calling SetEnd.
#ifndef SKILLDB_RETRIEVAL_SEGMENT_H_
#define SKILLDB_RETRIEVAL_SEGMENT_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "skilldb/status.h"

namespace skilldb::retrieval {

namespace internal {
class TermTable;
}  // namespace internal

using DocVersion = uint64_t;
inline constexpr DocVersion kLiveForever =
    std::numeric_limits<DocVersion>::max();

// Filter terms share the term space but start with this byte, which no
// analyzer emits, so they can never collide with text terms.
inline constexpr char kFilterTermPrefix = '\x1f';

// The length recorded for a dropped document.
inline constexpr uint32_t kDroppedLength = std::numeric_limits<uint32_t>::max();

// Returns the filter term for `field` ("tag", "op", "arch", "lang",
// "status") and `value`, case-folded (ASCII).
std::string FilterTerm(std::string_view field, std::string_view value);

// One document as the builder sees it.
struct DocInput {
  uint32_t docid = 0;
  DocVersion start = 0;  // version that created this revision
  std::string id;        // the skill id (ties are broken on it)
  uint32_t length = 0;   // number of text terms (dl)
  // Distinct text terms with their frequencies.
  std::vector<std::pair<std::string, uint32_t>> term_freqs;
  // Filter terms (see FilterTerm); not counted in length.
  std::vector<std::string> filter_terms;
};

// The per-document facts of one segment, held in memory while queried.
class SegmentDocs {
 public:
  // Decodes a doc table written by SegmentBuilder::EncodeDocTable or
  // SegmentDocs::Encode. Every end starts as kLiveForever. Corruption if the
  // blob is malformed.
  static Result<std::unique_ptr<SegmentDocs>> Decode(std::string_view blob);

  // The doc table (ends excluded: they live elsewhere).
  std::string Encode() const;

  uint32_t base() const { return base_; }
  uint32_t count() const {
    return static_cast<uint32_t>(short_lengths_.size());
  }
  uint32_t limit() const { return base_ + count(); }  // one past the last
  bool Contains(uint32_t docid) const {
    return docid >= base_ && docid < limit();
  }
  DocVersion min_start() const { return min_start_; }
  DocVersion max_start() const { return max_start_; }

  // REQUIRES: Contains(docid) for all of these.
  uint32_t length(uint32_t docid) const {
    const uint16_t v = short_lengths_[docid - base_];
    return v != kLongLength ? v : LongLength(docid - base_);
  }
  // A lower bound of length(docid) read from a one-byte-per-document table
  // (half the exact lengths' memory, so it stays in cache where they do
  // not): lets a searcher bound a score before it reads the exact length.
  uint32_t length_floor(uint32_t docid) const {
    return length_floors_[length_codes_[docid - base_]];
  }
  DocVersion start(uint32_t docid) const {
    return min_start_ + start_deltas_[docid - base_];
  }
  std::string_view id(uint32_t docid) const;
  // True if ids ascend with docids over the documents not dropped (ids
  // assigned in sequence, or time-ordered ids such as ULIDs, inserted in
  // order): then docid order is id order here, and ties need no ids.
  bool ids_ascend() const { return ids_ascend_; }
  // Dropped documents (removed by a merge after garbage collection) keep
  // their docid but are never live.
  bool dropped(uint32_t docid) const {
    return short_lengths_[docid - base_] == kLongLength &&
           LongLength(docid - base_) == kDroppedLength;
  }
  DocVersion end(uint32_t docid) const {
    return ends_[docid - base_].load(std::memory_order_acquire);
  }
  // A version at or past every start and every end set so far (a head
  // query's) reads one bit per document (a bitmap of ended documents, an
  // eighth of a byte each, as Lucene's live-docs bits); any other reads the
  // document's start and end.
  bool LiveAt(uint32_t docid, DocVersion version) const {
    const uint32_t i = docid - base_;
    if (version >= max_start_) {
      // The bit before the newest end: SetEnd raises the newest end first,
      // so a set bit is never seen with an older newest end.
      const bool ended =
          (ended_bits_[i / 64].load(std::memory_order_acquire) >> (i % 64)) & 1;
      if (version >= newest_end_.load(std::memory_order_acquire)) {
        return !ended;
      }
    }
    return start(docid) <= version && end(docid) > version;
  }

  // Records that the document stopped being live at `version` (ends are
  // set once and never moved back).
  // REQUIRES: !dropped(docid), version != kLiveForever.
  void SetEnd(uint32_t docid, DocVersion version);

  size_t memory_bytes() const;

 private:
  static constexpr uint16_t kLongLength = 0xffff;

  SegmentDocs() = default;
  // The length of a document whose short length is kLongLength.
  uint32_t LongLength(uint32_t index) const;
  // Marks document `index` ended (its bit) at `version`.
  void MarkEnded(uint32_t index, DocVersion version);

  // Fills length_codes_ and length_floors_ from the lengths.
  void BuildLengthFloors(const std::vector<uint32_t>& lengths);

  uint32_t base_ = 0;
  DocVersion min_start_ = 0;
  DocVersion max_start_ = 0;

  // min(length, kLongLength) per document; the others' lengths (dropped
  // documents' kDroppedLength included) in long_lengths_, by index.
  std::vector<uint16_t> short_lengths_;
  std::vector<std::pair<uint32_t, uint32_t>> long_lengths_;
  // Code per document; length_floors_[code] <= its length. The codes split
  // the documents into buckets of about equal size by length.
  std::vector<uint8_t> length_codes_;
  uint32_t length_floors_[256] = {};
  std::vector<uint32_t> start_deltas_;
  std::vector<uint32_t> id_offsets_;  // count() + 1 entries
  std::string ids_;
  bool ids_ascend_ = false;
  std::unique_ptr<std::atomic<DocVersion>[]> ends_;
  // Bit i: document i has an end (dropped documents included).
  std::unique_ptr<std::atomic<uint64_t>[]> ended_bits_;
  // The largest end set (0 if none).
  std::atomic<DocVersion> newest_end_{0};
};

// Accumulates documents and encodes them as a doc table plus one posting
// list per term.
class SegmentBuilder {
 public:
  // REQUIRES: docids strictly ascending and contiguous across calls.
  void Add(const DocInput& doc);
  // Keeps `docid`'s slot without a document (see SegmentDocs::dropped).
  void AddDropped(uint32_t docid);

  size_t num_docs() const { return lengths_.size(); }
  bool empty() const { return lengths_.empty(); }
  uint32_t base() const { return base_; }
  // Rough heap footprint, for deciding when to cut a segment.
  size_t memory_bytes() const { return memory_bytes_; }

  std::string EncodeDocTable() const;
  // Calls `sink(term, posting_list, num_docs)` for every term, in byte order
  // of terms. `num_docs` counts the term's documents in this segment.
  void EmitPostingLists(const std::function<void(std::string_view, std::string,
                                                 uint32_t)>& sink) const;

  SegmentBuilder();
  ~SegmentBuilder();
  SegmentBuilder(SegmentBuilder&&) noexcept;
  SegmentBuilder& operator=(SegmentBuilder&&) noexcept;

 private:
  struct TermPosting {
    uint32_t term;
    uint32_t docid;
    uint32_t tf;
  };
  uint32_t base_ = 0;
  std::vector<uint32_t> lengths_;
  std::vector<DocVersion> starts_;
  std::vector<uint32_t> id_offsets_ = {0};
  std::string ids_;
  std::unique_ptr<internal::TermTable> terms_;
  std::vector<TermPosting> postings_;    // in document order
  std::vector<std::string_view> views_;  // Add's scratch: a document's terms
  std::vector<uint32_t> ids_scratch_;    // and their ids
  size_t memory_bytes_ = 0;
};

}  // namespace skilldb::retrieval

#endif  // SKILLDB_RETRIEVAL_SEGMENT_H_
