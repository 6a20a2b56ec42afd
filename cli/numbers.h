// Checked conversion of command-line numbers. Every numeric argument of the
// CLI is read as text and converted here, so that nothing wraps: CLI11 (and
// strtoul) turn "-1" into 18446744073709551615 for an unsigned target, which
// once reached vector::reserve and the usage counters. A value outside its
// range, or one that is not a number, is InvalidArgument naming the argument
// and the accepted range.
//
// Pure functions; safe from any thread.
#ifndef SKILLDB_CLI_NUMBERS_H_
#define SKILLDB_CLI_NUMBERS_H_

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "skilldb/status.h"

namespace skilldb::cli {

// The inclusive range of an integer argument, and what to call its values
// in messages ("a whole number", "a version number").
struct IntRange {
  int64_t min = 0;
  uint64_t max = std::numeric_limits<uint64_t>::max();
  const char* noun = "a whole number";
};

// The range of a real argument, inclusive unless `exclusive_min`; values
// must also be finite.
struct RealRange {
  double min = 0;
  double max = std::numeric_limits<double>::max();
  bool exclusive_min = false;  // (min, max]
};

// Reads `text` as a decimal integer (an optional sign, then digits, nothing
// else) within `range`. Errors (InvalidArgument, naming `name`): not a
// number ("--as-of must be a version number (0 or more), not 'abc'"), out of
// range ("--k must be between 1 and 100000, not -1"). A result is returned
// as int64_t or uint64_t; both fit every range a caller can express.
Result<uint64_t> ParseUnsignedArg(std::string_view name, std::string_view text,
                                  const IntRange& range);
Result<int64_t> ParseSignedArg(std::string_view name, std::string_view text,
                               const IntRange& range);

// Reads `text` as a finite decimal real ("0.75", "1e-3") within `range`.
// InvalidArgument naming `name` otherwise (including nan and inf).
Result<double> ParseRealArg(std::string_view name, std::string_view text,
                            const RealRange& range);

// "between 1 and 100000", or "0 or more" when the range has no upper bound
// of its own: for help texts and messages.
std::string DescribeRange(const IntRange& range);
std::string DescribeRange(const RealRange& range);

}  // namespace skilldb::cli

#endif  // SKILLDB_CLI_NUMBERS_H_
