// Retry timing for the HTTP client: how long to wait before the next
// attempt, from the exponential backoff or from what the server asked for.
//
// ParseRetryAfter and ParseHttpDate are pure. A Backoff is safe for
// concurrent use (its random stream is guarded).
#ifndef SKILLDB_LLM_SRC_RETRY_H_
#define SKILLDB_LLM_SRC_RETRY_H_

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <random>
#include <string_view>

#include "skilldb/llm/client_config.h"

namespace skilldb::llm::internal {

// Parses an HTTP-date (RFC 9110 section 5.6.7: IMF-fixdate, and the obsolete
// RFC 850 and asctime forms recipients must accept). nullopt when `text` is
// none of them or names an impossible date.
std::optional<std::chrono::system_clock::time_point> ParseHttpDate(
    std::string_view text);

// The wait a Retry-After header asks for: delay-seconds, or an HTTP-date
// relative to `now` (a date in the past is a wait of 0). nullopt when the
// value is neither.
std::optional<std::chrono::milliseconds> ParseRetryAfter(
    std::string_view value, std::chrono::system_clock::time_point now);

// OpenAI's retry-after-ms header: a non-negative decimal number of
// milliseconds. nullopt when malformed.
std::optional<std::chrono::milliseconds> ParseRetryAfterMs(
    std::string_view value);

class Backoff {
 public:
  explicit Backoff(const RetryOptions& options);

  // The wait before retry `retry` (0 for the first retry). `server_asked`
  // is the server's Retry-After, if any: honoured when it is at most
  // max_retry_after_ms.
  std::chrono::milliseconds Delay(
      int retry, std::optional<std::chrono::milliseconds> server_asked);

 private:
  RetryOptions options_;
  std::mutex mu_;
  std::mt19937_64 rng_;  // GUARDED_BY(mu_)
};

}  // namespace skilldb::llm::internal

#endif  // SKILLDB_LLM_SRC_RETRY_H_
