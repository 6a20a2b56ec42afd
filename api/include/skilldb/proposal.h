// Verified insertion: how a candidate skill enters a library.
//
//   auto p = library->Propose(candidate, options);     // pinned to version V0
//   auto dups = (*p)->Duplicates();                    // exact + near
//   auto report = (*p)->Verify(verifier, request);     // execution evidence
//   auto outcome = (*p)->Commit();                     // accepted or rejected
//
// Commit accepts the candidate only if its verification report satisfies the
// policy and the duplicate policy allows it; otherwise the outcome is
// "rejected" with the reasons, and nothing of the candidate is visible at any
// version. If something committed after V0 conflicts with the proposal (a
// duplicate appeared, a skill it supersedes or merges into changed), Commit
// fails with Aborted: propose again from the new head.
//
// Every outcome (duplicates found, verified, accepted, rejected, aborted) is
// appended to the library's audit log.
//
// A Proposal is used by one thread at a time; many proposals may run in
// parallel threads (and processes, which take turns at the write lock).
//
// Lifetime: a Proposal refers to the Library that made it.
// REQUIRES: the Library outlives every Proposal it returned.
#ifndef SKILLDB_PROPOSAL_H_
#define SKILLDB_PROPOSAL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "skilldb/skill.h"
#include "skilldb/status.h"
#include "skilldb/verifier.h"

namespace skilldb {

// What to do when the candidate duplicates live skills.
enum class DedupPolicy {
  kReject,     // reject the candidate
  kSupersede,  // add it; deprecate the duplicates; record lineage
  kMerge,      // make it a new revision of the closest duplicate
};
std::string_view DedupPolicyName(DedupPolicy policy);
Result<DedupPolicy> ParseDedupPolicy(std::string_view name);

struct ProposalOptions {
  DedupPolicy dedup = DedupPolicy::kReject;
  VerificationPolicy policy;
  // A live skill whose word 3-shingle Jaccard similarity with the candidate
  // reaches this is a near duplicate. Default: 0.6.
  double near_duplicate_jaccard = 0.6;
  // How many BM25 neighbours of the candidate are checked for near
  // duplicates. Default: 20.
  size_t near_duplicate_candidates = 20;
  std::string author;   // for the commit and the audit log
  std::string message;  // commit message
  // The status the accepted skill is committed with. Default: kActive.
  // Skills an agent wrote (text no person has read) go in as kCandidate.
  SkillStatus accepted_status = SkillStatus::kActive;
  // The queued proposal (proposal_queue.h) this proposal carries out, or ""
  // for none. When set, Commit writes that entry's final state (committed,
  // rejected or conflict, with the outcome and the report) in the same
  // atomic batch as the commit or the audit entry; Commit fails with
  // NotFound if no such entry exists.
  std::string queue_id;
  bool operator==(const ProposalOptions&) const = default;
};

struct DuplicateMatch {
  enum class Kind { kExact, kNear };
  std::string id;
  Kind kind = Kind::kNear;
  // BM25 score of the skill for the candidate's text, divided by the
  // candidate's score against itself (about 1 for the same text).
  double bm25_similarity = 0.0;
  double jaccard = 0.0;  // word 3-shingle Jaccard similarity
  bool operator==(const DuplicateMatch&) const = default;
};

struct ProposalOutcome {
  bool accepted = false;
  Version version = 0;   // the commit, when accepted
  std::string skill_id;  // the skill written (the merge target's id)
  std::vector<std::string> deprecated;  // skills superseded by it
  std::vector<std::string> reasons;     // why rejected (or notes)
  std::vector<DuplicateMatch> duplicates;
  uint64_t audit_seq = 0;  // its entry in the audit log
  bool operator==(const ProposalOutcome&) const = default;
};

class Proposal {
 public:
  virtual ~Proposal() = default;

  virtual const std::string& id() const = 0;  // unique proposal id
  virtual Version base_version() const = 0;   // V0
  virtual const Skill& candidate() const = 0;

  // Exact duplicates (normalized content hash, live skills only) and near
  // duplicates (BM25 neighbours with Jaccard >= the threshold), as of V0,
  // exact ones first. Logged to the audit log when any are found.
  virtual Result<std::vector<DuplicateMatch>> Duplicates() = 0;

  // Runs `verifier` on `request` and keeps the report as the proposal's
  // evidence (replacing an earlier one). A failing candidate is OK with
  // report.passed == false. Errors are the verifier's own.
  virtual Result<VerificationReport> Verify(
      Verifier& verifier, const VerificationRequest& request) = 0;

  // Decides and, if accepted, commits (see the file comment). Errors:
  // Aborted (retryable conflict), FailedPrecondition if already committed or
  // the library is read-only, storage errors.
  virtual Result<ProposalOutcome> Commit() = 0;
};

// How far a skill's evidence goes: provisional until passing reports from
// at least `trusted_tasks` distinct tasks back it.
enum class Trust { kUnverified, kProvisional, kTrusted };
std::string_view TrustName(Trust trust);
Trust SkillTrust(const Skill& skill, int trusted_tasks = 2);

}  // namespace skilldb

#endif  // SKILLDB_PROPOSAL_H_
