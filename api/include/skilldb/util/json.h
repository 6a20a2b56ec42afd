// Reading untrusted JSON and writing JSON that may carry any bytes: the one
// bounded parser, the typed field readers and the lossy dump every module
// shares (api's codecs, the LLM client's answers, the rollout store, the
// trainer's config, the verifier's task files). Part of the helpers
// skilldb's modules share (skilldb/util/), not of the installed API.
//
// Header-only (templates over nlohmann::json and nlohmann::ordered_json), so
// the standalone verify/, models/ and trainer/ builds and the verifier's
// unsanitized worker processes use it without linking anything. Pure
// functions and plain values: safe from any thread.
#ifndef SKILLDB_UTIL_JSON_H_
#define SKILLDB_UTIL_JSON_H_

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/status.h"

namespace skilldb::util {

// Bounds on untrusted JSON text. The byte bound alone does not bound memory:
// a parsed value costs tens of bytes however short its text ("0," is two
// bytes), so what is parsed is bounded by count too.
struct JsonLimits {
  size_t max_bytes = size_t{16} << 20;  // text size. Default: 16 MiB.
  int max_depth = 64;                   // nesting levels. Default: 64.
  // Values (scalars, objects and arrays, keys not counted) at most; 0 = no
  // bound beyond max_bytes. Default: 0.
  size_t max_values = 0;
};

// Compact (indent < 0) or indented JSON with invalid UTF-8 replaced by
// U+FFFD: text from models, compilers and users may carry any bytes, and
// nlohmann's dump throws on them otherwise.
template <typename BasicJson>
std::string DumpLossy(const BasicJson& j, int indent = -1) {
  return j.dump(indent, ' ', false, BasicJson::error_handler_t::replace);
}

namespace json_internal {

// Thrown from the parser callback to stop parsing; caught in
// ParseUntrustedJson and never seen outside it.
struct StopParse {
  std::string reason;
};

inline std::string Excerpt(std::string_view s) {
  std::string out(s.substr(0, 60));
  if (s.size() > 60) out += "...";
  return out;
}

}  // namespace json_internal

// Parses `text` (`what` names it in errors: "skill", "POST http://...:
// answer"). InvalidArgument for malformed JSON (nlohmann's message with the
// byte offset), text over limits.max_bytes, nesting deeper than
// limits.max_depth, more than limits.max_values values, or a key repeated
// within one object (nlohmann would keep the last one silently). The depth
// bound also keeps every later recursive walk (dump, destruction) shallow.
template <typename BasicJson = nlohmann::json>
Result<BasicJson> ParseUntrustedJson(std::string_view text,
                                     std::string_view what,
                                     const JsonLimits& limits = {}) {
  using json_internal::StopParse;
  if (text.size() > limits.max_bytes) {
    return Status::InvalidArgument(
        std::string(what) + " is " + std::to_string(text.size()) +
        " bytes, over the limit of " + std::to_string(limits.max_bytes));
  }
  // One set of keys per open object, to reject repeated keys.
  std::vector<std::set<std::string>> keys;
  size_t values = 0;
  auto count = [&] {
    if (limits.max_values > 0 && ++values > limits.max_values) {
      throw StopParse{"more than " + std::to_string(limits.max_values) +
                      " values (the limit)"};
    }
  };
  auto callback = [&](int depth, typename BasicJson::parse_event_t event,
                      BasicJson& parsed) {
    using Event = typename BasicJson::parse_event_t;
    switch (event) {
      case Event::object_start:
      case Event::array_start:
        if (depth >= limits.max_depth) {
          throw StopParse{"nesting deeper than " +
                          std::to_string(limits.max_depth) +
                          " levels (the limit)"};
        }
        count();
        if (event == Event::object_start) keys.emplace_back();
        break;
      case Event::object_end:
        if (!keys.empty()) keys.pop_back();
        break;
      case Event::key:
        if (!keys.empty() &&
            !keys.back().insert(parsed.template get<std::string>()).second) {
          throw StopParse{"duplicate key '" +
                          json_internal::Excerpt(
                              parsed.template get<std::string>()) +
                          "'"};
        }
        break;
      case Event::value:
        count();
        break;
      default:
        break;
    }
    return true;
  };
  try {
    return BasicJson::parse(text.begin(), text.end(), callback);
  } catch (const StopParse& stop) {
    return Status::InvalidArgument(std::string(what) + ": " + stop.reason);
  } catch (const nlohmann::json::exception& e) {
    std::string msg = e.what();
    const auto pos = msg.find("parse error");
    return Status::InvalidArgument(
        std::string(what) + ": malformed JSON: " +
        (pos == std::string::npos ? msg : msg.substr(pos)));
  }
}

// Typed reads of one value; `name` is how errors name it ("config:
// 'steps'", "skill field 'title'"). Each fails with InvalidArgument
// "<name> must be <what was expected>" and leaves *out unchanged; none
// throws. Integers are read without truncation (a uint64 above INT64_MAX is
// not an int64; 4294967297 is not an int), numbers must be finite (a
// document built in code can hold infinity; parsing refuses 1e400).
template <typename BasicJson>
Status ReadInt64(const BasicJson& v, std::string_view name, int64_t lo,
                 int64_t hi, int64_t* out) {
  auto fail = [&] {
    std::string expected = "an integer";
    if (lo != std::numeric_limits<int64_t>::min() ||
        hi != std::numeric_limits<int64_t>::max()) {
      expected += " between " + std::to_string(lo) + " and " +
                  std::to_string(hi);
    }
    return Status::InvalidArgument(std::string(name) + " must be " + expected);
  };
  if (!v.is_number_integer()) return fail();
  if (v.is_number_unsigned()) {
    const uint64_t u = v.template get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return fail();
    }
  }
  const int64_t x = v.template get<int64_t>();
  if (x < lo || x > hi) return fail();
  *out = x;
  return Status::Ok();
}

