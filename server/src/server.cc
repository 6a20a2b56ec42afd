// The server's frame: start and stop, the route wrapper (authentication,
// limits, read-only refusal, exception capture, metrics), and the service
// routes (/healthz, /metrics, /openapi.json).
#include <sys/socket.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <sstream>

#include "openapi.h"
#include "server_impl.h"
#include "skilldb/json.h"
#include "skilldb/util/clock.h"
#include "skilldb/util/file.h"
#include "skilldb/util/json.h"
#include "skilldb/util/parallel.h"

namespace skilldb::server {
namespace internal {
namespace {

// Connections the kernel holds for accept() (clients connecting at once).
constexpr int kListenBacklog = 1024;

// Constant-time comparison: a token check must not leak how much matched.
bool SameToken(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? a[i] : 0;
    const unsigned char y = i < b.size() ? b[i] : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

void SendCoded(httplib::Response& res, int http_status, const char* code,
               const std::string& message) {
  Json j{{"error",
          {{"code", code}, {"status", http_status}, {"message", message}}}};
  SendJson(res, http_status, util::DumpLossy(j));
}

}  // namespace

int HttpStatusFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kAlreadyExists:
    case StatusCode::kFailedPrecondition:
    case StatusCode::kAborted:
      return 409;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kDeadlineExceeded:
      return 504;
    case StatusCode::kNotSupported:
      return 501;
    case StatusCode::kCorruption:
    case StatusCode::kIOError:
    case StatusCode::kInternal:
      return 500;
  }
  return 500;
}

void SendJson(httplib::Response& res, int http_status,
              const std::string& body) {
  res.status = http_status;
  res.set_content(body, "application/json");
}

void SendError(httplib::Response& res, const Status& status) {
  const int http = HttpStatusFor(status.code());
  Json j{{"error",
          {{"code", StatusCodeName(status.code())},
           {"status", http},
           {"message", status.message()}}}};
  SendJson(res, http, util::DumpLossy(j));
}

void SendTooBusy(httplib::Response& res, const std::string& message,
                 int retry_after_s) {
  res.set_header("Retry-After", std::to_string(retry_after_s));
  SendCoded(res, 429, "unavailable", message);
}

Result<Json> ParseBody(const httplib::Request& req, const char* what) {
  // The body is untrusted: nesting and the count of values are bounded
  // while parsing (every later walk of the value recurses on it), and a
  // repeated key is refused rather than silently resolved.
  util::JsonLimits limits;
  limits.max_bytes = req.body.size();  // already within max_body_bytes
  limits.max_depth = 64;
  limits.max_values = req.body.size() / 2 + 16;
  auto j = util::ParseUntrustedJson<Json>(req.body, std::string(what) + " body",
                                          limits);
  if (!j.ok()) return j.status();
  if (!j->is_object()) {
    return Status::InvalidArgument(std::string(what) +
                                   ": the body must be a JSON object");
  }
  return j;
}

Result<std::optional<uint64_t>> UintParam(const httplib::Request& req,
                                          const char* name) {
  if (!req.has_param(name)) return std::optional<uint64_t>();
  const std::string text = req.get_param_value(name);
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    return Status::InvalidArgument("query parameter '" + std::string(name) +
                                   "' must be a non-negative integer");
  }
  return std::optional<uint64_t>(v);
}

ServerImpl::ServerImpl(const ServerOptions& options,
                       std::shared_ptr<Library> library)
    : options_(options), library_(std::move(library)) {
  evaluation_ = options_.evaluation;
  if (!evaluation_) {
    evaluation_ =
        MakeVerifierEvaluation(options_.verifier, options_.evaluation_rounds);
  }
}

ServerImpl::~ServerImpl() { Stop(); }

std::shared_ptr<Library> ServerImpl::library() const {
  std::lock_guard<std::mutex> lock(library_mu_);
  return library_;
}

bool ServerImpl::Authorized(const httplib::Request& req, Access access) const {
  if (options_.tokens.empty() || access == Access::kPublic) return true;
  if (access == Access::kRead && !options_.auth_reads) return true;
  const std::string header = req.get_header_value("Authorization");
  constexpr std::string_view kBearer = "Bearer ";
  if (!header.starts_with(kBearer)) return false;
  const std::string token = header.substr(kBearer.size());
  bool ok = false;
  for (const std::string& t : options_.tokens) ok |= SameToken(t, token);
  return ok;
}

