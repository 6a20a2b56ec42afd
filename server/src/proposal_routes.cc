// Verified insertion over HTTP: POST /v1/proposals puts a proposal in the
// library's durable queue and answers at once (202 with its id); the
// proposal workers claim queued proposals, verify them (the server's
// verifier, or a replayed report) and commit, the final state written by
// the engine in the batch of the commit. Also POST /v1/duplicates and the
// synchronous POST /v1/verify.
#include <future>

#include "server_impl.h"
#include "skilldb/replay_verifier.h"

namespace skilldb::server::internal {
namespace {

constexpr const char* kProcessedFamily = "skilldb_proposals_processed_total";
constexpr const char* kProcessedHelp =
    "Queued proposals a worker of this process finished, by final state.";

}  // namespace

VerificationPolicy ServerImpl::EnforcedPolicy(
    const VerificationPolicy& asked) const {
  const VerificationPolicy& floor = options_.min_policy;
  VerificationPolicy p = asked;
  p.min_rounds = std::max(p.min_rounds, floor.min_rounds);
  p.min_speedup = std::max(p.min_speedup, floor.min_speedup);
  p.min_ci_low = std::max(p.min_ci_low, floor.min_ci_low);
  p.require_correctness = p.require_correctness || floor.require_correctness;
  p.max_plausible_speedup =
      std::min(p.max_plausible_speedup, floor.max_plausible_speedup);
  if (!floor.device_class.empty()) p.device_class = floor.device_class;
  return p;
}

void ServerImpl::ProposalWorker() {
  uint64_t seen = 0;
  while (true) {
    {
      std::lock_guard<std::mutex> lock(stop_mu_);
      if (stopping_) return;
    }
    auto claimed = library()->ClaimQueued();
    if (claimed.ok() && claimed->has_value()) {
      CarryOut(**claimed);
      continue;
    }
    // Nothing queued (or the claim failed): sleep until a POST or Stop.
    std::unique_lock<std::mutex> lock(queue_mu_);
    queue_cv_.wait(lock, [&] { return queue_wakeups_ != seen; });
    seen = queue_wakeups_;
  }
}

void ServerImpl::CarryOut(const QueuedProposal& q) {
  auto lib = library();
  auto fail = [&](const Status& s) {
    // The engine may have written a final state already (a conflict).
    (void)lib->FinishQueued(q.id, QueueState::kFailed, {s.ToString()});
    metrics_.Increment(kProcessedFamily, kProcessedHelp, "state", "failed");
  };
  ProposalOptions options = q.request.options;
  options.policy = EnforcedPolicy(options.policy);
  if (!options_.accept_active ||
      options.accepted_status != SkillStatus::kActive) {
    options.accepted_status = SkillStatus::kCandidate;
  }
  options.queue_id = q.id;
  auto proposal = lib->Propose(q.request.candidate, options);
  if (!proposal.ok()) return fail(proposal.status());
  if (auto d = (*proposal)->Duplicates(); !d.ok()) return fail(d.status());
  Result<VerificationReport> report = Status::Internal("not verified");
  if (q.request.replay_report) {
    ReplayVerifier replay(*q.request.replay_report);
    VerificationRequest request;
    request.task = q.request.replay_report->task;
    report = (*proposal)->Verify(replay, request);
  } else if (options_.verifier == nullptr) {
    return fail(Status::Unavailable(
        "this server has no verifier (skilldb serve --verifier host|cuda)"));
  } else {
    report = (*proposal)->Verify(*options_.verifier, *q.request.verification);
  }
  if (!report.ok()) return fail(report.status());
  auto outcome = (*proposal)->Commit();
  if (outcome.ok()) {
    metrics_.Increment(kProcessedFamily, kProcessedHelp, "state",
                       outcome->accepted ? "committed" : "rejected");
  } else if (outcome.status().IsAborted()) {
    metrics_.Increment(kProcessedFamily, kProcessedHelp, "state", "conflict");
  } else {
    fail(outcome.status());
  }
}

void ServerImpl::AddProposalRoutes() {
  Route("POST", "/v1/proposals", "proposals_post", Access::kWrite,
        [this](const httplib::Request& req, httplib::Response& res) {
          auto request = FromJson<QueuedRequest>(req.body);
          if (!request.ok()) return SendError(res, request.status());
          if (request->replay_report && !options_.allow_replay) {
            return SendError(res, Status::FailedPrecondition(
                                      "this server verifies proposals itself: "
                                      "send 'verification', not a "
                                      "'replay_report'"));
          }
          if (request->verification && options_.verifier == nullptr &&
              options_.proposal_workers > 0) {
            return SendError(res, Status::Unavailable(
                                      "this server has no verifier; send a "
                                      "'replay_report' or start it with "
                                      "--verifier"));
          }
          auto lib = library();
          auto counts = lib->CountQueued();
          if (!counts.ok()) return SendError(res, counts.status());
          if (counts->queued + counts->verifying >=
              options_.max_queued_proposals) {
            metrics_.Increment("skilldb_http_rejected_total",
                               "Requests refused before they were served, by "
                               "reason.",
                               "reason", "proposal_queue");
            return SendTooBusy(res,
                               "the proposal queue holds " +
                                   std::to_string(counts->queued +
                                                  counts->verifying) +
                                   " proposals; retry later",
                               5);
          }
          auto queued = lib->Enqueue(*request);
          if (!queued.ok()) return SendError(res, queued.status());
          {
            std::lock_guard<std::mutex> lock(queue_mu_);
            ++queue_wakeups_;
          }
          queue_cv_.notify_one();
          res.set_header("Location", "/v1/proposals/" + queued->id);
          SendJson(res, 202, ToJson(*queued));
        });
  Route("GET", R"(/v1/proposals/([^/]+))", "proposal", Access::kRead,
        [this](const httplib::Request& req, httplib::Response& res) {
          auto q = library()->GetQueued(req.matches[1].str());
          if (!q.ok()) return SendError(res, q.status());
          SendJson(res, 200, ToJson(*q));
        });
  Route("GET", "/v1/proposals", "proposals", Access::kRead,
        [this](const httplib::Request& req, httplib::Response& res) {
          QueueListOptions options;
          if (req.has_param("state")) {
            auto state = ParseQueueState(req.get_param_value("state"));
            if (!state.ok()) return SendError(res, state.status());
            options.state = *state;
          }
          auto limit = UintParam(req, "limit");
          auto after = UintParam(req, "after");
          if (!limit.ok()) return SendError(res, limit.status());
          if (!after.ok()) return SendError(res, after.status());
          options.limit = limit->value_or(100);
          options.after_seq = after->value_or(0);
          auto list = library()->ListQueued(options);
          if (!list.ok()) return SendError(res, list.status());
          SendJson(res, 200, "{\"proposals\":" + JsonList(*list) + "}");
        });
  Route("POST", "/v1/duplicates", "duplicates", Access::kWrite,
        [this](const httplib::Request& req, httplib::Response& res) {
          auto body = ParseBody(req, "duplicates");
          if (!body.ok()) return SendError(res, body.status());
          auto c = body->find("candidate");
          if (c == body->end()) {
            return SendError(res, Status::InvalidArgument(
                                      "duplicates: give 'candidate'"));
          }
          auto skill = ParseSkillJson(c->dump());
          if (!skill.ok()) return SendError(res, skill.status());
          ProposalOptions options;
          if (auto o = body->find("options"); o != body->end()) {
            auto parsed = FromJson<ProposalOptions>(o->dump());
            if (!parsed.ok()) return SendError(res, parsed.status());
            options = *parsed;
            options.queue_id.clear();
          }
          auto p = library()->Propose(*skill, options);
          if (!p.ok()) return SendError(res, p.status());
          auto d = (*p)->Duplicates();
          if (!d.ok()) return SendError(res, d.status());
          SendJson(res, 200,
                   "{\"base_version\":" +
                       std::to_string((*p)->base_version()) +
                       ",\"duplicates\":" + JsonList(*d) + "}");
        });
  Route("POST", "/v1/verify", "verify", Access::kWrite,
        [this](const httplib::Request& req, httplib::Response& res) {
          if (options_.verifier == nullptr) {
            return SendError(res, Status::Unavailable(
                                      "this server has no verifier"));
          }
          auto request = FromJson<VerificationRequest>(req.body);
          if (!request.ok()) return SendError(res, request.status());
          auto done = std::make_shared<std::promise<Result<VerificationReport>>>();
          auto future = done->get_future();
          Verifier* verifier = options_.verifier;
          const bool queued = verify_pool_->Submit(
              [verifier, request = *request, done] {
                done->set_value(verifier->Verify(request));
              });
          if (!queued) {
            metrics_.Increment("skilldb_http_rejected_total",
                               "Requests refused before they were served, by "
                               "reason.",
                               "reason", "verify_queue");
            return SendTooBusy(res,
                               "every verifier worker is busy and the wait "
                               "list is full; retry later",
                               5);
          }
          auto report = future.get();
          if (!report.ok()) return SendError(res, report.status());
          SendJson(res, 200, ReportToJson(*report));
        });
}

}  // namespace skilldb::server::internal
