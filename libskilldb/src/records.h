// Encodings of commit records and the small meta values. Internal.
#ifndef SKILLDB_LIBSKILLDB_RECORDS_H_
#define SKILLDB_LIBSKILLDB_RECORDS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "skilldb/library.h"

namespace skilldb::internal {

// The live skills of one version by status, by language and by trust
// (SkillTrust with its default threshold), kept in its commit record so
// `Stats` reads them instead of scanning. Libraries written before the
// counts were kept have commit records without them.
struct SkillCounts {
  uint64_t candidate = 0, active = 0, deprecated = 0, pruned = 0;
  uint64_t cuda = 0, triton = 0, any_language = 0;
  uint64_t unverified = 0, provisional = 0, trusted = 0;
  bool operator==(const SkillCounts&) const = default;
};

// Adds `sign` (+1 or -1) to the counters `skill` falls under. Returns
// Corruption when a counter would go below zero.
Status CountSkill(const Skill& skill, int sign, SkillCounts* counts);

// `counts`, when given, are stored with the record.
std::string EncodeCommit(const CommitInfo& commit,
                         const std::optional<SkillCounts>& counts = {});
// `counts`, when not null, receives the stored counts (unset if none).
Result<CommitInfo> DecodeCommit(std::string_view value,
                                std::optional<SkillCounts>* counts = nullptr);

// Change kinds stored in the changes column family. Never renumber.
char EncodeChangeKind(ChangeKind kind);
Result<ChangeKind> DecodeChangeKind(std::string_view value);

}  // namespace skilldb::internal

#endif  // SKILLDB_LIBSKILLDB_RECORDS_H_
