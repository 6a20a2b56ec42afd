#include "scripted_llm_server.h"

#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <condition_variable>
#include <deque>
#include <fstream>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

namespace skilldb::scripted {

using Clock = std::chrono::steady_clock;

struct ScriptedLlmServer::Impl {
  ServerOptions options;
  std::unique_ptr<httplib::Server> server;
  std::thread listener;

  mutable std::mutex mu;
  mutable std::condition_variable changed;
  std::deque<ScriptedReply> replies;  // GUARDED_BY(mu)
  ScriptedReply default_reply;        // GUARDED_BY(mu)
  std::vector<ReceivedRequest> log;   // GUARDED_BY(mu)
  int in_flight = 0;                  // GUARDED_BY(mu)
  int max_in_flight = 0;              // GUARDED_BY(mu)
  uint64_t serial = 0;                // GUARDED_BY(mu)
  bool stopping = false;              // GUARDED_BY(mu)

  void Route();
  void Handle(Endpoint endpoint, const httplib::Request& req,
              httplib::Response& res);
  ScriptedReply Take(Endpoint endpoint, const std::string& prompt);
  void Wait(std::chrono::microseconds delay);
  std::string LogJson() const;
};

namespace {

bool Matches(const ScriptedReply& r, Endpoint endpoint,
             const std::string& prompt) {
  const bool endpoint_ok =
      r.endpoint == endpoint ||
      (r.endpoint == Endpoint::kAny && endpoint != Endpoint::kModels);
  return endpoint_ok && (r.prompt_contains.empty() ||
                         prompt.find(r.prompt_contains) != std::string::npos);
}

std::map<std::string, std::string> LowerHeaders(
    const httplib::Headers& headers) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : headers) {
    std::string key = k;
    std::transform(key.begin(), key.end(), key.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    out[key] = v;
  }
  return out;
}

// `wait` sleeps between drips; false when the server is stopping.
void Deliver(const ScriptedReply& reply, const Answer& a,
             httplib::Response& res,
             const std::function<bool(std::chrono::milliseconds)>& wait) {
  res.status = a.status;
  for (const auto& [k, v] : a.headers) res.set_header(k, v);
  const size_t cut = std::min(reply.truncate_at, a.body.size());
  switch (reply.delivery) {
    case Delivery::kWhole:
      res.set_content(a.body, a.content_type);
      break;
    case Delivery::kTruncated:
      res.set_content(a.body.substr(0, cut), a.content_type);
      break;
    case Delivery::kDropped: {
      // Announce the whole length, send `cut` bytes, then fail the provider:
      // cpp-httplib closes the connection mid-body.
      auto body = std::make_shared<std::string>(a.body);
      res.set_content_provider(
          body->size(), a.content_type,
          [body, cut](size_t offset, size_t length, httplib::DataSink& sink) {
            if (offset >= cut) return false;
            sink.write(body->data() + offset, std::min(length, cut - offset));
            return true;
          });
      break;
    }
    case Delivery::kDrip: {
      auto body = std::make_shared<std::string>(a.body);
      const size_t step = std::max<size_t>(1, reply.drip_bytes);
      const auto interval = std::chrono::milliseconds(reply.drip_interval_ms);
      res.set_content_provider(
          body->size(), a.content_type,
          [body, step, interval, wait](size_t offset, size_t length,
                                       httplib::DataSink& sink) {
            if (!wait(interval)) return false;
            return sink.write(body->data() + offset, std::min(length, step));
          });
      break;
    }
  }
}

}  // namespace

ScriptedReply ScriptedLlmServer::Impl::Take(Endpoint endpoint,
                                            const std::string& prompt) {
  for (auto it = replies.begin(); it != replies.end(); ++it) {
    if (!Matches(*it, endpoint, prompt)) continue;
    ScriptedReply r = *it;
    if (it->times > 0 && --it->times == 0) replies.erase(it);
    return r;
  }
  return endpoint == Endpoint::kModels ? ScriptedReply() : default_reply;
}

void ScriptedLlmServer::Impl::Wait(std::chrono::microseconds delay) {
  if (delay.count() <= 0) return;
  std::unique_lock<std::mutex> lock(mu);
  changed.wait_for(lock, delay, [&] { return stopping; });
}

