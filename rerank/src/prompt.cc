#include "skilldb/rerank/prompt.h"

namespace skilldb::rerank {
namespace {

constexpr std::string_view kEllipsis = "\xE2\x80\xA6";  // …

bool IsSpace(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
         c == '\v';
}

// The length of the well-formed UTF-8 sequence at s[i] (1-4), or 0 when it
// is not one (overlong forms and surrogates included, as JSON encoders
// reject them).
size_t SequenceLength(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  size_t len;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (size_t k = 2; k < len; ++k) {
    if (b(i + k) < 0x80 || b(i + k) > 0xBF) return 0;
  }
  return len;
}

// Whitespace collapsed, invalid UTF-8 replaced, at most `limit` bytes kept
// (whole characters); sets *cut when more text followed.
std::string Normalize(std::string_view text, size_t limit, bool* cut) {
  std::string out;
  *cut = false;
  bool pending_space = false;
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (IsSpace(c)) {
      pending_space = !out.empty();
      ++i;
      continue;
    }
    const size_t len = SequenceLength(text, i);
    const size_t need = (len == 0 ? 1 : len) + (pending_space ? 1 : 0);
    if (out.size() + need > limit) {
      *cut = true;
      break;
    }
    if (pending_space) out += ' ';
    pending_space = false;
    if (len == 0) {
      out += '?';
      ++i;
    } else {
      out.append(text.substr(i, len));
      i += len;
    }
  }
  return out;
}

void AddPart(std::string* out, std::string_view label, const std::string& s) {
  if (s.empty()) return;
  if (!out->empty()) *out += '\n';
  *out += label;
  *out += s;
}

}  // namespace

std::string Fingerprint(const PromptOptions& o) {
  return "p1:" + std::to_string(o.include_id) + "," +
         std::to_string(o.max_title_bytes) + "," +
         std::to_string(o.max_summary_bytes) + "," +
         std::to_string(o.max_excerpt_bytes) + "," +
         std::to_string(o.max_query_bytes);
}

std::string Clip(std::string_view text, size_t max_bytes) {
  bool cut = false;
  std::string out = Normalize(text, max_bytes, &cut);
  if (!cut) return out;
  // Prefer ending at a word boundary when one is near the end.
  const size_t space = out.rfind(' ');
  if (space != std::string::npos && space >= out.size() * 4 / 5) {
    out.resize(space);
  }
  out += kEllipsis;
  return out;
}

std::string CandidateText(const Hit& hit, const PromptOptions& o) {
  std::string text;
  std::string head = o.include_id ? hit.id : "";
  const std::string title = Clip(hit.title, o.max_title_bytes);
  if (!title.empty()) head += head.empty() ? title : ": " + title;
  if (head.empty()) head = hit.id;
  text = head;
  AddPart(&text, "", Clip(hit.summary, o.max_summary_bytes));
  if (o.max_excerpt_bytes > 0) {
    AddPart(&text, "", Clip(hit.body, o.max_excerpt_bytes));
  }
  return text;
}

llm::Chat ListwisePrompt(std::string_view query,
                         const std::vector<const Hit*>& window,
                         const PromptOptions& o) {
  const std::string q = Clip(query, o.max_query_bytes);
  const std::string n = std::to_string(window.size());
  std::string user =
      "I will give you " + n +
      " skills for writing GPU kernels, each numbered with an "
      "identifier in brackets, [1] to [" +
      n + "]. Rank them by how useful each is for this task: " + q + "\n\n";
  for (size_t i = 0; i < window.size(); ++i) {
    user += "[" + std::to_string(i + 1) + "] " + CandidateText(*window[i], o);
    user += "\n\n";
  }
  user += "Task: " + q + "\nRank the " + n +
          " skills above from most to least useful for the task. Answer "
          "only with the ranking of all identifiers, most useful first, in "
          "the form [2] > [1] > [3], with no other words.";
  return {{"system",
           "You are RankGPT, an intelligent assistant that ranks passages "
           "by their relevance to a query."},
          {"user", std::move(user)}};
}

llm::Chat PointwisePrompt(std::string_view query, const Hit& hit,
                          std::string_view instruction,
                          const PromptOptions& o) {
  std::string user = "<Instruct>: " + std::string(instruction) +
                     "\n<Query>: " + Clip(query, o.max_query_bytes) +
                     "\n<Document>: " + CandidateText(hit, o);
  return {{"system",
           "Judge whether the Document meets the requirements based on the "
           "Query and the Instruct provided. Note that the answer can only "
           "be \"yes\" or \"no\"."},
          {"user", std::move(user)}};
}

}  // namespace skilldb::rerank
