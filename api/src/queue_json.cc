// The proposal queue's vocabulary (proposal_queue.h) and the JSON codecs of
// the request-side types: what a queued proposal stores, what the server
// reads from a request and what the Python module sends. Same conventions
// as json.cc: ordered output that never throws, untrusted input read
// through FieldReader.
#include <charconv>
#include <cstdio>

#include "skilldb/json.h"
#include "skilldb/proposal_queue.h"
#include "skilldb/util/json.h"

namespace skilldb {
namespace {

using QOut = nlohmann::ordered_json;
using QIn = nlohmann::json;
using util::FieldReader;

QOut QEmbed(const std::string& json_text) {
  return QOut::parse(json_text, nullptr, /*allow_exceptions=*/false);
}

Result<QIn> QParseObject(std::string_view text, const char* what) {
  SKILLDB_ASSIGN_OR_RETURN(QIn j, util::ParseUntrustedJson(text, what));
  if (!j.is_object()) {
    return Status::InvalidArgument(std::string(what) +
                                   " must be a JSON object");
  }
  return j;
}

// Reads the member `key` (absent or null: nothing) with `parse`, a reader
// of its JSON text.
template <typename T, typename Parse>
Status QReadMember(const QIn& j, const char* key, const char* what,
                   Parse parse, std::optional<T>* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Ok();
  Result<T> value = parse(it->dump());
  if (!value.ok()) {
    return value.status().WithContext(std::string(what) + "." + key);
  }
  *out = std::move(value).value();
  return Status::Ok();
}

QOut ArtifactJson(const Artifact& a) {
  return QOut{{"name", a.name}, {"language", a.language}, {"source", a.source}};
}

Status ReadArtifact(const QIn& j, const char* key, Artifact* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Ok();
  if (!it->is_object()) {
    return Status::InvalidArgument(std::string("verification request.") +
                                   key + " must be an object");
  }
  FieldReader r(*it, std::string("verification request.") + key);
  SKILLDB_RETURN_IF_ERROR(r.String("name", &out->name));
  SKILLDB_RETURN_IF_ERROR(r.String("language", &out->language));
  return r.String("source", &out->source);
}

QOut PolicyJson(const VerificationPolicy& p) {
  return QOut{{"min_rounds", p.min_rounds},
              {"min_speedup", p.min_speedup},
              {"min_ci_low", p.min_ci_low},
              {"require_correctness", p.require_correctness},
              {"max_plausible_speedup", p.max_plausible_speedup},
              {"device_class", p.device_class}};
}

Status ReadPolicy(const QIn& j, VerificationPolicy* p) {
  if (!j.is_object()) {
    return Status::InvalidArgument("proposal options.policy must be an object");
  }
  FieldReader r(j, "proposal options.policy");
  int64_t rounds = p->min_rounds;
  SKILLDB_RETURN_IF_ERROR(r.Int64("min_rounds", &rounds));
  if (rounds < 1 || rounds > 100) {
    return Status::InvalidArgument(
        "proposal options.policy.min_rounds must be between 1 and 100");
  }
  p->min_rounds = static_cast<int>(rounds);
  SKILLDB_RETURN_IF_ERROR(r.Double("min_speedup", &p->min_speedup));
  SKILLDB_RETURN_IF_ERROR(r.Double("min_ci_low", &p->min_ci_low));
  SKILLDB_RETURN_IF_ERROR(
      r.Bool("require_correctness", &p->require_correctness));
  SKILLDB_RETURN_IF_ERROR(
      r.Double("max_plausible_speedup", &p->max_plausible_speedup));
  return r.String("device_class", &p->device_class);
}

QOut ProposalOptionsJson(const ProposalOptions& o) {
  QOut j{{"dedup", DedupPolicyName(o.dedup)},
         {"policy", PolicyJson(o.policy)},
         {"near_duplicate_jaccard", o.near_duplicate_jaccard},
         {"near_duplicate_candidates", o.near_duplicate_candidates},
         {"author", o.author},
         {"message", o.message},
         {"accepted_status", SkillStatusName(o.accepted_status)}};
  if (!o.queue_id.empty()) j["queue_id"] = o.queue_id;
  return j;
}

QOut QueuedRequestJson(const QueuedRequest& q) {
  QOut j{{"candidate", QEmbed(SkillToJson(q.candidate))},
         {"options", ProposalOptionsJson(q.options)}};
  if (q.verification) j["verification"] = QEmbed(ToJson(*q.verification));
  if (q.replay_report) {
    j["replay_report"] = QEmbed(ReportToJson(*q.replay_report));
  }
  return j;
}

QOut CountsJson(const QueueCounts& c) {
  return QOut{{"queued", c.queued},       {"verifying", c.verifying},
              {"committed", c.committed}, {"rejected", c.rejected},
              {"conflict", c.conflict},   {"failed", c.failed}};
}

}  // namespace

// ---- Vocabulary ----

std::string_view QueueStateName(QueueState state) {
  switch (state) {
    case QueueState::kQueued:
      return "queued";
    case QueueState::kVerifying:
      return "verifying";
    case QueueState::kCommitted:
      return "committed";
    case QueueState::kRejected:
      return "rejected";
    case QueueState::kConflict:
      return "conflict";
    case QueueState::kFailed:
      return "failed";
  }
  return "queued";
}

Result<QueueState> ParseQueueState(std::string_view name) {
  for (QueueState s : {QueueState::kQueued, QueueState::kVerifying,
                       QueueState::kCommitted, QueueState::kRejected,
                       QueueState::kConflict, QueueState::kFailed}) {
    if (name == QueueStateName(s)) return s;
  }
  return Status::InvalidArgument(
      "unknown queue state '" + std::string(name) +
      "' (expected queued, verifying, committed, rejected, conflict or "
      "failed)");
}

bool IsFinalQueueState(QueueState state) {
  return state != QueueState::kQueued && state != QueueState::kVerifying;
}

std::string QueueIdFor(uint64_t seq) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "q-%012llu",
                static_cast<unsigned long long>(seq));
  return buf;
}

