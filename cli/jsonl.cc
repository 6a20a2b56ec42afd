#include "jsonl.h"

#include <algorithm>
#include <cstring>

namespace skilldb::cli {
namespace {

// The skill on one line, or an error naming the line; a repeated id names
// the line it first appeared on. Blank lines set *blank.
Status ParseLine(std::string_view line, std::string_view source,
                 uint64_t line_no,
                 std::unordered_map<std::string, uint64_t>* first_line,
                 Skill* skill, bool* blank) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  *blank = line.find_first_not_of(" \t") == std::string_view::npos;
  if (*blank) return Status::Ok();
  const std::string where =
      std::string(source) + ":" + std::to_string(line_no) + ": ";
  auto parsed = ParseSkillJson(line);
  if (!parsed.ok()) {
    return Status::InvalidArgument(where + parsed.status().message());
  }
  auto [it, fresh] = first_line->emplace(parsed->id, line_no);
  if (!fresh) {
    return Status::InvalidArgument(where + "id '" + parsed->id +
                                   "' already appears on line " +
                                   std::to_string(it->second));
  }
  *skill = std::move(parsed).value();
  return Status::Ok();
}

}  // namespace

Result<std::vector<Skill>> ParseJsonl(std::string_view text,
                                      std::string_view source,
                                      Progress* progress) {
  std::vector<Skill> skills;
  std::unordered_map<std::string, uint64_t> first_line;
  uint64_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    Skill skill;
    bool blank = false;
    SKILLDB_RETURN_IF_ERROR(
        ParseLine(line, source, ++line_no, &first_line, &skill, &blank));
    if (blank) continue;
    skills.push_back(std::move(skill));
    if (progress != nullptr) progress->Update(pos, text.size());
  }
  return skills;
}

JsonlSource::JsonlSource(ReadFn read, std::string source, Progress* progress,
                         uint64_t total_bytes)
    : read_(std::move(read)),
      source_(std::move(source)),
      progress_(progress),
      total_bytes_(total_bytes),
      buffer_(size_t{1} << 20) {}

Result<bool> JsonlSource::NextLine(std::string* line) {
  line->clear();
  for (;;) {
    const char* start = buffer_.data() + begin_;
    const char* newline =
        static_cast<const char*>(std::memchr(start, '\n', end_ - begin_));
    const size_t take =
        newline != nullptr ? static_cast<size_t>(newline - start) : end_ - begin_;
    // A record is at most kMaxSkillJsonBytes; a line longer than that (and
    // its line ending) is refused before it is read whole.
    if (line->size() + take > kMaxSkillJsonBytes + 1) {
      return Status::InvalidArgument(
          source_ + ":" + std::to_string(line_no_ + 1) +
          ": the line is longer than a skill record may be (" +
          std::to_string(kMaxSkillJsonBytes) + " bytes)");
    }
    line->append(start, take);
    if (newline != nullptr) {
      begin_ += take + 1;
      ++line_no_;
      return true;
    }
    begin_ = end_ = 0;
    if (eof_) {
      if (line->empty()) return false;
      ++line_no_;
      return true;
    }
    SKILLDB_ASSIGN_OR_RETURN(const size_t n,
                             read_(buffer_.data(), buffer_.size()));
    if (n == 0) eof_ = true;
    end_ = n;
    bytes_read_ += n;
    if (progress_ != nullptr) progress_->Update(bytes_read_, total_bytes_);
  }
}

Result<bool> JsonlSource::Next(Skill* skill) {
  for (;;) {
    SKILLDB_ASSIGN_OR_RETURN(const bool more, NextLine(&line_));
    if (!more) {
      exhausted_ = true;
      return false;
    }
    bool blank = false;
    SKILLDB_RETURN_IF_ERROR(
        ParseLine(line_, source_, line_no_, &first_line_, skill, &blank));
    if (blank) continue;
    ++skills_;
    return true;
  }
}

}  // namespace skilldb::cli
