#include "records.h"

#include <nlohmann/json.hpp>

#include "skilldb/proposal.h"
#include "skilldb/util/json.h"

namespace skilldb::internal {

namespace {

// Each counter with its name in the record; the order is the record's.
struct CounterField {
  const char* name;
  uint64_t SkillCounts::*field;
};
constexpr CounterField kCounterFields[] = {
    {"candidate", &SkillCounts::candidate},
    {"active", &SkillCounts::active},
    {"deprecated", &SkillCounts::deprecated},
    {"pruned", &SkillCounts::pruned},
    {"cuda", &SkillCounts::cuda},
    {"triton", &SkillCounts::triton},
    {"any_language", &SkillCounts::any_language},
    {"unverified", &SkillCounts::unverified},
    {"provisional", &SkillCounts::provisional},
    {"trusted", &SkillCounts::trusted},
};

uint64_t* StatusCounter(SkillStatus status, SkillCounts* c) {
  switch (status) {
    case SkillStatus::kCandidate:
      return &c->candidate;
    case SkillStatus::kActive:
      return &c->active;
    case SkillStatus::kDeprecated:
      return &c->deprecated;
    case SkillStatus::kPruned:
      return &c->pruned;
  }
  return &c->candidate;
}

uint64_t* LanguageCounter(Language language, SkillCounts* c) {
  switch (language) {
    case Language::kCuda:
      return &c->cuda;
    case Language::kTriton:
      return &c->triton;
    case Language::kAny:
      return &c->any_language;
  }
  return &c->any_language;
}

uint64_t* TrustCounter(Trust trust, SkillCounts* c) {
  switch (trust) {
    case Trust::kUnverified:
      return &c->unverified;
    case Trust::kProvisional:
      return &c->provisional;
    case Trust::kTrusted:
      return &c->trusted;
  }
  return &c->unverified;
}

}  // namespace

Status CountSkill(const Skill& skill, int sign, SkillCounts* counts) {
  for (uint64_t* counter : {StatusCounter(skill.status, counts),
                            LanguageCounter(skill.language, counts),
                            TrustCounter(SkillTrust(skill), counts)}) {
    if (sign < 0 && *counter == 0) {
      return Status::Corruption("the skill counts of a commit went negative");
    }
    *counter = sign < 0 ? *counter - 1 : *counter + 1;
  }
  return Status::Ok();
}

std::string EncodeCommit(const CommitInfo& c,
                         const std::optional<SkillCounts>& counts) {
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
  if (counts) {
    nlohmann::ordered_json& out = j["counts"];
    for (const CounterField& f : kCounterFields) out[f.name] = (*counts).*f.field;
  }
  return util::DumpLossy(j);
}

Result<CommitInfo> DecodeCommit(std::string_view value,
                                std::optional<SkillCounts>* counts) {
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
    if (counts != nullptr) {
      counts->reset();
      if (j.contains("counts")) {
        const nlohmann::json& in = j.at("counts");
        SkillCounts read;
        for (const CounterField& f : kCounterFields) {
          read.*f.field = in.at(f.name).get<uint64_t>();
        }
        *counts = read;
      }
    }
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
