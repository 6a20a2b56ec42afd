// JSON codecs for the public types: one compact JSON object (one line) per
// value, and a reader for each that returns InvalidArgument naming the field
// that is missing, of the wrong type or out of range. Every ToJson output
// reads back to an equal value (round trips are tested); readers ignore
// unknown fields, so newer writers stay readable.
//
// These are the interchange forms the CLI prints with --json, the server
// speaks and the Python module returns. Skills keep their own codec
// (SkillToJson / ParseSkillJson in skill.h, the JSONL import format, which
// rejects unknown fields) and verification reports theirs (verifier.h);
// both are embedded unchanged where a type here contains them.
//
// Stateless functions; safe to call from any thread.
#ifndef SKILLDB_JSON_H_
#define SKILLDB_JSON_H_

#include <string>
#include <string_view>

#include "skilldb/library.h"
#include "skilldb/maintenance.h"
#include "skilldb/proposal.h"
#include "skilldb/proposal_queue.h"
#include "skilldb/reranker.h"
#include "skilldb/status.h"
#include "skilldb/verifier.h"

namespace skilldb {

// Hits carry only the members their `fields` say are filled.
std::string ToJson(const Hit& hit);
std::string ToJson(const QueryResult& result);
std::string ToJson(const CommitInfo& commit);
std::string ToJson(const Change& change);
std::string ToJson(const Revision& revision);
std::string ToJson(const DiffEntry& entry);
std::string ToJson(const LibraryInfo& info);
std::string ToJson(const LibraryStats& stats);
// {"retrieved": n, ..., "last_used_version": v, "utility": u}
std::string ToJson(const UsageCounters& counters);
std::string ToJson(const UsageRecord& record);
std::string ToJson(const AuditEntry& entry);  // its stored JSON, verbatim
std::string ToJson(const DuplicateMatch& match);
std::string ToJson(const ProposalOutcome& outcome);
std::string ToJson(const PruneAction& action);
std::string ToJson(const GcReport& report);
std::string ToJson(const TagInfo& tag);
std::string ToJson(const ChatMessage& message);
std::string ToJson(const GenerationRecord& record);
std::string ToJson(const RankedHit& hit);
std::string ToJson(const RerankResult& result);
std::string ToJson(const VerificationReport& report);  // = ReportToJson
std::string ToJson(const Skill& skill);                // = SkillToJson
// The request side (api/src/queue_json.cc): what the server reads and the
// proposal queue stores. QueryOptions' fields are written as a list of
// names ("title,usage"); its reader also takes a JSON array of them.
std::string ToJson(const QueryOptions& options);
std::string ToJson(const VerificationRequest& request);
std::string ToJson(const ProposalOptions& options);
std::string ToJson(const QueuedRequest& request);
std::string ToJson(const QueuedProposal& proposal);
std::string ToJson(const QueueCounts& counts);

// Readers: FromJson<T>(text). InvalidArgument naming the field on bad
// input (the text is untrusted: nesting depth and size are bounded).
template <typename T>
Result<T> FromJson(std::string_view json);

template <>
Result<Hit> FromJson<Hit>(std::string_view json);
template <>
Result<QueryResult> FromJson<QueryResult>(std::string_view json);
template <>
Result<CommitInfo> FromJson<CommitInfo>(std::string_view json);
template <>
Result<Change> FromJson<Change>(std::string_view json);
template <>
Result<Revision> FromJson<Revision>(std::string_view json);
template <>
Result<DiffEntry> FromJson<DiffEntry>(std::string_view json);
template <>
Result<LibraryInfo> FromJson<LibraryInfo>(std::string_view json);
template <>
Result<LibraryStats> FromJson<LibraryStats>(std::string_view json);
template <>
Result<UsageCounters> FromJson<UsageCounters>(std::string_view json);
template <>
Result<UsageRecord> FromJson<UsageRecord>(std::string_view json);
template <>
Result<AuditEntry> FromJson<AuditEntry>(std::string_view json);
template <>
Result<DuplicateMatch> FromJson<DuplicateMatch>(std::string_view json);
template <>
Result<ProposalOutcome> FromJson<ProposalOutcome>(std::string_view json);
template <>
Result<PruneAction> FromJson<PruneAction>(std::string_view json);
template <>
Result<GcReport> FromJson<GcReport>(std::string_view json);
template <>
Result<TagInfo> FromJson<TagInfo>(std::string_view json);
template <>
Result<ChatMessage> FromJson<ChatMessage>(std::string_view json);
template <>
Result<GenerationRecord> FromJson<GenerationRecord>(std::string_view json);
template <>
Result<RankedHit> FromJson<RankedHit>(std::string_view json);
template <>
Result<RerankResult> FromJson<RerankResult>(std::string_view json);
template <>
Result<VerificationReport> FromJson<VerificationReport>(std::string_view json);
template <>
Result<Skill> FromJson<Skill>(std::string_view json);
template <>
Result<QueryOptions> FromJson<QueryOptions>(std::string_view json);
template <>
Result<VerificationRequest> FromJson<VerificationRequest>(
    std::string_view json);
template <>
Result<ProposalOptions> FromJson<ProposalOptions>(std::string_view json);
template <>
Result<QueuedRequest> FromJson<QueuedRequest>(std::string_view json);
template <>
Result<QueuedProposal> FromJson<QueuedProposal>(std::string_view json);
template <>
Result<QueueCounts> FromJson<QueueCounts>(std::string_view json);

}  // namespace skilldb

#endif  // SKILLDB_JSON_H_
