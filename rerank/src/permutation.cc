#include "skilldb/rerank/permutation.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>

namespace skilldb::rerank {
namespace {

// An id is read from at most this many digits; longer runs are out of range
// (no overflow, whatever the model writes).
constexpr size_t kMaxIdDigits = 9;
constexpr size_t kTooLarge = std::numeric_limits<size_t>::max();

// Kinds of mention, in order of preference: the prompt numbers candidates
// "[1]", so a bracketed id is the strongest evidence of a ranking.
enum class Kind { kBracket = 0, kLabelled = 1, kMarked = 2, kBare = 3 };
constexpr int kNumKinds = 4;

struct Mention {
  Kind kind;
  size_t value;  // as written (1-based), kTooLarge if too many digits
  size_t begin;  // byte range in the text, for the gaps between mentions
  size_t end;
  bool after_marker;  // first mention after a list marker ("2. ")
};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool IsWordChar(char c) {
  return IsDigit(c) || IsAlpha(c) || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}
bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
         c == '\v';
}
char Lower(char c) { return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c; }

size_t SkipSpaces(std::string_view t, size_t i) {
  while (i < t.size() && (t[i] == ' ' || t[i] == '\t')) ++i;
  return i;
}
size_t SkipWhitespace(std::string_view t, size_t i) {
  while (i < t.size() && IsSpace(t[i])) ++i;
  return i;
}

// Reads a digit run at t[i]; returns its end and sets *value.
size_t ReadNumber(std::string_view t, size_t i, size_t* value) {
  size_t j = i, v = 0;
  while (j < t.size() && IsDigit(t[j])) {
    if (j - i < kMaxIdDigits) v = v * 10 + static_cast<size_t>(t[j] - '0');
    ++j;
  }
  *value = (j - i > kMaxIdDigits) ? kTooLarge : v;
  return j;
}

// Multi-byte separators (UTF-8): arrows, "≻", "»", full-width ">" and
// commas.
constexpr std::array<std::string_view, 6> kWideSeparators = {
    "\xE2\x86\x92", "\xE2\x89\xBB", "\xC2\xBB",
    "\xEF\xBC\x9E", "\xEF\xBC\x8C", "\xE3\x80\x81"};

// True when t[begin, end) holds only characters that join ids in a ranking.
bool OnlySeparators(std::string_view t, size_t begin, size_t end) {
  size_t i = begin;
  while (i < end) {
    const char c = t[i];
    // Control characters (a stray NUL) join like whitespace.
    if (static_cast<unsigned char>(c) < 0x20 || c == ' ' || c == '>' ||
        c == ',' || c == ';' || c == '|' || c == '-' || c == '=' || c == '"' ||
        c == '\'' || c == '*' || c == '`') {
      ++i;
      continue;
    }
    bool wide = false;
    for (std::string_view s : kWideSeparators) {
      if (t.substr(i, s.size()) == s && i + s.size() <= end) {
        i += s.size();
        wide = true;
        break;
      }
    }
    if (!wide) return false;
  }
  return true;
}

// Words that name a candidate before its number ("Passage 3").
constexpr std::array<std::string_view, 7> kLabels = {
    "passage", "document", "doc", "candidate", "skill", "item", "id"};

// Scans the text once, left to right, collecting every mention.
class Scanner {
 public:
  explicit Scanner(std::string_view text) : t_(text) {}

  std::vector<Mention> Run() {
    size_t i = 0;
    while (i < t_.size()) i = Step(i);
    return std::move(out_);
  }

 private:
  size_t Step(size_t i) {
    const char c = t_[i];
    if (c == '\n') {
      line_start_ = i + 1;
      return i + 1;
    }
    if (c == '[') return Bracket(i);
    if (c == '(') return Paren(i);
    if (c == '#' && i + 1 < t_.size() && IsDigit(t_[i + 1])) {
      size_t v;
      const size_t end = ReadNumber(t_, i + 1, &v);
      if (end < t_.size() && IsWordChar(t_[end])) return end;
      Emit(Kind::kMarked, v, i, end);
      return end;
    }
    if (IsAlpha(c) && (i == 0 || !IsWordChar(t_[i - 1]))) return Word(i);
    if (IsDigit(c) && (i == 0 || !IsWordChar(t_[i - 1]))) return Bare(i);
    return i + 1;
  }

