#include "json_util.h"

#include <limits>
#include <set>

namespace skilldb::internal {
namespace {

using nlohmann::json;

// Thrown from the parser callback to stop parsing; caught in
// ParseUntrustedJson and never seen outside it.
struct StopParse {
  std::string reason;
};

std::string Excerpt(std::string_view s) {
  std::string out(s.substr(0, 60));
  if (s.size() > 60) out += "...";
  return out;
}

}  // namespace

Result<json> ParseUntrustedJson(std::string_view text, std::string_view what,
                                const JsonLimits& limits) {
  if (text.size() > limits.max_bytes) {
    return Status::InvalidArgument(
        std::string(what) + " is " + std::to_string(text.size()) +
        " bytes, over the limit of " + std::to_string(limits.max_bytes));
  }
  // One set of keys per open object, to reject repeated keys (nlohmann
  // would keep the last one silently).
  std::vector<std::set<std::string>> keys;
  auto callback = [&](int depth, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        if (depth >= limits.max_depth) {
          throw StopParse{"nesting deeper than " +
                          std::to_string(limits.max_depth) +
                          " levels (the limit)"};
        }
        if (event == json::parse_event_t::object_start) keys.emplace_back();
        break;
      case json::parse_event_t::object_end:
        if (!keys.empty()) keys.pop_back();
        break;
      case json::parse_event_t::key:
        if (!keys.empty() &&
            !keys.back().insert(parsed.get<std::string>()).second) {
          throw StopParse{"duplicate key '" +
                          Excerpt(parsed.get<std::string>()) + "'"};
        }
        break;
      default:
        break;
    }
    return true;
  };
  try {
    return json::parse(text, callback);
  } catch (const StopParse& stop) {
    return Status::InvalidArgument(std::string(what) + ": " + stop.reason);
  } catch (const json::exception& e) {
    // nlohmann's message names the problem and its byte offset (including
    // ill-formed UTF-8).
    std::string msg = e.what();
    const auto pos = msg.find("parse error");
    return Status::InvalidArgument(
        std::string(what) + ": malformed JSON: " +
        (pos == std::string::npos ? msg : msg.substr(pos)));
  }
}

const json* FieldReader::Find(const char* key) const {
  if (!j_.is_object()) return nullptr;
  auto it = j_.find(key);
  if (it == j_.end() || it->is_null()) return nullptr;
  return &*it;
}

Status FieldReader::WrongType(const char* key, const char* expected) const {
  return Status::InvalidArgument(what_ + " field '" + key + "' must be " +
                                 expected);
}

Status FieldReader::Require(const char* key) const {
  if (Find(key) == nullptr) {
    return Status::InvalidArgument(what_ + " field '" + key + "' is missing");
  }
  return Status::Ok();
}

Status FieldReader::String(const char* key, std::string* out) const {
  const json* v = Find(key);
  if (v == nullptr) return Status::Ok();
  if (!v->is_string()) return WrongType(key, "a string");
  *out = v->get<std::string>();
  return Status::Ok();
}

Status FieldReader::Bool(const char* key, bool* out) const {
  const json* v = Find(key);
  if (v == nullptr) return Status::Ok();
  if (!v->is_boolean()) return WrongType(key, "true or false");
  *out = v->get<bool>();
  return Status::Ok();
}

Status FieldReader::Double(const char* key, double* out) const {
  const json* v = Find(key);
  if (v == nullptr) return Status::Ok();
  if (!v->is_number()) return WrongType(key, "a number");
  *out = v->get<double>();
  return Status::Ok();
}

Status FieldReader::Int64(const char* key, int64_t* out) const {
  const json* v = Find(key);
  if (v == nullptr) return Status::Ok();
  if (v->is_number_integer()) {
    if (v->is_number_unsigned() &&
        v->get<uint64_t>() >
            static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return WrongType(key, "an integer in the int64 range");
    }
    *out = v->get<int64_t>();
    return Status::Ok();
  }
  return WrongType(key, "an integer");
}

Status FieldReader::Uint64(const char* key, uint64_t* out) const {
  const json* v = Find(key);
  if (v == nullptr) return Status::Ok();
  if (!v->is_number_unsigned()) return WrongType(key, "a non-negative integer");
  *out = v->get<uint64_t>();
  return Status::Ok();
}

Status FieldReader::Size(const char* key, size_t* out) const {
  uint64_t v = *out;
  SKILLDB_RETURN_IF_ERROR(Uint64(key, &v));
  *out = static_cast<size_t>(v);
  return Status::Ok();
}

Status FieldReader::Strings(const char* key,
                            std::vector<std::string>* out) const {
  const json* v = Find(key);
  if (v == nullptr) return Status::Ok();
  if (!v->is_array()) return WrongType(key, "an array of strings");
  out->clear();
  for (const json& e : *v) {
    if (!e.is_string()) return WrongType(key, "an array of strings");
    out->push_back(e.get<std::string>());
  }
  return Status::Ok();
}

Status FieldReader::Doubles(const char* key, std::vector<double>* out) const {
  const json* v = Find(key);
  if (v == nullptr) return Status::Ok();
  if (!v->is_array()) return WrongType(key, "an array of numbers");
  out->clear();
  for (const json& e : *v) {
    if (!e.is_number()) return WrongType(key, "an array of numbers");
    out->push_back(e.get<double>());
  }
  return Status::Ok();
}

Status FieldReader::Int32s(const char* key, std::vector<int32_t>* out) const {
  const json* v = Find(key);
  if (v == nullptr) return Status::Ok();
  if (!v->is_array()) return WrongType(key, "an array of integers");
  out->clear();
  for (const json& e : *v) {
    if (!e.is_number_integer()) return WrongType(key, "an array of integers");
    const int64_t x = e.get<int64_t>();
    if (x < std::numeric_limits<int32_t>::min() ||
        x > std::numeric_limits<int32_t>::max()) {
      return WrongType(key, "an array of 32-bit integers");
    }
    out->push_back(static_cast<int32_t>(x));
  }
  return Status::Ok();
}

}  // namespace skilldb::internal
