#include "skilldb/retrieval/segment_merger.h"

#include <string>

#include "doc_table.h"
#include "posting_list.h"

namespace skilldb::retrieval {

SegmentMerger::SegmentMerger(std::vector<const SegmentDocs*> inputs,
                             std::function<bool(uint32_t)> keep)
    : inputs_(std::move(inputs)), keep_(std::move(keep)) {}

Status SegmentMerger::Validate() const {
  for (size_t i = 1; i < inputs_.size(); ++i) {
    if (inputs_[i]->base() != inputs_[i - 1]->limit()) {
      return Status::InvalidArgument("segments to merge are not adjacent");
    }
  }
  return Status::Ok();
}

std::string SegmentMerger::EncodeDocTable() const {
  std::vector<uint32_t> lengths;
  std::vector<DocVersion> starts;
  std::vector<uint32_t> id_offsets = {0};
  std::string ids;
  for (const SegmentDocs* docs : inputs_) {
    for (uint32_t d = docs->base(); d < docs->limit(); ++d) {
      if (docs->dropped(d) || !keep_(d)) {
        lengths.push_back(kDroppedLength);
        starts.push_back(0);
      } else {
        lengths.push_back(docs->length(d));
        starts.push_back(docs->start(d));
        ids.append(docs->id(d));
      }
      id_offsets.push_back(static_cast<uint32_t>(ids.size()));
    }
  }
  const uint32_t base = inputs_.empty() ? 0 : inputs_.front()->base();
  return internal::EncodeDocTable(base, lengths, starts, id_offsets, ids);
}

// A k-way merge over the term iterators: for the smallest current term,
// concatenate the surviving postings of every input holding it.
Status SegmentMerger::MergePostings(
    const std::vector<TermIterator*>& iterators,
    const std::function<void(std::string_view, std::string)>& sink) const {
  if (iterators.size() != inputs_.size()) {
    return Status::InvalidArgument("one term iterator per input is needed");
  }
  std::vector<internal::Posting> postings;
  while (true) {
    const std::string* smallest = nullptr;
    std::string current;
    for (TermIterator* it : iterators) {
      SKILLDB_RETURN_IF_ERROR(it->status());
      if (it->Valid() && (smallest == nullptr || it->term() < current)) {
        current = std::string(it->term());
        smallest = &current;
      }
    }
    if (smallest == nullptr) return Status::Ok();
    postings.clear();
    for (size_t i = 0; i < iterators.size(); ++i) {
      TermIterator* it = iterators[i];
      if (!it->Valid() || it->term() != current) continue;
      internal::PostingCursor cursor;
      SKILLDB_RETURN_IF_ERROR(cursor.Init(it->posting_list()));
      for (; cursor.doc() != internal::kNoMoreDocs; cursor.Next()) {
        const uint32_t d = cursor.doc();
        if (!inputs_[i]->Contains(d)) {
          return Status::Corruption("posting outside its segment's range");
        }
        if (inputs_[i]->dropped(d) || !keep_(d)) continue;
        postings.push_back({d, cursor.tf(), inputs_[i]->length(d)});
      }
      if (cursor.corrupt()) return Status::Corruption("malformed posting list");
      it->Next();
    }
    if (!postings.empty()) sink(current, internal::EncodePostingList(postings));
  }
}

}  // namespace skilldb::retrieval
