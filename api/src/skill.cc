#include "skilldb/skill.h"

#include <nlohmann/json.hpp>
#include <set>

#include "skilldb/util/json.h"

namespace skilldb {
namespace {

using nlohmann::json;

// A skill record is at most 4 MiB of JSON nested at most 32 levels deep
// (the `extra` object and evidence reports are the only nested parts).
constexpr util::JsonLimits kSkillJsonLimits{.max_bytes = kMaxSkillJsonBytes,
                                                .max_depth = 32};

// Strict UTF-8 check (no overlongs, no surrogates, max U+10FFFF).
bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > n) return false;
    for (size_t k = 1; k < len; ++k) {
      const unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
        (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += len;
  }
  return true;
}

bool IsBlank(std::string_view s) {
  for (char c : s) {
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f' &&
        c != '\v') {
      return false;
    }
  }
  return true;
}

Status CheckString(std::string_view field, std::string_view value) {
  if (!IsValidUtf8(value)) {
    return Status::InvalidArgument("field '" + std::string(field) +
                                   "' is not valid UTF-8");
  }
  return Status::Ok();
}

Status CheckList(std::string_view field, const std::vector<std::string>& v) {
  for (size_t i = 0; i < v.size(); ++i) {
    SKILLDB_RETURN_IF_ERROR(CheckString(field, v[i]));
    if (IsBlank(v[i])) {
      return Status::InvalidArgument("field '" + std::string(field) +
                                     "' has a blank entry at index " +
                                     std::to_string(i));
    }
  }
  return Status::Ok();
}

// ---- JSON reading helpers: every error names the field. ----

Status WrongType(std::string_view field, std::string_view expected) {
  return Status::InvalidArgument("field '" + std::string(field) + "' must be " +
                                 std::string(expected));
}

Status ReadString(const json& j, std::string_view field, std::string* out) {
  if (!j.is_string()) return WrongType(field, "a string");
  *out = j.get<std::string>();
  return Status::Ok();
}

Status ReadStringList(const json& j, std::string_view field,
                      std::vector<std::string>* out) {
  if (!j.is_array()) return WrongType(field, "an array of strings");
  out->clear();
  for (const json& e : j) {
    if (!e.is_string()) return WrongType(field, "an array of strings");
    out->push_back(e.get<std::string>());
  }
  return Status::Ok();
}

Status ReadProvenance(const json& j, Provenance* p) {
  if (!j.is_object()) return WrongType("provenance", "an object");
  for (const auto& [key, value] : j.items()) {
    const std::string field = "provenance." + key;
    if (key == "source") {
      SKILLDB_RETURN_IF_ERROR(ReadString(value, field, &p->source));
      if (p->source != "seed" && p->source != "human" &&
          p->source != "summary-agent") {
        return Status::InvalidArgument(
            "field 'provenance.source' must be seed, human or summary-agent, "
            "got '" +
            p->source + "'");
      }
    } else if (key == "author") {
      SKILLDB_RETURN_IF_ERROR(ReadString(value, field, &p->author));
    } else if (key == "rollout_id") {
      SKILLDB_RETURN_IF_ERROR(ReadString(value, field, &p->rollout_id));
    } else if (key == "task_id") {
      SKILLDB_RETURN_IF_ERROR(ReadString(value, field, &p->task_id));
    } else if (key == "model_step") {
      if (!value.is_number_integer()) return WrongType(field, "an integer");
      p->model_step = value.get<int64_t>();
    } else {
      return Status::InvalidArgument("unknown field '" + field + "'");
    }
  }
  return Status::Ok();
}

Status ReadLineage(const json& j, Lineage* l) {
  if (!j.is_object()) return WrongType("lineage", "an object");
  for (const auto& [key, value] : j.items()) {
    const std::string field = "lineage." + key;
    if (key == "derived_from") {
      SKILLDB_RETURN_IF_ERROR(ReadStringList(value, field, &l->derived_from));
    } else if (key == "supersedes") {
      SKILLDB_RETURN_IF_ERROR(ReadStringList(value, field, &l->supersedes));
    } else {
      return Status::InvalidArgument("unknown field '" + field + "'");
    }
  }
  return Status::Ok();
}

