// Reading the Skill Summary Agent's answer: the JSON object in a model's
// completion, checked strictly against the skill interchange schema
// (ParseSkillJson) plus the rules a distilled skill must meet, with an
// error message the agent feeds back to the model for another attempt.
//
// Pure functions; safe from any thread.
#ifndef SKILLDB_SUMMARIZE_SKILL_CANDIDATE_H_
#define SKILLDB_SUMMARIZE_SKILL_CANDIDATE_H_

#include <string>
#include <string_view>
#include <vector>

#include "skilldb/skill.h"
#include "skilldb/status.h"

namespace skilldb::summarize {

// The fields the model writes (everything else is set by the library or
// the agent: id, provenance, lineage, evidence, status, extra).
inline constexpr const char* kModelFields[] = {
    "title", "summary", "body", "code", "tags", "ops", "arch", "language"};

// The body's required sections (markdown headings, any level).
inline constexpr const char* kBodySections[] = {
    "When to use", "How", "Pitfalls", "How to tell it worked"};

// The JSON object in `completion`: the first balanced {...} (strings and
// escapes respected) after a ```json fence line if there is one (any
// case), else anywhere. The fence's closing line is not needed: the
// object's strings may hold fences of their own. InvalidArgument when there
// is none, it is not closed, or it exceeds `max_bytes`.
Result<std::string> ExtractJsonObject(std::string_view completion,
                                      size_t max_bytes = 64 << 10);

// What the candidate is checked against besides the schema.
struct CandidateRules {
  // The kernel the trajectory verified: the code pattern must generalize
  // it (not be it, or nearly it: word 3-shingle Jaccard below this).
  std::string kernel_source;
  double max_kernel_jaccard = 0.8;  // Default: 0.8.
  // The task's name, which the title and summary must not use (a skill
  // names the technique, not the task).
  std::string task_name;
};

// Screens one field of model-written text before it may enter the library
// (and from there, later prompts): appends to `problems`, naming `field`,
// a control character (any C0 control but newline and tab when
// `allow_lines`, DEL, C1 controls, bidirectional overrides, bytes that are
// not UTF-8) and text that reads as an instruction to a model ("ignore
// previous instructions", "system prompt", chat template role markers, a
// line opening with "system:").
void ScreenModelText(std::string_view field, std::string_view text,
                     bool allow_lines, std::vector<std::string>* problems);

// Reads the model's object into a Skill with id `id` (and nothing else of
// the library's fields set). InvalidArgument whose message lists every
// problem found, each naming the field: a field outside kModelFields (or
// one the library sets), a missing or mistyped field, duplicate keys,
// invalid UTF-8, a title of 8..120 or summary of 20..400 characters on one
// line not met, a body without the sections of kBodySections or outside
// 200..16000 bytes, an empty or oversized (> 8000 bytes) code pattern, 1..12
// tags and 1..8 ops as lowercase words, arch entries like sm_90 or sm_90a,
// language cuda | triton | any, a code pattern that restates the kernel, a
// title or summary naming the task, and what ScreenModelText finds in the
// title, summary, body or code.
Result<Skill> ParseCandidate(std::string_view object_json, std::string_view id,
                             const CandidateRules& rules);

// A skill id for a distilled skill: "sa-" + a slug of `title` (at most 48
// characters) + "-" + 8 hex digits of a hash of `salt` (the trajectory id),
// so that two trajectories never collide and a retry of one is stable.
std::string DistilledSkillId(std::string_view title, std::string_view salt);

}  // namespace skilldb::summarize

#endif  // SKILLDB_SUMMARIZE_SKILL_CANDIDATE_H_
