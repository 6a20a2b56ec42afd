#include "skilldb/retrieval/segment.h"

#include <algorithm>
#include <cstring>
#include <thread>

#include "doc_table.h"
#include "posting_list.h"
#include "term_table.h"

namespace skilldb::retrieval {
namespace {

constexpr uint32_t kDocTableMagic = 0x31544453;  // "SDT1"
// Segments with fewer postings encode their lists on one thread.
constexpr size_t kParallelEmitPostings = 1 << 16;
constexpr size_t kDocTableHeader = 4 + 4 + 4 + 8 + 8;

template <typename T>
void PutRaw(std::string* out, const T& v) {
  char buf[sizeof(T)];
  std::memcpy(buf, &v, sizeof(T));
  out->append(buf, sizeof(T));
}

template <typename T>
T GetRaw(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T>
void PutArray(std::string* out, const std::vector<T>& v) {
  out->append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

template <typename T>
void GetArray(const char* p, size_t n, std::vector<T>* out) {
  out->resize(n);
  if (n > 0) std::memcpy(out->data(), p, n * sizeof(T));
}

}  // namespace

namespace internal {

std::string EncodeDocTable(uint32_t base, const std::vector<uint32_t>& lengths,
                           const std::vector<DocVersion>& starts,
                           const std::vector<uint32_t>& id_offsets,
                           const std::string& ids) {
  DocVersion min_start = kLiveForever;
  DocVersion max_start = 0;
  for (size_t i = 0; i < starts.size(); ++i) {
    if (lengths[i] == kDroppedLength) continue;
    min_start = std::min(min_start, starts[i]);
    max_start = std::max(max_start, starts[i]);
  }
  if (min_start == kLiveForever) min_start = 0;
  std::vector<uint32_t> deltas(starts.size(), 0);
  for (size_t i = 0; i < starts.size(); ++i) {
    if (lengths[i] != kDroppedLength) {
      deltas[i] = static_cast<uint32_t>(starts[i] - min_start);
    }
  }
  std::string out;
  out.reserve(kDocTableHeader + lengths.size() * 12 + ids.size() + 4);
  PutRaw(&out, kDocTableMagic);
  PutRaw(&out, base);
  PutRaw(&out, static_cast<uint32_t>(lengths.size()));
  PutRaw(&out, min_start);
  PutRaw(&out, max_start);
  PutArray(&out, lengths);
  PutArray(&out, deltas);
  PutArray(&out, id_offsets);
  out += ids;
  return out;
}

}  // namespace internal

std::string FilterTerm(std::string_view field, std::string_view value) {
  std::string term(1, kFilterTermPrefix);
  term.append(field);
  term.push_back('=');
  for (char c : value) {
    term.push_back((c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c);
  }
  return term;
}

Result<std::unique_ptr<SegmentDocs>> SegmentDocs::Decode(
    std::string_view blob) {
  if (blob.size() < kDocTableHeader ||
      GetRaw<uint32_t>(blob.data()) != kDocTableMagic) {
    return Status::Corruption("doc table: bad header");
  }
  const char* p = blob.data() + 4;
  auto docs = std::unique_ptr<SegmentDocs>(new SegmentDocs());
  docs->base_ = GetRaw<uint32_t>(p);
  const uint32_t count = GetRaw<uint32_t>(p + 4);
  docs->min_start_ = GetRaw<DocVersion>(p + 8);
  docs->max_start_ = GetRaw<DocVersion>(p + 16);
  p = blob.data() + kDocTableHeader;
  const size_t arrays = static_cast<size_t>(count) * 12 + 4;
  if (blob.size() - kDocTableHeader < arrays) {
    return Status::Corruption("doc table: truncated arrays");
  }
  std::vector<uint32_t> lengths;
  GetArray(p, count, &lengths);
  GetArray(p + 4 * static_cast<size_t>(count), count, &docs->start_deltas_);
  GetArray(p + 8 * static_cast<size_t>(count), count + 1, &docs->id_offsets_);
  p += arrays;
  const size_t id_bytes = blob.size() - kDocTableHeader - arrays;
  for (uint32_t i = 0; i < count; ++i) {
    if (docs->id_offsets_[i] > docs->id_offsets_[i + 1]) {
      return Status::Corruption("doc table: id offsets not ascending");
    }
  }
  if (docs->id_offsets_.front() != 0 || docs->id_offsets_.back() != id_bytes) {
    return Status::Corruption("doc table: id bytes do not match offsets");
  }
  docs->ids_.assign(p, id_bytes);
  docs->short_lengths_.resize(count);
  for (uint32_t i = 0; i < count; ++i) {
    if (lengths[i] < kLongLength) {
      docs->short_lengths_[i] = static_cast<uint16_t>(lengths[i]);
    } else {
      docs->short_lengths_[i] = kLongLength;
      docs->long_lengths_.emplace_back(i, lengths[i]);
    }
  }
  docs->BuildLengthFloors(lengths);
  docs->ids_ascend_ = true;
  std::string_view previous;
  for (uint32_t i = 0; i < count && docs->ids_ascend_; ++i) {
    if (lengths[i] == kDroppedLength) continue;
    const std::string_view id = docs->id(docs->base_ + i);
    docs->ids_ascend_ = previous.data() == nullptr || previous < id;
    previous = id;
  }
  docs->ends_ = std::make_unique<std::atomic<DocVersion>[]>(count);
  const size_t words = (static_cast<size_t>(count) + 63) / 64;
  docs->ended_bits_ = std::make_unique<std::atomic<uint64_t>[]>(words);
  for (size_t w = 0; w < words; ++w) {
    docs->ended_bits_[w].store(0, std::memory_order_relaxed);
  }
  for (uint32_t i = 0; i < count; ++i) {
    docs->ends_[i].store(kLiveForever, std::memory_order_relaxed);
    // A dropped document is dead at every version: end 0 <= any version.
    if (lengths[i] == kDroppedLength) docs->MarkEnded(i, 0);
  }
  return docs;
}

uint32_t SegmentDocs::LongLength(uint32_t index) const {
  const auto it = std::lower_bound(
      long_lengths_.begin(), long_lengths_.end(), index,
      [](const std::pair<uint32_t, uint32_t>& e, uint32_t i) {
        return e.first < i;
      });
  return it->second;  // every kLongLength entry has one
}

void SegmentDocs::SetEnd(uint32_t docid, DocVersion version) {
  MarkEnded(docid - base_, version);
}

void SegmentDocs::MarkEnded(uint32_t index, DocVersion version) {
  // Order matters to LiveAt, which reads the bit, then the newest end:
  // raise the newest end before the bit shows.
  DocVersion newest = newest_end_.load(std::memory_order_relaxed);
  while (newest < version &&
         !newest_end_.compare_exchange_weak(newest, version,
                                            std::memory_order_release,
                                            std::memory_order_relaxed)) {
  }
  ends_[index].store(version, std::memory_order_release);
  ended_bits_[index / 64].fetch_or(uint64_t{1} << (index % 64),
                                   std::memory_order_release);
}

void SegmentDocs::BuildLengthFloors(const std::vector<uint32_t>& lengths) {
  // Lengths below kExact get buckets of about equal document counts (over
  // distinct lengths, so a bucket's floor is a length that occurs); longer
  // ones (and dropped documents) share the last code, whose floor is kExact.
  constexpr uint32_t kExact = 1u << 16;
  constexpr uint32_t kLastCode = 255;
  std::vector<uint32_t> counts(kExact, 0);
  size_t short_docs = 0;
  for (uint32_t len : lengths) {
    if (len < kExact) {
      ++counts[len];
      ++short_docs;
    }
  }
  const size_t per_code = short_docs / kLastCode + 1;
  std::vector<uint8_t> code_of(kExact, 0);
  uint32_t code = 0;
  size_t in_code = 0;
  bool opened = false;
  for (uint32_t len = 0; len < kExact; ++len) {
    if (counts[len] == 0) continue;
    if (opened && in_code >= per_code && code + 1 < kLastCode) {
      ++code;
      in_code = 0;
      opened = false;
    }
    if (!opened) {
      length_floors_[code] = len;
      opened = true;
    }
    code_of[len] = static_cast<uint8_t>(code);
    in_code += counts[len];
  }
  length_floors_[kLastCode] = kExact;
  length_codes_.resize(lengths.size());
  for (size_t i = 0; i < lengths.size(); ++i) {
    length_codes_[i] = lengths[i] < kExact ? code_of[lengths[i]] : kLastCode;
  }
}

std::string SegmentDocs::Encode() const {
  std::vector<uint32_t> lengths(count());
  std::vector<DocVersion> starts(count());
  for (uint32_t i = 0; i < count(); ++i) {
    lengths[i] = length(base_ + i);
    starts[i] = min_start_ + start_deltas_[i];
  }
  return internal::EncodeDocTable(base_, lengths, starts, id_offsets_, ids_);
}

std::string_view SegmentDocs::id(uint32_t docid) const {
  const uint32_t i = docid - base_;
  return std::string_view(ids_).substr(id_offsets_[i],
                                       id_offsets_[i + 1] - id_offsets_[i]);
}

size_t SegmentDocs::memory_bytes() const {
  return sizeof(*this) + short_lengths_.capacity() * 2 +
         length_codes_.capacity() +
         long_lengths_.capacity() * sizeof(long_lengths_[0]) +
         (static_cast<size_t>(count()) + 63) / 64 * 8 +
         start_deltas_.capacity() * 4 + id_offsets_.capacity() * 4 +
         ids_.capacity() + static_cast<size_t>(count()) * sizeof(DocVersion);
}

SegmentBuilder::SegmentBuilder()
    : terms_(std::make_unique<internal::TermTable>()) {}
SegmentBuilder::~SegmentBuilder() = default;
SegmentBuilder::SegmentBuilder(SegmentBuilder&&) noexcept = default;
SegmentBuilder& SegmentBuilder::operator=(SegmentBuilder&&) noexcept = default;

void SegmentBuilder::Add(const DocInput& doc) {
  if (lengths_.empty()) base_ = doc.docid;
  lengths_.push_back(doc.length);
  starts_.push_back(doc.start);
  ids_ += doc.id;
  id_offsets_.push_back(static_cast<uint32_t>(ids_.size()));
  views_.clear();
  for (const auto& [term, tf] : doc.term_freqs) views_.push_back(term);
  for (const auto& term : doc.filter_terms) views_.push_back(term);
  ids_scratch_.resize(views_.size());
  terms_->InternMany(views_.data(), views_.size(), ids_scratch_.data());
  size_t i = 0;
  for (const auto& [term, tf] : doc.term_freqs) {
    postings_.push_back({ids_scratch_[i++], doc.docid, tf});
  }
  for (size_t f = 0; f < doc.filter_terms.size(); ++f) {
    postings_.push_back({ids_scratch_[i++], doc.docid, 1});
  }
  memory_bytes_ = postings_.capacity() * sizeof(TermPosting) +
                  terms_->memory_bytes() + ids_.capacity() +
                  lengths_.capacity() * 16;
}

void SegmentBuilder::AddDropped(uint32_t docid) {
  if (lengths_.empty()) base_ = docid;
  lengths_.push_back(kDroppedLength);
  starts_.push_back(0);
  id_offsets_.push_back(static_cast<uint32_t>(ids_.size()));
  memory_bytes_ += 16;
}

std::string SegmentBuilder::EncodeDocTable() const {
  return internal::EncodeDocTable(base_, lengths_, starts_, id_offsets_, ids_);
}

// Groups the postings by term with a counting sort (stable, so each term's
// postings stay in docid order), then emits terms in byte order.
void SegmentBuilder::EmitPostingLists(
    const std::function<void(std::string_view, std::string, uint32_t)>& sink)
    const {
  const size_t num_terms = terms_->size();
  std::vector<uint32_t> start(num_terms + 1, 0);
  for (const TermPosting& p : postings_) ++start[p.term + 1];
  for (size_t t = 0; t < num_terms; ++t) start[t + 1] += start[t];
  std::vector<internal::Posting> grouped(postings_.size());
  {
    std::vector<uint32_t> next(start.begin(), start.end() - 1);
    for (const TermPosting& p : postings_) {
      grouped[next[p.term]++] = {p.docid, p.tf, lengths_[p.docid - base_]};
    }
  }
  std::vector<uint32_t> order(num_terms);
  for (uint32_t t = 0; t < num_terms; ++t) order[t] = t;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return terms_->Term(a) < terms_->Term(b);
  });
  auto encode = [&](uint32_t t, std::vector<internal::Posting>* list) {
    list->assign(grouped.begin() + start[t], grouped.begin() + start[t + 1]);
    return internal::EncodePostingList(*list);
  };
  // Encoding is split in two by postings: a helper thread encodes the
  // second half (kept in memory) while this thread encodes and emits the
  // first, then the second half is emitted. Same lists, same order.
  size_t split = order.size();
  if (postings_.size() >= kParallelEmitPostings) {
    size_t seen = 0;
    for (split = 0; split < order.size() && seen < postings_.size() / 2;
         ++split) {
      seen += start[order[split] + 1] - start[order[split]];
    }
  }
  std::vector<std::string> encoded(order.size() - split);
  std::thread helper;
  if (!encoded.empty()) {
    helper = std::thread([&] {
      std::vector<internal::Posting> list;
      for (size_t i = split; i < order.size(); ++i) {
        encoded[i - split] = encode(order[i], &list);
      }
    });
  }
  struct Joiner {
    std::thread& t;
    ~Joiner() {
      if (t.joinable()) t.join();
    }
  } joiner{helper};
  std::vector<internal::Posting> list;
  for (size_t i = 0; i < split; ++i) {
    const uint32_t t = order[i];
    sink(terms_->Term(t), encode(t, &list), start[t + 1] - start[t]);
  }
  if (helper.joinable()) helper.join();
  for (size_t i = split; i < order.size(); ++i) {
    const uint32_t t = order[i];
    sink(terms_->Term(t), std::move(encoded[i - split]),
         start[t + 1] - start[t]);
  }
}

}  // namespace skilldb::retrieval
