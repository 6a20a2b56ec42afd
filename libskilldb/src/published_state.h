// What the parts of the engine share: the read state published after every
// write, and the writer's id counters. Internal.
#ifndef SKILLDB_LIBSKILLDB_PUBLISHED_STATE_H_
#define SKILLDB_LIBSKILLDB_PUBLISHED_STATE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>

#include "index_state.h"

namespace skilldb::internal {

// The current ReadState. Readers take it (and keep it for one read);
// writers, holding the library's write lock, publish its successor.
// Thread-safe.
class PublishedState {
 public:
  std::shared_ptr<const ReadState> Get() const {
    std::lock_guard<std::mutex> lock(mu_);
    return state_;
  }
  void Publish(std::shared_ptr<const ReadState> next) {
    std::lock_guard<std::mutex> lock(mu_);
    state_ = std::move(next);
  }
  // Drops the state (and its snapshot): done before the database closes.
  void Reset() { Publish(nullptr); }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const ReadState> state_;  // guarded by mu_
};

// The ids the writer hands out next, persisted with every commit and merge
// (kNextDocidKey, kNextSegmentKey). Guarded by the library's write lock.
struct WriterCounters {
  uint32_t next_docid = 0;
  uint32_t next_segment = 0;
};

}  // namespace skilldb::internal

#endif  // SKILLDB_LIBSKILLDB_PUBLISHED_STATE_H_