template <typename BasicJson>
Status ReadUint64(const BasicJson& v, std::string_view name, uint64_t lo,
                  uint64_t hi, uint64_t* out) {
  auto fail = [&] {
    std::string expected = "a non-negative integer";
    if (lo != 0 || hi != std::numeric_limits<uint64_t>::max()) {
      expected += " between " + std::to_string(lo) + " and " +
                  std::to_string(hi);
    }
    return Status::InvalidArgument(std::string(name) + " must be " + expected);
  };
  if (!v.is_number_integer()) return fail();
  if (!v.is_number_unsigned() && v.template get<int64_t>() < 0) return fail();
  const uint64_t x = v.template get<uint64_t>();
  if (x < lo || x > hi) return fail();
  *out = x;
  return Status::Ok();
}

template <typename BasicJson>
Status ReadDouble(const BasicJson& v, std::string_view name, double lo,
                  double hi, double* out) {
  auto fail = [&] {
    std::string expected = "a finite number";
    if (lo != -std::numeric_limits<double>::max() ||
        hi != std::numeric_limits<double>::max()) {
      expected += " between " + nlohmann::json(lo).dump() + " and " +
                  nlohmann::json(hi).dump();
    }
    return Status::InvalidArgument(std::string(name) + " must be " + expected);
  };
  if (!v.is_number()) return fail();
  const double x = v.template get<double>();
  if (!std::isfinite(x) || x < lo || x > hi) return fail();
  *out = x;
  return Status::Ok();
}

// Typed reads of an optional member of the object `j`: an absent or null
// member leaves *out unchanged; a present one of the wrong type or out of
// range is InvalidArgument "`what` field 'key' must be ...". The reader
// keeps a reference to `j`: it must outlive the reader.
template <typename BasicJson>
class BasicFieldReader {
 public:
  BasicFieldReader(const BasicJson& j, std::string what)
      : j_(j), what_(std::move(what)) {}

  const std::string& what() const { return what_; }

  // The member, or nullptr when `j` is not an object or the member is
  // absent or null.
  const BasicJson* Find(const char* key) const {
    if (!j_.is_object()) return nullptr;
    auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return nullptr;
    return &*it;
  }
  // "`what` field 'key'": how errors name the member.
  std::string Name(const char* key) const {
    return what_ + " field '" + key + "'";
  }
  Status WrongType(const char* key, const char* expected) const {
    return Status::InvalidArgument(Name(key) + " must be " + expected);
  }
  // Fails naming the key when it is absent (or null).
  Status Require(const char* key) const {
    if (Find(key) == nullptr) {
      return Status::InvalidArgument(Name(key) + " is missing");
    }
    return Status::Ok();
  }

