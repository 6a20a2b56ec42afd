#include "numbers.h"

#include <doctest/doctest.h>

namespace skilldb::cli {
namespace {

TEST_CASE("an integer argument inside its range is read exactly") {
  CHECK(ParseUnsignedArg("--k", "1", {1, 100000}).value() == 1);
  CHECK(ParseUnsignedArg("--k", "100000", {1, 100000}).value() == 100000);
  CHECK(ParseUnsignedArg("--as-of", "18446744073709551615", {0}).value() ==
        UINT64_MAX);
  CHECK(ParseUnsignedArg("--k", "+7", {1, 10}).value() == 7);
  CHECK(ParseSignedArg("--threads", "-5", {-10, 10}).value() == -5);
  CHECK(ParseSignedArg("x", "-9223372036854775808",
                       {INT64_MIN, uint64_t{INT64_MAX}})
            .value() == INT64_MIN);
}

TEST_CASE(
    "a negative number for an unsigned argument is out of range, "
    "never wrapped") {
  auto r = ParseUnsignedArg("--k", "-1", {1, 100000});
  REQUIRE(r.status().IsInvalidArgument());
  CHECK(r.status().message().find("--k must be between 1 and 100000") !=
        std::string::npos);
  CHECK(ParseUnsignedArg("--count", "-18446744073709551615", {1})
            .status()
            .IsInvalidArgument());
  CHECK(ParseUnsignedArg("VERSION", "-0", {0}).value() == 0);
}

TEST_CASE("a number past 64 bits or past the range is refused") {
  CHECK(ParseUnsignedArg("--as-of", "18446744073709551616", {0})
            .status()
            .IsInvalidArgument());
  CHECK(ParseUnsignedArg("--k", "100001", {1, 100000})
            .status()
            .IsInvalidArgument());
  CHECK(ParseUnsignedArg("--k", "0", {1, 100000}).status().IsInvalidArgument());
  CHECK(ParseSignedArg("--threads", "1025", {0, 1024})
            .status()
            .IsInvalidArgument());
  CHECK(ParseSignedArg("x", "9223372036854775808", {0, UINT64_MAX})
            .status()
            .IsInvalidArgument());
}

TEST_CASE("text that is not a whole number says what was expected") {
  for (const char* bad : {"abc", "", "1.5", "1e3", " 1", "1 ", "0x10", "--1",
                          "+", "-", "12abc"}) {
    CAPTURE(bad);
    auto r =
        ParseUnsignedArg("--as-of", bad, {0, UINT64_MAX, "a version number"});
    REQUIRE(r.status().IsInvalidArgument());
    CHECK(r.status().message().find("--as-of must be a version number") !=
          std::string::npos);
  }
  // The message states the range in words, not a 309-digit number.
  auto r =
      ParseUnsignedArg("--as-of", "abc", {0, UINT64_MAX, "a version number"});
  CHECK(r.status().message().size() < 80);
}

TEST_CASE("a long argument is cut short in the message") {
  const std::string huge(100000, '9');
  auto r = ParseUnsignedArg("--k", huge, {1, 100000});
  REQUIRE(r.status().IsInvalidArgument());
  CHECK(r.status().message().size() < 200);
}

TEST_CASE("a real argument must be finite and in range") {
  CHECK(ParseRealArg("--b", "0.75", {0, 1}).value() == 0.75);
  CHECK(ParseRealArg("--b", "1", {0, 1}).value() == 1.0);
  CHECK(ParseRealArg("--k1", "1e2", {0}).value() == 100.0);
  for (const char* bad :
       {"nan", "inf", "-inf", "abc", "", "1,5", "2", "-0.1", "1e999"}) {
    CAPTURE(bad);
    auto r = ParseRealArg("--b", bad, {0, 1});
    REQUIRE(r.status().IsInvalidArgument());
    CHECK(r.status().message().starts_with("--b must be"));
  }
  const RealRange open{.min = 0, .max = 1, .exclusive_min = true};
  CHECK(ParseRealArg("--near-jaccard", "0", open).status().IsInvalidArgument());
  CHECK(ParseRealArg("--near-jaccard", "0.01", open).value() == 0.01);
}

TEST_CASE("ranges are described in words") {
  CHECK(DescribeRange(IntRange{1, 100000}) == "between 1 and 100000");
  CHECK(DescribeRange(IntRange{0}) == "0 or more");
  CHECK(DescribeRange(RealRange{0, 1}) == "between 0 and 1");
}

}  // namespace
}  // namespace skilldb::cli
