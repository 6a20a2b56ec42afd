// Pitfall notes: what failed rollouts report about the skills they used.
//
// A note is an annotation, not content: it lives in the skill's extra JSON
// object under "pitfalls" (newest first, at most a bounded number), flagged
// "unverified": true, and names the trajectory and task it came from. The
// skill's title, summary, body and code (what verified insertion vouched
// for, and what deduplication hashes) are never touched by a note, and
// prompts show notes as unverified reports. The Skill Summary Agent writes
// them (summarize/pitfalls.h); the Policy Agent's prompts read them.
//
//   extra = {..., "pitfalls": [{"note": "...", "unverified": true,
//            "trajectory": "t-...", "task": "...", "verdict": "wrong",
//            "time_ms": 1700000000000}, ...]}
//
// Pure functions; safe from any thread.
#ifndef SKILLDB_POLICY_PITFALL_NOTES_H_
#define SKILLDB_POLICY_PITFALL_NOTES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/status.h"

namespace skilldb::policy {

struct PitfallNote {
  std::string note;           // one paragraph, plain text
  std::string trajectory_id;  // the failed rollout
  std::string task;
  std::string verdict;  // the verdict of the rollout's best sample
  int64_t time_ms = 0;
  bool operator==(const PitfallNote&) const = default;
};

// The notes in a skill's extra JSON ("" = none), newest first. Entries that
// are not well-formed notes are skipped; malformed JSON yields none.
std::vector<PitfallNote> ReadPitfalls(std::string_view extra_json);

// `extra_json` with `note` added first and at most `keep` notes kept; every
// other member of the object is preserved. InvalidArgument when extra_json
// is not a JSON object or the note is empty.
Result<std::string> AddPitfall(std::string_view extra_json,
                               const PitfallNote& note, size_t keep = 8);

}  // namespace skilldb::policy

#endif  // SKILLDB_POLICY_PITFALL_NOTES_H_
