// The durable proposal queue: verified insertion as a job that outlives the
// process that asked for it.
//
//   auto q = library->Enqueue(request);     // durable before it returns
//   ...                                     // any time later, any process:
//   auto job = library->ClaimQueued();      // queued -> verifying
//   auto p = library->Propose(job->request.candidate,
//                             WithQueueId(job->request.options, job->id));
//   p->Verify(verifier, *job->request.verification);
//   p->Commit();                            // -> committed | rejected |
//                                           //    conflict, in the commit's
//                                           //    own atomic batch
//
// A queued proposal moves through
//   queued -> verifying -> committed | rejected | conflict | failed
// and is readable by id in every state. The queue lives in the library's
// own store (a key range of its meta column family), so it survives a crash
// and a restart exactly as commits do: a proposal a writer was verifying
// when it died is queued again by the next writer's open (its `attempts`
// tell how often verification started). A Proposal made with
// ProposalOptions::queue_id writes its queued proposal's final state in the
// same atomic batch as its commit (accepted), or as its audit entry
// (rejected, aborted): the queue never says "committed" for a commit that
// did not happen, nor "queued" for one that did.
//
// The value types are plain structs, safe to copy and share read-only. The
// Library methods that use them are thread-safe (library.h).
#ifndef SKILLDB_PROPOSAL_QUEUE_H_
#define SKILLDB_PROPOSAL_QUEUE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/proposal.h"
#include "skilldb/skill.h"
#include "skilldb/status.h"
#include "skilldb/verifier.h"

namespace skilldb {

// Stored by name (QueueStateName): the values are free to change.
enum class QueueState {
  kQueued,     // waiting for a worker
  kVerifying,  // claimed by a worker (ClaimQueued)
  kCommitted,  // accepted: the skill is in the library (outcome.version)
  kRejected,   // verified and refused: outcome.reasons say why
  kConflict,   // something committed meanwhile (Proposal::Commit's Aborted)
  kFailed,     // the verifier or the store failed: reasons; no verdict
};
std::string_view QueueStateName(QueueState state);  // "queued", ...
// InvalidArgument naming the accepted names.
Result<QueueState> ParseQueueState(std::string_view name);
// committed, rejected, conflict and failed are final.
bool IsFinalQueueState(QueueState state);

// What a queued proposal asks for: the candidate, how to decide, and the
// evidence: either a verification to run (on the worker's verifier) or a
// report recorded elsewhere to replay (ReplayVerifier).
struct QueuedRequest {
  Skill candidate;
  ProposalOptions options;  // queue_id is ignored (the queue sets it)
  std::optional<VerificationRequest> verification;
  std::optional<VerificationReport> replay_report;
  bool operator==(const QueuedRequest&) const = default;
};

// InvalidArgument unless the candidate passes ValidateSkill and exactly one
// of verification and replay_report is set.
Status ValidateQueuedRequest(const QueuedRequest& request);

struct QueuedProposal {
  std::string id;  // "q-" and 12 digits: the sequence, in submission order
  uint64_t seq = 0;
  QueueState state = QueueState::kQueued;
  int64_t submitted_ms = 0;  // Unix time, milliseconds
  int64_t updated_ms = 0;    // the last state change
  int attempts = 0;          // times a worker claimed it
  QueuedRequest request;
  std::string proposal_id;  // the Proposal's id (its audit entries)
  // With kCommitted and kRejected: the decision.
  std::optional<ProposalOutcome> outcome;
  // The verification report the decision rested on, when there was one.
  std::optional<VerificationReport> report;
  // With kConflict and kFailed: why.
  std::vector<std::string> reasons;
  bool operator==(const QueuedProposal&) const = default;
};

// "q-000000000042" for sequence 42; ParseQueueId reads it back
// (InvalidArgument otherwise).
std::string QueueIdFor(uint64_t seq);
Result<uint64_t> ParseQueueId(std::string_view id);

struct QueueListOptions {
  std::optional<QueueState> state;  // only this state; unset = all
  size_t limit = 0;                 // 0 = all; the newest when limited
  uint64_t after_seq = 0;           // only entries with seq > this
};

// Counts by state (Library::QueueCounts).
struct QueueCounts {
  uint64_t queued = 0, verifying = 0, committed = 0, rejected = 0,
           conflict = 0, failed = 0;
  bool operator==(const QueueCounts&) const = default;
};

}  // namespace skilldb

#endif  // SKILLDB_PROPOSAL_QUEUE_H_
