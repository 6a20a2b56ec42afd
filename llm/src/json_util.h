// Defensive reading of untrusted JSON answers: every accessor checks the
// type before it reads, so a wrong type is a missing value, never an
// exception. Request bodies are dumped with invalid UTF-8 replaced (prompts
// can carry model output), since nlohmann throws on it otherwise.
#ifndef SKILLDB_LLM_SRC_JSON_UTIL_H_
#define SKILLDB_LLM_SRC_JSON_UTIL_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "http_transport.h"
#include "skilldb/util/json.h"

namespace skilldb::llm::internal {

using json = nlohmann::json;

// Parses an answer's body with the shared bounded parser: at most
// `max_values` values (a short body can still hold a great many: "0," is a
// value in two bytes, and each costs tens of bytes parsed), 64 levels, no
// repeated key. InvalidArgument naming the request for anything else (not
// JSON, truncated, an HTML error page, empty, over the bounds).
inline Result<json> ParseJson(const HttpAnswer& answer,
                              size_t max_values = size_t{1} << 20) {
  auto parsed = util::ParseUntrustedJson(
      answer.body, "answer",
      {.max_bytes = answer.body.size(), .max_depth = 64,
       .max_values = max_values});
  if (!parsed.ok()) {
    return BadAnswer(answer, "answer is not valid JSON (" +
                                 parsed.status().message() +
                                 "): " + Excerpt(answer.body));
  }
  return std::move(*parsed);
}

inline std::string Dump(const json& j) { return util::DumpLossy(j); }

// The member `key` of `obj`, or nullptr when `obj` is not an object or has
// no such member.
inline const json* Find(const json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

inline std::optional<std::string> AsString(const json* j) {
  if (j == nullptr || !j->is_string()) return std::nullopt;
  return j->get_ref<const std::string&>();
}

// A finite number.
inline std::optional<double> AsNumber(const json* j) {
  if (j == nullptr || !j->is_number()) return std::nullopt;
  const double v = j->get<double>();
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

// An integer (a float with an integral value counts: some servers write
// 3.0).
inline std::optional<int64_t> AsInt(const json* j) {
  if (j == nullptr) return std::nullopt;
  if (j->is_number_integer()) {
    if (j->is_number_unsigned() &&
        j->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      return std::nullopt;
    }
    return j->get<int64_t>();
  }
  if (j->is_number_float()) {
    const double v = j->get<double>();
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9e15) {
      return static_cast<int64_t>(v);
    }
  }
  return std::nullopt;
}

// A non-negative integer.
inline std::optional<uint64_t> AsCount(const json* j) {
  auto v = AsInt(j);
  if (!v || *v < 0) return std::nullopt;
  return static_cast<uint64_t>(*v);
}

// An array of token ids (each fits int32); nullopt when `j` is absent, not
// an array, or holds anything else.
inline std::optional<std::vector<int32_t>> AsTokenIds(const json* j) {
  if (j == nullptr || !j->is_array()) return std::nullopt;
  std::vector<int32_t> ids;
  ids.reserve(j->size());
  for (const json& e : *j) {
    auto v = AsInt(&e);
    if (!v || *v < std::numeric_limits<int32_t>::min() ||
        *v > std::numeric_limits<int32_t>::max()) {
      return std::nullopt;
    }
    ids.push_back(static_cast<int32_t>(*v));
  }
  return ids;
}

}  // namespace skilldb::llm::internal

#endif  // SKILLDB_LLM_SRC_JSON_UTIL_H_
