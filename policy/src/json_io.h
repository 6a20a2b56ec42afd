// Small helpers for the policy module's JSON codecs: parsing with bounds
// and typed reads that return InvalidArgument naming the field. Internal.
#ifndef SKILLDB_POLICY_JSON_IO_H_
#define SKILLDB_POLICY_JSON_IO_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/status.h"

namespace skilldb::policy::internal {

using Json = nlohmann::ordered_json;

// Parses `text`; InvalidArgument naming `what` for malformed JSON, text over
// 64 MiB or nesting deeper than 64.
Result<Json> ParseJson(std::string_view text, std::string_view what);

// Compact JSON, invalid UTF-8 replaced (model output may carry any bytes).
std::string Dump(const Json& j);

// Typed reads of optional members of an object: absent or null leaves the
// output unchanged; a wrong type is InvalidArgument naming what.key.
class Reader {
 public:
  Reader(const Json& j, std::string what) : j_(j), what_(std::move(what)) {}
  Status Str(const char* key, std::string* out) const;
  Status Bool(const char* key, bool* out) const;
  Status Num(const char* key, double* out) const;
  Status Int(const char* key, int* out) const;
  Status I64(const char* key, int64_t* out) const;
  Status U64(const char* key, uint64_t* out) const;
  Status Size(const char* key, size_t* out) const;
  Status Strs(const char* key, std::vector<std::string>* out) const;
  // The member, or nullptr when absent or null.
  const Json* Find(const char* key) const;
  Status Wrong(const char* key, const char* expected) const;
  const std::string& what() const { return what_; }

 private:
  const Json& j_;
  std::string what_;
};

}  // namespace skilldb::policy::internal

#endif  // SKILLDB_POLICY_JSON_IO_H_
