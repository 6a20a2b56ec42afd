// The posting-list format and its cursor. Internal to the retrieval module.
//
// A posting list holds, for one term in one segment, the documents that
// contain it (global docids, ascending) and the term frequency in each, in
// blocks of 128. Most terms of a real vocabulary occur in a handful of
// documents, so the format keeps per-list overhead to a few bytes:
//
//   varint num_docs, varint first_docid
//   if num_docs > 128 (several blocks):
//     frontier     the term's impact frontier
//     skip table   per block: u32 last_docid, u32 end offset of the block in
//                  the data (little-endian, fixed width for random access)
//   blocks         each: frontier, u8 doc_width, u8 tf_width,
//                  packed (gap - 1) docid gaps, packed (tf - 1)
//
// Gaps are from the previous docid (the previous block's last one, or
// first_docid - 1 for the first block), so a block of consecutive documents
// packs to zero bits per docid. A frontier is u8 count, then count varint
// pairs (tf, dl); a single-block list's block frontier is also its term
// frontier.
//
// An impact frontier is a set of (tf, dl) pairs such that every posting it
// covers has tf <= some pair's tf and dl >= that pair's dl. Because BM25 is
// monotone in tf and dl, max over the pairs of TermScore(tf, dl) bounds the
// score of every covered posting under *any* collection statistics: this is
// what keeps block-max pruning exact for queries as of old versions.
#ifndef SKILLDB_RETRIEVAL_POSTING_LIST_H_
#define SKILLDB_RETRIEVAL_POSTING_LIST_H_

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bitpack.h"
#include "skilldb/retrieval/bm25.h"
#include "skilldb/status.h"

namespace skilldb::retrieval::internal {

inline constexpr uint32_t kNoMoreDocs = std::numeric_limits<uint32_t>::max();
inline constexpr size_t kMaxFrontier = 8;

struct Impact {
  uint32_t tf;
  uint32_t dl;
};

// Builds the Pareto frontier of (tf high, dl low) over `impacts`, then
// coarsens it to at most kMaxFrontier pairs by merging neighbours into
// (max tf, min dl), which still dominates both.
std::vector<Impact> ImpactFrontier(std::vector<Impact> impacts);

// The largest score any covered posting can reach.
double MaxScore(const Bm25& bm25, double idf, const Impact* frontier,
                size_t count);

struct Posting {
  uint32_t docid;
  uint32_t tf;
  uint32_t dl;
};

// Encodes postings (ascending docid, tf >= 1) as one posting list.
std::string EncodePostingList(const std::vector<Posting>& postings);

// Walks one posting list. The blob must outlive the cursor.
class PostingCursor {
 public:
  PostingCursor() = default;

  // Checks the header and skip table; Corruption if they are inconsistent.
  Status Init(std::string_view blob);

  uint32_t num_docs() const { return num_docs_; }
  uint32_t num_blocks() const { return num_blocks_; }
  // The list's last docid (from the skip table; kNoMoreDocs if unknown).
  uint32_t last_doc() const { return SkipLastDoc(num_blocks_ - 1); }
  uint32_t doc() const { return doc_; }
  // REQUIRES: doc() != kNoMoreDocs. A block's term frequencies are
  // unpacked on its first tf().
  uint32_t tf() const { return BlockTfs()[pos_]; }
  // The smallest document length the decoded block's frontier allows for
  // the current posting's tf: a lower bound of its document's length known
  // without reading the document table (0 if the frontier does not cover
  // the tf, which only a corrupt list can cause).
  // REQUIRES: as tf().
  uint32_t MinLength() const { return MinLengthFor(tf()); }
  // The same for a given tf, in the decoded block.
  uint32_t MinLengthFor(uint32_t tf) const;

  void Next();
  // The decoded block, for a caller that walks it by position: its number
  // of postings, the cursor's position in it, and its term frequencies
  // (unpacked on the first call). REQUIRES: doc() != kNoMoreDocs.
  uint32_t block_size() const { return count_; }
  uint32_t position() const { return pos_; }
  const uint32_t* BlockTfs() const {
    if (!tfs_ready_) DecodeTfs();
    return tfs_;
  }
  // The docid at position i of the decoded block. REQUIRES: i < block_size().
  uint32_t DocAt(uint32_t i) const { return run_ ? run_first_ + i : docs_[i]; }
  // Moves to position i of the decoded block. REQUIRES: i < block_size().
  void SetPosition(uint32_t i) {
    pos_ = i;
    doc_ = DocAt(i);
  }
  // Moves to the first posting with docid >= target (or kNoMoreDocs).
  void Advance(uint32_t target);
  // The same in either direction: a target before the current posting moves
  // the cursor back (searches that visit the docid space out of order).
  void Seek(uint32_t target);

