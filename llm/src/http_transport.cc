#include "http_transport.h"

#include <httplib.h>

#include <chrono>
#include <cstdio>
#include <fstream>
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

}  // namespace

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
  return Status::Internal(a.request + ": " + std::string(what));
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
    : config_(config), url_(std::move(url)), backoff_(config.retry) {}

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
                                       const std::string& json_body) {
  return Send("POST", path, &json_body);
}

Result<HttpAnswer> HttpTransport::Get(std::string_view path) {
  return Send("GET", path, nullptr);
}

void HttpTransport::SleepFor(milliseconds wait) const {
  if (config_.retry.sleep_for) {
    config_.retry.sleep_for(wait);
  } else {
    std::this_thread::sleep_for(wait);
  }
}

// Tries until an answer that is not retryable, or the retries run out. A
// slot is held only during an attempt, never during the wait between.
Result<HttpAnswer> HttpTransport::Send(std::string_view method,
                                       std::string_view path,
                                       const std::string* body) {
  const std::string request = std::string(method) + " " + Url(path);
  for (int attempt = 0;; ++attempt) {
    if (attempt > 0) retries_.fetch_add(1);
    attempts_.fetch_add(1);
    Attempt a = TryOnce(method, path, body);
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
      const std::string tries = " after " + Plural(attempt + 1, "attempt");
      switch (a.outcome) {
        case Outcome::kAnswered:
          return HttpAnswer{request, a.status, std::move(a.body), attempt + 1};
        case Outcome::kConnection:
          return Status::Unavailable(request + ": " + a.detail + tries);
        case Outcome::kTimeout:
          return Status::DeadlineExceeded(request + ": " + a.detail + tries);
        case Outcome::kTls:
          return Status::Unavailable(request + ": " + a.detail);
        case Outcome::kTooLarge:
        case Outcome::kOther:
          return Status::Internal(request + ": " + a.detail);
      }
    }
    SleepFor(backoff_.Delay(attempt, a.retry_after));
  }
}

HttpTransport::Attempt HttpTransport::TryOnce(std::string_view method,
                                              std::string_view path,
                                              const std::string* body) {
  std::unique_ptr<httplib::Client> client = Acquire();
  Attempt a;
  try {
    if (!client) client = NewClient();
    if (!client->is_valid()) {
      a.outcome = Outcome::kTls;
      a.detail = "cannot set up the HTTP client (TLS context)";
    } else {
      a = TryOnceWith(*client, method, path, body);
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

HttpTransport::Attempt HttpTransport::TryOnceWith(httplib::Client& client,
                                                  std::string_view method,
                                                  std::string_view path,
                                                  const std::string* body) {
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
  const size_t limit = config_.max_response_bytes;
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
  const bool sent = client.send(req, res, error);
  if (sent && error == httplib::Error::Success) {
    a.outcome = Outcome::kAnswered;
    a.status = res.status;
    return a;
  }
  Classify(error, Clock::now() - start, too_large, &a);
  return a;
}

// Sorts a failed attempt into what the retry loop distinguishes.
void HttpTransport::Classify(httplib::Error error, Clock::duration elapsed,
                             bool too_large, Attempt* a) const {
  a->detail = httplib::to_string(error);
  switch (error) {
    case httplib::Error::Canceled:
      a->outcome = too_large ? Outcome::kTooLarge : Outcome::kOther;
      if (too_large) {
        a->detail = "answer larger than max_response_bytes (" +
                    std::to_string(config_.max_response_bytes) + ")";
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
