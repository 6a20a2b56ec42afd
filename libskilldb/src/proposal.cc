// Verified insertion: proposals, deduplication and the commit decision.
#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "analysis.h"
#include "audit_log.h"
#include "batch_writer.h"
#include "dedup.h"
#include "library_impl.h"

namespace skilldb {

namespace internal {
namespace {

using Json = nlohmann::ordered_json;

std::string NewProposalId() {
  thread_local std::mt19937_64 rng(std::random_device{}());
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  char buf[48];
  std::snprintf(buf, sizeof(buf), "p-%llx-%08llx",
                static_cast<unsigned long long>(now),
                static_cast<unsigned long long>(rng() & 0xffffffffull));
  return buf;
}

Json DuplicatesJson(const std::vector<DuplicateMatch>& dups) {
  Json out = Json::array();
  for (const DuplicateMatch& d : dups) {
    out.push_back(Json{
        {"id", d.id},
        {"kind", d.kind == DuplicateMatch::Kind::kExact ? "exact" : "near"},
        {"bm25_similarity", d.bm25_similarity},
        {"jaccard", d.jaccard}});
  }
  return out;
}

std::string DescribeDuplicate(const DuplicateMatch& d) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.2f", d.jaccard);
  return d.kind == DuplicateMatch::Kind::kExact
             ? "exact duplicate of '" + d.id + "'"
             : "near duplicate of '" + d.id + "' (Jaccard " + buf + ")";
}

}  // namespace

class ProposalImpl final : public Proposal {
 public:
  ProposalImpl(LibraryImpl* library, std::shared_ptr<const ReadState> base,
               Skill candidate, ProposalOptions options)
      : library_(library),
        base_(std::move(base)),
        candidate_(std::move(candidate)),
        options_(std::move(options)),
        id_(NewProposalId()) {}

  const std::string& id() const override { return id_; }
  Version base_version() const override { return base_->head; }
  const Skill& candidate() const override { return candidate_; }

  Result<std::vector<DuplicateMatch>> Duplicates() override {
    if (!duplicates_) {
      SKILLDB_ASSIGN_OR_RETURN(
          auto dups, library_->FindDuplicates(*base_, candidate_, options_));
      duplicates_ = std::move(dups);
      if (!duplicates_->empty()) {
        Json entry{{"event", "duplicates_found"},
                   {"proposal_id", id_},
                   {"skill_id", candidate_.id},
                   {"author", options_.author},
                   {"base_version", base_->head},
                   {"duplicates", DuplicatesJson(*duplicates_)}};
        SKILLDB_RETURN_IF_ERROR(library_->WriteAudit(entry.dump()).status());
      }
    }
    return *duplicates_;
  }

  Result<VerificationReport> Verify(
      Verifier& verifier, const VerificationRequest& request) override {
    SKILLDB_ASSIGN_OR_RETURN(VerificationReport report,
                             verifier.Verify(request));
    Json entry{{"event", "verified"},
               {"proposal_id", id_},
               {"skill_id", candidate_.id},
               {"author", options_.author},
               {"base_version", base_->head},
               {"verifier", report.verifier},
               {"device", report.device},
               {"task", report.task},
               {"passed", report.passed},
               {"speedup", report.speedup.ratio},
               {"ci_low", report.speedup.ci_low},
               {"reasons", report.reasons}};
    SKILLDB_RETURN_IF_ERROR(library_->WriteAudit(entry.dump()).status());
    report_ = report;
    return report;
  }

  Result<ProposalOutcome> Commit() override {
    if (committed_) {
      return Status::FailedPrecondition("proposal " + id_ +
                                        " was already committed");
    }
    SKILLDB_RETURN_IF_ERROR(Duplicates().status());
    SKILLDB_ASSIGN_OR_RETURN(ProposalOutcome outcome,
                             library_->CommitProposal(*this));
    committed_ = true;
    return outcome;
  }

