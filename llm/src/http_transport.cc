#include "http_transport.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <optional>
#include <thread>

namespace skilldb::llm::internal {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

enum class Outcome {
  kAnswered,    // an HTTP answer was read whole
  kConnection,  // refused, reset, dropped mid-answer
  kTimeout,     // connect or read timeout
  kTooLarge,    // over max_response_bytes
  kTls,         // handshake or certificate failure
  kDeadline,    // cut by the watchdog at the request deadline
  kOther,       // anything else (not retried)
};

bool RetryableStatus(int status) {
  return status == 408 || status == 429 || (status >= 500 && status <= 599);
}

void SetTimeout(httplib::Client& c, int ms,
                void (httplib::Client::*set)(time_t, time_t)) {
  (c.*set)(ms / 1000, static_cast<time_t>(ms % 1000) * 1000);
}

// What the answer asks the next attempt to wait: OpenAI's retry-after-ms
// first (finer), then Retry-After.
std::optional<milliseconds> ServerWait(const httplib::Response& r) {
  std::optional<milliseconds> wait;
  if (r.has_header("retry-after-ms")) {
    wait = ParseRetryAfterMs(r.get_header_value("retry-after-ms"));
  }
  if (!wait && r.has_header("Retry-After")) {
    wait = ParseRetryAfter(r.get_header_value("Retry-After"),
                           std::chrono::system_clock::now());
  }
  return wait;
}

std::string Plural(int n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string Seconds(Clock::duration d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s",
                std::chrono::duration<double>(d).count());
  return buf;
}

void ReplaceAll(std::string* text, std::string_view from,
                std::string_view to) {
  if (from.empty()) return;
  size_t pos = 0;
  while ((pos = text->find(from, pos)) != std::string::npos) {
    text->replace(pos, from.size(), to);
    pos += to.size();
  }
}

}  // namespace

std::string Redact(std::string text, std::string_view secret) {
  if (secret.size() < 8) return text;
  // The key as sent, and as a JSON encoder may have written it back.
  std::string json_escaped;
  for (char c : secret) {
    if (c == '"' || c == '\\') json_escaped += '\\';
    json_escaped += c;
  }
  std::string slash_escaped;
  for (char c : json_escaped) {
    if (c == '/') slash_escaped += '\\';
    slash_escaped += c;
  }
  for (const std::string_view form :
       {std::string_view(slash_escaped), std::string_view(json_escaped),
        secret}) {
    ReplaceAll(&text, form, "[redacted]");
  }
  return text;
}

class HttpTransport::Watchdog {
 public:
  explicit Watchdog(std::function<void(std::string_view)> on_wait)
      : on_wait_(std::move(on_wait)) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  // Watches `client` until Unwatch(token): at `deadline` it sets *fired and
  // stops the client (again every 100 ms while the attempt runs, as a
  // connect in progress does not see the first stop).
  uint64_t Watch(httplib::Client* client, Clock::time_point deadline,
                 std::string what, std::atomic<bool>* fired) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
    const uint64_t token = ++next_token_;
    const auto now = Clock::now();
    entries_[token] = Entry{client, deadline, now + kNotice, now,
                            std::move(what), fired};
    cv_.notify_all();
    return token;
  }
  void Unwatch(uint64_t token) {
    std::lock_guard<std::mutex> lock(mu_);
    entries_.erase(token);
  }

 private:
  static constexpr std::chrono::seconds kNotice{10};
  struct Entry {
    httplib::Client* client;
    Clock::time_point deadline;
    Clock::time_point notice;
    Clock::time_point started;
    std::string what;
    std::atomic<bool>* fired;
  };

  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      Clock::time_point wake = Clock::now() + std::chrono::hours(1);
      for (auto& [token, e] : entries_) {
        wake = std::min({wake, e.deadline, e.notice});
      }
      cv_.wait_until(lock, wake);
      const auto now = Clock::now();
      for (auto& [token, e] : entries_) {
        if (now >= e.deadline) {
          e.fired->store(true);
          e.client->stop();  // under mu_: Unwatch cannot free it meanwhile
          e.deadline = now + std::chrono::milliseconds(100);
        }
        if (now >= e.notice) {
          e.notice = now + kNotice;
          if (on_wait_) {
            on_wait_("waiting for " + e.what + ": " +
                     Seconds(now - e.started) + " so far");
          }
        }
      }
    }
  }

  const std::function<void(std::string_view)> on_wait_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<uint64_t, Entry> entries_;  // GUARDED_BY(mu_)
  uint64_t next_token_ = 0;            // GUARDED_BY(mu_)
  bool stop_ = false;                  // GUARDED_BY(mu_)
  std::thread thread_;
};

