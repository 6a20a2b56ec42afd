// VerifyPool: a fixed number of threads running verifications, with a
// bounded wait list, so that a burst of synchronous verification requests
// gets 429 instead of piling up threads. Internal.
//
// Thread-safe. Stop() runs what is waiting, then joins.
#ifndef SKILLDB_SERVER_VERIFY_POOL_H_
#define SKILLDB_SERVER_VERIFY_POOL_H_

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "skilldb/util/parallel.h"

namespace skilldb::server::internal {

class VerifyPool {
 public:
  // `workers` threads, or as many as the system grants: with none, Submit
  // refuses every job (the server answers 429).
  VerifyPool(int workers, int max_pending) : max_pending_(max_pending) {
    std::lock_guard<std::mutex> lock(mu_);
    workers_ = util::StartThreads(workers, [this] { Run(); }, &threads_);
  }
  ~VerifyPool() { Stop(); }
  VerifyPool(const VerifyPool&) = delete;
  VerifyPool& operator=(const VerifyPool&) = delete;

  // Queues `job`; false (nothing queued) when every worker is busy and
  // max_pending jobs already wait, or the pool is stopping.
  bool Submit(std::function<void()> job) {
    std::lock_guard<std::mutex> lock(mu_);
    const int idle = workers_ - running_;
    if (stopping_ || workers_ == 0 ||
        static_cast<int>(jobs_.size()) >= max_pending_ + std::max(idle, 0)) {
      return false;
    }
    jobs_.push_back(std::move(job));
    cv_.notify_one();
    return true;
  }

  int pending() const {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<int>(jobs_.size());
  }
  int running() const {
    std::lock_guard<std::mutex> lock(mu_);
    return running_;
  }

  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_ && threads_.empty()) return;
      stopping_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

 private:
  void Run() {
    while (true) {
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
        if (jobs_.empty()) return;  // stopping, nothing left
        job = std::move(jobs_.front());
        jobs_.pop_front();
        ++running_;
      }
      job();
      std::lock_guard<std::mutex> lock(mu_);
      --running_;
    }
  }

  const int max_pending_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;  // guarded by mu_
  int running_ = 0;                         // guarded by mu_
  bool stopping_ = false;                   // guarded by mu_
  int workers_ = 0;                         // guarded by mu_ (set once)
  std::vector<std::thread> threads_;
};

}  // namespace skilldb::server::internal

#endif  // SKILLDB_SERVER_VERIFY_POOL_H_
