// Types for usage feedback, the audit log, pruning, tags and garbage
// collection. Plain values; safe to copy and share read-only.
#ifndef SKILLDB_MAINTENANCE_H_
#define SKILLDB_MAINTENANCE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/skill.h"
#include "skilldb/status.h"

namespace skilldb {

// ---- Usage feedback ----

// On disk as the index into UsageCounters::counts: never renumber.
enum class UsageEvent {
  kRetrieved = 0,  // returned by a query
  kSelected = 1,   // chosen by the reranker / agent
  kApplied = 2,    // used to write a kernel
  kSucceeded = 3,  // that kernel verified faster
  kFailed = 4,     // that kernel failed
};
inline constexpr int kNumUsageEvents = 5;
std::string_view UsageEventName(UsageEvent event);
Result<UsageEvent> ParseUsageEvent(std::string_view name);

struct UsageCounters {
  uint64_t counts[kNumUsageEvents] = {0, 0, 0, 0, 0};
  Version last_used_version = 0;  // library head at the latest event

  uint64_t count(UsageEvent e) const { return counts[static_cast<int>(e)]; }
  // Posterior mean success rate of applications under a Beta(1, 1) prior:
  // (succeeded + 1) / (succeeded + failed + 2). 0.5 with no evidence.
  double utility() const;
  bool operator==(const UsageCounters&) const = default;
};

// The largest count one usage record may carry (larger is InvalidArgument:
// a wrapped negative number, not feedback).
inline constexpr uint64_t kMaxUsageCount = uint64_t{1} << 32;

// One batched usage event (Library::RecordUsage).
struct UsageRecord {
  std::string id;
  UsageEvent event = UsageEvent::kRetrieved;
  uint64_t count = 1;
  bool operator==(const UsageRecord&) const = default;
};

// ---- Integrity (Library::Check) ----

// What Library::Check verified and what it found wrong. Each problem names
// what is damaged: a table file, a segment, a skill id.
struct CheckReport {
  uint64_t tables = 0;       // table files whose every block was verified
  uint64_t table_bytes = 0;  // their total size
  uint64_t segments = 0;     // index segments whose doc table was read
  uint64_t skills = 0;  // skills live at the head, checked against the index
  std::vector<std::string> problems;
  bool ok() const { return problems.empty(); }
};

// ---- Audit log ----

struct AuditEntry {
  uint64_t seq = 0;
  int64_t time_ms = 0;
  std::string event;  // duplicates_found, verified, accepted, rejected, aborted
  std::string proposal_id;
  std::string skill_id;  // the candidate's id
  std::string author;
  Version base_version = 0;  // V0 of the proposal
  Version version = 0;       // the commit, for accepted
  std::vector<std::string> reasons;
  std::string json;  // the whole entry as one JSON object
  bool operator==(const AuditEntry&) const = default;
};

struct AuditOptions {
  size_t limit = 0;        // 0 = all; newest entries when limited
  uint64_t after_seq = 0;  // only entries with seq > this
};

// ---- Pruning ----

// Which skills a prune marks pruned. Every enabled rule applies; a skill
// matched by several is listed once, with every reason.
struct PrunePolicy {
  // Utility below `threshold` after at least `min_applied` applications.
  std::optional<double> low_utility_threshold;
  uint64_t low_utility_min_applied = 10;
  // Deprecated skills, and skills another live skill supersedes.
  bool superseded = false;
  // Skills not used (no usage event) for this many versions.
  std::optional<uint64_t> unused_versions;
  // Near-duplicate clusters (word 3-shingle Jaccard >= this) keep only their
  // best member: highest utility, then most evidence, then oldest.
  std::optional<double> near_duplicate_jaccard;
};

struct PruneAction {
  std::string id;
  std::vector<std::string> reasons;
  bool operator==(const PruneAction&) const = default;
};

// ---- Garbage collection ----

struct GcOptions {
  std::optional<uint64_t> keep_last;  // keep the newest N versions
  std::optional<Version> keep_since;  // keep versions >= V
};

struct GcReport {
  Version old_oldest = 0;
  Version new_oldest = 0;
  std::vector<Version> tagged;  // kept although older
  uint64_t revisions_dropped = 0;
  uint64_t commits_dropped = 0;
  uint64_t df_entries_dropped = 0;
  uint64_t documents_dropped = 0;
  uint64_t disk_bytes_before = 0;
  uint64_t disk_bytes_after = 0;
  bool operator==(const GcReport&) const = default;
};

struct TagInfo {
  std::string name;
  Version version = 0;
  bool operator==(const TagInfo&) const = default;
};

// Tag names: [A-Za-z0-9][A-Za-z0-9._-]{0,63}. InvalidArgument otherwise.
Status ValidateTagName(std::string_view name);

}  // namespace skilldb

#endif  // SKILLDB_MAINTENANCE_H_
