#include "skilldb/status.h"

#include <cstdio>
#include <cstdlib>

namespace skilldb {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kNotFound:
      return "not_found";
    case StatusCode::kInvalidArgument:
      return "invalid_argument";
    case StatusCode::kAlreadyExists:
      return "already_exists";
    case StatusCode::kFailedPrecondition:
      return "failed_precondition";
    case StatusCode::kAborted:
      return "aborted";
    case StatusCode::kCorruption:
      return "corruption";
    case StatusCode::kIOError:
      return "io_error";
    case StatusCode::kUnavailable:
      return "unavailable";
    case StatusCode::kDeadlineExceeded:
      return "deadline_exceeded";
    case StatusCode::kNotSupported:
      return "not_supported";
    case StatusCode::kInternal:
      return "internal";
  }
  return "internal";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  std::string out(StatusCodeName(code_));
  out += ": ";
  out += message_;
  return out;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  std::string message(context);
  message += ": ";
  message += message_;
  return Status(code_, std::move(message));
}

namespace internal {

void DieOnErrorResult(const Status& status, const char* what) {
  std::fprintf(stderr, "skilldb: %s on an error Result: %s\n", what,
               status.ToString().c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace internal
}  // namespace skilldb