Result<uint64_t> ParseQueueId(std::string_view id) {
  const std::string_view digits =
      id.starts_with("q-") ? id.substr(2) : std::string_view();
  uint64_t seq = 0;
  auto [end, ec] =
      std::from_chars(digits.data(), digits.data() + digits.size(), seq);
  if (digits.empty() || digits.size() > 20 || ec != std::errc() ||
      end != digits.data() + digits.size() || seq == 0) {
    std::string shown(id.substr(0, 40));
    return Status::InvalidArgument("'" + shown +
                                   "' is not a queued proposal id (q-NNN)");
  }
  return seq;
}

Status ValidateQueuedRequest(const QueuedRequest& request) {
  SKILLDB_RETURN_IF_ERROR(ValidateSkill(request.candidate));
  if (request.verification.has_value() == request.replay_report.has_value()) {
    return Status::InvalidArgument(
        "a queued proposal needs exactly one of a verification request and "
        "a recorded report to replay");
  }
  if (request.verification && request.verification->task.empty()) {
    return Status::InvalidArgument("the verification request names no task");
  }
  const double j = request.options.near_duplicate_jaccard;
  if (!(j > 0.0 && j <= 1.0)) {
    return Status::InvalidArgument("near_duplicate_jaccard must be in (0, 1]");
  }
  return Status::Ok();
}

// ---- Writers ----

std::string ToJson(const VerificationRequest& r) {
  return util::DumpLossy(
      QOut{{"task", r.task},
           {"baseline", ArtifactJson(r.baseline)},
           {"candidate", ArtifactJson(r.candidate)},
           {"rounds", r.rounds},
           {"timed_calls_per_round", r.timed_calls_per_round},
           {"check_correctness", r.check_correctness},
           {"device_class", r.device_class},
           {"seed", r.seed}});
}

std::string ToJson(const ProposalOptions& options) {
  return util::DumpLossy(ProposalOptionsJson(options));
}

std::string ToJson(const QueuedRequest& request) {
  return util::DumpLossy(QueuedRequestJson(request));
}

std::string ToJson(const QueueCounts& counts) {
  return util::DumpLossy(CountsJson(counts));
}

std::string ToJson(const QueuedProposal& q) {
  QOut j{{"id", q.id},
         {"seq", q.seq},
         {"state", QueueStateName(q.state)},
         {"submitted_ms", q.submitted_ms},
         {"updated_ms", q.updated_ms},
         {"attempts", q.attempts},
         {"proposal_id", q.proposal_id},
         {"request", QueuedRequestJson(q.request)}};
  if (q.outcome) j["outcome"] = QEmbed(ToJson(*q.outcome));
  if (q.report) j["report"] = QEmbed(ReportToJson(*q.report));
  j["reasons"] = q.reasons;
  return util::DumpLossy(j);
}

std::string ToJson(const QueryOptions& o) {
  QOut j{{"k", o.k}};
  if (o.as_of) j["as_of"] = *o.as_of;
  j["tags"] = o.tags;
  j["ops"] = o.ops;
  j["arch"] = o.arch;
  if (o.language) j["language"] = LanguageName(*o.language);
  if (o.status) j["status"] = SkillStatusName(*o.status);
  j["all_statuses"] = o.all_statuses;
  j["fields"] = FormatHitFields(o.fields);
  j["record_retrieved"] = o.record_retrieved;
  return util::DumpLossy(j);
}