void ServerImpl::Route(const char* method, const std::string& pattern,
                       const std::string& name, Access access,
                       Handler handler) {
  auto wrapped = [this, name, access, handler](const httplib::Request& req,
                                               httplib::Response& res) {
    const auto start = util::SteadyClock::now();
    const int now_in_flight = ++in_flight_;
    if (now_in_flight > options_.max_in_flight) {
      metrics_.Increment("skilldb_http_rejected_total",
                         "Requests refused before they were served, by reason.",
                         "reason", "in_flight");
      SendTooBusy(res,
                  "the server is handling " +
                      std::to_string(options_.max_in_flight) +
                      " requests; retry later",
                  1);
    } else if (!Authorized(req, access)) {
      res.set_header("WWW-Authenticate", "Bearer");
      SendCoded(res, 401, "unauthenticated",
                "this route needs 'Authorization: Bearer TOKEN' with a token "
                "of the server's token file");
    } else if (access == Access::kWrite && options_.read_only) {
      SendCoded(res, 403, "failed_precondition",
                "the server is read-only (skilldb serve --read-only)");
    } else {
      try {
        handler(req, res);
      } catch (const std::exception& e) {
        SendError(res, Status::Internal(std::string("request failed: ") +
                                        e.what()));
      }
    }
    --in_flight_;
    metrics_.ObserveRequest(name, res.status,
                            util::MsSince(start) / 1000.0);
  };
  const std::string m(method);
  if (m == "GET") {
    http_.Get(pattern, wrapped);
  } else if (m == "POST") {
    http_.Post(pattern, wrapped);
  } else if (m == "DELETE") {
    http_.Delete(pattern, wrapped);
  }
}

Status ServerImpl::Bind() {
  if (options_.threads < 1 || options_.max_in_flight < 1 ||
      options_.verify_workers < 1 || options_.max_pending_verifications < 0 ||
      options_.proposal_workers < 0 || options_.query_threads < 1 ||
      options_.evaluation_rounds < 1) {
    return Status::InvalidArgument(
        "server options: threads, max_in_flight, verify_workers, "
        "query_threads and evaluation_rounds must be positive");
  }
  const int threads = options_.threads;
  http_.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  http_.set_payload_max_length(options_.max_body_bytes);
  http_.set_read_timeout(options_.io_timeout_s, 0);
  http_.set_write_timeout(options_.io_timeout_s, 0);
  http_.set_keep_alive_max_count(1000);
  http_.set_keep_alive_timeout(5);
  http_.set_tcp_nodelay(true);
  http_.set_error_handler([](const httplib::Request& req,
                             httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 404) {
      SendCoded(res, 404, "not_found", "no route for " + req.path);
    } else if (res.status == 413) {
      SendCoded(res, 413, "invalid_argument",
                "the request body is over the server's limit");
    } else {
      SendCoded(res, res.status, "invalid_argument", "bad request");
    }
  });
  if (options_.log) {
    auto log = options_.log;
    http_.set_logger([log](const httplib::Request& req,
                           const httplib::Response& res) {
      log(req.method + " " + req.path + " " + std::to_string(res.status));
    });
  }
  AddServiceRoutes();
  AddLibraryRoutes();
  AddProposalRoutes();
  AddKernelGymRoutes();
  AddWebRoutes();
  // cpp-httplib's default socket options set SO_REUSEPORT, which lets a
  // second server bind the same port and take half the connections: only
  // SO_REUSEADDR here. Its listen backlog is compiled into Debian's
  // libcpp-httplib as 5, which drops the SYNs of a few dozen clients
  // connecting at once (each then waits a second for the retransmit):
  // listen() again on the bound socket with a deep one.
  int listen_fd = -1;
  http_.set_socket_options([&listen_fd](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    listen_fd = sock;
  });
  if (options_.port == 0) {
    port_ = http_.bind_to_any_port(options_.host);
    if (port_ <= 0) {
      return Status::Unavailable("cannot bind " + options_.host);
    }
  } else {
    if (!http_.bind_to_port(options_.host, options_.port)) {
      return Status::Unavailable("cannot bind " + options_.host + ":" +
                                 std::to_string(options_.port) +
                                 " (in use, or not an address of this host)");
    }
    port_ = options_.port;
  }
  if (listen_fd >= 0 && ::listen(listen_fd, kListenBacklog) != 0) {
    return Status::Unavailable("cannot listen on " + options_.host + ":" +
                               std::to_string(port_));
  }
  http_.set_socket_options([](socket_t) {});  // no dangling capture
  return Status::Ok();
}

void ServerImpl::StartThreads() {
  verify_pool_ = std::make_unique<VerifyPool>(
      options_.verify_workers, options_.max_pending_verifications);
  listener_ = std::thread([this] {
    http_.listen_after_bind();
    listener_returned_ = true;
  });
  // cpp-httplib 0.11 has no wait_until_ready(), and a stop() before the
  // listener runs would be lost (the listener would then never return):
  // wait until it runs (or gave up at once).
  while (!http_.is_running() && !listener_returned_) std::this_thread::yield();
  if (!options_.read_only) {
    // Fewer when the system refuses threads; with none, proposals wait
    // in the queue, unprocessed.
    util::StartThreads(
        options_.proposal_workers, [this] { ProposalWorker(); },
        &proposal_workers_);
  }
  if (options_.refresh_ms > 0 && options_.reopen) {
    refresher_ = std::thread([this] { Refresher(); });
  }
}