Status ReadField(const std::string& key, const json& value, Skill* s) {
  if (key == "id") return ReadString(value, key, &s->id);
  if (key == "title") return ReadString(value, key, &s->title);
  if (key == "summary") return ReadString(value, key, &s->summary);
  if (key == "body") return ReadString(value, key, &s->body);
  if (key == "code") return ReadString(value, key, &s->code);
  if (key == "tags") return ReadStringList(value, key, &s->tags);
  if (key == "ops") return ReadStringList(value, key, &s->ops);
  if (key == "arch") return ReadStringList(value, key, &s->arch);
  if (key == "provenance") return ReadProvenance(value, &s->provenance);
  if (key == "lineage") return ReadLineage(value, &s->lineage);
  if (key == "language") {
    if (!value.is_string()) return WrongType(key, "a string");
    SKILLDB_ASSIGN_OR_RETURN(s->language,
                             ParseLanguage(value.get<std::string>()));
    return Status::Ok();
  }
  if (key == "status") {
    if (!value.is_string()) return WrongType(key, "a string");
    SKILLDB_ASSIGN_OR_RETURN(s->status,
                             ParseSkillStatus(value.get<std::string>()));
    return Status::Ok();
  }
  if (key == "evidence") {
    if (!value.is_array()) return WrongType(key, "an array of objects");
    for (const json& e : value) {
      if (!e.is_object()) return WrongType(key, "an array of objects");
      s->evidence_json.push_back(e.dump());
    }
    return Status::Ok();
  }
  if (key == "extra") {
    if (!value.is_object()) return WrongType(key, "an object");
    s->extra_json = value.dump();
    return Status::Ok();
  }
  return Status::InvalidArgument("unknown field '" + key + "'");
}

void AppendJoined(std::string* out, std::string_view part) {
  if (part.empty()) return;
  if (!out->empty()) out->push_back(' ');
  out->append(part);
}

}  // namespace

std::string_view LanguageName(Language language) {
  switch (language) {
    case Language::kCuda:
      return "cuda";
    case Language::kTriton:
      return "triton";
    case Language::kAny:
      return "any";
  }
  return "any";
}

std::string_view SkillStatusName(SkillStatus status) {
  switch (status) {
    case SkillStatus::kCandidate:
      return "candidate";
    case SkillStatus::kActive:
      return "active";
    case SkillStatus::kDeprecated:
      return "deprecated";
    case SkillStatus::kPruned:
      return "pruned";
  }
  return "active";
}

Result<Language> ParseLanguage(std::string_view name) {
  for (Language l : {Language::kAny, Language::kCuda, Language::kTriton}) {
    if (name == LanguageName(l)) return l;
  }
  return Status::InvalidArgument("unknown language '" + std::string(name) +
                                 "' (expected cuda, triton or any)");
}

Result<SkillStatus> ParseSkillStatus(std::string_view name) {
  for (SkillStatus s : {SkillStatus::kCandidate, SkillStatus::kActive,
                        SkillStatus::kDeprecated, SkillStatus::kPruned}) {
    if (name == SkillStatusName(s)) return s;
  }
  return Status::InvalidArgument(
      "unknown status '" + std::string(name) +
      "' (expected candidate, active, deprecated or pruned)");
}

Skill Skill::Make(std::string id, std::string title) {
  Skill s;
  s.id = std::move(id);
  s.title = std::move(title);
  return s;
}

Status ValidateSkillId(std::string_view id) {
  auto bad = [&](std::string_view why) {
    std::string shown(id.substr(0, 140));
    return Status::InvalidArgument("invalid id '" + shown +
                                   "': " + std::string(why) +
                                   " (ids match [a-z0-9][a-z0-9._-]{0,127})");
  };
  if (id.empty()) return bad("empty");
  if (id.size() > 128) return bad("longer than 128 characters");
  auto lower_alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  };
  if (!lower_alnum(id[0])) return bad("must start with a-z or 0-9");
  for (char c : id) {
    if (!lower_alnum(c) && c != '.' && c != '_' && c != '-') {
      return bad("contains a character outside a-z, 0-9, '.', '_', '-'");
    }
  }
  return Status::Ok();
}

