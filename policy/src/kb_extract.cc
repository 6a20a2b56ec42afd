// Reading a KernelBench answer (a Python file with `class ModelNew`) out of
// what a model wrote. Completions are untrusted and long: every scan here
// is one forward pass over lines, no backtracking regex.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <set>

#include "skilldb/policy/kernelbench_answer.h"
#include "skilldb/util/text.h"
#include "fences.h"

namespace skilldb::policy {
// Named, not anonymous: a unity batch shares one anonymous namespace with
// extract.cc, whose helpers have the same names.
namespace kb_extract_detail {

using Block = internal::FencedBlock;
using internal::FencedBlocks;
using internal::LineAt;
using internal::TrimLeft;

enum class Kind { kPython, kCuda, kCpp, kOther };

bool IsIdentStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool IsIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

bool HasWord(std::string_view s, std::string_view word) {
  for (size_t i = s.find(word); i != std::string_view::npos;
       i = s.find(word, i + 1)) {
    const bool left = i == 0 || !IsIdentChar(s[i - 1]);
    const size_t end = i + word.size();
    if (left && (end >= s.size() || !IsIdentChar(s[end]))) return true;
  }
  return false;
}

bool DefinesModelNew(std::string_view s) {
  for (size_t i = s.find("class"); i != std::string_view::npos;
       i = s.find("class", i + 1)) {
    if (i > 0 && s[i - 1] != '\n') continue;
    std::string_view rest = TrimLeft(s.substr(i + 5));
    if (rest.substr(0, 8) == "ModelNew" &&
        (rest.size() == 8 || !IsIdentChar(rest[8]))) {
      return true;
    }
  }
  return false;
}

Kind KindOf(const Block& b) {
  static const std::set<std::string> kPy = {"python", "py", "python3", "py3"};
  static const std::set<std::string> kCu = {"cuda", "cu", "cuh"};
  static const std::set<std::string> kCc = {"cpp", "c++", "cc", "cxx",
                                            "c",   "h",   "hpp"};
  if (kPy.count(b.info)) return Kind::kPython;
  if (kCu.count(b.info)) return Kind::kCuda;
  if (kCc.count(b.info))
    return HasWord(b.body, "__global__") ? Kind::kCuda : Kind::kCpp;
  if (!b.info.empty()) return Kind::kOther;
  // No info string: sniff.
  if (b.body.find("#include") != std::string::npos ||
      HasWord(b.body, "__global__")) {
    return HasWord(b.body, "__global__") ? Kind::kCuda : Kind::kCpp;
  }
  if (HasWord(b.body, "import") || HasWord(b.body, "def") ||
      HasWord(b.body, "class")) {
    return Kind::kPython;
  }
  return Kind::kOther;
}

std::string KindName(Kind k) {
  switch (k) {
    case Kind::kPython:
      return "python";
    case Kind::kCuda:
      return "cuda";
    case Kind::kCpp:
      return "c++";
    case Kind::kOther:
      return "other";
  }
  return "other";
}

std::string Describe(const Block& b) {
  const std::string info = b.info.empty() ? "no info string" : b.info;
  const size_t lines =
      static_cast<size_t>(std::count(b.body.begin(), b.body.end(), '\n'));
  return "block " + std::to_string(b.index) + " (" + info + ", " +
         std::to_string(lines) + " lines)";
}

std::vector<std::string_view> Lines(std::string_view s) {
  std::vector<std::string_view> out;
  size_t pos = 0, next = 0;
  while (pos < s.size()) {
    out.push_back(LineAt(s, pos, &next));
    pos = next;
  }
  return out;
}

// Names a Python block defines at the top level: assignments, def, class,
// imports (as bound: `import a.b` binds a, `import x as y` binds y).
std::set<std::string> TopLevelNames(std::string_view src) {
  std::set<std::string> out;
  auto ident = [](std::string_view s, size_t i) {
    size_t j = i;
    while (j < s.size() && IsIdentChar(s[j])) ++j;
    return std::string(s.substr(i, j - i));
  };
  for (std::string_view line : Lines(src)) {
    if (line.empty() || !IsIdentStart(line[0])) continue;
    if (line.rfind("def ", 0) == 0 || line.rfind("class ", 0) == 0) {
      out.insert(ident(line, line.find(' ') + 1));
    } else if (line.rfind("import ", 0) == 0 || line.rfind("from ", 0) == 0) {
      const size_t imp =
          line.rfind("import ", 0) == 0 ? 0 : line.find(" import ");
      if (imp == std::string_view::npos) continue;
      std::string_view names = line.substr(line.find("import ", imp) + 7);
      size_t start = 0;
      while (start < names.size()) {
        size_t comma = names.find(',', start);
        if (comma == std::string_view::npos) comma = names.size();
        std::string_view item = TrimLeft(names.substr(start, comma - start));
        while (!item.empty() && (item.front() == '('))
          item = TrimLeft(item.substr(1));
        const size_t as = item.find(" as ");
        if (as != std::string_view::npos) {
          out.insert(ident(TrimLeft(item.substr(as + 4)), 0));
        } else if (!item.empty() && IsIdentStart(item[0])) {
          out.insert(ident(item, 0));
        }
        start = comma + 1;
      }
    } else {
      std::string name = ident(line, 0);
      std::string_view rest = TrimLeft(line.substr(name.size()));
      // `name = ...` (not `name == ...`), or `a, b = ...`.
      const bool assigned =
          !rest.empty() &&
          (rest[0] == ',' ||
           (rest[0] == '=' && (rest.size() == 1 || rest[1] != '=')));
      if (assigned) out.insert(name);
    }
  }
  return out;
}

// Identifiers a block uses (any word outside strings is close enough: a
// false use only pulls in an earlier block that defines that name).
std::set<std::string> UsedNames(std::string_view src) {
  std::set<std::string> out;
  size_t i = 0;
  while (i < src.size()) {
    if (IsIdentStart(src[i]) &&
        (i == 0 || (!IsIdentChar(src[i - 1]) && src[i - 1] != '.'))) {
      size_t j = i;
      while (j < src.size() && IsIdentChar(src[j])) ++j;
      out.emplace(src.substr(i, j - i));
      i = j;
    } else {
      ++i;
    }
  }
  return out;
}

// `cuda_sources=NAME` / `cpp_sources=NAME` in `src`: the NAMEs.
std::vector<std::pair<std::string, std::string>> SourceArgs(
    std::string_view src) {
  std::vector<std::pair<std::string, std::string>> out;
  for (std::string_view key :
       {std::string_view("cuda_sources"), std::string_view("cpp_sources")}) {
    for (size_t i = src.find(key); i != std::string_view::npos;
         i = src.find(key, i + 1)) {
      size_t j = i + key.size();
      while (j < src.size() && src[j] == ' ') ++j;
      if (j >= src.size() || src[j] != '=') continue;
      ++j;
      while (j < src.size() && (src[j] == ' ' || src[j] == '[')) ++j;
      size_t k = j;
      while (k < src.size() && IsIdentChar(src[k])) ++k;
      if (k > j && IsIdentStart(src[j])) {
        out.emplace_back(std::string(key), std::string(src.substr(j, k - j)));
      }
    }
  }
  return out;
}

// A Python string literal holding `text` verbatim: a raw triple-quoted
// string whose quote does not occur in it, else an escaped one.
std::string PyLiteral(const std::string& text) {
  if (text.find("'''") == std::string::npos &&
      (text.empty() || text.back() != '\\')) {
    return "r'''" + text + "'''";
  }
  if (text.find("\"\"\"") == std::string::npos &&
      (text.empty() || text.back() != '\\')) {
    return "r\"\"\"" + text + "\"\"\"";
  }
  std::string out = "'";
  for (char c : text) {
    if (c == '\\' || c == '\'') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
  return out + "'";
}

// A line that a top-level Python statement (or its continuation) could
// start with; prose ("This kernel fuses ...") is not.
bool LooksLikePython(std::string_view line) {
  if (line.empty() || line[0] == ' ' || line[0] == '\t') return true;
  static const char* kStarts[] = {
      "import ", "from ",  "class ",  "def ",    "@",     "#",
      "if ",     "for ",   "while ",  "try:",    "with ", "else",
      "elif ",   "except", "finally", ")",       "]",     "}",
      "\"\"\"",  "'''",    "return",  "assert ", "raise "};
  for (const char* s : kStarts) {
    if (line.rfind(s, 0) == 0) return true;
  }
  if (!IsIdentStart(line[0])) return false;
  size_t j = 0;
  while (j < line.size() && (IsIdentChar(line[j]) || line[j] == '.')) ++j;
  std::string_view rest = TrimLeft(line.substr(j));
  if (rest.empty()) return false;  // one bare word: prose
  return rest[0] == '=' || rest[0] == '(' || rest[0] == '[' || rest[0] == ',' ||
         rest.rfind("+=", 0) == 0;
}

// No fences: from the first Python-looking line before `class ModelNew` to
// the first prose line after it.
KernelBenchExtraction FromPlainText(std::string_view text,
                                    KernelBenchExtraction ex) {
  std::vector<std::string_view> lines = Lines(text);
  size_t model = lines.size();
  for (size_t i = 0; i < lines.size(); ++i) {
    if (DefinesModelNew(std::string(lines[i]) + "\n") &&
        lines[i].rfind("class", 0) == 0) {
      model = i;
      break;
    }
  }
  if (model == lines.size()) {
    ex.note = "no code block and no `class ModelNew` in the answer";
    return ex;
  }
  // Lines inside a triple-quoted string (a kernel's source) are code
  // whatever they look like: one forward pass marks them.
  std::vector<bool> quoted(lines.size(), false);
  std::string open;  // the open string's quote, "" = none
  for (size_t i = 0; i < lines.size(); ++i) {
    quoted[i] = !open.empty();
    std::string_view l = lines[i];
    for (size_t k = 0; k + 3 <= l.size();) {
      std::string_view q = l.substr(k, 3);
      if ((q == "'''" || q == "\"\"\"") && (open.empty() || open == q)) {
        open = open.empty() ? std::string(q) : std::string();
        quoted[i] = true;
        k += 3;
      } else {
        ++k;
      }
    }
  }
  auto code = [&](size_t i) {
    return quoted[i] || TrimLeft(lines[i]).empty() || LooksLikePython(lines[i]);
  };
  // Walk back over code lines (blank ones included) to where the code
  // starts, and forward to the first prose line.
  size_t start = model;
  while (start > 0 && code(start - 1)) --start;
  while (start < model && TrimLeft(lines[start]).empty()) ++start;
  size_t end = model + 1;
  while (end < lines.size() && code(end)) ++end;
  while (end > model + 1 && TrimLeft(lines[end - 1]).empty()) --end;
  for (size_t i = start; i < end; ++i)
    ex.source += std::string(lines[i]) + "\n";
  ex.found = true;
  ex.note = "no code block: the Python from line " + std::to_string(start + 1) +
            " to line " + std::to_string(end);
  if (start > 0)
    ex.unused.push_back("prose before the code (" + std::to_string(start) +
                        " lines)");
  if (end < lines.size()) {
    ex.unused.push_back("text after the code (" +
                        std::to_string(lines.size() - end) + " lines)");
  }
  return ex;
}

// Adds to `chosen` (block indices into `blocks`) the earlier Python blocks
// that define a name the chosen ones use and do not define.
void PullDefinitions(const std::vector<Block>& blocks,
                     const std::vector<Kind>& kinds, size_t model,
                     std::vector<size_t>* chosen) {
  std::set<std::string> defined = TopLevelNames(blocks[model].body);
  std::set<std::string> used = UsedNames(blocks[model].body);
  for (size_t j = model; j-- > 0;) {
    if (kinds[j] != Kind::kPython || DefinesModelNew(blocks[j].body)) continue;
    const std::set<std::string> names = TopLevelNames(blocks[j].body);
    bool needed = false;
    for (const std::string& n : names) {
      if (used.count(n) && !defined.count(n)) needed = true;
    }
    if (!needed) continue;
    chosen->insert(chosen->begin(), j);
    defined.insert(names.begin(), names.end());
    const std::set<std::string> more = UsedNames(blocks[j].body);
    used.insert(more.begin(), more.end());
  }
}

std::string_view FormatName(KernelBenchFormat format) {
  switch (format) {
    case KernelBenchFormat::kCuda:
      return "cuda";
    case KernelBenchFormat::kTriton:
      return "triton";
    case KernelBenchFormat::kCpp:
      return "cpp";
  }
  return "cuda";
}

Result<KernelBenchFormat> ParseFormat(std::string_view name) {
  if (name == "cuda") return KernelBenchFormat::kCuda;
  if (name == "triton") return KernelBenchFormat::kTriton;
  if (name == "cpp") return KernelBenchFormat::kCpp;
  return Status::InvalidArgument("answer format '" + util::OneLine(name) +
                                 "': expected cuda, triton or cpp");
}

KernelBenchExtraction Extract(std::string_view text,
                              const KernelBenchExtractOptions& o) {
  KernelBenchExtraction ex;
  if (text.size() > o.max_completion_bytes) {
    ex.unused.push_back("the answer past " +
                        std::to_string(o.max_completion_bytes) + " bytes (" +
                        std::to_string(text.size() - o.max_completion_bytes) +
                        " bytes)");
    text = text.substr(0, o.max_completion_bytes);
  }
  // Reasoning models think first; code in the thinking is a draft.
  if (const size_t close = text.rfind("</think>");
      close != std::string_view::npos) {
    ex.unused.push_back("the reasoning before </think> (" +
                        std::to_string(close) + " bytes)");
    text = text.substr(close + 8);
  }
  int outside = 0;
  std::vector<Block> blocks = FencedBlocks(text, &outside);
  ex.blocks = static_cast<int>(blocks.size());
  if (blocks.size() > o.max_blocks) {
    ex.unused.push_back(std::to_string(blocks.size() - o.max_blocks) +
                        " code blocks past the first " +
                        std::to_string(o.max_blocks));
    blocks.resize(o.max_blocks);
  }
  if (blocks.empty()) {
    auto out = FromPlainText(text, std::move(ex));
    if (!out.found &&
        text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
      out.note = "the answer is empty";
    }
    if (out.found) out.backend = verify::kb::DetectFormat(out.source).backend;
    return out;
  }
  ex.unclosed_fence = !blocks.back().closed;
  std::vector<Kind> kinds;
  kinds.reserve(blocks.size());
  for (const Block& b : blocks) kinds.push_back(KindOf(b));
  size_t model = blocks.size();
  for (size_t i = blocks.size(); i-- > 0;) {
    if (kinds[i] == Kind::kPython && DefinesModelNew(blocks[i].body)) {
      model = i;
      break;
    }
  }
  if (model == blocks.size()) {
    // A block with no info string that defines ModelNew is Python too.
    for (size_t i = blocks.size(); i-- > 0;) {
      if (kinds[i] != Kind::kCuda && DefinesModelNew(blocks[i].body)) {
        model = i;
        kinds[i] = Kind::kPython;
        break;
      }
    }
  }
  if (model == blocks.size()) {
    std::string what;
    for (const Block& b : blocks) {
      what +=
          (what.empty() ? "" : ", ") + Describe(b) + ": " + KindName(KindOf(b));
    }
    ex.note = std::to_string(blocks.size()) +
              " code block(s), none defines `class ModelNew` (" + what + ")";
    for (const Block& b : blocks)
      ex.unused.push_back(Describe(b) + ": no ModelNew");
    return ex;
  }
  std::vector<size_t> chosen = {model};
  PullDefinitions(blocks, kinds, model, &chosen);
  std::string prefix;
  // Source names load_inline takes that no chosen block defines: bound to
  // a CUDA or C++ block of the answer (a kernel written in its own block).
  std::set<std::string> defined;
  for (size_t c : chosen) {
    const std::set<std::string> n = TopLevelNames(blocks[c].body);
    defined.insert(n.begin(), n.end());
  }
  std::set<size_t> bound;
  for (size_t c : chosen) {
    for (const auto& [key, name] : SourceArgs(blocks[c].body)) {
      if (defined.count(name)) continue;
      const Kind want = key == "cuda_sources" ? Kind::kCuda : Kind::kCpp;
      for (size_t j = 0; j < blocks.size(); ++j) {
        if (kinds[j] != want || bound.count(j)) continue;
        prefix += name + " = " + PyLiteral(blocks[j].body) + "\n";
        defined.insert(name);
        bound.insert(j);
        break;
      }
    }
  }
  for (size_t j : bound) chosen.push_back(j);
  std::sort(chosen.begin(), chosen.end());
  std::string body;
  for (size_t c : chosen) {
    if (bound.count(c)) continue;
    body += blocks[c].body;
    if (!body.empty() && body.back() != '\n') body.push_back('\n');
  }
  // The bindings are plain string assignments: valid before anything.
  ex.source = prefix + body;
  ex.found = true;
  for (size_t c : chosen) ex.blocks_used.push_back(blocks[c].index);
  ex.note = "ModelNew from block " + std::to_string(blocks[model].index);
  if (chosen.size() > 1) {
    ex.note += ", with block(s)";
    for (size_t c : chosen) {
      if (c != model) ex.note += " " + std::to_string(blocks[c].index);
    }
  }
  if (!bound.empty())
    ex.note += " (kernel source bound to the name load_inline takes)";
  for (size_t j = 0; j < blocks.size(); ++j) {
    if (std::find(chosen.begin(), chosen.end(), j) != chosen.end()) continue;
    std::string why =
        kinds[j] == Kind::kPython
            ? (DefinesModelNew(blocks[j].body)
                   ? "an earlier ModelNew, superseded"
                   : "Python the answer does not use")
            : KindName(kinds[j]) + " not referenced by the answer";
    ex.unused.push_back(Describe(blocks[j]) + ": " + why);
  }
  if (outside > 0)
    ex.unused.push_back("prose outside the code blocks (" +
                        std::to_string(outside) + " lines)");
  if (ex.unclosed_fence) {
    ex.note +=
        "; the last code block is not closed (the answer may be cut off)";
  }
  ex.backend = verify::kb::DetectFormat(ex.source).backend;
  return ex;
}

}  // namespace kb_extract_detail

std::string_view KernelBenchFormatName(KernelBenchFormat format) {
  return kb_extract_detail::FormatName(format);
}

Result<KernelBenchFormat> ParseKernelBenchFormat(std::string_view name) {
  return kb_extract_detail::ParseFormat(name);
}

KernelBenchExtraction ExtractKernelBenchAnswer(
    std::string_view completion, const KernelBenchExtractOptions& options) {
  return kb_extract_detail::Extract(completion, options);
}

}  // namespace skilldb::policy
