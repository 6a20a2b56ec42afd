// Reading skills from JSONL text.
#ifndef SKILLDB_CLI_JSONL_H_
#define SKILLDB_CLI_JSONL_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "progress.h"
#include "skilldb/library.h"
#include "skilldb/skill.h"

namespace skilldb::cli {

// Parses one skill per non-blank line. The first bad line fails the whole
// parse with InvalidArgument "`source`:LINE: what is wrong". Reports the
// bytes parsed to `progress` if given.
Result<std::vector<Skill>> ParseJsonl(std::string_view text,
                                      std::string_view source,
                                      Progress* progress = nullptr);

// The same, one skill at a time, from a reader of bytes, holding one line
// and one read buffer at a time: an import's memory does not grow with its
// file. Errors: those of ParseJsonl; the reader's own; InvalidArgument for
// a line longer than a skill record can be (kMaxSkillJsonBytes), before the
// whole of it is read.
class JsonlSource final : public SkillSource {
 public:
  // Reads up to `size` bytes into `data`; 0 at the end.
  using ReadFn = std::function<Result<size_t>(char* data, size_t size)>;
  // `source` names the input in messages; `total_bytes` (0 = unknown) is
  // the denominator of the progress, reported in bytes read.
  JsonlSource(ReadFn read, std::string source, Progress* progress = nullptr,
              uint64_t total_bytes = 0);

  Result<bool> Next(Skill* skill) override;
  // Skills handed out so far.
  uint64_t skills() const { return skills_; }
  // Whether Next() found the end of the input.
  bool exhausted() const { return exhausted_; }

 private:
  // Sets *line to the next line (without its newline); false at the end.
  Result<bool> NextLine(std::string* line);

  ReadFn read_;
  std::string source_;
  Progress* progress_;
  uint64_t total_bytes_;
  std::vector<char> buffer_;
  std::string line_;  // the line being parsed
  size_t begin_ = 0, end_ = 0;  // unread bytes of buffer_
  bool eof_ = false;
  uint64_t bytes_read_ = 0;
  uint64_t line_no_ = 0;
  uint64_t skills_ = 0;
  bool exhausted_ = false;
  std::unordered_map<std::string, uint64_t> first_line_;  // id -> line
};

}  // namespace skilldb::cli

#endif  // SKILLDB_CLI_JSONL_H_
