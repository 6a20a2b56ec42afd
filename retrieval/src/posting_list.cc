#include "posting_list.h"

#include <algorithm>
#include <cstring>

namespace skilldb::retrieval::internal {
namespace {

constexpr size_t kHeaderBytes = 16;
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

void PutFrontier(std::string* out, const std::vector<Impact>& frontier) {
  out->push_back(static_cast<char>(frontier.size()));
  for (const Impact& imp : frontier) {
    PutU32(out, imp.tf);
    PutU32(out, imp.dl);
  }
}

}  // namespace

std::vector<Impact> ImpactFrontier(std::vector<Impact> impacts) {
  // Sort by tf descending, dl ascending; keep a pair only if its dl is below
  // every dl kept so far (otherwise a kept pair dominates it).
  std::sort(impacts.begin(), impacts.end(), [](Impact a, Impact b) {
    return a.tf != b.tf ? a.tf > b.tf : a.dl < b.dl;
  });
  std::vector<Impact> frontier;
  for (const Impact& imp : impacts) {
    if (frontier.empty() || imp.dl < frontier.back().dl) {
      frontier.push_back(imp);
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
  const uint32_t num_docs = static_cast<uint32_t>(postings.size());
  const uint32_t num_blocks =
      static_cast<uint32_t>((postings.size() + kBlockSize - 1) / kBlockSize);

  std::vector<Impact> all;
  all.reserve(postings.size());
  for (const Posting& p : postings) all.push_back({p.tf, p.dl});

  std::string out;
  PutU32(&out, num_docs);
  PutU32(&out, num_blocks);
  PutU32(&out, 0);  // skip offset, patched below
  PutU32(&out, 0);  // data offset, patched below
  PutFrontier(&out, ImpactFrontier(std::move(all)));

  const uint32_t skip_offset = static_cast<uint32_t>(out.size());
  std::string skip;
  std::string data;
  uint32_t prev_last = 0;
  uint32_t gaps[kBlockSize];
  uint32_t tfs[kBlockSize];
  for (uint32_t block = 0; block < num_blocks; ++block) {
    const size_t begin = block * kBlockSize;
    const size_t n = std::min(kBlockSize, postings.size() - begin);
    std::vector<Impact> impacts;
    uint32_t max_gap = 0;
    uint32_t max_tf = 0;
    for (size_t i = 0; i < n; ++i) {
      const Posting& p = postings[begin + i];
      gaps[i] = p.docid - (i == 0 ? prev_last : postings[begin + i - 1].docid);
      tfs[i] = p.tf - 1;
      max_gap = std::max(max_gap, gaps[i]);
      max_tf = std::max(max_tf, tfs[i]);
      impacts.push_back({p.tf, p.dl});
    }
    prev_last = postings[begin + n - 1].docid;
    PutU32(&skip, prev_last);
    PutU32(&skip, static_cast<uint32_t>(data.size()));
    PutFrontier(&data, ImpactFrontier(std::move(impacts)));
    const uint32_t doc_width = BitWidth(max_gap);
    const uint32_t tf_width = BitWidth(max_tf);
    data.push_back(static_cast<char>(doc_width));
    data.push_back(static_cast<char>(tf_width));
    Pack(gaps, n, doc_width, &data);
    Pack(tfs, n, tf_width, &data);
  }
  out += skip;
  const uint32_t data_offset = static_cast<uint32_t>(out.size());
  out += data;
  out.append(kDecodePaddingBytes, '\0');
  std::memcpy(out.data() + 8, &skip_offset, 4);
  std::memcpy(out.data() + 12, &data_offset, 4);
  return out;
}

size_t PostingCursor::ReadFrontier(const uint8_t* p, Impact* out) {
  const size_t count = std::min<size_t>(p[0], kMaxFrontier);
  for (size_t i = 0; i < count; ++i) {
    out[i].tf = GetU32(p + 1 + 8 * i);
    out[i].dl = GetU32(p + 5 + 8 * i);
  }
  return count;
}

Status PostingCursor::Init(std::string_view blob) {
  base_ = reinterpret_cast<const uint8_t*>(blob.data());
  size_ = blob.size();
  doc_ = kNoMoreDocs;
  if (size_ < kHeaderBytes + 1 + kDecodePaddingBytes) {
    return Status::Corruption("posting list shorter than its header");
  }
  num_docs_ = GetU32(base_);
  num_blocks_ = GetU32(base_ + 4);
  const uint32_t skip_offset = GetU32(base_ + 8);
  const uint32_t data_offset = GetU32(base_ + 12);
  const size_t frontier_count = base_[kHeaderBytes];
  if (frontier_count > kMaxFrontier ||
      kHeaderBytes + 1 + 8 * frontier_count > skip_offset ||
      static_cast<uint64_t>(skip_offset) +
              static_cast<uint64_t>(num_blocks_) * kSkipEntryBytes !=
          data_offset ||
      data_offset + kDecodePaddingBytes > size_ ||
      num_blocks_ != (num_docs_ + kBlockSize - 1) / kBlockSize) {
    return Status::Corruption("posting list header is inconsistent");
  }
  term_frontier_.resize(frontier_count);
  ReadFrontier(base_ + kHeaderBytes, term_frontier_.data());
  skip_ = base_ + skip_offset;
  data_ = base_ + data_offset;
  shallow_block_ = 0;
  block_ = 0;
  pos_ = 0;
  count_ = 0;
  if (num_blocks_ > 0) EnterBlock(0);
  return Status::Ok();
}

uint32_t PostingCursor::SkipLastDoc(uint32_t block) const {
  return block < num_blocks_ ? GetU32(skip_ + kSkipEntryBytes * block)
                             : kNoMoreDocs;
}

uint32_t PostingCursor::SkipOffset(uint32_t block) const {
  return GetU32(skip_ + kSkipEntryBytes * block + 4);
}

const uint8_t* PostingCursor::BlockFrontierRecord() const {
  return data_ + SkipOffset(shallow_block_);
}

Status PostingCursor::DecodeBlock(uint32_t block) {
  const size_t data_size = size_ - kDecodePaddingBytes -
                           static_cast<size_t>(data_ - base_);
  const size_t offset = SkipOffset(block);
  const size_t n = block + 1 < num_blocks_
                       ? kBlockSize
                       : num_docs_ - static_cast<size_t>(block) * kBlockSize;
  if (offset + 1 > data_size) return Status::Corruption("block offset");
  const uint8_t* p = data_ + offset;
  p += 1 + 8 * static_cast<size_t>(p[0]);
  if (static_cast<size_t>(p + 2 - data_) > data_size) {
    return Status::Corruption("block header");
  }
  const uint32_t doc_width = p[0];
  const uint32_t tf_width = p[1];
  p += 2;
  if (doc_width > 32 || tf_width > 32 ||
      static_cast<size_t>(p - data_) + PackedBytes(n, doc_width) +
              PackedBytes(n, tf_width) >
          data_size) {
    return Status::Corruption("block payload");
  }
  Unpack(p, n, doc_width, docs_);
  p += PackedBytes(n, doc_width);
  Unpack(p, n, tf_width, tfs_);
  uint32_t doc = block == 0 ? 0 : SkipLastDoc(block - 1);
  for (size_t i = 0; i < n; ++i) {
    doc += docs_[i];
    docs_[i] = doc;
    tfs_[i] += 1;
  }
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
  doc_ = docs_[0];
}

void PostingCursor::Next() {
  if (doc_ == kNoMoreDocs) return;
  if (++pos_ < count_) {
    doc_ = docs_[pos_];
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
    while (block < num_blocks_ && SkipLastDoc(block) < target) ++block;
    EnterBlock(block);
    if (doc_ == kNoMoreDocs) return;
  }
  // The target is inside the decoded block.
  while (docs_[pos_] < target) ++pos_;
  doc_ = docs_[pos_];
}

bool PostingCursor::ShallowAdvance(uint32_t target) {
  uint32_t block = block_;
  if (shallow_block_ > block && SkipLastDoc(shallow_block_ - 1) < target) {
    block = shallow_block_;
  }
  while (block < num_blocks_ && SkipLastDoc(block) < target) ++block;
  shallow_block_ = block;
  return block < num_blocks_;
}

}  // namespace skilldb::retrieval::internal
