#include "skilldb/policy/pitfall_notes.h"

#include "json_io.h"

namespace skilldb::policy {

using internal::Json;

std::vector<PitfallNote> ReadPitfalls(std::string_view extra_json) {
  std::vector<PitfallNote> out;
  if (extra_json.empty()) return out;
  auto j = internal::ParseJson(extra_json, "extra");
  if (!j.ok() || !j->is_object()) return out;
  auto it = j->find("pitfalls");
  if (it == j->end() || !it->is_array()) return out;
  for (const Json& e : *it) {
    PitfallNote n;
    internal::Reader in(e, "pitfall");
    if (!e.is_object() || !in.String("note", &n.note).ok() || n.note.empty() ||
        !in.String("trajectory", &n.trajectory_id).ok() ||
        !in.String("task", &n.task).ok() || !in.String("verdict", &n.verdict).ok() ||
        !in.Int64("time_ms", &n.time_ms).ok()) {
      continue;
    }
    out.push_back(std::move(n));
  }
  return out;
}

Result<std::string> AddPitfall(std::string_view extra_json,
                               const PitfallNote& note, size_t keep) {
  if (note.note.empty()) {
    return Status::InvalidArgument("a pitfall note needs text");
  }
  Json extra = Json::object();
  if (!extra_json.empty()) {
    SKILLDB_ASSIGN_OR_RETURN(extra, internal::ParseJson(extra_json, "extra"));
    if (!extra.is_object()) {
      return Status::InvalidArgument("the skill's extra is not a JSON object");
    }
  }
  Json notes = Json::array();
  notes.push_back(Json{{"note", note.note},
                       {"unverified", true},
                       {"trajectory", note.trajectory_id},
                       {"task", note.task},
                       {"verdict", note.verdict},
                       {"time_ms", note.time_ms}});
  auto it = extra.find("pitfalls");
  if (it != extra.end() && it->is_array()) {
    for (const Json& e : *it) {
      if (notes.size() >= keep) break;
      notes.push_back(e);
    }
  }
  extra["pitfalls"] = std::move(notes);
  return internal::Dump(extra);
}

}  // namespace skilldb::policy