void ServerImpl::Refresher() {
  std::unique_lock<std::mutex> lock(stop_mu_);
  while (!stopping_) {
    stop_cv_.wait_for(lock, std::chrono::milliseconds(options_.refresh_ms));
    if (stopping_) break;
    lock.unlock();
    auto fresh = options_.reopen();
    if (fresh.ok()) {
      std::shared_ptr<Library> next = std::move(fresh).value();
      std::lock_guard<std::mutex> guard(library_mu_);
      library_ = std::move(next);
    }
    lock.lock();
  }
}

void ServerImpl::Stop() {
  {
    std::lock_guard<std::mutex> lock(stop_mu_);
    if (stopped_) return;
    stopping_ = true;
  }
  stop_cv_.notify_all();
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    ++queue_wakeups_;
  }
  queue_cv_.notify_all();
  http_.stop();
  if (listener_.joinable()) listener_.join();
  for (auto& t : proposal_workers_) t.join();
  proposal_workers_.clear();
  if (verify_pool_) verify_pool_->Stop();
  if (refresher_.joinable()) refresher_.join();
  {
    std::lock_guard<std::mutex> lock(stop_mu_);
    stopped_ = true;
  }
  stop_cv_.notify_all();
}

void ServerImpl::Wait() {
  std::unique_lock<std::mutex> lock(stop_mu_);
  stop_cv_.wait(lock, [&] { return stopped_; });
}

void ServerImpl::AddServiceRoutes() {
  Route("GET", "/healthz", "healthz", Access::kPublic,
        [this](const httplib::Request&, httplib::Response& res) {
          auto lib = library();
          const LibraryInfo info = lib->Info();
          Json j{{"status", "ok"},
                 {"version", info.head},
                 {"read_only", options_.read_only || info.read_only},
                 {"verifier", options_.verifier
                                  ? Json(std::string(options_.verifier->Name()))
                                  : Json(nullptr)}};
          auto counts = lib->CountQueued();
          if (counts.ok()) j["proposals"] = Json::parse(ToJson(*counts));
          SendJson(res, 200, j.dump());
        });
  Route("GET", "/metrics", "metrics", Access::kRead,
        [this](const httplib::Request&, httplib::Response& res) {
          auto lib = library();
          std::vector<GaugeSample> gauges;
          gauges.push_back({"skilldb_library_version",
                            "The newest version of the library.", "",
                            static_cast<double>(lib->CurrentVersion())});
          auto counts = lib->CountQueued();
          if (counts.ok()) {
            const std::pair<const char*, uint64_t> states[] = {
                {"queued", counts->queued},       {"verifying", counts->verifying},
                {"committed", counts->committed}, {"rejected", counts->rejected},
                {"conflict", counts->conflict},   {"failed", counts->failed}};
            for (const auto& [state, n] : states) {
              gauges.push_back({"skilldb_proposals",
                                "Proposals in the durable queue, by state.",
                                std::string("state=\"") + state + "\"",
                                static_cast<double>(n)});
            }
          }
          gauges.push_back({"skilldb_http_in_flight",
                            "Requests being handled.", "",
                            static_cast<double>(in_flight_.load())});
          gauges.push_back({"skilldb_verifications_running",
                            "Synchronous verifications running.", "",
                            static_cast<double>(verify_pool_->running())});
          gauges.push_back({"skilldb_verifications_pending",
                            "Synchronous verifications waiting for a worker.",
                            "", static_cast<double>(verify_pool_->pending())});
          res.status = 200;
          res.set_content(metrics_.Render(gauges),
                          "text/plain; version=0.0.4; charset=utf-8");
        });
  Route("GET", "/openapi.json", "openapi", Access::kPublic,
        [](const httplib::Request&, httplib::Response& res) {
          SendJson(res, 200, OpenApiJson());
        });
}

}  // namespace internal

Result<std::unique_ptr<Server>> Server::Start(const ServerOptions& options,
                                              std::shared_ptr<Library> library) {
  if (!library) return Status::InvalidArgument("no library to serve");
  auto server = std::make_unique<internal::ServerImpl>(options,
                                                       std::move(library));
  SKILLDB_RETURN_IF_ERROR(server->Bind());
  server->StartThreads();
  return std::unique_ptr<Server>(std::move(server));
}

Result<std::vector<std::string>> ReadTokenFile(const std::string& path) {
  auto text = util::ReadFile(path, int64_t{1} << 20);
  if (!text.ok()) return text.status().WithContext("token file");
  std::istringstream in(*text);
  std::vector<std::string> tokens;
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' ||
                             line.back() == '\t')) {
      line.pop_back();
    }
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    line = line.substr(first);
    if (line.size() < 16) {
      return Status::InvalidArgument("token file '" + path +
                                     "': a token is shorter than 16 "
                                     "characters");
    }
    tokens.push_back(line);
  }
  if (tokens.empty()) {
    return Status::InvalidArgument("token file '" + path + "' has no token");
  }
  return tokens;
}

}  // namespace skilldb::server
