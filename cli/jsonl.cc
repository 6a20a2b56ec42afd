#include "jsonl.h"

#include <unordered_map>

namespace skilldb::cli {

Result<std::vector<Skill>> ParseJsonl(std::string_view text,
                                      std::string_view source,
                                      Progress* progress) {
  std::vector<Skill> skills;
  std::unordered_map<std::string, size_t> first_line;  // id -> line
  size_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    auto skill = ParseSkillJson(line);
    if (!skill.ok()) {
      return Status::InvalidArgument(std::string(source) + ":" +
                                     std::to_string(line_no) + ": " +
                                     skill.status().message());
    }
    auto [it, fresh] = first_line.emplace(skill->id, line_no);
    if (!fresh) {
      return Status::InvalidArgument(std::string(source) + ":" +
                                     std::to_string(line_no) + ": id '" +
                                     skill->id + "' already appears on line " +
                                     std::to_string(it->second));
    }
    skills.push_back(std::move(skill).value());
    if (progress != nullptr) progress->Update(pos, text.size());
  }
  return skills;
}

}  // namespace skilldb::cli
