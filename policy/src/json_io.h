// The policy module's JSON: ordered objects (stored columns and exports
// read top to bottom), parsed with the shared bounded parser and read with
// the shared field reader (skilldb/util/json.h). Internal.
#ifndef SKILLDB_POLICY_JSON_IO_H_
#define SKILLDB_POLICY_JSON_IO_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "skilldb/status.h"
#include "skilldb/util/json.h"

namespace skilldb::policy::internal {

using Json = nlohmann::ordered_json;
using Reader = util::OrderedFieldReader;

// A stored column or answer: at most 64 MiB, 64 levels, no repeated key.
inline Result<Json> ParseJson(std::string_view text, std::string_view what) {
  return util::ParseUntrustedJson<Json>(
      text, what, {.max_bytes = size_t{64} << 20, .max_depth = 64});
}

// Compact JSON, invalid UTF-8 replaced (model output may carry any bytes).
inline std::string Dump(const Json& j) { return util::DumpLossy(j); }

}  // namespace skilldb::policy::internal

#endif  // SKILLDB_POLICY_JSON_IO_H_
