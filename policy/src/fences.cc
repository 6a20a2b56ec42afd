#include "fences.h"

#include <cctype>
#include <cstring>

namespace skilldb::policy::internal {

std::string_view LineAt(std::string_view text, size_t pos, size_t* next) {
  size_t end = text.find('\n', pos);
  if (end == std::string_view::npos) end = text.size();
  *next = end < text.size() ? end + 1 : end;
  std::string_view line = text.substr(pos, end - pos);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

std::string_view TrimLeft(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

bool IsFence(std::string_view line, std::string* marker, std::string* info) {
  std::string_view t = TrimLeft(line);
  if (line.size() - t.size() > 3 || t.size() < 3) return false;
  const char c = t[0];
  if (c != '`' && c != '~') return false;
  size_t n = 0;
  while (n < t.size() && t[n] == c) ++n;
  if (n < 3) return false;
  *marker = std::string(n, c);
  std::string_view rest = TrimLeft(t.substr(n));
  while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t')) rest.remove_suffix(1);
  info->clear();
  // The first word, kept to ASCII letters, digits and "+#._-": it is quoted
  // back in notes, and a cut never splits UTF-8.
  for (char ch : rest) {
    if (ch == ' ' || ch == '{' || info->size() >= 32) break;
    const unsigned char u = static_cast<unsigned char>(ch);
    if (u != 0 && u < 0x80 && (std::isalnum(u) || std::strchr("+#._-", ch) != nullptr)) {
      info->push_back(static_cast<char>(std::tolower(u)));
    }
  }
  return true;
}

std::vector<FencedBlock> FencedBlocks(std::string_view text, int* outside) {
  std::vector<FencedBlock> blocks;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t next = 0;
    std::string marker, info;
    std::string_view line = LineAt(text, pos, &next);
    pos = next;
    if (!IsFence(line, &marker, &info)) {
      if (outside != nullptr && !TrimLeft(line).empty()) ++*outside;
      continue;
    }
    FencedBlock b;
    b.index = static_cast<int>(blocks.size()) + 1;
    b.info = info;
    b.closed = false;
    while (pos < text.size()) {
      std::string_view body_line = LineAt(text, pos, &next);
      pos = next;
      std::string m, i;
      if (IsFence(body_line, &m, &i) && i.empty() && m[0] == marker[0] &&
          m.size() >= marker.size()) {
        b.closed = true;
        break;
      }
      b.body.append(body_line);
      b.body.push_back('\n');
    }
    blocks.push_back(std::move(b));
  }
  return blocks;
}

}  // namespace skilldb::policy::internal
