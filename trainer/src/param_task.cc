#include "skilldb/trainer/param_task.h"

#include <nlohmann/json.hpp>
#include <set>

#include "skilldb/trainer/report.h"

namespace skilldb::trainer {

using nlohmann::json;

Result<TaskFamily> LoadTaskFamily(const std::string& json_path) {
  SKILLDB_ASSIGN_OR_RETURN(std::string text, ReadFile(json_path));
  json j = json::parse(text, nullptr, false);
  auto bad = [&](const std::string& what) {
    return Status::InvalidArgument(json_path + ": " + what);
  };
  if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
  TaskFamily f;
  for (auto [key, field] :
       {std::pair<const char*, std::string*>{"name", &f.name},
        {"task", &f.task},
        {"backend", &f.backend},
        {"language", &f.language},
        {"template", &f.template_path},
        {"description", &f.description}}) {
    if (!j.contains(key) || !j[key].is_string() ||
        j[key].get<std::string>().empty()) {
      return bad(std::string("'") + key + "' must be a non-empty string");
    }
    *field = j[key].get<std::string>();
  }
  if (f.backend != "host" && f.backend != "cuda") {
    return bad("'backend' must be host or cuda");
  }
  if (!j.contains("params") || !j["params"].is_array() || j["params"].empty()) {
    return bad("'params' must be a non-empty array");
  }
  std::set<std::string> names;
  for (const json& p : j["params"]) {
    if (!p.is_object() || !p.contains("name") || !p["name"].is_string() ||
        !p.contains("values") || !p["values"].is_object() ||
        p["values"].empty()) {
      return bad("each param needs a name and a non-empty values object");
    }
    ParamSpec spec;
    spec.name = p["name"].get<std::string>();
    if (!names.insert(spec.name).second) {
      return bad("param '" + spec.name + "' appears twice");
    }
    for (auto& [text, sub] : p["values"].items()) {
      if (!sub.is_string()) {
        return bad("param '" + spec.name + "': value '" + text +
                   "' must map to a string");
      }
      spec.values.emplace_back(text, sub.get<std::string>());
    }
    f.params.push_back(std::move(spec));
  }
  std::string dir = json_path;
  const size_t slash = dir.rfind('/');
  dir = slash == std::string::npos ? "." : dir.substr(0, slash);
  if (f.template_path[0] != '/') f.template_path = dir + "/" + f.template_path;
  SKILLDB_ASSIGN_OR_RETURN(f.template_text, ReadFile(f.template_path));
  for (size_t pos = 0;
       (pos = f.template_text.find("{{", pos)) != std::string::npos;) {
    const size_t end = f.template_text.find("}}", pos);
    if (end == std::string::npos) return bad("unclosed {{ in the template");
    const std::string name = f.template_text.substr(pos + 2, end - pos - 2);
    if (name != "PARAMS" && !names.count(name)) {
      return bad("template placeholder {{" + name + "}} names no parameter");
    }
    pos = end + 2;
  }
  return f;
}

ParsedParams ParseParams(const TaskFamily& family, std::string_view completion,
                         size_t max_bytes) {
  ParsedParams out;
  completion = completion.substr(0, max_bytes);
  auto is_sep = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' ||
           c == ';';
  };
  size_t i = 0;
  std::vector<std::string> unknown;
  while (i < completion.size()) {
    while (i < completion.size() && is_sep(completion[i])) ++i;
    size_t j = i;
    while (j < completion.size() && !is_sep(completion[j])) ++j;
    std::string_view word = completion.substr(i, j - i);
    i = j;
    const size_t eq = word.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    const std::string key(word.substr(0, eq));
    const std::string value(word.substr(eq + 1));
    const ParamSpec* spec = nullptr;
    for (const auto& p : family.params) {
      if (p.name == key) spec = &p;
    }
    if (!spec) {
      out.error = "unknown parameter '" + key.substr(0, 32) + "'";
      return out;
    }
    if (out.values.count(key)) {
      out.error = "parameter '" + key + "' given twice";
      return out;
    }
    bool allowed = false;
    for (const auto& [text, sub] : spec->values) allowed |= text == value;
    if (!allowed) {
      std::string names;
      for (const auto& [text, sub] : spec->values) {
        names += (names.empty() ? "" : ", ") + text;
      }
      out.error = "parameter '" + key + "': '" + value.substr(0, 32) +
                  "' is not one of " + names;
      return out;
    }
    out.values[key] = value;
  }
  std::string missing;
  for (const auto& p : family.params) {
    if (!out.values.count(p.name)) {
      missing += (missing.empty() ? "" : ", ") + p.name;
    }
  }
  if (!missing.empty()) {
    out.error = "missing parameters: " + missing;
    return out;
  }
  out.ok = true;
  return out;
}

std::string FormatParams(const TaskFamily& family, const ParamValues& values) {
  std::string out;
  for (const auto& p : family.params) {
    auto it = values.find(p.name);
    if (it == values.end()) continue;
    out += (out.empty() ? "" : " ") + p.name + "=" + it->second;
  }
  return out;
}

std::string Render(const TaskFamily& family, const ParamValues& values) {
  std::string out;
  const std::string& t = family.template_text;
  size_t pos = 0;
  while (true) {
    const size_t open = t.find("{{", pos);
    if (open == std::string::npos) {
      out.append(t, pos);
      break;
    }
    out.append(t, pos, open - pos);
    const size_t close = t.find("}}", open);
    const std::string name = t.substr(open + 2, close - open - 2);
    if (name == "PARAMS") {
      out += FormatParams(family, values);
    } else {
      for (const auto& p : family.params) {
        if (p.name != name) continue;
        auto it = values.find(name);
        for (const auto& [text, sub] : p.values) {
          if (it != values.end() && text == it->second) out += sub;
        }
      }
    }
    pos = close + 2;
  }
  return out;
}

std::vector<ParamValues> AllCombinations(const TaskFamily& family) {
  std::vector<ParamValues> out = {{}};
  for (const auto& p : family.params) {
    std::vector<ParamValues> next;
    for (const auto& partial : out) {
      for (const auto& [text, sub] : p.values) {
        ParamValues v = partial;
        v[p.name] = text;
        next.push_back(std::move(v));
      }
    }
    out = std::move(next);
  }
  return out;
}

std::string FamilyInstructions(const TaskFamily& family) {
  std::string out =
      "Answer with the kernel parameters only, on one line, as key=value "
      "pairs separated by spaces. Allowed values:\n";
  for (const auto& p : family.params) {
    out += "- " + p.name + ":";
    for (const auto& [text, sub] : p.values) out += " " + text;
    out += "\n";
  }
  return out;
}

}  // namespace skilldb::trainer