struct HttpTransport::Attempt {
  Outcome outcome = Outcome::kOther;
  int status = 0;
  std::string body;
  std::optional<milliseconds> retry_after;
  std::string detail;  // what went wrong, for messages
};

std::string Excerpt(std::string_view body, size_t max_bytes) {
  std::string out;
  const size_t n = std::min(body.size(), max_bytes);
  for (size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(body[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char buf[5];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    }
  }
  if (body.size() > n) {
    out += "... (" + std::to_string(body.size()) + " bytes)";
  }
  if (body.empty()) out = "(empty body)";
  return out;
}

Status StatusForAnswer(const HttpAnswer& a) {
  StatusCode code = StatusCode::kInternal;
  if (a.status == 400 || a.status == 413 || a.status == 422) {
    code = StatusCode::kInvalidArgument;
  } else if (a.status == 401 || a.status == 403) {
    code = StatusCode::kFailedPrecondition;
  } else if (a.status == 404) {
    code = StatusCode::kNotFound;
  } else if (a.status == 408) {
    code = StatusCode::kDeadlineExceeded;
  } else if (a.status == 429 || (a.status >= 500 && a.status <= 599)) {
    code = StatusCode::kUnavailable;
  }
  return Status(code, a.request + ": HTTP " + std::to_string(a.status) +
                          " after " + Plural(a.attempts, "attempt") + ": " +
                          Excerpt(a.body));
}

Status BadAnswer(const HttpAnswer& a, std::string_view what) {
  return Status::InvalidArgument(a.request + ": " + std::string(what));
}

Result<std::unique_ptr<HttpTransport>> HttpTransport::Create(
    const ClientConfig& config) {
  SKILLDB_RETURN_IF_ERROR(ValidateClientConfig(config));
  SKILLDB_ASSIGN_OR_RETURN(BaseUrl url, ParseBaseUrl(config.base_url));
  if (!config.ca_cert_path.empty() && !std::ifstream(config.ca_cert_path)) {
    return Status::InvalidArgument("ca_cert_path '" + config.ca_cert_path +
                                   "' cannot be read");
  }
  return std::unique_ptr<HttpTransport>(
      new HttpTransport(config, std::move(url)));
}

HttpTransport::HttpTransport(const ClientConfig& config, BaseUrl url)
    : config_(config),
      url_(std::move(url)),
      backoff_(config.retry),
      watchdog_(std::make_unique<Watchdog>(config.on_wait)) {}

HttpTransport::~HttpTransport() = default;

std::string HttpTransport::Path(std::string_view endpoint) const {
  return url_.path + std::string(endpoint);
}

std::string HttpTransport::Url(std::string_view path) const {
  return url_.Origin() + std::string(path);
}

TransportStats HttpTransport::stats() const {
  return {attempts_.load(), retries_.load(), failures_.load()};
}

Result<HttpAnswer> HttpTransport::Post(std::string_view path,
                                       const std::string& json_body,
                                       size_t max_bytes) {
  return Send("POST", path, &json_body, max_bytes,
              Clock::now() + milliseconds(config_.request_timeout_ms));
}

Result<HttpAnswer> HttpTransport::Get(std::string_view path,
                                      size_t max_bytes) {
  return Send("GET", path, nullptr, max_bytes,
              Clock::now() + milliseconds(config_.request_timeout_ms));
}

void HttpTransport::SleepFor(milliseconds wait) const {
  if (config_.retry.sleep_for) {
    config_.retry.sleep_for(wait);
  } else {
    std::this_thread::sleep_for(wait);
  }
}

// The end of a request whose last attempt `a` (of `attempts`) is not
// retried: the server's answer, or the status its outcome maps to.
Result<HttpAnswer> HttpTransport::GiveUp(const std::string& request, Attempt a,
                                         int attempts) {
  const std::string what = request + ": " + a.detail;
  const std::string tries = " after " + Plural(attempts, "attempt");
  switch (a.outcome) {
    case Outcome::kAnswered:
      return HttpAnswer{request, a.status, std::move(a.body), attempts};
    case Outcome::kConnection:
      return Status::Unavailable(what + tries);
    case Outcome::kTimeout:
    case Outcome::kDeadline:
      return Status::DeadlineExceeded(what + tries);
    case Outcome::kTls:
      return Status::Unavailable(what);
    case Outcome::kTooLarge:
      return Status::InvalidArgument(what);
    case Outcome::kOther:
      break;
  }
  return Status::Internal(what);
}

std::string HttpTransport::PastDeadline(const std::string& request,
                                        const std::string& why,
                                        int attempts) const {
  return request + ": " + why + " after " + Plural(attempts, "attempt") +
         "; the next would start after the request deadline (" +
         std::to_string(config_.request_timeout_ms) + " ms)";
}

std::string HttpTransport::WaitMessage(const std::string& request,
                                       const std::string& why,
                                       milliseconds wait,
                                       int next_attempt) const {
  return "retrying " + request + " in " +
         Seconds(std::chrono::duration_cast<Clock::duration>(wait)) +
         " (attempt " + std::to_string(next_attempt) + " of " +
         std::to_string(config_.retry.max_retries + 1) + "): " + why;
}

// Tries until an answer that is not retryable, the retries run out or the
// deadline passes. A slot is held only during an attempt, never during the
// wait between.
Result<HttpAnswer> HttpTransport::Send(std::string_view method,
                                       std::string_view path,
                                       const std::string* body,
                                       size_t max_bytes,
                                       Clock::time_point deadline) {
  const std::string request = std::string(method) + " " + Url(path);
  const size_t limit = max_bytes == 0
                           ? config_.max_response_bytes
                           : std::min(max_bytes, config_.max_response_bytes);
  for (int attempt = 0;; ++attempt) {
    if (attempt > 0) retries_.fetch_add(1);
    attempts_.fetch_add(1);
    Attempt a = TryOnce(method, path, body, limit, deadline);
    // Nothing the server sent leaves here with the key in it.
    a.body = Redact(std::move(a.body), config_.api_key);
    a.detail = Redact(std::move(a.detail), config_.api_key);
    const bool answered = a.outcome == Outcome::kAnswered;
    const bool retryable =
        (answered && RetryableStatus(a.status)) ||
        a.outcome == Outcome::kConnection ||
        (a.outcome == Outcome::kTimeout && config_.retry.retry_on_timeout);
    if (answered && !retryable) {
      if (a.status < 200 || a.status > 299) failures_.fetch_add(1);
      return HttpAnswer{request, a.status, std::move(a.body), attempt + 1};
    }
    if (!retryable || attempt >= config_.retry.max_retries) {
      failures_.fetch_add(1);
      return GiveUp(request, std::move(a), attempt + 1);
    }
    const milliseconds wait = backoff_.Delay(attempt, a.retry_after);
    const std::string why =
        answered ? "HTTP " + std::to_string(a.status) : a.detail;
    if (Clock::now() + wait >= deadline) {
      failures_.fetch_add(1);
      return Status::DeadlineExceeded(PastDeadline(request, why, attempt + 1));
    }
    if (config_.on_wait) {
      config_.on_wait(WaitMessage(request, why, wait, attempt + 2));
    }
    SleepFor(wait);
  }
}

HttpTransport::Attempt HttpTransport::TryOnce(std::string_view method,
                                              std::string_view path,
                                              const std::string* body,
                                              size_t max_bytes,
                                              Clock::time_point deadline) {
  std::unique_ptr<httplib::Client> client = Acquire();
  Attempt a;
  try {
    if (!client) client = NewClient();
    if (!client->is_valid()) {
      a.outcome = Outcome::kTls;
      a.detail = "cannot set up the HTTP client (TLS context)";
    } else {
      a = TryOnceWith(*client, method, path, body, max_bytes, deadline);
    }
  } catch (const std::exception& e) {
    a.outcome = Outcome::kOther;
    a.detail = std::string("HTTP library error: ") + e.what();
  } catch (...) {
    a.outcome = Outcome::kOther;
    a.detail = "HTTP library error";
  }
  // A connection that failed is not reused: the next attempt starts fresh.
  if (a.outcome != Outcome::kAnswered) client.reset();
  Release(std::move(client));
  return a;
}

HttpTransport::Attempt HttpTransport::TryOnceWith(
    httplib::Client& client, std::string_view method, std::string_view path,
    const std::string* body, size_t max_bytes, Clock::time_point deadline) {
  Attempt a;
  httplib::Request req;
  req.method = std::string(method);
  req.path = std::string(path);
  req.set_header("Accept", "application/json");
  req.set_header("User-Agent", "skilldb-llm/0.1");
  if (!config_.api_key.empty()) {
    req.set_header("Authorization", "Bearer " + config_.api_key);
  }
  if (body != nullptr) {
    req.set_header("Content-Type", "application/json");
    req.body = *body;
  }
  bool too_large = false;
  const size_t limit = max_bytes;
  req.response_handler = [&](const httplib::Response& r) {
    a.status = r.status;
    a.retry_after = ServerWait(r);
    return true;
  };
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    if (a.body.size() + n > limit) {
      too_large = true;
      return false;
    }
    a.body.append(data, n);
    return true;
  };
  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  const auto start = Clock::now();
  if (start >= deadline) {
    a.outcome = Outcome::kDeadline;
    a.detail = "no complete answer within the request deadline (" +
               std::to_string(config_.request_timeout_ms) + " ms)";
    return a;
  }
  std::atomic<bool> cut{false};
  const uint64_t token = watchdog_->Watch(
      &client, deadline, std::string(method) + " " + Url(path), &cut);
  const bool sent = client.send(req, res, error);
  watchdog_->Unwatch(token);
  if (cut.load()) {
    a.outcome = Outcome::kDeadline;
    a.detail = "no complete answer within the request deadline (" +
               std::to_string(config_.request_timeout_ms) + " ms)";
    return a;
  }
  if (sent && error == httplib::Error::Success) {
    a.outcome = Outcome::kAnswered;
    a.status = res.status;
    return a;
  }
  if (too_large && a.status >= 300) {
    // An error page longer than the bound: its status is the answer (and
    // says whether to retry), the bytes read so far its excerpt.
    a.outcome = Outcome::kAnswered;
    return a;
  }
  Classify(error, Clock::now() - start, too_large, max_bytes, &a);
  return a;
}

