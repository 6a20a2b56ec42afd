#include "skilldb/proposal_queue.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <thread>

#include "../../tests/test_util.h"
#include "skilldb/json.h"
#include "skilldb/library.h"
#include "skilldb/replay_verifier.h"

namespace skilldb {
namespace {

using testing::TempLibrary;

// A report the replay verifier hands back: passing with `speedup`, or not.
VerificationReport QueueReport(double speedup, bool correct = true) {
  VerificationReport r;
  r.verifier = "fixed";
  r.verifier_version = "1";
  r.device_class = "host";
  r.task = "reduce_sum_fp32";
  r.compiled = true;
  r.correctness.checked = true;
  r.correctness.passed = correct;
  for (int i = 0; i < 3; ++i) {
    RoundTiming t;
    t.baseline_median_ms = 1.0;
    t.candidate_median_ms = 1.0 / speedup;
    t.speedup_ratio = speedup;
    r.rounds.push_back(t);
  }
  r.speedup = {speedup, speedup * 0.97, speedup * 1.03, 0.95};
  r.passed = correct && speedup >= 1.05;
  return r;
}

QueuedRequest QueueRequest(const std::string& id, double speedup) {
  QueuedRequest q;
  q.candidate = Skill::Make(id, "Queued technique " + id);
  q.candidate.body = "Distinct words for " + id + " so no near duplicate: " +
                     std::string(id.size(), 'x');
  q.options.author = "queue-test";
  q.replay_report = QueueReport(speedup);
  return q;
}

// What a server worker does with a claimed proposal.
Result<ProposalOutcome> CarryOut(Library& lib, const QueuedProposal& q) {
  ProposalOptions options = q.request.options;
  options.queue_id = q.id;
  SKILLDB_ASSIGN_OR_RETURN(auto p, lib.Propose(q.request.candidate, options));
  SKILLDB_RETURN_IF_ERROR(p->Duplicates().status());
  ReplayVerifier verifier(*q.request.replay_report);
  VerificationRequest request;
  request.task = q.request.replay_report->task;
  SKILLDB_RETURN_IF_ERROR(p->Verify(verifier, request).status());
  return p->Commit();
}

TEST_CASE("an enqueued proposal is durable and reads back equal after reopen") {
  TempLibrary lib;
  const QueuedRequest request = QueueRequest("tiled-k", 2.0);
  auto q = lib->Enqueue(request);
  REQUIRE_MESSAGE(q.ok(), q.status().ToString());
  CHECK(q->id == "q-000000000001");
  CHECK(q->state == QueueState::kQueued);
  CHECK(q->attempts == 0);
  lib.Reopen();
  auto again = lib->GetQueued(q->id);
  REQUIRE(again.ok());
  CHECK(again->request == request);
  CHECK(again->state == QueueState::kQueued);
  auto second = lib->Enqueue(QueueRequest("other", 2.0));
  REQUIRE(second.ok());
  CHECK(second->id == "q-000000000002");
  // The codec round-trips the whole entry.
  auto decoded = FromJson<QueuedProposal>(ToJson(*again));
  REQUIRE(decoded.ok());
  CHECK(*decoded == *again);
}

TEST_CASE("a queued proposal goes queued, verifying, committed with its commit") {
  TempLibrary lib;
  auto q = lib->Enqueue(QueueRequest("fast-one", 2.0));
  REQUIRE(q.ok());
  auto claimed = lib->ClaimQueued();
  REQUIRE(claimed.ok());
  REQUIRE(claimed->has_value());
  CHECK((*claimed)->state == QueueState::kVerifying);
  CHECK((*claimed)->attempts == 1);
  CHECK(lib->GetQueued(q->id)->state == QueueState::kVerifying);
  auto none = lib->ClaimQueued();
  REQUIRE(none.ok());
  CHECK_FALSE(none->has_value());

  auto outcome = CarryOut(*lib, **claimed);
  REQUIRE_MESSAGE(outcome.ok(), outcome.status().ToString());
  REQUIRE(outcome->accepted);
  auto done = lib->GetQueued(q->id);
  REQUIRE(done.ok());
  CHECK(done->state == QueueState::kCommitted);
  REQUIRE(done->outcome.has_value());
  CHECK(done->outcome->version == lib->CurrentVersion());
  CHECK(done->outcome->version == outcome->version);
  CHECK(done->outcome->audit_seq == outcome->audit_seq);
  REQUIRE(done->report.has_value());
  CHECK(done->report->speedup.ratio == 2.0);
  CHECK(lib->Get("fast-one").ok());
  // The audit entry names the queued proposal.
  auto audit = lib->Audit({});
  REQUIRE(audit.ok());
  CHECK(audit->back().json.find(q->id) != std::string::npos);
  // A final entry cannot be carried out twice.
  ProposalOptions again;
  again.queue_id = q->id;
  auto p = lib->Propose(Skill::Make("late", "Late"), again);
  REQUIRE(p.ok());
  CHECK((*p)->Commit().status().code() == StatusCode::kFailedPrecondition);
}

TEST_CASE("a queued proposal the policy refuses ends rejected with the reasons") {
  TempLibrary lib;
  auto q = lib->Enqueue(QueueRequest("slow-one", 1.0));
  REQUIRE(q.ok());
  auto claimed = lib->ClaimQueued();
  REQUIRE(claimed.ok());
  const Version before = lib->CurrentVersion();
  auto outcome = CarryOut(*lib, **claimed);
  REQUIRE(outcome.ok());
  CHECK_FALSE(outcome->accepted);
  auto done = lib->GetQueued(q->id);
  REQUIRE(done.ok());
  CHECK(done->state == QueueState::kRejected);
  REQUIRE(done->outcome.has_value());
  CHECK_FALSE(done->outcome->reasons.empty());
  CHECK(done->outcome->audit_seq == outcome->audit_seq);
  CHECK(lib->CurrentVersion() == before);
}

TEST_CASE("a queued proposal overtaken by a commit ends as a conflict") {
  TempLibrary lib;
  auto q = lib->Enqueue(QueueRequest("contested", 2.0));
  REQUIRE(q.ok());
  auto claimed = lib->ClaimQueued();
  REQUIRE(claimed.ok());
  ProposalOptions options;
  options.queue_id = (*claimed)->id;
  auto p = lib->Propose((*claimed)->request.candidate, options);
  REQUIRE(p.ok());
  REQUIRE((*p)->Duplicates().ok());
  // Someone else takes the id meanwhile.
  REQUIRE(lib->Put(Skill::Make("contested", "Someone else's")).ok());
  ReplayVerifier verifier(QueueReport(2.0));
  VerificationRequest request;
  REQUIRE((*p)->Verify(verifier, request).ok());
  CHECK((*p)->Commit().status().code() == StatusCode::kAborted);
  auto done = lib->GetQueued(q->id);
  REQUIRE(done.ok());
  CHECK(done->state == QueueState::kConflict);
  CHECK_FALSE(done->reasons.empty());
}

TEST_CASE("a proposal being verified when the writer died is queued again on open") {
  TempLibrary lib;
  auto q = lib->Enqueue(QueueRequest("interrupted", 2.0));
  REQUIRE(q.ok());
  REQUIRE(lib->ClaimQueued().ok());
  CHECK(lib->GetQueued(q->id)->state == QueueState::kVerifying);
  lib.Reopen();  // the claim's worker is gone
  auto back = lib->GetQueued(q->id);
  REQUIRE(back.ok());
  CHECK(back->state == QueueState::kQueued);
  auto claimed = lib->ClaimQueued();
  REQUIRE(claimed.ok());
  REQUIRE(claimed->has_value());
  CHECK((*claimed)->id == q->id);
  CHECK((*claimed)->attempts == 2);
}

TEST_CASE("claims from several threads take each queued proposal once") {
  TempLibrary lib;
  constexpr int kProposals = 24;
  for (int i = 0; i < kProposals; ++i) {
    REQUIRE(lib->Enqueue(QueueRequest("p" + std::to_string(i), 2.0)).ok());
  }
  std::vector<std::vector<std::string>> taken(4);
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&, w] {
      while (true) {
        auto c = lib->ClaimQueued();
        if (!c.ok() || !c->has_value()) return;
        taken[w].push_back((*c)->id);
      }
    });
  }
  for (auto& t : workers) t.join();
  std::multiset<std::string> all;
  for (const auto& list : taken) all.insert(list.begin(), list.end());
  CHECK(all.size() == kProposals);
  CHECK(std::set<std::string>(all.begin(), all.end()).size() == kProposals);
  auto counts = lib->CountQueued();
  REQUIRE(counts.ok());
  CHECK(counts->verifying == kProposals);
  CHECK(counts->queued == 0);
}

