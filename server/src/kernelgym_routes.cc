// KernelGYM's routes, so a client written for KernelGYM (Dr. Kernel's
// reward client) works unchanged: POST /evaluate (synchronous, idempotent
// per task_id unless force_refresh), GET /status/{task_id},
// GET /results/{task_id}, GET /health. Status codes and error bodies are
// KernelGYM's: 400 with ErrorResponse{error, message, error_code,
// timestamp} and the X-Error-Code header for a request that fails
// validation, 404 {"detail": ...} for an unknown task, and 429 with
// Retry-After when the verifier's wait list is full (the client backs off
// and retries on 429).
//
// Task records live in memory (bounded, oldest dropped first): a restart
// forgets them, as KernelGYM forgets what its Redis did not keep; the
// durable record of a skill's evidence is the library's.
#include <chrono>
#include <cstdio>
#include <ctime>

#include "server_impl.h"
#include "skilldb/util/clock.h"
#include "skilldb/util/json.h"

namespace skilldb::server::internal {
namespace {

// ISO 8601 in UTC with microseconds, as Python's datetime.isoformat().
std::string IsoNow() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t secs = std::chrono::system_clock::to_time_t(now);
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(
                          now.time_since_epoch())
                          .count() %
                      1000000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%06lld",
                tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                tm.tm_min, tm.tm_sec, static_cast<long long>(micros));
  return buf;
}

Json OptionalJson(const std::optional<bool>& v) {
  return v ? Json(*v) : Json(nullptr);
}
Json OptionalJson(const std::optional<double>& v) {
  return v ? Json(*v) : Json(nullptr);
}
Json OptionalJson(const std::optional<std::string>& v) {
  return v ? Json(*v) : Json(nullptr);
}

void SendValidationError(httplib::Response& res, const std::string& message) {
  res.set_header("X-Error-Code", "VALIDATION_ERROR");
  Json j{{"error", "RequestValidationError"},
         {"message", message},
         {"error_code", "VALIDATION_ERROR"},
         {"timestamp", IsoNow()}};
  SendJson(res, 400, util::DumpLossy(j));
}

void SendNoTask(httplib::Response& res, const std::string& task_id,
                const char* what) {
  Json j{{"detail", "Task " + task_id + " " + what}};
  SendJson(res, 404, util::DumpLossy(j));
}

}  // namespace

void ServerImpl::SendEvaluation(httplib::Response& res,
                                const std::string& task_id,
                                const EvaluationRecord& record) {
  const EvaluationResult& r = record.result;
  Json metadata = Json::parse(r.metadata_json, nullptr, false);
  if (metadata.is_discarded()) metadata = Json::object();
  Json j{{"task_id", task_id},
         {"status", record.status},
         {"compiled", OptionalJson(r.compiled)},
         {"correctness", OptionalJson(r.correctness)},
         {"decoy_kernel", OptionalJson(r.decoy_kernel)},
         {"reference_runtime", OptionalJson(r.reference_runtime)},
         {"kernel_runtime", OptionalJson(r.kernel_runtime)},
         {"speedup", OptionalJson(r.speedup)},
         {"metadata", metadata},
         {"error_message", OptionalJson(r.error_message)},
         {"error_code", OptionalJson(r.error_code)},
         {"submitted_at", record.submitted_at},
         {"completed_at", record.completed_at.empty()
                              ? Json(nullptr)
                              : Json(record.completed_at)},
         {"processing_time", record.processing_time_s}};
  SendJson(res, 200, util::DumpLossy(j));
}

