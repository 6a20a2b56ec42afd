#include "posting_list.h"

#include <algorithm>
#include <cstring>

namespace skilldb::retrieval::internal {
namespace {

constexpr size_t kSkipEntryBytes = 8;

void PutU32(std::string* out, uint32_t v) {
  char buf[4];
  std::memcpy(buf, &v, 4);
  out->append(buf, 4);
}

uint32_t GetU32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

void PutVarint(std::string* out, uint32_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// Reads a varint of at most 5 bytes; returns null past `end` or malformed.
const uint8_t* GetVarint(const uint8_t* p, const uint8_t* end, uint32_t* v) {
  uint32_t result = 0;
  for (int shift = 0; shift <= 28 && p < end; shift += 7) {
    const uint32_t byte = *p++;
    result |= (byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *v = result;
      return p;
    }
  }
  return nullptr;
}

void PutFrontier(std::string* out, const std::vector<Impact>& frontier) {
  out->push_back(static_cast<char>(frontier.size()));
  for (const Impact& imp : frontier) {
    PutVarint(out, imp.tf);
    PutVarint(out, imp.dl);
  }
}

// Reads a frontier record into `out` (room for kMaxFrontier); null if it
// runs past `end` or is malformed.
const uint8_t* ParseFrontier(const uint8_t* p, const uint8_t* end, Impact* out,
                             uint32_t* count) {
  if (p >= end) return nullptr;
  *count = *p++;
  if (*count > kMaxFrontier) return nullptr;
  for (uint32_t i = 0; i < *count && p != nullptr; ++i) {
    p = GetVarint(p, end, &out[i].tf);
    if (p != nullptr) p = GetVarint(p, end, &out[i].dl);
  }
  return p;
}

// Appends one block: frontier, widths, packed gaps and tfs.
void PutBlock(const Posting* postings, size_t n, uint32_t prev,
              std::string* out) {
  uint32_t gaps[kBlockSize];
  uint32_t tfs[kBlockSize];
  uint32_t max_gap = 0, max_tf = 0;
  std::vector<Impact> impacts;
  impacts.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    gaps[i] = postings[i].docid - prev - 1;
    prev = postings[i].docid;
    tfs[i] = postings[i].tf - 1;
    max_gap = std::max(max_gap, gaps[i]);
    max_tf = std::max(max_tf, tfs[i]);
    impacts.push_back({postings[i].tf, postings[i].dl});
  }
  PutFrontier(out, ImpactFrontier(std::move(impacts)));
  const uint32_t doc_width = BitWidth(max_gap);
  const uint32_t tf_width = BitWidth(max_tf);
  out->push_back(static_cast<char>(doc_width));
  out->push_back(static_cast<char>(tf_width));
  Pack(gaps, n, doc_width, out);
  Pack(tfs, n, tf_width, out);
}

}  // namespace

std::vector<Impact> ImpactFrontier(std::vector<Impact> impacts) {
  // The pairs no other pair dominates (tf at least as high, dl at least as
  // low), by tf descending: walk the tfs from the highest down and keep a
  // tf's smallest dl if it is below every dl kept so far. Term frequencies
  // are small, so the smallest dl per tf comes from one pass over an array
  // indexed by tf; a list with a huge tf falls back to sorting.
  std::vector<Impact> frontier;
  uint32_t max_tf = 0;
  for (const Impact& imp : impacts) max_tf = std::max(max_tf, imp.tf);
  if (max_tf <= 4 * impacts.size() + 1024) {
    constexpr uint32_t kNone = 0xffffffffu;
    std::vector<uint32_t> min_dl(static_cast<size_t>(max_tf) + 1, kNone);
    for (const Impact& imp : impacts)
      min_dl[imp.tf] = std::min(min_dl[imp.tf], imp.dl);
    for (uint32_t tf = max_tf + 1; tf-- > 0;) {
      if (min_dl[tf] == kNone) continue;
      if (frontier.empty() || min_dl[tf] < frontier.back().dl) {
        frontier.push_back({tf, min_dl[tf]});
      }
    }
  } else {
    std::sort(impacts.begin(), impacts.end(), [](Impact a, Impact b) {
      return a.tf != b.tf ? a.tf > b.tf : a.dl < b.dl;
    });
    for (const Impact& imp : impacts) {
      if (frontier.empty() || imp.dl < frontier.back().dl) {
        frontier.push_back(imp);
      }
    }
  }
  // Coarsen: merge the pair of neighbours whose merge loses the least
  // (here simply the first pairs, merged two at a time) until it fits.
  while (frontier.size() > kMaxFrontier) {
    std::vector<Impact> merged;
    for (size_t i = 0; i < frontier.size(); i += 2) {
      if (i + 1 < frontier.size()) {
        merged.push_back({std::max(frontier[i].tf, frontier[i + 1].tf),
                          std::min(frontier[i].dl, frontier[i + 1].dl)});
      } else {
        merged.push_back(frontier[i]);
      }
    }
    frontier = std::move(merged);
  }
  return frontier;
}

double MaxScore(const Bm25& bm25, double idf, const Impact* frontier,
                size_t count) {
  double best = 0.0;
  for (size_t i = 0; i < count; ++i) {
    best = std::max(best, bm25.TermScore(idf, frontier[i].tf, frontier[i].dl));
  }
  return best;
}

std::string EncodePostingList(const std::vector<Posting>& postings) {
  std::string out;
  const size_t n = postings.size();
  PutVarint(&out, static_cast<uint32_t>(n));
  if (n == 0) return out;
  PutVarint(&out, postings[0].docid);
  const uint32_t start_prev = postings[0].docid - 1;
  if (n <= kBlockSize) {
    PutBlock(postings.data(), n, start_prev, &out);
    return out;
  }
  std::vector<Impact> all;
  all.reserve(n);
  for (const Posting& p : postings) all.push_back({p.tf, p.dl});
  PutFrontier(&out, ImpactFrontier(std::move(all)));
  const size_t num_blocks = (n + kBlockSize - 1) / kBlockSize;
  std::string skip;
  std::string data;
  uint32_t prev = start_prev;
  for (size_t block = 0; block < num_blocks; ++block) {
    const size_t begin = block * kBlockSize;
    const size_t count = std::min(kBlockSize, n - begin);
    PutBlock(&postings[begin], count, prev, &data);
    prev = postings[begin + count - 1].docid;
    PutU32(&skip, prev);
    PutU32(&skip, static_cast<uint32_t>(data.size()));
  }
  out += skip;
  out += data;
  return out;
}

Status PostingCursor::Init(std::string_view blob) {
  base_ = reinterpret_cast<const uint8_t*>(blob.data());
  size_ = blob.size();
  const uint8_t* end = base_ + size_;
  doc_ = kNoMoreDocs;
  const uint8_t* p = GetVarint(base_, end, &num_docs_);
  if (p == nullptr || num_docs_ == 0 ||
      (p = GetVarint(p, end, &first_docid_)) == nullptr) {
    return Status::Corruption("posting list header is malformed");
  }
  num_blocks_ =
      static_cast<uint32_t>((num_docs_ + kBlockSize - 1) / kBlockSize);
  Impact frontier[kMaxFrontier];
  uint32_t count = 0;
  const uint8_t* after = ParseFrontier(p, end, frontier, &count);
  if (after == nullptr) {
    return Status::Corruption("posting list frontier is malformed");
  }
  term_frontier_.assign(frontier, frontier + count);
  if (num_blocks_ == 1) {
    // A single block: its frontier is the term's, and no skip table.
    skip_ = nullptr;
    data_ = p;
  } else {
    skip_ = after;
    if (static_cast<size_t>(end - skip_) < kSkipEntryBytes * num_blocks_) {
      return Status::Corruption("posting list skip table is truncated");
    }
    data_ = skip_ + kSkipEntryBytes * num_blocks_;
  }
  data_size_ = static_cast<size_t>(end - data_);
  if (skip_ != nullptr && BlockEnd(num_blocks_ - 1) != data_size_) {
    return Status::Corruption(
        "posting list size does not match its skip table");
  }
  shallow_block_ = 0;
  block_ = 0;
  pos_ = 0;
  count_ = 0;
  single_last_ = kNoMoreDocs;
  bound_block_ = kNoMoreDocs;
  EnterBlock(0);
  if (skip_ == nullptr && !corrupt_ && count_ > 0)
    single_last_ = DocAt(count_ - 1);
  return Status::Ok();
}

uint32_t PostingCursor::SkipLastDoc(uint32_t block) const {
  if (block >= num_blocks_) return kNoMoreDocs;
  return skip_ != nullptr ? GetU32(skip_ + kSkipEntryBytes * block)
                          : single_last_;
}

// Galloping search: most moves are to the next block or two, but block-max
// skipping can jump far ahead in a long list, where a linear walk of the
// skip table would cost more than the blocks it skips.
uint32_t PostingCursor::FirstBlockReaching(uint32_t from,
                                           uint32_t target) const {
  if (from >= num_blocks_ || SkipLastDoc(from) >= target) return from;
  uint32_t lo = from;  // SkipLastDoc(lo) < target
  uint32_t step = 1;
  uint32_t hi = from + 1;
  while (hi < num_blocks_ && SkipLastDoc(hi) < target) {
    lo = hi;
    step *= 2;
    hi = lo + step;
  }
  if (hi > num_blocks_) hi = num_blocks_;
  // Now SkipLastDoc(lo) < target and (hi == num_blocks_ or its last >= target).
  while (hi - lo > 1) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (SkipLastDoc(mid) < target) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return hi;
}

uint32_t PostingCursor::BlockStart(uint32_t block) const {
  return block == 0 ? 0 : BlockEnd(block - 1);
}

uint32_t PostingCursor::BlockEnd(uint32_t block) const {
  return skip_ != nullptr ? GetU32(skip_ + kSkipEntryBytes * block + 4)
                          : static_cast<uint32_t>(data_size_);
}

double PostingCursor::BlockMaxScore(const Bm25& bm25, double idf) const {
  if (bound_block_ != shallow_block_) {
    bound_ = BoundOf(shallow_block_, bm25, idf);
    bound_block_ = shallow_block_;
  }
  return bound_;
}

double PostingCursor::BoundOf(uint32_t block, const Bm25& bm25,
                              double idf) const {
  Impact frontier[kMaxFrontier];
  uint32_t count = 0;
  if (ParseFrontier(data_ + BlockStart(block), data_ + BlockEnd(block),
                    frontier, &count) == nullptr) {
    // Never prunes; decoding the block reports the corruption.
    return std::numeric_limits<double>::infinity();
  }
  return MaxScore(bm25, idf, frontier, count);
}

void PostingCursor::UnpackField(const uint8_t* src, size_t n, uint32_t width,
                                uint32_t* out) const {
  // The unpacker decodes whole blocks of 128 with width-specialized code
  // and reads 8 bytes at a time. A partial block, or one near the end of
  // the blob, is decoded from a zero-padded copy so it can take the same
  // fast path without reading past the blob.
  const size_t bytes = PackedBytes(n, width);
  if (n == kBlockSize && static_cast<size_t>(base_ + size_ - (src + bytes)) >=
                             kDecodePaddingBytes) {
    Unpack(src, n, width, out);
    return;
  }
  alignas(8) uint8_t padded[kBlockSize * 4 + kDecodePaddingBytes];
  std::memset(padded, 0, PackedBytes(kBlockSize, width) + kDecodePaddingBytes);
  std::memcpy(padded, src, bytes);
  Unpack(padded, kBlockSize, width, out);
}

void PostingCursor::DecodeTfs() const {
  UnpackField(tf_src_, count_, tf_width_, tfs_);
  for (uint32_t i = 0; i < count_; ++i) tfs_[i] += 1;
  tfs_ready_ = true;
}

uint32_t PostingCursor::MinLengthFor(uint32_t tf) const {
  // The frontier covers the posting: some pair has tf >= this tf and
  // dl <= this document's length.
  uint32_t dl = std::numeric_limits<uint32_t>::max();
  bool covered = false;
  for (uint32_t i = 0; i < frontier_count_; ++i) {
    if (frontier_[i].tf >= tf) {
      dl = std::min(dl, frontier_[i].dl);
      covered = true;
    }
  }
  return covered ? dl : 0;
}

Status PostingCursor::DecodeBlock(uint32_t block) {
  const size_t start = BlockStart(block);
  const size_t stop = BlockEnd(block);
  if (start >= stop || stop > data_size_)
    return Status::Corruption("block offsets");
  const uint8_t* p = data_ + start;
  const uint8_t* end = data_ + stop;
  p = ParseFrontier(p, end, frontier_, &frontier_count_);
  if (p == nullptr || end - p < 2) return Status::Corruption("block header");
  const size_t n = block + 1 < num_blocks_
                       ? kBlockSize
                       : num_docs_ - static_cast<size_t>(block) * kBlockSize;
  const uint32_t doc_width = p[0];
  const uint32_t tf_width = p[1];
  p += 2;
  const size_t doc_bytes = PackedBytes(n, doc_width);
  const size_t tf_bytes = PackedBytes(n, tf_width);
  if (doc_width > 32 || tf_width > 32 ||
      static_cast<size_t>(end - p) != doc_bytes + tf_bytes) {
    return Status::Corruption("block payload");
  }
  const uint32_t prev = block == 0 ? first_docid_ - 1 : SkipLastDoc(block - 1);
  run_ = doc_width == 0;
  run_first_ = prev + 1;
  if (!run_) {
    UnpackField(p, n, doc_width, docs_);
    uint32_t doc = prev;
    for (size_t i = 0; i < n; ++i) {
      doc += docs_[i] + 1;
      docs_[i] = doc;
    }
  }
  // Term frequencies are unpacked on the first tf() of the block: a list
  // probed at one candidate, or a filter, never needs them.
  tf_src_ = p + doc_bytes;
  tf_width_ = tf_width;
  tfs_ready_ = false;
  count_ = static_cast<uint32_t>(n);
  ++blocks_decoded_;
  return Status::Ok();
}

void PostingCursor::EnterBlock(uint32_t block) {
  block_ = block;
  if (shallow_block_ < block) shallow_block_ = block;
  pos_ = 0;
  if (block < num_blocks_ && !DecodeBlock(block).ok()) corrupt_ = true;
  if (block >= num_blocks_ || corrupt_) {
    // A corrupt block ends the list and the search reports Corruption.
    block_ = num_blocks_;
    count_ = 0;
    doc_ = kNoMoreDocs;
    return;
  }
  doc_ = DocAt(0);
}

void PostingCursor::Next() {
  if (doc_ == kNoMoreDocs) return;
  if (++pos_ < count_) {
    doc_ = DocAt(pos_);
  } else {
    EnterBlock(block_ + 1);
  }
}

void PostingCursor::Advance(uint32_t target) {
  if (doc_ >= target) return;
  if (SkipLastDoc(block_) < target) {
    // Blocks before shallow_block_ end below an earlier shallow target; skip
    // them only if they also end below this one.
    uint32_t block = block_ + 1;
    if (shallow_block_ > block && SkipLastDoc(shallow_block_ - 1) < target) {
      block = shallow_block_;
    }
    block = FirstBlockReaching(block, target);
    EnterBlock(block);
    if (doc_ == kNoMoreDocs) return;
  }
  PositionInBlock(target, pos_);
}

void PostingCursor::PositionInBlock(uint32_t target, uint32_t from) {
  if (run_) {
    pos_ = target > run_first_ ? target - run_first_ : 0;
    doc_ = run_first_ + pos_;
    return;
  }
  // Probes at successive candidates mostly move a few postings: look at the
  // next few first, then binary-search the rest. The block's last docid is
  // >= target, so the search stays inside the block.
  constexpr uint32_t kLinear = 4;
  uint32_t pos = from;
  const uint32_t linear_end = std::min(count_, pos + kLinear);
  while (pos < linear_end && docs_[pos] < target) ++pos;
  if (pos == linear_end && pos < count_) {
    pos = static_cast<uint32_t>(
        std::lower_bound(docs_ + pos, docs_ + count_, target) - docs_);
  }
  pos_ = pos;
  doc_ = docs_[pos_];
}

void PostingCursor::Seek(uint32_t target) {
  if (corrupt_) return;
  // The block that holds the first posting >= target: the decoded one if
  // the block before it ends below target and it reaches target.
  const bool after_previous = block_ == 0 || SkipLastDoc(block_ - 1) < target;
  if (block_ < num_blocks_ && after_previous &&
      SkipLastDoc(block_) >= target) {
    if (doc_ >= target && (pos_ == 0 || DocAt(pos_ - 1) < target)) return;
    PositionInBlock(target, doc_ < target ? pos_ : 0);
    return;
  }
  if (after_previous) {  // at or past the decoded block's end: forwards
    if (block_ < num_blocks_) Advance(target);
    return;
  }
  EnterBlock(FirstBlockReaching(0, target));
  if (doc_ != kNoMoreDocs) PositionInBlock(target, 0);
}

bool PostingCursor::ShallowSeek(uint32_t target) {
  uint32_t from = shallow_block_;
  if (from > 0 && SkipLastDoc(from - 1) >= target) from = 0;
  shallow_block_ = FirstBlockReaching(from, target);
  return shallow_block_ < num_blocks_;
}

bool PostingCursor::ShallowAdvance(uint32_t target) {
  uint32_t block = block_;
  if (shallow_block_ > block && SkipLastDoc(shallow_block_ - 1) < target) {
    block = shallow_block_;
  }
  block = FirstBlockReaching(block, target);
  shallow_block_ = block;
  return block < num_blocks_;
}

}  // namespace skilldb::retrieval::internal