TEST_CASE("the queue refuses what it cannot hold and ends only verifying entries") {
  TempLibrary lib;
  QueuedRequest both = QueueRequest("both", 2.0);
  both.verification = VerificationRequest{};
  both.verification->task = "t";
  CHECK(lib->Enqueue(both).status().code() == StatusCode::kInvalidArgument);
  QueuedRequest neither = QueueRequest("neither", 2.0);
  neither.replay_report.reset();
  CHECK(lib->Enqueue(neither).status().code() == StatusCode::kInvalidArgument);
  CHECK(lib->GetQueued("nope").status().code() == StatusCode::kInvalidArgument);
  CHECK(lib->GetQueued("q-000000000077").status().code() ==
        StatusCode::kNotFound);

  auto q = lib->Enqueue(QueueRequest("finish-me", 2.0));
  REQUIRE(q.ok());
  CHECK(lib->FinishQueued(q->id, QueueState::kFailed, {"x"}).code() ==
        StatusCode::kFailedPrecondition);  // not claimed yet
  REQUIRE(lib->ClaimQueued().ok());
  CHECK(lib->FinishQueued(q->id, QueueState::kCommitted, {}).code() ==
        StatusCode::kFailedPrecondition);
  REQUIRE(lib->FinishQueued(q->id, QueueState::kFailed,
                            {"verifier unavailable"})
              .ok());
  auto done = lib->GetQueued(q->id);
  REQUIRE(done.ok());
  CHECK(done->state == QueueState::kFailed);
  CHECK(done->reasons == std::vector<std::string>{"verifier unavailable"});
  auto listed = lib->ListQueued({.state = QueueState::kFailed});
  REQUIRE(listed.ok());
  REQUIRE(listed->size() == 1);
  CHECK(listed->front().id == q->id);
}

TEST_CASE("a read-only library reads the queue and refuses to change it") {
  TempLibrary lib;
  auto q = lib->Enqueue(QueueRequest("seen", 2.0));
  REQUIRE(q.ok());
  Options ro;
  ro.read_only = true;
  auto reader = Library::Open(ro, lib.path());
  REQUIRE_MESSAGE(reader.ok(), reader.status().ToString());
  auto seen = (*reader)->GetQueued(q->id);
  REQUIRE(seen.ok());
  CHECK(seen->request.candidate.id == "seen");
  CHECK((*reader)->Enqueue(QueueRequest("no", 2.0)).status().code() ==
        StatusCode::kFailedPrecondition);
  CHECK((*reader)->ClaimQueued().status().code() ==
        StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace skilldb
