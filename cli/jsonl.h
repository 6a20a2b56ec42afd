// Reading skills from JSONL text.
#ifndef SKILLDB_CLI_JSONL_H_
#define SKILLDB_CLI_JSONL_H_

#include <string>
#include <string_view>
#include <vector>

#include "progress.h"
#include "skilldb/skill.h"

namespace skilldb::cli {

// Parses one skill per non-blank line. The first bad line fails the whole
// parse with InvalidArgument "`source`:LINE: what is wrong". Reports the
// bytes parsed to `progress` if given.
Result<std::vector<Skill>> ParseJsonl(std::string_view text,
                                      std::string_view source,
                                      Progress* progress = nullptr);

}  // namespace skilldb::cli

#endif  // SKILLDB_CLI_JSONL_H_