// ---- Readers ----

template <>
Result<VerificationRequest> FromJson<VerificationRequest>(
    std::string_view text) {
  SKILLDB_ASSIGN_OR_RETURN(QIn j, QParseObject(text, "verification request"));
  FieldReader r(j, "verification request");
  VerificationRequest v;
  SKILLDB_RETURN_IF_ERROR(r.String("task", &v.task));
  SKILLDB_RETURN_IF_ERROR(ReadArtifact(j, "baseline", &v.baseline));
  SKILLDB_RETURN_IF_ERROR(ReadArtifact(j, "candidate", &v.candidate));
  int64_t rounds = v.rounds, calls = v.timed_calls_per_round;
  SKILLDB_RETURN_IF_ERROR(r.Int64("rounds", &rounds));
  SKILLDB_RETURN_IF_ERROR(r.Int64("timed_calls_per_round", &calls));
  if (rounds < 1 || rounds > 100 || calls < 1 || calls > 100000) {
    return Status::InvalidArgument(
        "verification request: rounds must be 1..100 and "
        "timed_calls_per_round 1..100000");
  }
  v.rounds = static_cast<int>(rounds);
  v.timed_calls_per_round = static_cast<int>(calls);
  SKILLDB_RETURN_IF_ERROR(r.Bool("check_correctness", &v.check_correctness));
  SKILLDB_RETURN_IF_ERROR(r.String("device_class", &v.device_class));
  SKILLDB_RETURN_IF_ERROR(r.Uint64("seed", &v.seed));
  return v;
}

template <>
Result<ProposalOptions> FromJson<ProposalOptions>(std::string_view text) {
  SKILLDB_ASSIGN_OR_RETURN(QIn j, QParseObject(text, "proposal options"));
  FieldReader r(j, "proposal options");
  ProposalOptions o;
  std::string dedup;
  SKILLDB_RETURN_IF_ERROR(r.String("dedup", &dedup));
  if (!dedup.empty()) {
    SKILLDB_ASSIGN_OR_RETURN(o.dedup, ParseDedupPolicy(dedup));
  }
  if (const QIn* p = r.Find("policy")) {
    SKILLDB_RETURN_IF_ERROR(ReadPolicy(*p, &o.policy));
  }
  SKILLDB_RETURN_IF_ERROR(
      r.Double("near_duplicate_jaccard", &o.near_duplicate_jaccard));
  SKILLDB_RETURN_IF_ERROR(
      r.Size("near_duplicate_candidates", &o.near_duplicate_candidates));
  SKILLDB_RETURN_IF_ERROR(r.String("author", &o.author));
  SKILLDB_RETURN_IF_ERROR(r.String("message", &o.message));
  SKILLDB_RETURN_IF_ERROR(r.String("queue_id", &o.queue_id));
  std::string status;
  SKILLDB_RETURN_IF_ERROR(r.String("accepted_status", &status));
  if (!status.empty()) {
    SKILLDB_ASSIGN_OR_RETURN(o.accepted_status, ParseSkillStatus(status));
  }
  return o;
}

template <>
Result<QueuedRequest> FromJson<QueuedRequest>(std::string_view text) {
  SKILLDB_ASSIGN_OR_RETURN(QIn j, QParseObject(text, "queued request"));
  QueuedRequest q;
  auto candidate = j.find("candidate");
  if (candidate == j.end() || !candidate->is_object()) {
    return Status::InvalidArgument(
        "queued request.candidate must be a skill object");
  }
  auto skill = ParseSkillJson(candidate->dump());
  if (!skill.ok()) return skill.status().WithContext("queued request.candidate");
  q.candidate = std::move(skill).value();
  std::optional<ProposalOptions> options;
  SKILLDB_RETURN_IF_ERROR(QReadMember<ProposalOptions>(
      j, "options", "queued request", FromJson<ProposalOptions>, &options));
  if (options) q.options = std::move(*options);
  q.options.queue_id.clear();
  SKILLDB_RETURN_IF_ERROR(QReadMember<VerificationRequest>(
      j, "verification", "queued request", FromJson<VerificationRequest>,
      &q.verification));
  SKILLDB_RETURN_IF_ERROR(QReadMember<VerificationReport>(
      j, "replay_report", "queued request", ReportFromJson,
      &q.replay_report));
  return q;
}