  Status String(const char* key, std::string* out) const {
    const BasicJson* v = Find(key);
    if (v == nullptr) return Status::Ok();
    if (!v->is_string()) return WrongType(key, "a string");
    *out = v->template get<std::string>();
    return Status::Ok();
  }
  Status Bool(const char* key, bool* out) const {
    const BasicJson* v = Find(key);
    if (v == nullptr) return Status::Ok();
    if (!v->is_boolean()) return WrongType(key, "true or false");
    *out = v->template get<bool>();
    return Status::Ok();
  }
  Status Double(const char* key, double* out,
                double lo = -std::numeric_limits<double>::max(),
                double hi = std::numeric_limits<double>::max()) const {
    const BasicJson* v = Find(key);
    if (v == nullptr) return Status::Ok();
    return ReadDouble(*v, Name(key), lo, hi, out);
  }
  Status Int64(const char* key, int64_t* out,
               int64_t lo = std::numeric_limits<int64_t>::min(),
               int64_t hi = std::numeric_limits<int64_t>::max()) const {
    const BasicJson* v = Find(key);
    if (v == nullptr) return Status::Ok();
    return ReadInt64(*v, Name(key), lo, hi, out);
  }
  // An int in [lo, hi] (by default the whole int range).
  Status Int(const char* key, int* out,
             int64_t lo = std::numeric_limits<int>::min(),
             int64_t hi = std::numeric_limits<int>::max()) const {
    int64_t x = *out;
    SKILLDB_RETURN_IF_ERROR(Int64(key, &x, lo, hi));
    *out = static_cast<int>(x);
    return Status::Ok();
  }
  Status Uint64(const char* key, uint64_t* out, uint64_t lo = 0,
                uint64_t hi = std::numeric_limits<uint64_t>::max()) const {
    const BasicJson* v = Find(key);
    if (v == nullptr) return Status::Ok();
    return ReadUint64(*v, Name(key), lo, hi, out);
  }
  Status Size(const char* key, size_t* out) const {
    uint64_t x = *out;
    SKILLDB_RETURN_IF_ERROR(
        Uint64(key, &x, 0, std::numeric_limits<size_t>::max()));
    *out = static_cast<size_t>(x);
    return Status::Ok();
  }
  Status Strings(const char* key, std::vector<std::string>* out) const {
    const BasicJson* v = Find(key);
    if (v == nullptr) return Status::Ok();
    if (!v->is_array()) return WrongType(key, "an array of strings");
    std::vector<std::string> items;
    for (const BasicJson& e : *v) {
      if (!e.is_string()) return WrongType(key, "an array of strings");
      items.push_back(e.template get<std::string>());
    }
    *out = std::move(items);
    return Status::Ok();
  }
  Status Doubles(const char* key, std::vector<double>* out) const {
    const BasicJson* v = Find(key);
    if (v == nullptr) return Status::Ok();
    if (!v->is_array()) return WrongType(key, "an array of finite numbers");
    std::vector<double> items;
    for (const BasicJson& e : *v) {
      double x = 0;
      if (!ReadDouble(e, "", -std::numeric_limits<double>::max(),
                      std::numeric_limits<double>::max(), &x)
               .ok()) {
        return WrongType(key, "an array of finite numbers");
      }
      items.push_back(x);
    }
    *out = std::move(items);
    return Status::Ok();
  }
  Status Int32s(const char* key, std::vector<int32_t>* out) const {
    const BasicJson* v = Find(key);
    if (v == nullptr) return Status::Ok();
    if (!v->is_array()) return WrongType(key, "an array of 32-bit integers");
    std::vector<int32_t> items;
    for (const BasicJson& e : *v) {
      int64_t x = 0;
      if (!ReadInt64(e, "", std::numeric_limits<int32_t>::min(),
                     std::numeric_limits<int32_t>::max(), &x)
               .ok()) {
        return WrongType(key, "an array of 32-bit integers");
      }
      items.push_back(static_cast<int32_t>(x));
    }
    *out = std::move(items);
    return Status::Ok();
  }

 private:
  const BasicJson& j_;
  std::string what_;
};

using FieldReader = BasicFieldReader<nlohmann::json>;
using OrderedFieldReader = BasicFieldReader<nlohmann::ordered_json>;

}  // namespace skilldb::util

#endif  // SKILLDB_UTIL_JSON_H_