 private:
  friend class LibraryImpl;
  LibraryImpl* library_;
  std::shared_ptr<const ReadState> base_;
  Skill candidate_;
  ProposalOptions options_;
  std::string id_;
  std::optional<std::vector<DuplicateMatch>> duplicates_;
  std::optional<VerificationReport> report_;
  bool committed_ = false;
};

Result<std::unique_ptr<Proposal>> LibraryImpl::Propose(
    const Skill& candidate, const ProposalOptions& options) {
  if (storage_->read_only()) {
    return Status::FailedPrecondition("library is open read-only");
  }
  SKILLDB_RETURN_IF_ERROR(ValidateSkill(candidate));
  if (!(options.near_duplicate_jaccard > 0.0 &&
        options.near_duplicate_jaccard <= 1.0)) {
    return Status::InvalidArgument("near_duplicate_jaccard must be in (0, 1]");
  }
  return std::unique_ptr<Proposal>(
      new ProposalImpl(this, state(), candidate, options));
}

Result<std::vector<DuplicateMatch>> LibraryImpl::FindDuplicates(
    const ReadState& state, const Skill& candidate,
    const ProposalOptions& options) const {
  std::vector<DuplicateMatch> out;
  std::set<std::string> seen;
  const std::vector<uint64_t> shingles = Shingles(candidate);
  // Exact: the content-hash index of the skills live at this state's head.
  const std::string hash = ContentHash(candidate);
  auto it = storage_->NewIterator(kHashes, state.snap());
  for (it->Seek(hash); it->Valid() && it->key().starts_with(hash); it->Next()) {
    DuplicateMatch m;
    m.id = it->key().ToString().substr(hash.size());
    m.kind = DuplicateMatch::Kind::kExact;
    m.jaccard = 1.0;
    m.bm25_similarity = 1.0;
    seen.insert(m.id);
    out.push_back(std::move(m));
  }
  SKILLDB_RETURN_IF_ERROR(FromRocks(it->status(), "reading content hashes"));
  if (state.head == 0 || state.head_commit.num_skills == 0) return out;

  // Near: BM25 neighbours of the candidate's text, then shingle Jaccard.
  QueryOptions q;
  q.k = options.near_duplicate_candidates;
  q.as_of = state.head;
  q.all_statuses = true;
  q.fields = HitFields::None();
  SKILLDB_ASSIGN_OR_RETURN(QueryResult neighbours,
                           QueryState(state, q, IndexedText(candidate)));
  SKILLDB_ASSIGN_OR_RETURN(const double self_score,
                           SelfScore(state, candidate));
  for (const Hit& hit : neighbours.hits) {
    if (seen.count(hit.id)) {
      for (auto& m : out) {
        if (m.id == hit.id && self_score > 0)
          m.bm25_similarity = hit.score / self_score;
      }
      continue;
    }
    SKILLDB_ASSIGN_OR_RETURN(auto rev, ReadRevision(state, hit.id, state.head));
    if (!rev || rev->kind != RevisionKind::kPut) continue;
    SKILLDB_ASSIGN_OR_RETURN(Skill other, ParseSkillJson(rev->skill_json));
    const double jaccard = Jaccard(shingles, Shingles(other));
    if (jaccard < options.near_duplicate_jaccard) continue;
    DuplicateMatch m;
    m.id = hit.id;
    m.kind = DuplicateMatch::Kind::kNear;
    m.jaccard = jaccard;
    m.bm25_similarity = self_score > 0 ? hit.score / self_score : 0.0;
    out.push_back(std::move(m));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const DuplicateMatch& a, const DuplicateMatch& b) {
                     if (a.kind != b.kind)
                       return a.kind == DuplicateMatch::Kind::kExact;
                     return a.jaccard > b.jaccard;
                   });
  return out;
}

