// Content fingerprints for deduplication: a normalized content hash (exact
// duplicates) and word 3-shingles (near duplicates). Internal.
#ifndef SKILLDB_LIBSKILLDB_DEDUP_H_
#define SKILLDB_LIBSKILLDB_DEDUP_H_

#include <cstdint>
#include <string>
#include <vector>

#include "skilldb/skill.h"

namespace skilldb::internal {

// 16 bytes identifying the skill's content: title, summary, body and code,
// each lower-cased (ASCII) with whitespace runs collapsed, plus its sorted,
// lower-cased tags and ops. Id, status, provenance and evidence do not
// count: two skills saying the same thing are duplicates whoever wrote them.
std::string ContentHash(const Skill& skill);

// Hashes of the word 3-shingles of the skill's normalized text, sorted and
// distinct.
std::vector<uint64_t> Shingles(const Skill& skill);

// |a ∩ b| / |a ∪ b| for sorted distinct sets (1 when both are empty).
double Jaccard(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b);

}  // namespace skilldb::internal

#endif  // SKILLDB_LIBSKILLDB_DEDUP_H_
