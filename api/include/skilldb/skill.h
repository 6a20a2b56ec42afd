// The Skill record and its JSONL interchange format.
//
// A Skill is a plain value type; it is safe to copy and to share read-only
// across threads.
#ifndef SKILLDB_SKILL_H_
#define SKILLDB_SKILL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/status.h"

namespace skilldb {

// Library versions count commits: version 0 is the empty library and every
// commit creates the next version.
using Version = uint64_t;

// The language a skill's code pattern is written in. Stored on disk as its
// name, so the numeric values are free to change.
enum class Language { kAny, kCuda, kTriton };

// The lifecycle state of a skill.
enum class SkillStatus { kCandidate, kActive, kDeprecated, kPruned };

std::string_view LanguageName(Language language);
std::string_view SkillStatusName(SkillStatus status);
// Return InvalidArgument naming the accepted values when `name` is unknown.
Result<Language> ParseLanguage(std::string_view name);
Result<SkillStatus> ParseSkillStatus(std::string_view name);

// Where a skill came from.
struct Provenance {
  std::string source;      // "seed" | "human" | "summary-agent"; "" = unset
  std::string author;      // person or agent name
  std::string rollout_id;  // the rollout it was distilled from, if any
  std::string task_id;     // the task that rollout solved, if any
  std::optional<int64_t> model_step;  // trainer step of the model, if any

  bool empty() const {
    return source.empty() && author.empty() && rollout_id.empty() &&
           task_id.empty() && !model_step.has_value();
  }
  bool operator==(const Provenance&) const = default;
};

// How a skill relates to others.
struct Lineage {
  std::vector<std::string> derived_from;  // ids of skills it builds on
  std::vector<std::string> supersedes;    // ids of skills it replaces

  bool empty() const { return derived_from.empty() && supersedes.empty(); }
  bool operator==(const Lineage&) const = default;
};

// One skill: a short, verified write-up of a kernel optimization technique.
struct Skill {
  std::string id;       // stable slug: [a-z0-9][a-z0-9._-]{0,127}
  std::string title;    // required, not blank
  std::string summary;  // one line
  std::string body;     // markdown: when to use, how, pitfalls
  std::string code;     // a code pattern or example
  Language language = Language::kAny;
  std::vector<std::string> tags;
  std::vector<std::string> ops;   // matmul, reduction, softmax, ...
  std::vector<std::string> arch;  // sm_80, sm_90, ...
  Provenance provenance;
  Lineage lineage;
  SkillStatus status = SkillStatus::kActive;
  // Verification reports, each a JSON object kept verbatim (compact form).
  std::vector<std::string> evidence_json;
  // Any JSON object kept as is (compact form); "" = absent.
  std::string extra_json;

  bool operator==(const Skill&) const = default;

  // A skill with only id and title set (handy in tests and examples).
  static Skill Make(std::string id, std::string title);
};

// Checks the rules a stored skill must satisfy (id syntax, non-blank title,
// valid UTF-8 in every string, non-empty list entries). Returns
// InvalidArgument naming the field and what is wrong.
Status ValidateSkill(const Skill& skill);

// Returns OK if `id` matches [a-z0-9][a-z0-9._-]{0,127}; otherwise
// InvalidArgument naming the id and the rule.
Status ValidateSkillId(std::string_view id);

// The largest skill record ParseSkillJson accepts, in bytes of JSON.
inline constexpr size_t kMaxSkillJsonBytes = size_t{4} << 20;

// Parses one JSONL line into a Skill and validates it. Unknown top-level
// fields, wrong types, invalid UTF-8 and rule violations are InvalidArgument
// with a message naming the field.
Result<Skill> ParseSkillJson(std::string_view json);

// Serializes `skill` as one line of compact JSON (no trailing newline) that
// ParseSkillJson reads back to an equal Skill. Empty optional fields are
// omitted.
std::string SkillToJson(const Skill& skill);

// The text the index sees for `skill`: title, summary, body, tags, ops and
// code joined with single spaces (in that order).
std::string IndexedText(const Skill& skill);

}  // namespace skilldb

#endif  // SKILLDB_SKILL_H_
