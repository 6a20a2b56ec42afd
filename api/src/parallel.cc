#include "skilldb/util/parallel.h"

#include <algorithm>
#include <atomic>
#include <system_error>

namespace skilldb::util {

int StartThreads(int count, const std::function<void()>& fn,
                 std::vector<std::thread>* threads) {
  int started = 0;
  for (; started < count; ++started) {
    try {
      threads->emplace_back(fn);
    } catch (const std::system_error&) {
      break;  // at the thread limit, or out of memory: go on with fewer
    }
  }
  return started;
}

int RunOnThreads(size_t width, const std::function<void()>& worker) {
  std::vector<std::thread> helpers;
  const size_t extra = width > 1 ? width - 1 : 0;
  StartThreads(static_cast<int>(std::min<size_t>(extra, 1 << 20)), worker,
               &helpers);
  worker();
  for (std::thread& t : helpers) t.join();
  return static_cast<int>(helpers.size()) + 1;
}

int ParallelFor(size_t count, size_t width,
                const std::function<void(size_t)>& fn) {
  std::atomic<size_t> next{0};
  return RunOnThreads(std::min(width, count), [&] {
    for (size_t i = next.fetch_add(1); i < count; i = next.fetch_add(1)) fn(i);
  });
}

}  // namespace skilldb::util
