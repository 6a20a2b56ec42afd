// Merging adjacent segments into one.
//
// Segments cover contiguous, ascending docid ranges, so merging neighbours
// keeps every docid: posting lists are concatenated in segment order and no
// renumbering is needed. Documents the caller no longer needs (dead at every
// retained version) are dropped: their slot stays in the doc table, marked
// dropped, and their postings go.
//
// A SegmentMerger is single-threaded.
#ifndef SKILLDB_RETRIEVAL_SEGMENT_MERGER_H_
#define SKILLDB_RETRIEVAL_SEGMENT_MERGER_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/retrieval/segment.h"
#include "skilldb/status.h"

namespace skilldb::retrieval {

// Walks one segment's posting lists in ascending byte order of terms.
class TermIterator {
 public:
  virtual ~TermIterator() = default;
  virtual bool Valid() const = 0;
  virtual std::string_view term() const = 0;
  virtual std::string_view posting_list() const = 0;
  virtual void Next() = 0;
  virtual Status status() const = 0;
};

class SegmentMerger {
 public:
  // `inputs` are adjacent segments in docid order (each range starting where
  // the previous one ends); `keep(docid)` says whether a document survives.
  // REQUIRES: the inputs outlive the merger.
  SegmentMerger(std::vector<const SegmentDocs*> inputs,
                std::function<bool(uint32_t)> keep);

  // InvalidArgument if the inputs are not adjacent.
  Status Validate() const;

  std::string EncodeDocTable() const;

  // Merges the posting lists; `iterators[i]` walks `inputs[i]`. Calls
  // `sink(term, posting_list)` per surviving term in ascending order.
  Status MergePostings(
      const std::vector<TermIterator*>& iterators,
      const std::function<void(std::string_view, std::string)>& sink) const;

 private:
  std::vector<const SegmentDocs*> inputs_;
  std::function<bool(uint32_t)> keep_;
};

}  // namespace skilldb::retrieval

#endif  // SKILLDB_RETRIEVAL_SEGMENT_MERGER_H_
