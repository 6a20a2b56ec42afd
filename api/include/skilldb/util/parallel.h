// Threads for work that splits into independent pieces: every pool of the
// modules starts its threads here, so that a thread the system refuses
// (std::thread throws std::system_error when the process is at its thread
// limit or out of memory) costs parallelism, never the process. Part of the
// helpers skilldb's modules share (skilldb/util/), not of the installed API.
//
// Thread-safe: no shared state of its own. The functions given must not
// throw (an exception escaping a thread ends the process, as std::thread's).
#ifndef SKILLDB_UTIL_PARALLEL_H_
#define SKILLDB_UTIL_PARALLEL_H_

#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

namespace skilldb::util {

// Appends up to `count` threads running `fn` to `*threads`; stops at the
// first thread the system refuses. Returns how many started (0..count).
// For pools whose threads live on (the caller joins them): one that gets
// fewer than it asked for runs with those, and one that gets none must do
// its work on the caller's thread.
int StartThreads(int count, const std::function<void()>& fn,
                 std::vector<std::thread>* threads);

// Runs `worker` on up to `width` threads, the caller's among them, and
// returns when every one has returned; how many ran (at least 1: the
// caller's). Each worker takes work from something the workers share (a
// counter, a queue) until none is left, so all of it is done however many
// threads the system grants.
int RunOnThreads(size_t width, const std::function<void()>& worker);

// fn(0), ..., fn(count - 1), each once, on up to min(width, count) threads
// (RunOnThreads); returns how many ran (1 when count is 0 or 1).
int ParallelFor(size_t count, size_t width,
                const std::function<void(size_t)>& fn);

}  // namespace skilldb::util

#endif  // SKILLDB_UTIL_PARALLEL_H_
