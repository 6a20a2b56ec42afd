#include "records.h"

#include <nlohmann/json.hpp>

namespace skilldb::internal {

std::string EncodeCommit(const CommitInfo& c) {
  nlohmann::ordered_json j;
  j["version"] = c.version;
  j["time_ms"] = c.time_ms;
  j["kind"] = c.kind;
  j["message"] = c.message;
  j["author"] = c.author;
  j["added"] = c.added;
  j["updated"] = c.updated;
  j["deleted"] = c.deleted;
  j["num_skills"] = c.num_skills;
  j["total_length"] = c.total_length;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<CommitInfo> DecodeCommit(std::string_view value) {
  auto j = nlohmann::json::parse(value, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::Corruption("malformed commit record");
  }
  CommitInfo c;
  try {
    c.version = j.at("version").get<Version>();
    c.time_ms = j.at("time_ms").get<int64_t>();
    c.kind = j.at("kind").get<std::string>();
    c.message = j.at("message").get<std::string>();
    c.author = j.at("author").get<std::string>();
    c.added = j.at("added").get<uint64_t>();
    c.updated = j.at("updated").get<uint64_t>();
    c.deleted = j.at("deleted").get<uint64_t>();
    c.num_skills = j.at("num_skills").get<uint64_t>();
    c.total_length = j.at("total_length").get<uint64_t>();
  } catch (const nlohmann::json::exception& e) {
    return Status::Corruption(std::string("malformed commit record: ") +
                              e.what());
  }
  return c;
}

char EncodeChangeKind(ChangeKind kind) {
  switch (kind) {
    case ChangeKind::kAdded:
      return 'a';
    case ChangeKind::kUpdated:
      return 'u';
    case ChangeKind::kDeleted:
      return 'd';
  }
  return 'a';
}

Result<ChangeKind> DecodeChangeKind(std::string_view value) {
  if (value == "a") return ChangeKind::kAdded;
  if (value == "u") return ChangeKind::kUpdated;
  if (value == "d") return ChangeKind::kDeleted;
  return Status::Corruption("malformed change entry");
}

}  // namespace skilldb::internal