// The candidate's BM25 score for its own text under the state's
// statistics: the scale that makes neighbour scores comparable (a skill
// with the candidate's exact text scores about 1).
Result<double> LibraryImpl::SelfScore(const ReadState& state,
                                      const Skill& candidate) const {
  TermFreqs freqs;
  const uint32_t length =
      AnalyzeSkill(*analyzer_, field_weights_, candidate, &freqs);
  std::vector<std::string> query = analyzer_->Terms(IndexedText(candidate));
  std::sort(query.begin(), query.end());
  query.erase(std::unique(query.begin(), query.end()), query.end());
  SKILLDB_ASSIGN_OR_RETURN(const std::shared_ptr<const VersionStats> stats,
                           StatsAt(state, state.head));
  if (!stats->bm25) return 0.0;
  const retrieval::Bm25& bm25 = *stats->bm25;
  std::unique_ptr<rocksdb::Iterator> df_it;  // made on the first cache miss
  double score = 0.0;
  for (const std::string& term : query) {
    auto f = std::lower_bound(
        freqs.begin(), freqs.end(), term,
        [](const auto& p, const std::string& t) { return p.first < t; });
    if (f == freqs.end() || f->first != term) continue;
    SKILLDB_ASSIGN_OR_RETURN(uint64_t df,
                             DocFreq(state, &df_it, term, state.head));
    if (df == 0) continue;
    score += bm25.TermScore(retrieval::Bm25::Idf(stats->num_skills, df),
                            f->second, length);
  }
  return score;
}

// What CommitProposal decides on: the proposal as it was made, and the head
// it would commit at.
struct ProposalAtHead {
  const Skill& candidate;
  const ProposalOptions& options;
  const ReadState& base;
  const std::vector<DuplicateMatch>& base_dups;
  const std::optional<VerificationReport>& report;
  const ReadState& head_state;
  // The candidate id's newest revision at head, and whether it is live
  // (set by RecheckProposal).
  std::optional<StoredRevision> same_id_now;
  bool id_live_now = false;

  Version head() const { return head_state.head; }
  bool self_duplicate() const {
    return std::any_of(base_dups.begin(), base_dups.end(),
                       [&](const auto& d) { return d.id == candidate.id; });
  }
};

// Re-checks the preconditions the proposal was made under: no new
// duplicate, no duplicate changed, the candidate's id neither taken nor
// changed since.
Result<std::string> LibraryImpl::RecheckProposal(ProposalAtHead& at) const {
  const Version head = at.head();
  SKILLDB_ASSIGN_OR_RETURN(
      auto head_dups, FindDuplicates(at.head_state, at.candidate, at.options));
  for (const DuplicateMatch& d : head_dups) {
    const bool known =
        std::any_of(at.base_dups.begin(), at.base_dups.end(),
                    [&](const DuplicateMatch& b) { return b.id == d.id; });
    if (!known) return "a duplicate appeared: '" + d.id + "'";
  }
  for (const DuplicateMatch& d : at.base_dups) {
    SKILLDB_ASSIGN_OR_RETURN(auto then,
                             ReadRevision(at.base, d.id, at.base.head));
    SKILLDB_ASSIGN_OR_RETURN(auto now, ReadRevision(at.head_state, d.id, head));
    if (!then || !now || then->version != now->version) {
      return "skill '" + d.id + "' changed after the proposal was made";
    }
  }
  SKILLDB_ASSIGN_OR_RETURN(
      auto same_id_then, ReadRevision(at.base, at.candidate.id, at.base.head));
  SKILLDB_ASSIGN_OR_RETURN(at.same_id_now,
                           ReadRevision(at.head_state, at.candidate.id, head));
  const bool id_live_then =
      same_id_then && same_id_then->kind == RevisionKind::kPut;
  at.id_live_now = at.same_id_now && at.same_id_now->kind == RevisionKind::kPut;
  if (id_live_then != at.id_live_now ||
      (at.id_live_now && same_id_then->version != at.same_id_now->version)) {
    return "skill '" + at.candidate.id +
           "' changed after the proposal was made";
  }
  return std::string();
}

namespace {

// The decision: why the proposal is rejected (empty: it is accepted).
std::vector<std::string> RejectionReasons(const ProposalAtHead& at) {
  std::vector<std::string> reasons;
  if (!at.report) {
    reasons.push_back("no verification report");
  } else {
    for (std::string& r : PolicyViolations(at.options.policy, *at.report)) {
      reasons.push_back(std::move(r));
    }
  }
  const DedupPolicy policy = at.options.dedup;
  if (!at.base_dups.empty() && policy == DedupPolicy::kReject) {
    for (const DuplicateMatch& d : at.base_dups) {
      reasons.push_back(DescribeDuplicate(d));
    }
  }
  if (at.id_live_now && policy != DedupPolicy::kMerge && !at.self_duplicate()) {
    reasons.push_back("id '" + at.candidate.id + "' is used by another skill");
  }
  if (policy == DedupPolicy::kSupersede && at.self_duplicate()) {
    reasons.push_back("a superseding skill needs an id of its own");
  }
  return reasons;
}

}  // namespace

