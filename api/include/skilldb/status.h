// Status and Result<T>: how every fallible skilldb call reports failure.
//
// A Status is either OK or carries a code and a message; Result<T> holds a
// value or a non-OK Status. Neither throws. Both are cheap to move and are
// safe to use from any thread (they are plain values).
//
// It belongs to the API layer (skilldb::api), the lowest layer of the
// project: every module, retrieval included, may include it. It depends on
// nothing but the standard library.
#ifndef SKILLDB_STATUS_H_
#define SKILLDB_STATUS_H_

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace skilldb {

// The small, fixed set of error codes. Callers branch on the code, never on
// the message. Values are stable (they appear in JSON error output).
//
// Whose fault: kInvalidArgument is for input that is wrong, an argument or
// data the caller named and skilldb only read (a model file, a config, a
// server's answer, a checkpoint); kCorruption is for damage to skilldb's
// own stores (the library, the rollout and embedding stores); kInternal is
// for skilldb's bugs. The CLI exits 1 for the first, 2 for the others
// (skilldb/util/exit_code.h).
enum class StatusCode {
  kOk = 0,
  kNotFound = 1,
  kInvalidArgument = 2,
  kAlreadyExists = 3,
  kFailedPrecondition = 4,
  kAborted = 5,  // retryable conflict
  kCorruption = 6,
  kIOError = 7,
  kUnavailable = 8,
  kDeadlineExceeded = 9,
  kNotSupported = 10,
  kInternal = 11,
};

// Returns a short lower_snake name for `code` ("not_found", ...).
std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message)
      : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status NotFound(std::string m) {
    return {StatusCode::kNotFound, std::move(m)};
  }
  static Status InvalidArgument(std::string m) {
    return {StatusCode::kInvalidArgument, std::move(m)};
  }
  static Status AlreadyExists(std::string m) {
    return {StatusCode::kAlreadyExists, std::move(m)};
  }
  static Status FailedPrecondition(std::string m) {
    return {StatusCode::kFailedPrecondition, std::move(m)};
  }
  static Status Aborted(std::string m) {
    return {StatusCode::kAborted, std::move(m)};
  }
  static Status Corruption(std::string m) {
    return {StatusCode::kCorruption, std::move(m)};
  }
  static Status IOError(std::string m) {
    return {StatusCode::kIOError, std::move(m)};
  }
  static Status Unavailable(std::string m) {
    return {StatusCode::kUnavailable, std::move(m)};
  }
  static Status DeadlineExceeded(std::string m) {
    return {StatusCode::kDeadlineExceeded, std::move(m)};
  }
  static Status NotSupported(std::string m) {
    return {StatusCode::kNotSupported, std::move(m)};
  }
  static Status Internal(std::string m) {
    return {StatusCode::kInternal, std::move(m)};
  }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "not_found: skill 'x' does not exist" (or "ok").
  std::string ToString() const;

  // Returns a copy whose message is "`context`: <message>". OK stays OK.
  Status WithContext(std::string_view context) const;

  bool IsNotFound() const { return code_ == StatusCode::kNotFound; }
  bool IsInvalidArgument() const {
    return code_ == StatusCode::kInvalidArgument;
  }
  bool IsAborted() const { return code_ == StatusCode::kAborted; }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

namespace internal {
// Prints "skilldb: `what` on an error Result: <status>" to stderr and aborts.
// Out of line so that the check in value() stays small.
[[noreturn]] void DieOnErrorResult(const Status& status, const char* what);
}  // namespace internal

// Result<T> holds either a T or a non-OK Status.
//
// Accessing the value of an error Result (value(), *, ->) stops the program
// with the status in the message, in every build type (as absl::StatusOr
// does): a caller that skipped ok() never reads garbage.
// REQUIRES: a Result is never constructed from an OK Status (one that is
// holds Internal instead).
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    if (status_.ok()) status_ = Status::Internal("Result built from OK");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  // The value. Aborts (see the class comment) when !ok().
  T& value() & { return Checked(), *value_; }
  const T& value() const& { return Checked(), *value_; }
  T&& value() && { return Checked(), std::move(*value_); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }

  // The value, or `fallback` when !ok().
  template <typename U>
  T value_or(U&& fallback) const& {
    return ok() ? *value_ : static_cast<T>(std::forward<U>(fallback));
  }
  template <typename U>
  T value_or(U&& fallback) && {
    return ok() ? std::move(*value_)
                : static_cast<T>(std::forward<U>(fallback));
  }

 private:
  void Checked() const {
    if (!value_.has_value()) [[unlikely]]
      internal::DieOnErrorResult(status_, "value accessed");
  }

  std::optional<T> value_;
  Status status_;  // OK when value_ is set
};

}  // namespace skilldb

#define SKILLDB_CONCAT_INNER_(a, b) a##b
#define SKILLDB_CONCAT_(a, b) SKILLDB_CONCAT_INNER_(a, b)

// Returns from the enclosing function if `expr` (a Status) is not OK.
#define SKILLDB_RETURN_IF_ERROR(expr)                  \
  do {                                                 \
    ::skilldb::Status skilldb_status_ = (expr);        \
    if (!skilldb_status_.ok()) return skilldb_status_; \
  } while (0)

// Evaluates `rexpr` (a Result<T>); on error returns its Status, otherwise
// assigns the value to `lhs` (which may be a declaration).
#define SKILLDB_ASSIGN_OR_RETURN(lhs, rexpr)                                 \
  SKILLDB_ASSIGN_OR_RETURN_IMPL_(SKILLDB_CONCAT_(skilldb_result_, __LINE__), \
                                 lhs, rexpr)
// `tmp` names a variable and `lhs` may be a declaration: neither can be
// parenthesised.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define SKILLDB_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                                   \
  if (!tmp.ok()) return tmp.status();                   \
  lhs = std::move(tmp).value()
// NOLINTEND(bugprone-macro-parentheses)

#endif  // SKILLDB_STATUS_H_
