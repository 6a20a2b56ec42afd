#include "retry.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>

namespace skilldb::llm::internal {
namespace {

using std::chrono::milliseconds;

// A left-to-right reader over a header value; each method consumes what it
// matched and returns false (consuming nothing useful) when it does not.
class Cursor {
 public:
  explicit Cursor(std::string_view s) : s_(s) {}

  bool Literal(std::string_view lit) {
    if (s_.substr(0, lit.size()) != lit) return false;
    s_.remove_prefix(lit.size());
    return true;
  }
  bool Digits(int count, int* out) {
    if (s_.size() < static_cast<size_t>(count)) return false;
    int v = 0;
    for (int i = 0; i < count; ++i) {
      if (!std::isdigit(static_cast<unsigned char>(s_[i]))) return false;
      v = v * 10 + (s_[i] - '0');
    }
    s_.remove_prefix(count);
    *out = v;
    return true;
  }
  bool SkipLetters() {
    size_t n = 0;
    while (n < s_.size() && std::isalpha(static_cast<unsigned char>(s_[n])))
      ++n;
    s_.remove_prefix(n);
    return n > 0;
  }
  bool Month(int* out) {
    static constexpr std::array<std::string_view, 12> kMonths = {
        "Jan", "Feb", "Mar", "Apr", "May", "Jun",
        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    for (size_t i = 0; i < kMonths.size(); ++i) {
      if (Literal(kMonths[i])) {
        *out = static_cast<int>(i) + 1;
        return true;
      }
    }
    return false;
  }
  // "HH:MM:SS"
  bool Time(int* h, int* m, int* sec) {
    return Digits(2, h) && Literal(":") && Digits(2, m) && Literal(":") &&
           Digits(2, sec);
  }
  bool AtEnd() const { return s_.empty(); }

 private:
  std::string_view s_;
};

struct Fields {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
};

// "06 Nov 1994 08:49:37 GMT" (IMF-fixdate after "Sun, ").
bool ImfRest(Cursor& c, Fields* f) {
  return c.Digits(2, &f->day) && c.Literal(" ") && c.Month(&f->month) &&
         c.Literal(" ") && c.Digits(4, &f->year) && c.Literal(" ") &&
         c.Time(&f->hour, &f->minute, &f->second) && c.Literal(" GMT") &&
         c.AtEnd();
}

// "06-Nov-94 08:49:37 GMT" (RFC 850 after "Sunday, "). A two-digit year is
// read as 19xx from 70 on and 20xx below: RFC 9110 asks for "no more than 50
// years in the future", which this matches until 2070.
bool Rfc850Rest(Cursor& c, Fields* f) {
  int yy = 0;
  if (!(c.Digits(2, &f->day) && c.Literal("-") && c.Month(&f->month) &&
        c.Literal("-") && c.Digits(2, &yy) && c.Literal(" ") &&
        c.Time(&f->hour, &f->minute, &f->second) && c.Literal(" GMT") &&
        c.AtEnd())) {
    return false;
  }
  f->year = yy < 70 ? 2000 + yy : 1900 + yy;
  return true;
}

// "Nov  6 08:49:37 1994" (asctime after "Sun ").
bool AsctimeRest(Cursor& c, Fields* f) {
  if (!(c.Month(&f->month) && c.Literal(" "))) return false;
  if (c.Literal(" ")) {
    if (!c.Digits(1, &f->day)) return false;
  } else if (!c.Digits(2, &f->day)) {
    return false;
  }
  return c.Literal(" ") && c.Time(&f->hour, &f->minute, &f->second) &&
         c.Literal(" ") && c.Digits(4, &f->year) && c.AtEnd();
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) {
    s.remove_prefix(1);
  }
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) {
    s.remove_suffix(1);
  }
  return s;
}

}  // namespace

std::optional<std::chrono::system_clock::time_point> ParseHttpDate(
    std::string_view text) {
  text = Trim(text);
  Cursor c(text);
  Fields f;
  if (!c.SkipLetters()) return std::nullopt;
  bool ok = false;
  if (c.Literal(", ")) {
    Cursor imf = c;
    ok = ImfRest(imf, &f) || Rfc850Rest(c, &f);
  } else if (c.Literal(" ")) {
    ok = AsctimeRest(c, &f);
  }
  if (!ok || f.hour > 23 || f.minute > 59 || f.second > 60) return std::nullopt;
  const std::chrono::year_month_day ymd{std::chrono::year(f.year),
                                        std::chrono::month(f.month),
                                        std::chrono::day(f.day)};
  if (!ymd.ok()) return std::nullopt;
  // A leap second (:60) is read as :59; the wait is a second apart at most.
  const int second = std::min(f.second, 59);
  return std::chrono::sys_days(ymd) + std::chrono::hours(f.hour) +
         std::chrono::minutes(f.minute) + std::chrono::seconds(second);
}

std::optional<milliseconds> ParseRetryAfter(
    std::string_view value, std::chrono::system_clock::time_point now) {
  value = Trim(value);
  if (value.empty()) return std::nullopt;
  if (std::all_of(value.begin(), value.end(), [](char ch) {
        return std::isdigit(static_cast<unsigned char>(ch));
      })) {
    // More than a day is as good as "forever" here; cap before multiplying.
    if (value.size() > 6) return milliseconds(86'400'000);
    int64_t seconds = 0;
    for (char ch : value) seconds = seconds * 10 + (ch - '0');
    return milliseconds(std::min<int64_t>(seconds, 86'400) * 1000);
  }
  auto date = ParseHttpDate(value);
  if (!date) return std::nullopt;
  if (*date <= now) return milliseconds(0);
  auto wait = std::chrono::duration_cast<milliseconds>(*date - now);
  return std::min(wait, milliseconds(86'400'000));
}

std::optional<milliseconds> ParseRetryAfterMs(std::string_view value) {
  value = Trim(value);
  if (value.empty() || value.size() > 12) return std::nullopt;
  double ms = 0;
  size_t i = 0;
  for (; i < value.size() && std::isdigit(static_cast<unsigned char>(value[i]));
       ++i) {
    ms = ms * 10 + (value[i] - '0');
  }
  if (i == 0) return std::nullopt;
  if (i < value.size()) {
    if (value[i] != '.') return std::nullopt;
    double scale = 0.1;
    for (++i; i < value.size(); ++i, scale /= 10) {
      if (!std::isdigit(static_cast<unsigned char>(value[i])))
        return std::nullopt;
      ms += (value[i] - '0') * scale;
    }
  }
  return milliseconds(static_cast<int64_t>(std::ceil(ms)));
}

Backoff::Backoff(const RetryOptions& options)
    : options_(options),
      rng_(options.jitter_seed != 0 ? options.jitter_seed
                                    : std::random_device{}()) {}

milliseconds Backoff::Delay(int retry,
                            std::optional<milliseconds> server_asked) {
  if (server_asked && server_asked->count() <=
                          static_cast<int64_t>(options_.max_retry_after_ms)) {
    return *server_asked;
  }
  // 2^retry saturates long before a 64-bit overflow: cap the exponent.
  const int exponent = std::clamp(retry, 0, 30);
  const double base =
      std::min<double>(options_.max_backoff_ms,
                       static_cast<double>(options_.initial_backoff_ms) *
                           std::ldexp(1.0, exponent));
  double u;
  {
    std::lock_guard<std::mutex> lock(mu_);
    u = std::uniform_real_distribution<double>(0.0, 1.0)(rng_);
  }
  return milliseconds(static_cast<int64_t>(base * (1.0 - options_.jitter * u)));
}

}  // namespace skilldb::llm::internal