Status ValidateSkill(const Skill& s) {
  SKILLDB_RETURN_IF_ERROR(ValidateSkillId(s.id));
  SKILLDB_RETURN_IF_ERROR(CheckString("title", s.title));
  if (IsBlank(s.title)) {
    return Status::InvalidArgument("field 'title' is empty");
  }
  SKILLDB_RETURN_IF_ERROR(CheckString("summary", s.summary));
  SKILLDB_RETURN_IF_ERROR(CheckString("body", s.body));
  SKILLDB_RETURN_IF_ERROR(CheckString("code", s.code));
  SKILLDB_RETURN_IF_ERROR(CheckList("tags", s.tags));
  SKILLDB_RETURN_IF_ERROR(CheckList("ops", s.ops));
  SKILLDB_RETURN_IF_ERROR(CheckList("arch", s.arch));
  SKILLDB_RETURN_IF_ERROR(
      CheckString("provenance.author", s.provenance.author));
  SKILLDB_RETURN_IF_ERROR(
      CheckString("provenance.rollout_id", s.provenance.rollout_id));
  SKILLDB_RETURN_IF_ERROR(
      CheckString("provenance.task_id", s.provenance.task_id));
  for (const auto* list : {&s.lineage.derived_from, &s.lineage.supersedes}) {
    for (const std::string& id : *list) {
      SKILLDB_RETURN_IF_ERROR(
          ValidateSkillId(id).WithContext("lineage references a bad id"));
    }
  }
  return Status::Ok();
}

Result<Skill> ParseSkillJson(std::string_view text) {
  // Skills come from files, agents and the network: bounded in size and
  // nesting (a deeply nested `extra` would otherwise overflow the stack of
  // every later dump) and free of repeated keys.
  SKILLDB_ASSIGN_OR_RETURN(
      json j, util::ParseUntrustedJson(text, "skill", kSkillJsonLimits));
  if (!j.is_object()) {
    return Status::InvalidArgument("a skill must be a JSON object");
  }
  Skill skill;
  try {
    for (const auto& [key, value] : j.items()) {
      SKILLDB_RETURN_IF_ERROR(ReadField(key, value, &skill));
    }
  } catch (const json::exception& e) {
    return Status::InvalidArgument(std::string("malformed skill: ") + e.what());
  }
  if (!j.contains("id"))
    return Status::InvalidArgument("field 'id' is missing");
  if (!j.contains("title")) {
    return Status::InvalidArgument("field 'title' is missing");
  }
  SKILLDB_RETURN_IF_ERROR(ValidateSkill(skill));
  return skill;
}

std::string SkillToJson(const Skill& s) {
  // Keys in a fixed, readable order (ordered_json keeps insertion order).
  nlohmann::ordered_json j;
  j["id"] = s.id;
  j["title"] = s.title;
  if (!s.summary.empty()) j["summary"] = s.summary;
  if (!s.body.empty()) j["body"] = s.body;
  if (!s.code.empty()) j["code"] = s.code;
  j["language"] = LanguageName(s.language);
  if (!s.tags.empty()) j["tags"] = s.tags;
  if (!s.ops.empty()) j["ops"] = s.ops;
  if (!s.arch.empty()) j["arch"] = s.arch;
  if (!s.provenance.empty()) {
    nlohmann::ordered_json p = nlohmann::ordered_json::object();
    if (!s.provenance.source.empty()) p["source"] = s.provenance.source;
    if (!s.provenance.author.empty()) p["author"] = s.provenance.author;
    if (!s.provenance.rollout_id.empty()) {
      p["rollout_id"] = s.provenance.rollout_id;
    }
    if (!s.provenance.task_id.empty()) p["task_id"] = s.provenance.task_id;
    if (s.provenance.model_step) p["model_step"] = *s.provenance.model_step;
    j["provenance"] = p;
  }
  if (!s.lineage.empty()) {
    nlohmann::ordered_json l = nlohmann::ordered_json::object();
    if (!s.lineage.derived_from.empty()) {
      l["derived_from"] = s.lineage.derived_from;
    }
    if (!s.lineage.supersedes.empty()) l["supersedes"] = s.lineage.supersedes;
    j["lineage"] = l;
  }
  j["status"] = SkillStatusName(s.status);
  if (!s.evidence_json.empty()) {
    nlohmann::ordered_json ev = nlohmann::ordered_json::array();
    for (const std::string& e : s.evidence_json) {
      ev.push_back(nlohmann::ordered_json::parse(e, nullptr, false));
    }
    j["evidence"] = ev;
  }
  if (!s.extra_json.empty()) {
    j["extra"] = nlohmann::ordered_json::parse(s.extra_json, nullptr, false);
  }
  return util::DumpLossy(j);
}

std::string IndexedText(const Skill& s) {
  std::string text;
  AppendJoined(&text, s.title);
  AppendJoined(&text, s.summary);
  AppendJoined(&text, s.body);
  for (const std::string& t : s.tags) AppendJoined(&text, t);
  for (const std::string& o : s.ops) AppendJoined(&text, o);
  AppendJoined(&text, s.code);
  return text;
}

}  // namespace skilldb