// The skill, active with its report as evidence, as the dedup policy writes
// it: new (or merged into the live skill of its id), superseding its
// duplicates (deprecated in the same commit), or merged into the closest
// duplicate as that skill's next revision. Sets outcome->deprecated.
Result<std::vector<Skill>> LibraryImpl::AcceptedPuts(
    const ProposalAtHead& at, ProposalOutcome* outcome) const {
  Skill skill = at.candidate;
  skill.status = at.options.accepted_status;
  skill.evidence_json.push_back(ReportToJson(*at.report));
  std::vector<Skill> puts;
  if (at.base_dups.empty()) {
    if (at.id_live_now) {  // kMerge into the skill with the same id
      SKILLDB_ASSIGN_OR_RETURN(Skill old,
                               ParseSkillJson(at.same_id_now->skill_json));
      skill.evidence_json.insert(skill.evidence_json.begin(),
                                 old.evidence_json.begin(),
                                 old.evidence_json.end());
    }
    puts.push_back(std::move(skill));
  } else if (at.options.dedup == DedupPolicy::kSupersede) {
    for (const DuplicateMatch& d : at.base_dups) {
      SKILLDB_ASSIGN_OR_RETURN(auto rev,
                               ReadRevision(at.head_state, d.id, at.head()));
      // Present: the conflict check found every duplicate unchanged at head.
      if (!rev) {
        return Status::Internal("proposal: duplicate '" + d.id +
                                "' is gone at head");
      }
      SKILLDB_ASSIGN_OR_RETURN(Skill old, ParseSkillJson(rev->skill_json));
      old.status = SkillStatus::kDeprecated;
      if (std::find(skill.lineage.supersedes.begin(),
                    skill.lineage.supersedes.end(),
                    d.id) == skill.lineage.supersedes.end()) {
        skill.lineage.supersedes.push_back(d.id);
      }
      outcome->deprecated.push_back(d.id);
      puts.push_back(std::move(old));
    }
    puts.insert(puts.begin(), std::move(skill));
  } else {  // kMerge: a new revision of the closest duplicate
    const DuplicateMatch& target = at.base_dups.front();
    SKILLDB_ASSIGN_OR_RETURN(auto rev,
                             ReadRevision(at.head_state, target.id, at.head()));
    if (!rev) {
      return Status::Internal("proposal: duplicate '" + target.id +
                              "' is gone at head");
    }
    SKILLDB_ASSIGN_OR_RETURN(Skill old, ParseSkillJson(rev->skill_json));
    skill.evidence_json.insert(skill.evidence_json.begin(),
                               old.evidence_json.begin(),
                               old.evidence_json.end());
    for (const std::string& from : old.lineage.derived_from) {
      if (std::find(skill.lineage.derived_from.begin(),
                    skill.lineage.derived_from.end(),
                    from) == skill.lineage.derived_from.end()) {
        skill.lineage.derived_from.push_back(from);
      }
    }
    // The candidate becomes the target's next revision, under its id.
    skill.id = target.id;
    puts.push_back(std::move(skill));
  }
  return puts;
}

// Writes the audit entry and, for a proposal that carries out a queued
// one, that entry's new state, in one batch. `finish` completes the queued
// entry once the audit sequence is known.
Result<uint64_t> LibraryImpl::WriteAuditAndQueueLocked(
    const std::string& entry_json, std::optional<QueuedProposal>* queued,
    const std::function<void(uint64_t seq, QueuedProposal*)>& finish) {
  if (!queued->has_value()) return WriteAuditLocked(entry_json);
  BatchWriter writer(*storage_, options_, state()->head + 1);
  const uint64_t seq = audit_->Add(writer, entry_json);
  finish(seq, &**queued);
  auto [key, value] = EncodeQueued(&**queued);
  writer.Put(kMeta, key, value);
  SKILLDB_RETURN_IF_ERROR(writer.Finish(options_.sync_commits));
  IndexQueued(**queued);
  return seq;
}