// Sorts a failed attempt into what the retry loop distinguishes.
void HttpTransport::Classify(httplib::Error error, Clock::duration elapsed,
                             bool too_large, size_t max_bytes,
                             Attempt* a) const {
  a->detail = httplib::to_string(error);
  switch (error) {
    case httplib::Error::Canceled:
      a->outcome = too_large ? Outcome::kTooLarge : Outcome::kOther;
      if (too_large) {
        a->detail = "answer larger than " + std::to_string(max_bytes) +
                    " bytes, the bound for this request";
      }
      break;
    case httplib::Error::ConnectionTimeout:
      a->outcome = Outcome::kTimeout;
      a->detail = "no connection within " +
                  std::to_string(config_.connect_timeout_ms) + " ms";
      break;
    case httplib::Error::Read:
      // cpp-httplib reports a read timeout as a read error: tell them
      // apart by how long the attempt waited.
      if (elapsed >= milliseconds(config_.read_timeout_ms) * 9 / 10) {
        a->outcome = Outcome::kTimeout;
        a->detail = "no answer within the read timeout (" +
                    std::to_string(config_.read_timeout_ms) + " ms)";
      } else {
        a->outcome = Outcome::kConnection;
        a->detail = "connection lost while reading the answer";
      }
      break;
    case httplib::Error::Connection:
    case httplib::Error::Write:
    case httplib::Error::BindIPAddress:
      a->outcome = Outcome::kConnection;
      a->detail = "cannot connect or send (" + a->detail + ")";
      break;
    case httplib::Error::SSLConnection:
    case httplib::Error::SSLLoadingCerts:
    case httplib::Error::SSLServerVerification:
      a->outcome = Outcome::kTls;
      a->detail = "TLS failed (" + a->detail + ")";
      break;
    default:
      a->outcome = Outcome::kOther;
      break;
  }
}