  // "[3]", "[ 03 ]" or a JSON array of integers "[3, 1, 2]".
  size_t Bracket(size_t i) {
    std::vector<std::pair<size_t, size_t>> spans;  // digit runs
    std::vector<size_t> values;
    size_t j = SkipWhitespace(t_, i + 1);
    while (true) {
      if (j >= t_.size() || !IsDigit(t_[j])) return i + 1;
      size_t v;
      const size_t end = ReadNumber(t_, j, &v);
      spans.emplace_back(j, end);
      values.push_back(v);
      j = SkipWhitespace(t_, end);  // JSON arrays may span lines
      if (j < t_.size() && t_[j] == ']') break;
      if (j >= t_.size() || t_[j] != ',') return i + 1;
      j = SkipWhitespace(t_, j + 1);
    }
    for (size_t k = 0; k < values.size(); ++k) {
      const size_t begin = k == 0 ? i : spans[k].first;
      const size_t end = k + 1 == values.size() ? j + 1 : spans[k].second;
      Emit(Kind::kBracket, values[k], begin, end);
    }
    return j + 1;
  }

  size_t Paren(size_t i) {
    size_t j = SkipSpaces(t_, i + 1);
    if (j >= t_.size() || !IsDigit(t_[j])) return i + 1;
    size_t v;
    const size_t end = SkipSpaces(t_, ReadNumber(t_, j, &v));
    if (end >= t_.size() || t_[end] != ')') return i + 1;
    Emit(Kind::kMarked, v, i, end + 1);
    return end + 1;
  }

  // A word: a label followed by a number, or skipped whole.
  size_t Word(size_t i) {
    size_t j = i;
    while (j < t_.size() && IsAlpha(t_[j])) ++j;
    if (j < t_.size() && IsWordChar(t_[j]) && !IsDigit(t_[j])) {
      while (j < t_.size() && IsWordChar(t_[j])) ++j;
      return j;
    }
    if (!IsLabel(t_.substr(i, j - i))) {
      while (j < t_.size() && IsWordChar(t_[j])) ++j;  // "sm90", "fp16"
      return j;
    }
    size_t k = SkipSpaces(t_, j);
    if (k < t_.size() && (t_[k] == '#' || t_[k] == ':' || t_[k] == '.')) {
      k = SkipSpaces(t_, k + 1);
    }
    if (k >= t_.size() || !IsDigit(t_[k])) return j;
    size_t v;
    const size_t end = ReadNumber(t_, k, &v);
    if (end < t_.size() && IsWordChar(t_[end])) return end;
    Emit(Kind::kLabelled, v, i, end);
    return end;
  }

  // A label, singular or plural ("Passages 3 > 1" happens).
  static bool IsLabel(std::string_view word) {
    if (word.size() > 1 && Lower(word.back()) == 's' &&
        IsLabel(word.substr(0, word.size() - 1))) {
      return true;
    }
    for (std::string_view label : kLabels) {
      if (word.size() != label.size()) continue;
      bool same = true;
      for (size_t k = 0; k < word.size() && same; ++k) {
        same = Lower(word[k]) == label[k];
      }
      if (same) return true;
    }
    return false;
  }

  size_t Bare(size_t i) {
    size_t v;
    const size_t end = ReadNumber(t_, i, &v);
    // Decimals ("0.75") and words that start with digits ("16x") are not
    // ids.
    if (i > 0 && t_[i - 1] == '.' && i > 1 && IsDigit(t_[i - 2])) return end;
    if (end < t_.size() && IsWordChar(t_[end])) {
      size_t j = end;
      while (j < t_.size() && IsWordChar(t_[j])) ++j;
      return j;
    }
    if (end + 1 < t_.size() && t_[end] == '.' && IsDigit(t_[end + 1])) {
      size_t j = end + 1;
      while (j < t_.size() && IsDigit(t_[j])) ++j;
      return j;
    }
    if (IsListMarker(i, end)) {
      marker_pending_ = true;
      return end + 1;
    }
    Emit(Kind::kBare, v, i, end);
    return end;
  }

  // "2." or "2)" opening a line and followed by more text with a digit:
  // the list's own numbering, not an id.
  bool IsListMarker(size_t begin, size_t end) const {
    if (SkipSpaces(t_, line_start_) != begin) return false;
    if (end + 1 >= t_.size() || (t_[end] != '.' && t_[end] != ')')) {
      return false;
    }
    if (!IsSpace(t_[end + 1])) return false;
    for (size_t k = end + 1; k < t_.size() && t_[k] != '\n'; ++k) {
      if (IsDigit(t_[k])) return true;
    }
    return false;
  }

  void Emit(Kind kind, size_t value, size_t begin, size_t end) {
    out_.push_back(Mention{kind, value, begin, end, marker_pending_});
    marker_pending_ = false;
  }

