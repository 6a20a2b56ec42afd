// The exit status of skilldb's programs (the CLI, skilldb_train) for a
// Status: whose fault the failure is. Part of the helpers skilldb's modules
// share (skilldb/util/). Pure functions: thread-safe.
#ifndef SKILLDB_UTIL_EXIT_CODE_H_
#define SKILLDB_UTIL_EXIT_CODE_H_

#include "skilldb/status.h"

namespace skilldb::util {

inline constexpr int kExitOk = 0;
// The input is wrong: an argument, or a file, server answer or config the
// user named (InvalidArgument), something missing or in another state
// (NotFound, FailedPrecondition, AlreadyExists), a server or lock that is
// busy or gone (Unavailable, Aborted, DeadlineExceeded).
inline constexpr int kExitUserError = 1;
// skilldb or the machine failed: its own store is damaged (Corruption), a
// read or write failed (IOError), a bug (Internal), or a feature this
// build lacks (NotSupported).
inline constexpr int kExitInternalError = 2;

inline int ExitCodeFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return kExitOk;
    case StatusCode::kCorruption:
    case StatusCode::kIOError:
    case StatusCode::kInternal:
    case StatusCode::kNotSupported:
      return kExitInternalError;
    default:
      return kExitUserError;
  }
}

}  // namespace skilldb::util

#endif  // SKILLDB_UTIL_EXIT_CODE_H_
