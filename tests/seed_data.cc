#include "seed_data.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace skilldb::testing {

namespace fs = std::filesystem;

std::string SeedDir(const std::string& compiled_default) {
  const char* env = std::getenv("SKILLDB_SEED_DIR");
  return env != nullptr && *env != '\0' ? std::string(env) : compiled_default;
}

namespace {

bool IsBlank(const std::string& line) {
  return std::all_of(line.begin(), line.end(),
                     [](char c) { return c == ' ' || c == '\t' || c == '\r'; });
}

std::vector<std::string> JsonlFiles(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".jsonl") {
      files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

Result<std::vector<SeedLine>> ReadSeedLines(const std::string& dir) {
  const std::vector<std::string> files = JsonlFiles(dir);
  if (files.empty()) return Status::NotFound("no .jsonl file in " + dir);
  std::vector<SeedLine> lines;
  for (const std::string& path : files) {
    SKILLDB_ASSIGN_OR_RETURN(std::string text, util::ReadFile(path));
    std::istringstream in(text);
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      if (IsBlank(line)) continue;
      lines.push_back(
          {fs::path(path).filename().string(), number, std::move(line)});
    }
  }
  return lines;
}

std::string Where(const SeedLine& line) {
  return line.file + ":" + std::to_string(line.line);
}

Result<std::vector<Skill>> LoadSeedSkills(const std::string& dir) {
  SKILLDB_ASSIGN_OR_RETURN(std::vector<SeedLine> lines, ReadSeedLines(dir));
  std::vector<Skill> skills;
  skills.reserve(lines.size());
  for (const SeedLine& line : lines) {
    Result<Skill> skill = ParseSkillJson(line.text);
    if (!skill.ok()) {
      return Status::InvalidArgument(Where(line) + ": " +
                                     skill.status().ToString());
    }
    skills.push_back(std::move(skill).value());
  }
  return skills;
}

}  // namespace skilldb::testing
