// Parsing untrusted JSON and reading typed fields from it: the helpers the
// API layer's codecs share. Internal to the API layer (not installed).
#ifndef SKILLDB_API_JSON_UTIL_H_
#define SKILLDB_API_JSON_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/status.h"

namespace skilldb::internal {

// Bounds on untrusted JSON text.
struct JsonLimits {
  size_t max_bytes = size_t{16} << 20;  // Default: 16 MiB.
  int max_depth = 64;                   // nesting levels. Default: 64.
};

// Parses `text` (what it is, e.g. "skill", names it in errors).
// InvalidArgument for malformed JSON, text over limits.max_bytes, nesting
// deeper than limits.max_depth, or a key repeated within one object. The
// depth bound also keeps every later recursive walk (dump, destruction) of
// the value shallow.
Result<nlohmann::json> ParseUntrustedJson(std::string_view text,
                                          std::string_view what,
                                          const JsonLimits& limits = {});

// Typed reads of an optional member of the object `j`: an absent or null
// member leaves *out unchanged; a present one of the wrong type (or out of
// range) is InvalidArgument naming "`what`.`key`".
class FieldReader {
 public:
  FieldReader(const nlohmann::json& j, std::string what)
      : j_(j), what_(std::move(what)) {}

  Status String(const char* key, std::string* out) const;
  Status Bool(const char* key, bool* out) const;
  Status Double(const char* key, double* out) const;
  Status Int64(const char* key, int64_t* out) const;
  Status Uint64(const char* key, uint64_t* out) const;
  Status Size(const char* key, size_t* out) const;
  Status Strings(const char* key, std::vector<std::string>* out) const;
  Status Doubles(const char* key, std::vector<double>* out) const;
  Status Int32s(const char* key, std::vector<int32_t>* out) const;
  // Fails naming the key when it is absent.
  Status Require(const char* key) const;
  // The member, or nullptr when absent or null.
  const nlohmann::json* Find(const char* key) const;
  Status WrongType(const char* key, const char* expected) const;

 private:
  const nlohmann::json& j_;
  std::string what_;
};

}  // namespace skilldb::internal

#endif  // SKILLDB_API_JSON_UTIL_H_
