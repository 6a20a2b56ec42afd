#include "numbers.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "text.h"

namespace skilldb::cli {
namespace {

constexpr uint64_t kUnbounded = std::numeric_limits<uint64_t>::max();

// The user's text as it appears in a message: escaped, and cut short, so a
// 10 MB argument does not become a 10 MB message.
std::string Quoted(std::string_view text) {
  constexpr size_t kMaxShown = 40;
  std::string shown = EscapeLine(text.substr(0, kMaxShown));
  if (text.size() > kMaxShown) shown += "...";
  return "'" + shown + "'";
}

Status NotANumber(std::string_view name, std::string_view text,
                  const std::string& noun, const std::string& range) {
  const bool parenthesize = range.find("between") == std::string::npos;
  return Status::InvalidArgument(std::string(name) + " must be " + noun + " " +
                                 (parenthesize ? "(" + range + ")" : range) +
                                 ", not " + Quoted(text));
}

// `too_large`: the value is above the range (which may say only "0 or
// more", when its bound is the type's: then the bound is named).
Status OutOfRange(std::string_view name, std::string_view text,
                  const std::string& range, bool too_large, uint64_t max) {
  const bool open_above = range.find("between") == std::string::npos;
  const std::string expected =
      too_large && open_above ? "at most " + std::to_string(max) : range;
  return Status::InvalidArgument(std::string(name) + " must be " + expected +
                                 ", not " + Quoted(text));
}

// Digits with an optional sign and nothing else: what from_chars needs to
// see (it accepts neither '+' nor leading spaces, and an unsigned parse
// would reject "-1" as a non-number, when it is a number out of range).
bool LooksInteger(std::string_view text) {
  if (!text.empty() && (text[0] == '-' || text[0] == '+'))
    text.remove_prefix(1);
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// Reads an integer that LooksInteger accepted. Sets *negative; returns false
// when its magnitude does not fit 64 bits.
bool ReadMagnitude(std::string_view text, bool* negative, uint64_t* magnitude) {
  *negative = text[0] == '-';
  if (text[0] == '-' || text[0] == '+') text.remove_prefix(1);
  auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), *magnitude);
  return ec == std::errc() && end == text.data() + text.size();
}

bool InRange(bool negative, uint64_t magnitude, const IntRange& range) {
  if (negative) {
    // -magnitude >= range.min, with range.min possibly negative.
    if (magnitude == 0) return range.min <= 0;
    if (range.min >= 0) return false;
    const uint64_t limit = static_cast<uint64_t>(-(range.min + 1)) + 1;
    return magnitude <= limit;
  }
  return (range.min <= 0 || magnitude >= static_cast<uint64_t>(range.min)) &&
         magnitude <= range.max;
}

std::string FormatReal(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

}  // namespace

std::string DescribeRange(const IntRange& range) {
  if (range.max == kUnbounded ||
      (range.min < 0 &&
       range.max == uint64_t{std::numeric_limits<int64_t>::max()})) {
    return std::to_string(range.min) + " or more";
  }
  return "between " + std::to_string(range.min) + " and " +
         std::to_string(range.max);
}

std::string DescribeRange(const RealRange& range) {
  if (range.exclusive_min) {
    return "more than " + FormatReal(range.min) + " and at most " +
           FormatReal(range.max);
  }
  if (range.max == std::numeric_limits<double>::max()) {
    return FormatReal(range.min) + " or more";
  }
  return "between " + FormatReal(range.min) + " and " + FormatReal(range.max);
}

Result<uint64_t> ParseUnsignedArg(std::string_view name, std::string_view text,
                                  const IntRange& range) {
  const std::string described = DescribeRange(range);
  if (!LooksInteger(text)) return NotANumber(name, text, range.noun, described);
  bool negative = false;
  uint64_t magnitude = 0;
  if (!ReadMagnitude(text, &negative, &magnitude) ||
      !InRange(negative, magnitude, range) || (negative && magnitude != 0)) {
    return OutOfRange(name, text, described, !negative, range.max);
  }
  return magnitude;  // "-0" is 0
}

Result<int64_t> ParseSignedArg(std::string_view name, std::string_view text,
                               const IntRange& range) {
  const std::string described = DescribeRange(range);
  if (!LooksInteger(text)) return NotANumber(name, text, range.noun, described);
  bool negative = false;
  uint64_t magnitude = 0;
  constexpr uint64_t kMaxSigned = std::numeric_limits<int64_t>::max();
  if (!ReadMagnitude(text, &negative, &magnitude) ||
      !InRange(negative, magnitude, range) ||
      magnitude > kMaxSigned + (negative ? 1 : 0)) {
    return OutOfRange(name, text, described, !negative,
                      std::min(range.max, kMaxSigned));
  }
  if (!negative) return static_cast<int64_t>(magnitude);
  return magnitude == kMaxSigned + 1 ? std::numeric_limits<int64_t>::min()
                                     : -static_cast<int64_t>(magnitude);
}

Result<double> ParseRealArg(std::string_view name, std::string_view text,
                            const RealRange& range) {
  const std::string described = DescribeRange(range);
  std::string_view digits = text;
  if (!digits.empty() && digits[0] == '+') digits.remove_prefix(1);
  double v = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(),
                                   v, std::chars_format::general);
  const bool parsed = !digits.empty() && ec != std::errc::invalid_argument &&
                      end == digits.data() + digits.size();
  if (!parsed || (ec == std::errc() && !std::isfinite(v))) {
    return NotANumber(name, text, "a number", described);
  }
  if (ec == std::errc::result_out_of_range || v < range.min || v > range.max ||
      (range.exclusive_min && v == range.min)) {
    // (A real range's upper bound, when it has one, is in `described`.)
    return OutOfRange(name, text, described, /*too_large=*/false, 0);
  }
  return v;
}

}  // namespace skilldb::cli
