// The posting-list format and its cursor. Internal to the retrieval module.
//
// A posting list holds, for one term in one segment, the documents that
// contain it (global docids, ascending) and the term frequency in each, in
// blocks of 128. Layout, all integers little-endian:
//
//   header      u32 num_docs, u32 num_blocks, u32 skip_offset, u32 data_offset
//   impacts     u8 count, count x (u32 tf, u32 dl): the term's impact frontier
//   skip table  at skip_offset, num_blocks x (u32 last_docid, u32 block_offset)
//   blocks      at data_offset + block_offset, each:
//                 u8 count, count x (u32 tf, u32 dl)   block impact frontier
//                 u8 doc_width, u8 tf_width
//                 packed docid gaps (the first from the previous block's last
//                 docid, or from 0), packed tf - 1
//   padding     8 zero bytes so decoding may read past the last block
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
  uint32_t doc() const { return doc_; }
  // REQUIRES: doc() != kNoMoreDocs.
  uint32_t tf() const { return tfs_[pos_]; }

  void Next();
  // Moves to the first posting with docid >= target (or kNoMoreDocs).
  void Advance(uint32_t target);

  // Moves the block pointer (not the postings) to the block that may hold
  // `target`; returns false if no block does. Then BlockLastDoc and
  // BlockFrontier describe that block.
  bool ShallowAdvance(uint32_t target);
  uint32_t BlockLastDoc() const { return SkipLastDoc(shallow_block_); }
  // The stored frontier record of that block (read it with ReadFrontier).
  const uint8_t* BlockFrontierRecord() const;
  const std::vector<Impact>& TermFrontier() const { return term_frontier_; }

  // Reads a frontier record (u8 count, then pairs) into `out`, which must
  // have room for kMaxFrontier impacts; returns the count.
  static size_t ReadFrontier(const uint8_t* p, Impact* out);

  uint64_t blocks_decoded() const { return blocks_decoded_; }
  // True once a malformed block was met (the cursor then reads as ended).
  bool corrupt() const { return corrupt_; }

 private:
  uint32_t SkipLastDoc(uint32_t block) const;
  uint32_t SkipOffset(uint32_t block) const;
  Status DecodeBlock(uint32_t block);
  void EnterBlock(uint32_t block);

  const uint8_t* base_ = nullptr;
  size_t size_ = 0;
  uint32_t num_docs_ = 0;
  uint32_t num_blocks_ = 0;
  const uint8_t* skip_ = nullptr;
  const uint8_t* data_ = nullptr;
  std::vector<Impact> term_frontier_;

  uint32_t block_ = 0;          // decoded block
  uint32_t shallow_block_ = 0;  // block ShallowAdvance points at
  uint32_t count_ = 0;          // postings in the decoded block
  uint32_t pos_ = 0;
  uint32_t doc_ = kNoMoreDocs;
  uint64_t blocks_decoded_ = 0;
  bool corrupt_ = false;
  uint32_t docs_[kBlockSize];
  uint32_t tfs_[kBlockSize];
};

}  // namespace skilldb::retrieval::internal

#endif  // SKILLDB_RETRIEVAL_POSTING_LIST_H_
