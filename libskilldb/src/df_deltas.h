// The change in document frequency by term that a commit accumulates: +n
// for each term of each segment it cuts (a run in term order), -1 for each
// term of each document it ends (any order). Read once, at the end, as the
// terms whose frequency moved, in term order.
//
// Entries are appended; while they come in term order they form one run
// (a repeated term adds to its entry). Once out of order, they are folded
// into one sorted, combined list whenever they outnumber it (and kMinFold),
// so memory stays within about three times the number of distinct terms
// however many documents end or segments are cut, and the work is
// amortized O(n log n). A commit of one segment that ends nothing appends
// one sorted run and never sorts or merges.
#ifndef SKILLDB_DF_DELTAS_H_
#define SKILLDB_DF_DELTAS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace skilldb::internal {

class DfDeltas {
 public:
  using Entry = std::pair<std::string, int64_t>;
  static constexpr size_t kMinFold = size_t{1} << 16;

  void Add(std::string_view term, int64_t delta) {
    if (pending_sorted_ && !pending_.empty()) {
      if (term == pending_.back().first) {  // a sorted run holds each once
        pending_.back().second += delta;
        return;
      }
      if (term < pending_.back().first) pending_sorted_ = false;
    }
    pending_.emplace_back(std::string(term), delta);
    if (!pending_sorted_ && pending_.size() > std::max(kMinFold, folded_.size())) {
      Fold();
    }
  }

  // Entries held (for tests of the memory bound).
  size_t entries() const { return folded_.size() + pending_.size(); }

  // The terms whose frequency moved (non-zero total), in term order.
  // Leaves the accumulator empty.
  std::vector<Entry> TakeMoved() {
    Fold();
    std::vector<Entry> moved = std::move(folded_);
    folded_.clear();
    moved.erase(std::remove_if(moved.begin(), moved.end(),
                               [](const Entry& e) { return e.second == 0; }),
                moved.end());
    return moved;
  }

 private:
  // Sorts and combines the pending entries, then merges them into folded_.
  void Fold() {
    if (pending_.empty()) return;
    if (!pending_sorted_) {
      std::sort(pending_.begin(), pending_.end(),
                [](const Entry& a, const Entry& b) { return a.first < b.first; });
      Combine(&pending_);
    }
    if (folded_.empty()) {
      folded_ = std::move(pending_);
    } else {
      std::vector<Entry> merged;
      merged.reserve(folded_.size() + pending_.size());
      std::merge(std::make_move_iterator(folded_.begin()),
                 std::make_move_iterator(folded_.end()),
                 std::make_move_iterator(pending_.begin()),
                 std::make_move_iterator(pending_.end()),
                 std::back_inserter(merged),
                 [](const Entry& a, const Entry& b) { return a.first < b.first; });
      Combine(&merged);
      folded_ = std::move(merged);
    }
    pending_.clear();
    pending_sorted_ = true;
  }

  // Sums the deltas of adjacent entries with the same term (sorted input).
  static void Combine(std::vector<Entry>* entries) {
    size_t out = 0;
    for (size_t i = 0; i < entries->size(); ++i) {
      if (out > 0 && (*entries)[out - 1].first == (*entries)[i].first) {
        (*entries)[out - 1].second += (*entries)[i].second;
      } else {
        if (out != i) (*entries)[out] = std::move((*entries)[i]);
        ++out;
      }
    }
    entries->resize(out);
  }

  std::vector<Entry> folded_;   // sorted, one entry per term
  std::vector<Entry> pending_;  // appended since the last fold
  bool pending_sorted_ = true;
};

}  // namespace skilldb::internal

#endif  // SKILLDB_DF_DELTAS_H_