void ServerImpl::Evaluate(const httplib::Request& req, httplib::Response& res) {
  auto parsed = ParseEvaluationRequest(req.body);
  if (!parsed.ok()) return SendValidationError(res, parsed.status().message());
  const EvaluationRequest request = std::move(parsed).value();
  std::shared_ptr<EvaluationRecord> record;
  {
    std::unique_lock<std::mutex> lock(tasks_mu_);
    auto it = tasks_.find(request.task_id);
    if (it != tasks_.end() && !(it->second->done && request.force_refresh)) {
      // Idempotent: the stored result, or the running evaluation's.
      record = it->second;
      tasks_cv_.wait_for(lock, std::chrono::seconds(request.timeout),
                         [&] { return record->done; });
      const EvaluationRecord copy = *record;
      lock.unlock();
      return SendEvaluation(res, request.task_id, copy);
    }
    record = std::make_shared<EvaluationRecord>();
    record->status = "processing";
    record->submitted_at = IsoNow();
    if (it == tasks_.end()) task_order_.push_back(request.task_id);
    tasks_[request.task_id] = record;
    while (tasks_.size() > options_.max_evaluation_records &&
           !task_order_.empty()) {
      tasks_.erase(task_order_.front());
      task_order_.pop_front();
    }
  }
  const auto start = util::SteadyClock::now();
  auto finish = [this, record, start](EvaluationResult result,
                                      const std::string& status) {
    std::lock_guard<std::mutex> lock(tasks_mu_);
    if (record->done) return;  // timed out meanwhile: the late result is dropped
    record->result = std::move(result);
    record->status = status;
    record->completed_at = IsoNow();
    record->processing_time_s = util::MsSince(start) / 1000.0;
    record->done = true;
    metrics_.Increment("skilldb_evaluations_total",
                       "KernelGYM /evaluate results, by status.", "status",
                       status);
    tasks_cv_.notify_all();
  };
  const std::string refused = evaluation_->Accepts(request);
  if (!refused.empty()) {
    finish(FailedResult("SYSTEM_ERROR", refused), "failed");
  } else {
    std::shared_ptr<Evaluation> evaluation = evaluation_;
    const bool queued = verify_pool_->Submit([evaluation, request, finish] {
      auto result = evaluation->Evaluate(request);
      if (result.ok()) {
        const std::string status = result->status;
        finish(std::move(result).value(), status);
      } else {
        finish(FailedResult("SYSTEM_ERROR", result.status().ToString()),
               "failed");
      }
    });
    if (!queued) {
      {
        std::lock_guard<std::mutex> lock(tasks_mu_);
        tasks_.erase(request.task_id);
      }
      metrics_.Increment("skilldb_http_rejected_total",
                         "Requests refused before they were served, by reason.",
                         "reason", "verify_queue");
      return SendTooBusy(res,
                         "every verifier worker is busy and the wait list is "
                         "full; retry later",
                         5);
    }
  }
  std::unique_lock<std::mutex> lock(tasks_mu_);
  if (!tasks_cv_.wait_for(lock, std::chrono::seconds(request.timeout),
                          [&] { return record->done; })) {
    lock.unlock();
    finish(FailedResult("TIMEOUT_ERROR",
                        "Task timeout after " +
                            std::to_string(request.timeout) + "s"),
           "timeout");
    lock.lock();
  }
  const EvaluationRecord copy = *record;
  lock.unlock();
  SendEvaluation(res, request.task_id, copy);
}

void ServerImpl::AddKernelGymRoutes() {
  Route("POST", "/evaluate", "evaluate", Access::kWrite,
        [this](const httplib::Request& req, httplib::Response& res) {
          Evaluate(req, res);
        });
  Route("GET", R"(/status/([^/]+))", "status", Access::kRead,
        [this](const httplib::Request& req, httplib::Response& res) {
          const std::string id = req.matches[1].str();
          std::lock_guard<std::mutex> lock(tasks_mu_);
          auto it = tasks_.find(id);
          if (it == tasks_.end()) return SendNoTask(res, id, "not found");
          Json j{{"task_id", id},
                 {"status", it->second->status},
                 {"progress", it->second->done ? Json(1.0) : Json(nullptr)},
                 {"estimated_completion", nullptr},
                 {"queue_position", nullptr},
                 {"assigned_device", nullptr}};
          SendJson(res, 200, util::DumpLossy(j));
        });
  Route("GET", R"(/results/([^/]+))", "results", Access::kRead,
        [this](const httplib::Request& req, httplib::Response& res) {
          const std::string id = req.matches[1].str();
          std::unique_lock<std::mutex> lock(tasks_mu_);
          auto it = tasks_.find(id);
          if (it == tasks_.end() || !it->second->done) {
            return SendNoTask(res, id, "not found");
          }
          const EvaluationRecord copy = *it->second;
          lock.unlock();
          SendEvaluation(res, id, copy);
        });
  Route("GET", "/health", "health", Access::kPublic,
        [this](const httplib::Request&, httplib::Response& res) {
          Json j{{"status", "healthy"},
                 {"timestamp", IsoNow()},
                 {"workers_running", verify_pool_->running()},
                 {"queue_pending", verify_pool_->pending()}};
          SendJson(res, 200, j.dump());
        });
}

}  // namespace skilldb::server::internal