void ScriptedLlmServer::Impl::Handle(Endpoint endpoint,
                                     const httplib::Request& req,
                                     httplib::Response& res) {
  ReceivedRequest record;
  record.method = req.method;
  record.path = req.path;
  record.endpoint = endpoint;
  record.headers = LowerHeaders(req.headers);
  record.body = req.body;
  record.prompt = MatchText(endpoint, req.body);
  record.arrived = Clock::now();
  ScriptedReply reply;
  uint64_t id = 0;
  {
    std::lock_guard<std::mutex> lock(mu);
    max_in_flight = std::max(max_in_flight, ++in_flight);
    id = ++serial;
    record.serial = id;
    reply = Take(endpoint, record.prompt);
    reply.request_serial = id;
    log.push_back(record);
  }
  changed.notify_all();
  const Answer a = Respond(endpoint, req.body, reply, options.protocol, id);
  const LatencyModel& l = options.latency;
  Wait(std::chrono::milliseconds(reply.delay_ms + l.base_ms) +
       std::chrono::microseconds(
           static_cast<int64_t>(l.per_prompt_token_us) * a.prompt_tokens +
           static_cast<int64_t>(l.per_completion_token_us) *
               a.completion_tokens));
  Deliver(reply, a, res, [this](std::chrono::milliseconds d) {
    Wait(d);
    std::lock_guard<std::mutex> lock(mu);
    return !stopping;
  });
  {
    std::lock_guard<std::mutex> lock(mu);
    // Found by serial: ClearLog may have run meanwhile.
    for (auto it = log.rbegin(); it != log.rend(); ++it) {
      if (it->serial == id) {
        it->status = a.status;
        break;
      }
    }
    --in_flight;
  }
  changed.notify_all();
}

std::string ScriptedLlmServer::Impl::LogJson() const {
  using nlohmann::json;
  std::lock_guard<std::mutex> lock(mu);
  json requests = json::array();
  json by_endpoint = json::object();
  for (const ReceivedRequest& r : log) {
    const std::string name(EndpointName(r.endpoint));
    by_endpoint[name] = by_endpoint.value(name, 0) + 1;
    requests.push_back({{"method", r.method},
                        {"path", r.path},
                        {"endpoint", name},
                        {"prompt", r.prompt},
                        {"status", r.status},
                        {"body", r.body}});
  }
  return json{{"count", log.size()},
              {"max_concurrent", max_in_flight},
              {"pending_replies", replies.size()},
              {"by_endpoint", by_endpoint},
              {"requests", requests}}
      .dump(-1, ' ', false, json::error_handler_t::replace);
}

void ScriptedLlmServer::Impl::Route() {
  httplib::Server& s = *server;
  auto on = [this](Endpoint e) {
    return [this, e](const httplib::Request& req, httplib::Response& res) {
      Handle(e, req, res);
    };
  };
  s.Post("/v1/chat/completions", on(Endpoint::kChat));
  s.Post("/v1/completions", on(Endpoint::kCompletions));
  s.Get("/v1/models", on(Endpoint::kModels));
  // vLLM serves the Cohere shape at all three; TEI's /rerank takes "texts".
  auto rerank = [this](const httplib::Request& req, httplib::Response& res) {
    auto body = nlohmann::json::parse(req.body, nullptr, false);
    const bool tei = body.is_object() && body.contains("texts");
    Handle(tei ? Endpoint::kTeiRerank : Endpoint::kRerank, req, res);
  };
  s.Post("/v1/rerank", rerank);
  s.Post("/v2/rerank", rerank);
  s.Post("/rerank", rerank);
  // Control endpoints for shell tests and benchmarks.
  s.Get("/scripted/requests",
        [this](const httplib::Request&, httplib::Response& res) {
          res.set_content(LogJson(), "application/json");
        });
  s.Post("/scripted/replies",
         [this](const httplib::Request& req, httplib::Response& res) {
           auto parsed = ParseScript(req.body);
           if (!parsed.ok()) {
             res.status = 400;
             res.set_content(parsed.status().ToString(), "text/plain");
             return;
           }
           const size_t n = parsed->size();
           {
             std::lock_guard<std::mutex> lock(mu);
             for (ScriptedReply& r : *parsed) replies.push_back(std::move(r));
           }
           res.set_content("{\"added\":" + std::to_string(n) + "}",
                           "application/json");
         });
  s.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.body.empty()) {
      res.set_content(R"({"error":{"message":"no such endpoint","code":404}})",
                      "application/json");
    }
  });
}