  std::string_view t_;
  size_t line_start_ = 0;
  bool marker_pending_ = false;
  std::vector<Mention> out_;
};

struct Reading {
  std::vector<size_t> values;
  std::string format;
};

// The longest run of mentions joined by separators (the last on a tie).
std::vector<size_t> LongestChain(std::string_view text,
                                 const std::vector<Mention>& ms) {
  size_t best_begin = 0, best_len = 0, begin = 0;
  for (size_t k = 0; k < ms.size(); ++k) {
    if (k > 0 && !OnlySeparators(text, ms[k - 1].end, ms[k].begin)) {
      begin = k;
    }
    const size_t len = k - begin + 1;
    if (len >= best_len) {
      best_len = len;
      best_begin = begin;
    }
  }
  std::vector<size_t> values;
  for (size_t k = best_begin; k < best_begin + best_len; ++k) {
    values.push_back(ms[k].value);
  }
  return values;
}

// True when the text is one number and punctuation ("3", " [3]. ").
bool IsLoneNumber(std::string_view text) {
  size_t digits_runs = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (IsDigit(c)) {
      if (i == 0 || !IsDigit(text[i - 1])) ++digits_runs;
    } else if (IsAlpha(c) || static_cast<unsigned char>(c) >= 0x80) {
      return false;
    }
  }
  return digits_runs == 1;
}

// The candidate readings of the text's mentions, most preferred first.
std::vector<Reading> Readings(std::string_view text,
                              const std::vector<Mention>& all) {
  std::vector<Reading> readings;
  for (int kind = 0; kind < kNumKinds; ++kind) {
    std::vector<Mention> ms;
    for (const Mention& m : all) {
      if (static_cast<int>(m.kind) == kind) ms.push_back(m);
    }
    if (ms.empty()) continue;
    std::vector<size_t> chain = LongestChain(text, ms);
    if (chain.size() >= 2) readings.push_back({std::move(chain), "chain"});
    if (static_cast<Kind>(kind) != Kind::kBare) {
      Reading r{{}, "mentions"};
      for (const Mention& m : ms) r.values.push_back(m.value);
      readings.push_back(std::move(r));
      continue;
    }
    Reading list{{}, "list"};
    for (const Mention& m : ms) {
      if (m.after_marker) list.values.push_back(m.value);
    }
    if (list.values.size() >= 2) readings.push_back(std::move(list));
    if (ms.size() == 1 && IsLoneNumber(text)) {
      readings.push_back({{ms[0].value}, "single"});
    }
  }
  return readings;
}

// Turns 1-based ids into a full permutation of [0, n); ranked == 0 when no
// id is in range.
ParsedPermutation Complete(const Reading& reading, size_t n) {
  ParsedPermutation p;
  p.format = reading.format;
  std::vector<bool> seen(n, false);
  for (size_t v : reading.values) {
    if (v == 0 || v > n) {
      ++p.out_of_range;
    } else if (seen[v - 1]) {
      ++p.duplicates;
    } else {
      seen[v - 1] = true;
      p.order.push_back(v - 1);
    }
  }
  p.ranked = p.order.size();
  for (size_t i = 0; i < n; ++i) {
    if (!seen[i]) p.order.push_back(i);
  }
  p.missing = n - p.ranked;
  return p;
}

}  // namespace

std::string_view StripThinking(std::string_view answer, bool* unfinished) {
  *unfinished = false;
  const size_t close = answer.rfind("</think>");
  if (close != std::string_view::npos) {
    return answer.substr(close + std::string_view("</think>").size());
  }
  if (answer.find("<think>") != std::string_view::npos) {
    *unfinished = true;
    return {};
  }
  return answer;
}

Result<ParsedPermutation> ParsePermutation(std::string_view answer, size_t n,
                                           size_t max_answer_bytes) {
  if (n == 0) return Status::InvalidArgument("no candidates to rank");
  bool unfinished = false;
  const std::string_view text =
      StripThinking(answer.substr(0, max_answer_bytes), &unfinished);
  if (unfinished) {
    return Status::InvalidArgument(
        "the answer is an unfinished <think> block with no ranking after it");
  }
  const std::vector<Mention> mentions = Scanner(text).Run();
  size_t out_of_range = 0;
  for (const Reading& reading : Readings(text, mentions)) {
    ParsedPermutation p = Complete(reading, n);
    if (p.ranked > 0) return p;
    out_of_range = std::max(out_of_range, p.out_of_range);
  }
  if (out_of_range > 0) {
    return Status::InvalidArgument("every id in the answer is outside [1, " +
                                   std::to_string(n) + "]");
  }
  return Status::InvalidArgument("the answer holds no ranking of ids");
}

}  // namespace skilldb::rerank