template <>
Result<QueueCounts> FromJson<QueueCounts>(std::string_view text) {
  SKILLDB_ASSIGN_OR_RETURN(QIn j, QParseObject(text, "queue counts"));
  FieldReader r(j, "queue counts");
  QueueCounts c;
  SKILLDB_RETURN_IF_ERROR(r.Uint64("queued", &c.queued));
  SKILLDB_RETURN_IF_ERROR(r.Uint64("verifying", &c.verifying));
  SKILLDB_RETURN_IF_ERROR(r.Uint64("committed", &c.committed));
  SKILLDB_RETURN_IF_ERROR(r.Uint64("rejected", &c.rejected));
  SKILLDB_RETURN_IF_ERROR(r.Uint64("conflict", &c.conflict));
  SKILLDB_RETURN_IF_ERROR(r.Uint64("failed", &c.failed));
  return c;
}

template <>
Result<QueuedProposal> FromJson<QueuedProposal>(std::string_view text) {
  SKILLDB_ASSIGN_OR_RETURN(QIn j, QParseObject(text, "queued proposal"));
  FieldReader r(j, "queued proposal");
  QueuedProposal q;
  SKILLDB_RETURN_IF_ERROR(r.Require("id"));
  SKILLDB_RETURN_IF_ERROR(r.String("id", &q.id));
  SKILLDB_RETURN_IF_ERROR(r.Uint64("seq", &q.seq));
  std::string state;
  SKILLDB_RETURN_IF_ERROR(r.String("state", &state));
  SKILLDB_ASSIGN_OR_RETURN(q.state, ParseQueueState(state));
  SKILLDB_RETURN_IF_ERROR(r.Int64("submitted_ms", &q.submitted_ms));
  SKILLDB_RETURN_IF_ERROR(r.Int64("updated_ms", &q.updated_ms));
  int64_t attempts = 0;
  SKILLDB_RETURN_IF_ERROR(r.Int64("attempts", &attempts));
  q.attempts = static_cast<int>(attempts);
  SKILLDB_RETURN_IF_ERROR(r.String("proposal_id", &q.proposal_id));
  std::optional<QueuedRequest> request;
  SKILLDB_RETURN_IF_ERROR(QReadMember<QueuedRequest>(
      j, "request", "queued proposal", FromJson<QueuedRequest>, &request));
  if (!request) {
    return Status::InvalidArgument("queued proposal.request is missing");
  }
  q.request = std::move(*request);
  SKILLDB_RETURN_IF_ERROR(QReadMember<ProposalOutcome>(
      j, "outcome", "queued proposal", FromJson<ProposalOutcome>, &q.outcome));
  SKILLDB_RETURN_IF_ERROR(QReadMember<VerificationReport>(
      j, "report", "queued proposal", ReportFromJson, &q.report));
  SKILLDB_RETURN_IF_ERROR(r.Strings("reasons", &q.reasons));
  return q;
}

template <>
Result<QueryOptions> FromJson<QueryOptions>(std::string_view text) {
  SKILLDB_ASSIGN_OR_RETURN(QIn j, QParseObject(text, "query options"));
  FieldReader r(j, "query options");
  QueryOptions o;
  SKILLDB_RETURN_IF_ERROR(r.Size("k", &o.k));
  if (o.k > kMaxQueryK) {
    return Status::InvalidArgument("query options.k must be at most " +
                                   std::to_string(kMaxQueryK));
  }
  if (r.Find("as_of") != nullptr) {
    Version v = 0;
    SKILLDB_RETURN_IF_ERROR(r.Uint64("as_of", &v));
    o.as_of = v;
  }
  SKILLDB_RETURN_IF_ERROR(r.Strings("tags", &o.tags));
  SKILLDB_RETURN_IF_ERROR(r.Strings("ops", &o.ops));
  SKILLDB_RETURN_IF_ERROR(r.Strings("arch", &o.arch));
  std::string language, status;
  SKILLDB_RETURN_IF_ERROR(r.String("language", &language));
  if (!language.empty()) {
    SKILLDB_ASSIGN_OR_RETURN(o.language, ParseLanguage(language));
  }
  SKILLDB_RETURN_IF_ERROR(r.String("status", &status));
  if (!status.empty()) {
    SKILLDB_ASSIGN_OR_RETURN(o.status, ParseSkillStatus(status));
  }
  SKILLDB_RETURN_IF_ERROR(r.Bool("all_statuses", &o.all_statuses));
  if (const QIn* fields = r.Find("fields")) {
    std::string list;
    if (fields->is_array()) {
      std::vector<std::string> names;
      SKILLDB_RETURN_IF_ERROR(r.Strings("fields", &names));
      for (const std::string& n : names) list += (list.empty() ? "" : ",") + n;
      if (names.empty()) list = "none";
    } else {
      SKILLDB_RETURN_IF_ERROR(r.String("fields", &list));
    }
    SKILLDB_ASSIGN_OR_RETURN(o.fields, ParseHitFields(list));
  }
  SKILLDB_RETURN_IF_ERROR(r.Bool("record_retrieved", &o.record_retrieved));
  return o;
}

}  // namespace skilldb
