// Clocks every module reads: wall time for records, a monotonic clock for
// durations. Part of the helpers skilldb's modules share (skilldb/util/),
// not of the installed API. Thread-safe: pure functions.
#ifndef SKILLDB_UTIL_CLOCK_H_
#define SKILLDB_UTIL_CLOCK_H_

#include <chrono>
#include <cstdint>

namespace skilldb::util {

using SteadyClock = std::chrono::steady_clock;

// Milliseconds since the Unix epoch (wall clock): for stored records.
inline int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Milliseconds elapsed on the monotonic clock since `start`.
inline double MsSince(SteadyClock::time_point start) {
  return std::chrono::duration<double, std::milli>(SteadyClock::now() - start)
      .count();
}

}  // namespace skilldb::util

#endif  // SKILLDB_UTIL_CLOCK_H_
