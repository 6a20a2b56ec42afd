#include "json_io.h"

namespace skilldb::policy::internal {

Result<Json> ParseJson(std::string_view text, std::string_view what) {
  constexpr size_t kMaxBytes = size_t{64} << 20;
  constexpr int kMaxDepth = 64;
  if (text.size() > kMaxBytes) {
    return Status::InvalidArgument(std::string(what) + ": JSON over 64 MiB");
  }
  bool too_deep = false;
  // The callback sees every nesting level as it opens; refusing deep input
  // keeps every later recursive walk of the value shallow.
  Json::parser_callback_t depth_check =
      [&too_deep](int depth, Json::parse_event_t event, Json&) {
        if ((event == Json::parse_event_t::object_start ||
             event == Json::parse_event_t::array_start) &&
            depth >= kMaxDepth) {
          too_deep = true;
        }
        return !too_deep;
      };
  Json j = Json::parse(text.begin(), text.end(), depth_check,
                       /*allow_exceptions=*/false);
  if (too_deep) {
    return Status::InvalidArgument(std::string(what) +
                                   ": JSON nested deeper than 64 levels");
  }
  if (j.is_discarded()) {
    return Status::InvalidArgument(std::string(what) + ": malformed JSON");
  }
  return j;
}

std::string Dump(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

const Json* Reader::Find(const char* key) const {
  if (!j_.is_object()) return nullptr;
  auto it = j_.find(key);
  if (it == j_.end() || it->is_null()) return nullptr;
  return &*it;
}

Status Reader::Wrong(const char* key, const char* expected) const {
  return Status::InvalidArgument(what_ + "." + key + ": expected " + expected);
}

Status Reader::Str(const char* key, std::string* out) const {
  const Json* v = Find(key);
  if (v == nullptr) return Status::Ok();
  if (!v->is_string()) return Wrong(key, "a string");
  *out = v->get<std::string>();
  return Status::Ok();
}

Status Reader::Bool(const char* key, bool* out) const {
  const Json* v = Find(key);
  if (v == nullptr) return Status::Ok();
  if (!v->is_boolean()) return Wrong(key, "a boolean");
  *out = v->get<bool>();
  return Status::Ok();
}

Status Reader::Num(const char* key, double* out) const {
  const Json* v = Find(key);
  if (v == nullptr) return Status::Ok();
  if (!v->is_number()) return Wrong(key, "a number");
  *out = v->get<double>();
  return Status::Ok();
}

Status Reader::I64(const char* key, int64_t* out) const {
  const Json* v = Find(key);
  if (v == nullptr) return Status::Ok();
  if (!v->is_number_integer()) return Wrong(key, "an integer");
  *out = v->get<int64_t>();
  return Status::Ok();
}

Status Reader::Int(const char* key, int* out) const {
  int64_t v = *out;
  SKILLDB_RETURN_IF_ERROR(I64(key, &v));
  if (v < INT32_MIN || v > INT32_MAX) return Wrong(key, "a 32-bit integer");
  *out = static_cast<int>(v);
  return Status::Ok();
}

Status Reader::U64(const char* key, uint64_t* out) const {
  const Json* v = Find(key);
  if (v == nullptr) return Status::Ok();
  if (!v->is_number_unsigned()) return Wrong(key, "a non-negative integer");
  *out = v->get<uint64_t>();
  return Status::Ok();
}

Status Reader::Size(const char* key, size_t* out) const {
  uint64_t v = *out;
  SKILLDB_RETURN_IF_ERROR(U64(key, &v));
  *out = static_cast<size_t>(v);
  return Status::Ok();
}

Status Reader::Strs(const char* key, std::vector<std::string>* out) const {
  const Json* v = Find(key);
  if (v == nullptr) return Status::Ok();
  if (!v->is_array()) return Wrong(key, "an array of strings");
  std::vector<std::string> items;
  for (const Json& e : *v) {
    if (!e.is_string()) return Wrong(key, "an array of strings");
    items.push_back(e.get<std::string>());
  }
  *out = std::move(items);
  return Status::Ok();
}

}  // namespace skilldb::policy::internal
