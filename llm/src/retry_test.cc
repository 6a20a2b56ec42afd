#include "retry.h"

#include <doctest/doctest.h>

namespace skilldb::llm::internal {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

std::chrono::system_clock::time_point At(int y, unsigned m, unsigned d, int hh,
                                         int mm, int ss) {
  return std::chrono::sys_days(std::chrono::year(y) / m / d) +
         std::chrono::hours(hh) + std::chrono::minutes(mm) +
         std::chrono::seconds(ss);
}

TEST_CASE("the three HTTP-date forms parse to the same instant") {
  const auto expected = At(1994, 11, 6, 8, 49, 37);
  CHECK(ParseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT") == expected);
  CHECK(ParseHttpDate("Sunday, 06-Nov-94 08:49:37 GMT") == expected);
  CHECK(ParseHttpDate("Sun Nov  6 08:49:37 1994") == expected);
}

TEST_CASE("malformed or impossible HTTP-dates do not parse") {
  for (const char* bad :
       {"", "Sun, 31 Feb 2026 00:00:00 GMT", "Sun, 06 Nov 1994 25:00:00 GMT",
        "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 PST",
        "06 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT junk"}) {
    CAPTURE(bad);
    CHECK(!ParseHttpDate(bad).has_value());
  }
}

TEST_CASE("Retry-After reads delay-seconds and dates relative to now") {
  const auto now = At(2026, 12, 1, 12, 0, 0);
  CHECK(ParseRetryAfter("3", now) == milliseconds(3000));
  CHECK(ParseRetryAfter(" 0 ", now) == milliseconds(0));
  CHECK(ParseRetryAfter("Tue, 01 Dec 2026 12:00:05 GMT", now) ==
        milliseconds(5000));
  CHECK(ParseRetryAfter("Tue, 01 Dec 2026 11:00:00 GMT", now) ==
        milliseconds(0));
  CHECK(!ParseRetryAfter("-1", now).has_value());
  CHECK(!ParseRetryAfter("soon", now).has_value());
  // Absurd values are capped at a day instead of overflowing.
  CHECK(ParseRetryAfter("99999999999999999999", now) ==
        milliseconds(86'400'000));
}

TEST_CASE("retry-after-ms reads fractional milliseconds, rounding up") {
  CHECK(ParseRetryAfterMs("250") == milliseconds(250));
  CHECK(ParseRetryAfterMs("12.2") == milliseconds(13));
  CHECK(!ParseRetryAfterMs("x").has_value());
  CHECK(!ParseRetryAfterMs("1e3").has_value());
}

TEST_CASE("backoff doubles up to its cap and jitter only shortens it") {
  RetryOptions o;
  o.initial_backoff_ms = 100;
  o.max_backoff_ms = 1000;
  o.jitter = 0.5;
  o.jitter_seed = 7;
  Backoff b(o);
  const int64_t bases[] = {100, 200, 400, 800, 1000, 1000};
  for (int k = 0; k < 6; ++k) {
    for (int trial = 0; trial < 50; ++trial) {
      const int64_t d = b.Delay(k, std::nullopt).count();
      CHECK(d <= bases[k]);
      CHECK(d >= bases[k] / 2);
    }
  }
  o.jitter = 0.0;
  Backoff exact(o);
  CHECK(exact.Delay(2, std::nullopt) == milliseconds(400));
  CHECK(exact.Delay(1000, std::nullopt) == milliseconds(1000));
}

TEST_CASE("a server-requested wait is honoured up to the cap") {
  RetryOptions o;
  o.initial_backoff_ms = 100;
  o.jitter = 0.0;
  o.max_retry_after_ms = 5000;
  Backoff b(o);
  CHECK(b.Delay(0, milliseconds(4000)) == milliseconds(4000));
  CHECK(b.Delay(0, milliseconds(0)) == milliseconds(0));
  // Longer than the cap: back to the exponential schedule.
  CHECK(b.Delay(0, milliseconds(60000)) == milliseconds(100));
}

}  // namespace
}  // namespace skilldb::llm::internal
