// Reading the seed library (data/seed/*.jsonl) for the seed validation test
// and the relevance evaluation.
//
// The functions are thread-compatible: they touch only the files they read.
#ifndef SKILLDB_TESTS_SEED_DATA_H_
#define SKILLDB_TESTS_SEED_DATA_H_

#include <string>
#include <vector>

#include "skilldb/skill.h"
#include "skilldb/status.h"
#include "skilldb/util/file.h"

namespace skilldb::testing {

// One non-blank line of a seed file and where it came from.
struct SeedLine {
  std::string file;  // file name without the directory, e.g. "10-x.jsonl"
  int line = 0;      // 1-based
  std::string text;
};

// The seed directory: $SKILLDB_SEED_DIR if set (so a check can be tried on a
// broken copy of the data), else `compiled_default`.
std::string SeedDir(const std::string& compiled_default);

// Every non-blank line of every *.jsonl file in `dir`, files in name order
// (the order the CLI imports them in). NotFound if `dir` holds no .jsonl
// file; IOError if one cannot be read.
Result<std::vector<SeedLine>> ReadSeedLines(const std::string& dir);

// "10-x.jsonl:12" for messages.
std::string Where(const SeedLine& line);

// Parses every seed line with ParseSkillJson. InvalidArgument naming the file
// and line of the first line that does not parse.
Result<std::vector<Skill>> LoadSeedSkills(const std::string& dir);

}  // namespace skilldb::testing

#endif  // SKILLDB_TESTS_SEED_DATA_H_