// Recheck, decide, build the puts, commit them with the audit entry (and
// the queued entry's final state) in the same batch. Every outcome is
// audited.
Result<ProposalOutcome> LibraryImpl::CommitProposal(ProposalImpl& p) {
  std::lock_guard<std::mutex> lock(write_mu_);
  SKILLDB_ASSIGN_OR_RETURN(std::optional<QueuedProposal> queued,
                           QueueEntryForCommit(p.options_));
  if (queued) {
    queued->proposal_id = p.id_;
    queued->report = p.report_;
  }
  auto head_state = state();
  ProposalAtHead at{p.candidate_, p.options_,  *p.base_, *p.duplicates_,
                    p.report_,    *head_state, {},       false};
  Json entry{{"proposal_id", p.id_},
             {"skill_id", p.candidate_.id},
             {"author", p.options_.author},
             {"base_version", p.base_->head},
             {"head_version", at.head()}};
  if (queued) entry["queue_id"] = queued->id;

  SKILLDB_ASSIGN_OR_RETURN(const std::string stale, RecheckProposal(at));
  if (!stale.empty()) {
    entry["event"] = "aborted";
    entry["reasons"] = {stale};
    SKILLDB_RETURN_IF_ERROR(
        WriteAuditAndQueueLocked(entry.dump(), &queued,
                                 [&](uint64_t, QueuedProposal* q) {
                                   q->state = QueueState::kConflict;
                                   q->reasons = {stale};
                                 })
            .status());
    return Status::Aborted(stale + " (proposal made at version " +
                           std::to_string(p.base_->head) + ", head is " +
                           std::to_string(at.head()) + "; propose again)");
  }

  ProposalOutcome outcome;
  outcome.duplicates = at.base_dups;
  std::vector<std::string> reasons = RejectionReasons(at);
  if (!reasons.empty()) {
    entry["event"] = "rejected";
    entry["reasons"] = reasons;
    entry["duplicates"] = DuplicatesJson(at.base_dups);
    outcome.reasons = std::move(reasons);
    SKILLDB_ASSIGN_OR_RETURN(
        outcome.audit_seq,
        WriteAuditAndQueueLocked(entry.dump(), &queued,
                                 [&](uint64_t seq, QueuedProposal* q) {
                                   q->state = QueueState::kRejected;
                                   q->outcome = outcome;
                                   q->outcome->audit_seq = seq;
                                 }));
    return outcome;
  }

  SKILLDB_ASSIGN_OR_RETURN(std::vector<Skill> puts,
                           AcceptedPuts(at, &outcome));
  outcome.skill_id = puts.front().id;
  CommitOptions commit;
  commit.kind = "propose";
  commit.author = p.options_.author;
  commit.message = p.options_.message.empty()
                       ? "verified insertion of '" + outcome.skill_id + "'"
                       : p.options_.message;
  entry["event"] = "accepted";
  entry["duplicates"] = DuplicatesJson(at.base_dups);
  entry["dedup"] = std::string(DedupPolicyName(p.options_.dedup));
  entry["written_id"] = outcome.skill_id;
  entry["deprecated"] = outcome.deprecated;
  entry["speedup"] = p.report_->speedup.ratio;
  entry["ci_low"] = p.report_->speedup.ci_low;
  entry["task"] = p.report_->task;
  uint64_t seq = 0;
  SKILLDB_ASSIGN_OR_RETURN(
      outcome.version,
      CommitLocked(puts, {}, commit, [&](BatchWriter& writer, Version version) {
        entry["version"] = version;
        seq = audit_->Add(writer, entry.dump());
        if (queued) {
          queued->state = QueueState::kCommitted;
          queued->outcome = outcome;
          queued->outcome->accepted = true;
          queued->outcome->version = version;
          queued->outcome->audit_seq = seq;
          auto [key, value] = EncodeQueued(&*queued);
          writer.Put(kMeta, key, value);
        }
        return Status::Ok();
      }));
  if (queued) IndexQueued(*queued);
  outcome.accepted = true;
  outcome.audit_seq = seq;
  return outcome;
}

}  // namespace internal
}  // namespace skilldb