  // Moves the block pointer (not the postings) to the block that may hold
  // `target`; returns false if no block does. Then BlockLastDoc and
  // BlockMaxScore describe that block.
  bool ShallowAdvance(uint32_t target);
  // The same in either direction.
  bool ShallowSeek(uint32_t target);
  uint32_t BlockLastDoc() const { return SkipLastDoc(shallow_block_); }
  // The index of that block.
  uint32_t shallow_block() const { return shallow_block_; }
  // The last docid of any block (kNoMoreDocs past the last block).
  uint32_t LastDocOf(uint32_t block) const { return SkipLastDoc(block); }
  // The bound of that block for `bm25` and `idf`. Cached per block: the
  // caller passes the same bm25 and idf for the cursor's whole life.
  double BlockMaxScore(const Bm25& bm25, double idf) const;
  // The bound of any block, uncached, from its frontier record (+infinity
  // if the record is malformed: decoding the block reports that).
  // REQUIRES: block < num_blocks().
  double BoundOf(uint32_t block, const Bm25& bm25, double idf) const;
  const std::vector<Impact>& TermFrontier() const { return term_frontier_; }

  uint64_t blocks_decoded() const { return blocks_decoded_; }
  // True once a malformed block was met (the cursor then reads as ended).
  bool corrupt() const { return corrupt_; }

 private:
  uint32_t SkipLastDoc(uint32_t block) const;
  // The first block at or after `from` whose last docid is >= target
  // (num_blocks_ if none).
  uint32_t FirstBlockReaching(uint32_t from, uint32_t target) const;
  uint32_t BlockStart(uint32_t block) const;  // offset in the data
  uint32_t BlockEnd(uint32_t block) const;
  Status DecodeBlock(uint32_t block);
  // Unpacks `n` values of `width` bits at src (inside the blob) into out.
  void UnpackField(const uint8_t* src, size_t n, uint32_t width,
                   uint32_t* out) const;
  void DecodeTfs() const;
  void EnterBlock(uint32_t block);
  // Moves to the first posting >= target of the decoded block, searching
  // from position `from`. REQUIRES: the block's last docid >= target.
  void PositionInBlock(uint32_t target, uint32_t from);

  const uint8_t* base_ = nullptr;
  size_t size_ = 0;
  uint32_t num_docs_ = 0;
  uint32_t num_blocks_ = 0;
  uint32_t first_docid_ = 0;
  uint32_t single_last_ = 0;       // a single-block list's last docid
  const uint8_t* skip_ = nullptr;  // null for single-block lists
  const uint8_t* data_ = nullptr;
  size_t data_size_ = 0;
  std::vector<Impact> term_frontier_;

  uint32_t block_ = 0;          // decoded block
  uint32_t shallow_block_ = 0;  // block ShallowAdvance points at
  uint32_t count_ = 0;          // postings in the decoded block
  uint32_t pos_ = 0;
  uint32_t doc_ = kNoMoreDocs;
  uint64_t blocks_decoded_ = 0;
  bool corrupt_ = false;
  const uint8_t* tf_src_ = nullptr;  // the decoded block's packed tfs
  uint32_t tf_width_ = 0;
  mutable bool tfs_ready_ = false;
  // A block of consecutive docids (packed to zero bits) is not unpacked:
  // its docs are run_first_, run_first_ + 1, ...
  bool run_ = false;
  uint32_t run_first_ = 0;
  uint32_t frontier_count_ = 0;  // the decoded block's frontier
  Impact frontier_[kMaxFrontier];
  mutable uint32_t bound_block_ = kNoMoreDocs;  // block of bound_
  mutable double bound_ = 0.0;
  uint32_t docs_[kBlockSize];
  mutable uint32_t tfs_[kBlockSize];
};

}  // namespace skilldb::retrieval::internal

#endif  // SKILLDB_RETRIEVAL_POSTING_LIST_H_