Result<std::unique_ptr<ScriptedLlmServer>> ScriptedLlmServer::Start(
    const ServerOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->default_reply = options.default_reply;
  const bool tls = !options.tls_cert_path.empty();
  if (tls) {
    if (!std::ifstream(options.tls_cert_path) ||
        !std::ifstream(options.tls_key_path)) {
      return Status::InvalidArgument(
          "scripted server: unreadable TLS cert or key");
    }
    impl->server = std::make_unique<httplib::SSLServer>(
        options.tls_cert_path.c_str(), options.tls_key_path.c_str());
  } else {
    impl->server = std::make_unique<httplib::Server>();
  }
  if (!impl->server->is_valid()) {
    return Status::InvalidArgument(
        "scripted server: cannot set up the server (TLS files?)");
  }
  const int threads = std::max(options.threads, 1);
  impl->server->new_task_queue = [threads] {
    return new httplib::ThreadPool(threads);
  };
  impl->server->set_keep_alive_max_count(options.keep_alive ? 1000 : 1);
  impl->server->set_payload_max_length(size_t{256} << 20);
  impl->Route();
  int port = options.port;
  if (port == 0) {
    port = impl->server->bind_to_any_port(options.host);
  } else if (!impl->server->bind_to_port(options.host, port)) {
    port = -1;
  }
  if (port <= 0) {
    return Status::Unavailable("scripted server: cannot bind " + options.host +
                               ":" + std::to_string(options.port));
  }
  httplib::Server* server = impl->server.get();
  impl->listener = std::thread([server] { server->listen_after_bind(); });
  // stop() is a no-op until the accept loop runs (cpp-httplib 0.11 has no
  // wait_until_ready), so do not hand out a server that could not be stopped.
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (!server->is_running() && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::unique_ptr<ScriptedLlmServer> out(
      new ScriptedLlmServer(std::move(impl)));
  out->port_ = port;
  return out;
}

ScriptedLlmServer::ScriptedLlmServer(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}

ScriptedLlmServer::~ScriptedLlmServer() { Stop(); }

std::string ScriptedLlmServer::origin() const {
  const std::string host =
      impl_->options.host == "0.0.0.0" ? "127.0.0.1" : impl_->options.host;
  const char* scheme = impl_->options.tls_cert_path.empty() ? "http" : "https";
  return std::string(scheme) + "://" + host + ":" + std::to_string(port_);
}

std::string ScriptedLlmServer::base_url() const { return origin() + "/v1"; }

void ScriptedLlmServer::Add(ScriptedReply reply) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->replies.push_back(std::move(reply));
}

void ScriptedLlmServer::Add(std::vector<ScriptedReply> replies) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  for (ScriptedReply& r : replies) impl_->replies.push_back(std::move(r));
}

void ScriptedLlmServer::SetDefault(ScriptedReply reply) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->default_reply = std::move(reply);
}

size_t ScriptedLlmServer::PendingReplies() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->replies.size();
}

size_t ScriptedLlmServer::RequestCount() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->log.size();
}

size_t ScriptedLlmServer::RequestCount(Endpoint endpoint) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return std::count_if(
      impl_->log.begin(), impl_->log.end(),
      [&](const ReceivedRequest& r) { return r.endpoint == endpoint; });
}

std::vector<ReceivedRequest> ScriptedLlmServer::Requests() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->log;
}

int ScriptedLlmServer::MaxConcurrent() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->max_in_flight;
}

bool ScriptedLlmServer::WaitForRequests(
    size_t count, std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(impl_->mu);
  return impl_->changed.wait_for(lock, timeout,
                                 [&] { return impl_->log.size() >= count; });
}

void ScriptedLlmServer::ClearLog() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->log.clear();
  impl_->max_in_flight = impl_->in_flight;
}

void ScriptedLlmServer::Stop() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (impl_->stopping) return;
    impl_->stopping = true;
  }
  impl_->changed.notify_all();
  impl_->server->stop();
  if (impl_->listener.joinable()) impl_->listener.join();
}

}  // namespace skilldb::scripted
