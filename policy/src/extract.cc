#include "skilldb/policy/extract.h"

#include <cctype>

#include "fences.h"

namespace skilldb::policy {
namespace {

using Block = internal::FencedBlock;
using internal::FencedBlocks;
using internal::LineAt;
using internal::TrimLeft;

bool IsIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// True if `word` starts at s[i] as a whole identifier.
bool WordAt(std::string_view s, size_t i, std::string_view word) {
  if (s.substr(i, word.size()) != word) return false;
  if (i > 0 && IsIdentChar(s[i - 1])) return false;
  const size_t end = i + word.size();
  return end >= s.size() || !IsIdentChar(s[end]);
}

size_t SkipSpace(std::string_view s, size_t i) {
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return i;
}

// The position of the `launch` of the first `extern "C" ... launch(`
// declaration, or npos: `extern "C"` earlier in the same declaration (no
// ';', '{' or '}' between them) or an open `extern "C" {` block. One
// forward pass: completions are untrusted and may be long, so no
// backtracking regex and no rescans.
size_t EntryPointAt(std::string_view s) {
  bool extern_c = false;  // `extern "C"` seen in this declaration
  bool c_block = false;   // inside `extern "C" { ... }` (not nested)
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == ';') {
      extern_c = false;
    } else if (c == '{') {
      c_block = c_block || extern_c;
      extern_c = false;
    } else if (c == '}') {
      extern_c = false;
      c_block = false;
    } else if (WordAt(s, i, "extern")) {
      const size_t q = SkipSpace(s, i + 6);
      if (s.substr(q, 3) == "\"C\"") {
        extern_c = true;
        i = q + 2;
      }
    } else if (WordAt(s, i, "launch")) {
      const size_t p = SkipSpace(s, i + 6);
      if (p < s.size() && s[p] == '(' && (extern_c || c_block)) return i;
      i += 5;
    }
  }
  return std::string_view::npos;
}

bool StartsWithWord(std::string_view s, std::string_view word) {
  if (s.substr(0, word.size()) != word) return false;
  if (s.size() == word.size()) return true;
  const char c = s[word.size()];
  return !(std::isalnum(static_cast<unsigned char>(c)) || c == '_');
}

// A line that starts like C++ (preprocessor, declarations, comments).
bool LooksLikeCodeStart(std::string_view line) {
  std::string_view t = TrimLeft(line);
  if (t.empty()) return false;
  if (t[0] == '#') return true;
  if (t.substr(0, 2) == "//" || t.substr(0, 2) == "/*") return true;
  static constexpr std::string_view kWords[] = {
      "extern", "template",  "__global__", "__device__", "static",
      "struct", "namespace", "typedef",    "using",      "constexpr",
      "inline", "const",     "int",        "void",       "float",
      "double", "auto",      "unsigned",   "size_t",     "int64_t"};
  for (std::string_view w : kWords) {
    if (StartsWithWord(t, w)) return true;
  }
  return false;
}

// Unfenced code: from the first code-like line before the entry point to
// the last closing brace.
bool Unfenced(std::string_view text, std::string* source) {
  const size_t entry_pos = EntryPointAt(text);
  if (entry_pos == std::string_view::npos) return false;
  size_t begin = entry_pos;
  // The line the entry point is on starts the code at the latest.
  const size_t entry_line = text.rfind('\n', entry_pos);
  begin = entry_line == std::string_view::npos ? 0 : entry_line + 1;
  size_t pos = 0;
  while (pos < begin) {
    size_t next = 0;
    std::string_view line = LineAt(text, pos, &next);
    if (LooksLikeCodeStart(line)) {
      begin = pos;
      break;
    }
    pos = next;
  }
  const size_t last_brace = text.rfind('}');
  if (last_brace == std::string_view::npos || last_brace < entry_pos)
    return false;
  *source = std::string(text.substr(begin, last_brace + 1 - begin));
  source->push_back('\n');
  return true;
}

std::string Describe(size_t index, size_t count, const Block& b) {
  std::string s = "fenced block " + std::to_string(index + 1) + " of " +
                  std::to_string(count);
  if (!b.info.empty()) s += " (" + b.info + ")";
  if (!b.closed) s += ", fence not closed";
  return s;
}

}  // namespace

bool DefinesEntryPoint(std::string_view source) {
  return EntryPointAt(source) != std::string_view::npos;
}

Result<Extraction> CodeExtractor::Extract(const PolicyTask& task,
                                          std::string_view completion) const {
  Extraction out;
  out.language = CandidateLanguage(task);
  if (completion.size() > static_cast<size_t>(options_.max_completion_bytes)) {
    completion = completion.substr(0, options_.max_completion_bytes);
  }
  std::vector<Block> blocks = FencedBlocks(completion);
  // The last block defining the entry point, else the longest block.
  int chosen = -1;
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (DefinesEntryPoint(blocks[i].body)) chosen = static_cast<int>(i);
  }
  if (chosen < 0) {
    for (size_t i = 0; i < blocks.size(); ++i) {
      if (blocks[i].body.find_first_not_of(" \t\r\n") == std::string::npos)
        continue;
      if (chosen < 0 || blocks[i].body.size() > blocks[chosen].body.size())
        chosen = static_cast<int>(i);
    }
  }
  if (chosen >= 0) {
    out.found = true;
    out.source = std::move(blocks[chosen].body);
    out.note = Describe(chosen, blocks.size(), blocks[chosen]);
    if (!DefinesEntryPoint(out.source)) out.note += ", no entry point";
    return out;
  }
  if (Unfenced(completion, &out.source)) {
    out.found = true;
    out.note = "unfenced code";
    return out;
  }
  out.note = completion.find_first_not_of(" \t\r\n") == std::string::npos
                 ? "empty completion"
                 : "no code block and no entry point in the completion";
  return out;
}

}  // namespace skilldb::policy
