// ServerImpl: the Server behind server.h. Internal.
//
// Its routes are spread over files by job: server.cc (start, stop, the
// route wrapper with authentication, limits and metrics, /healthz,
// /metrics, /openapi.json), library_routes.cc (search, skills, log, diff,
// usage, audit), proposal_routes.cc (the queue's routes and its workers),
// kernelgym_routes.cc (/evaluate, /status, /results), web_routes.cc (the
// read-only page).
#ifndef SKILLDB_SERVER_SERVER_IMPL_H_
#define SKILLDB_SERVER_SERVER_IMPL_H_

#include <httplib.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "metrics.h"
#include "skilldb/json.h"
#include "skilldb/server/server.h"
#include "verify_pool.h"

namespace skilldb::server::internal {

using Json = nlohmann::ordered_json;

// HTTP status for a Status code (NotFound 404, InvalidArgument 400, ...).
int HttpStatusFor(StatusCode code);
// A JSON body with `http_status`.
void SendJson(httplib::Response& res, int http_status, const std::string& body);
// {"error": {"code": "not_found", "status": 404, "message": "..."}}
void SendError(httplib::Response& res, const Status& status);
// 429 with Retry-After and the JSON error.
void SendTooBusy(httplib::Response& res, const std::string& message,
                 int retry_after_s);
// Query parameter `name` as an unsigned integer: nullopt when absent,
// InvalidArgument naming it when malformed.
Result<std::optional<uint64_t>> UintParam(const httplib::Request& req,
                                          const char* name);

// The body of `req` as a JSON object; InvalidArgument naming `what`
// otherwise.
Result<Json> ParseBody(const httplib::Request& req, const char* what);

// "[a,b,c]" from the API layer's codec of each element.
template <typename T>
std::string JsonList(const std::vector<T>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ',';
    out += ToJson(items[i]);
  }
  out += ']';
  return out;
}

// Who may call a route.
enum class Access { kPublic, kRead, kWrite };

// One KernelGYM task (kernelgym_routes.cc).
struct EvaluationRecord {
  std::string status = "pending";  // pending|processing|completed|failed|timeout
  std::string submitted_at, completed_at;
  double processing_time_s = 0;
  EvaluationResult result;
  bool done = false;
};

class ServerImpl final : public Server {
 public:
  ServerImpl(const ServerOptions& options, std::shared_ptr<Library> library);
  ~ServerImpl() override;

  Status Bind();
  void StartThreads();
  int port() const override { return port_; }
  void Stop() override;
  void Wait() override;

  // The library to serve a request with (a read-only one may be replaced
  // by a refresh between requests; a request keeps the one it took).
  std::shared_ptr<Library> library() const;
  const ServerOptions& options() const { return options_; }
  Metrics& metrics() { return metrics_; }

 private:
  using Handler =
      std::function<void(const httplib::Request&, httplib::Response&)>;
  // Registers `handler` for `method` and `pattern` behind authentication,
  // the in-flight limit, read-only refusal (kWrite), exception capture and
  // metrics under `name`.
  void Route(const char* method, const std::string& pattern,
             const std::string& name, Access access, Handler handler);
  bool Authorized(const httplib::Request& req, Access access) const;
  void Refresher();

  // server.cc
  void AddServiceRoutes();
  // library_routes.cc
  void AddLibraryRoutes();
  // proposal_routes.cc
  void AddProposalRoutes();
  void ProposalWorker();
  void CarryOut(const QueuedProposal& q);
  // Raises `policy` to options_.min_policy.
  VerificationPolicy EnforcedPolicy(const VerificationPolicy& policy) const;
  // kernelgym_routes.cc
  void AddKernelGymRoutes();
  void Evaluate(const httplib::Request& req, httplib::Response& res);
  void SendEvaluation(httplib::Response& res, const std::string& task_id,
                      const EvaluationRecord& record);
  // web_routes.cc
  void AddWebRoutes();

  ServerOptions options_;
  mutable std::mutex library_mu_;
  std::shared_ptr<Library> library_;  // guarded by library_mu_
  httplib::Server http_;
  int port_ = 0;
  std::thread listener_;
  std::atomic<bool> listener_returned_{false};
  std::thread refresher_;
  std::vector<std::thread> proposal_workers_;
  Metrics metrics_;
  std::unique_ptr<VerifyPool> verify_pool_;
  std::shared_ptr<Evaluation> evaluation_;
  std::atomic<int> in_flight_{0};

  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;  // guarded by stop_mu_
  bool stopped_ = false;   // guarded by stop_mu_

  // Proposal workers sleep here until a POST (or Stop) wakes them.
  std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  uint64_t queue_wakeups_ = 0;  // guarded by queue_mu_

  // KernelGYM task records, oldest first for eviction.
  std::mutex tasks_mu_;
  std::condition_variable tasks_cv_;
  std::map<std::string, std::shared_ptr<EvaluationRecord>> tasks_;
  std::deque<std::string> task_order_;
};

}  // namespace skilldb::server::internal

#endif  // SKILLDB_SERVER_SERVER_IMPL_H_
