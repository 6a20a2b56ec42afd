// HttpTransport: the HTTP layer under the OpenAI-compatible and rerank
// clients. One POST or GET at a time per slot, at most max_in_flight slots
// (each its own keep-alive connection: cpp-httplib serializes the requests
// of one httplib::Client), retries with backoff, bounded answers, and
// errors that name the request and what came back.
//
// Every request has an overall deadline (ClientConfig::request_timeout_ms:
// attempts, waits between them and every byte of the answer): a watchdog
// thread cuts the connection of an attempt that runs past it, so a server
// that drips bytes or never answers cannot hold a caller longer. The
// configured API key is replaced by "[redacted]" in everything an answer
// hands on (bodies, excerpts, error messages), so a server echoing it
// cannot put it on a terminal or into stored records.
//
// An HttpTransport is safe for concurrent use by multiple threads.
#ifndef SKILLDB_LLM_SRC_HTTP_TRANSPORT_H_
#define SKILLDB_LLM_SRC_HTTP_TRANSPORT_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "retry.h"
#include "skilldb/llm/client_config.h"
#include "skilldb/status.h"

namespace httplib {
class Client;
enum class Error;
}  // namespace httplib

namespace skilldb::llm::internal {

// What a server answered (the last attempt's answer after any retries).
struct HttpAnswer {
  std::string request;  // "POST http://host:8000/v1/chat/completions"
  int status = 0;
  std::string body;
  int attempts = 1;
  bool ok() const { return status >= 200 && status < 300; }
};

// A bounded, printable excerpt of `body` for error messages: control and
// non-ASCII bytes escaped as \xNN, at most `max_bytes` of it.
std::string Excerpt(std::string_view body, size_t max_bytes = 300);

// The Status for a non-2xx answer: "<request>: HTTP <code> after <n>
// attempts: <excerpt>", with the code mapped: 400/413/422 InvalidArgument,
// 401/403 FailedPrecondition, 404 NotFound, 408 DeadlineExceeded,
// 429/5xx Unavailable, others Internal.
Status StatusForAnswer(const HttpAnswer& answer);

// An error about a 2xx answer's content: InvalidArgument "<request>:
// <what>" (the server is the user's input, as a model file is: a malformed
// answer is not skilldb's internal error).
Status BadAnswer(const HttpAnswer& answer, std::string_view what);

// `text` with every occurrence of `secret` (and of its JSON-escaped
// spellings) replaced by "[redacted]". Secrets shorter than 8 bytes are
// left alone: replacing a toy key such as "x" would garble every answer.
std::string Redact(std::string text, std::string_view secret);

struct TransportStats {
  uint64_t attempts = 0;  // HTTP attempts made
  uint64_t retries = 0;   // attempts after the first of their request
  uint64_t failures = 0;  // requests that ended without a 2xx answer
};

class HttpTransport {
 public:
  // Errors: InvalidArgument for a config that fails ValidateClientConfig or
  // an unreadable ca_cert_path.
  static Result<std::unique_ptr<HttpTransport>> Create(
      const ClientConfig& config);
  ~HttpTransport();
  HttpTransport(const HttpTransport&) = delete;
  HttpTransport& operator=(const HttpTransport&) = delete;

  // POSTs `json_body` to `path` ("/v1/chat/completions": a full path; see
  // Path()) and returns the answer, 2xx or not, after the retries the
  // config allows, within the request deadline. Answers larger than
  // `max_bytes` (0: the config's max_response_bytes; never more) are
  // refused unread. Errors (no usable HTTP answer): Unavailable when the
  // server cannot be reached or TLS fails, DeadlineExceeded on a timeout or
  // the request deadline, InvalidArgument for an answer over the size
  // bound. Blocks while max_in_flight requests are in flight.
  Result<HttpAnswer> Post(std::string_view path, const std::string& json_body,
                          size_t max_bytes = 0);
  Result<HttpAnswer> Get(std::string_view path, size_t max_bytes = 0);

  // The base URL's path followed by `endpoint` ("/chat/completions" ->
  // "/v1/chat/completions").
  std::string Path(std::string_view endpoint) const;
  // "http://host:port" + path.
  std::string Url(std::string_view path) const;
  const BaseUrl& base_url() const { return url_; }

  TransportStats stats() const;

 private:
  struct Attempt;
  HttpTransport(const ClientConfig& config, BaseUrl url);

  // Cuts attempts that run past their deadline (httplib's stop() shuts the
  // socket down from another thread) and reports long waits through
  // ClientConfig::on_wait. One thread, started with the first request.
  class Watchdog;

  Result<HttpAnswer> Send(std::string_view method, std::string_view path,
                          const std::string* body, size_t max_bytes,
                          std::chrono::steady_clock::time_point deadline);
  // The end of the request after its last attempt, and the messages for a
  // retry that would pass the deadline and for a wait before a retry.
  static Result<HttpAnswer> GiveUp(const std::string& request, Attempt a,
                                   int attempts);
  std::string PastDeadline(const std::string& request, const std::string& why,
                           int attempts) const;
  std::string WaitMessage(const std::string& request, const std::string& why,
                          std::chrono::milliseconds wait,
                          int next_attempt) const;
  Attempt TryOnce(std::string_view method, std::string_view path,
                  const std::string* body, size_t max_bytes,
                  std::chrono::steady_clock::time_point deadline);
  Attempt TryOnceWith(httplib::Client& client, std::string_view method,
                      std::string_view path, const std::string* body,
                      size_t max_bytes,
                      std::chrono::steady_clock::time_point deadline);
  void Classify(httplib::Error error,
                std::chrono::steady_clock::duration elapsed, bool too_large,
                size_t max_bytes, Attempt* a) const;
  std::unique_ptr<httplib::Client> Acquire();
  void Release(std::unique_ptr<httplib::Client> client);
  std::unique_ptr<httplib::Client> NewClient() const;
  void SleepFor(std::chrono::milliseconds wait) const;

  const ClientConfig config_;
  const BaseUrl url_;
  Backoff backoff_;

  std::mutex mu_;
  std::condition_variable slot_freed_;
  int in_flight_ = 0;                                   // GUARDED_BY(mu_)
  std::vector<std::unique_ptr<httplib::Client>> idle_;  // GUARDED_BY(mu_)

  std::unique_ptr<Watchdog> watchdog_;

  std::atomic<uint64_t> attempts_{0};
  std::atomic<uint64_t> retries_{0};
  std::atomic<uint64_t> failures_{0};
};

}  // namespace skilldb::llm::internal

#endif  // SKILLDB_LLM_SRC_HTTP_TRANSPORT_H_