std::unique_ptr<httplib::Client> HttpTransport::Acquire() {
  std::unique_lock<std::mutex> lock(mu_);
  slot_freed_.wait(lock, [&] { return in_flight_ < config_.max_in_flight; });
  ++in_flight_;
  if (idle_.empty()) return nullptr;
  std::unique_ptr<httplib::Client> c = std::move(idle_.back());
  idle_.pop_back();
  return c;
}

void HttpTransport::Release(std::unique_ptr<httplib::Client> client) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    --in_flight_;
    if (client) idle_.push_back(std::move(client));
  }
  slot_freed_.notify_one();
}

std::unique_ptr<httplib::Client> HttpTransport::NewClient() const {
  auto c = std::make_unique<httplib::Client>(url_.Origin());
  SetTimeout(*c, config_.connect_timeout_ms,
             &httplib::Client::set_connection_timeout);
  SetTimeout(*c, config_.read_timeout_ms, &httplib::Client::set_read_timeout);
  SetTimeout(*c, config_.write_timeout_ms, &httplib::Client::set_write_timeout);
  c->set_keep_alive(true);
  c->set_tcp_nodelay(true);
  // A redirect would carry the Authorization header to wherever it points.
  c->set_follow_location(false);
  if (url_.scheme == "https") {
    c->enable_server_certificate_verification(config_.verify_tls);
    if (!config_.ca_cert_path.empty())
      c->set_ca_cert_path(config_.ca_cert_path);
  }
  return c;
}

}  // namespace skilldb::llm::internal
