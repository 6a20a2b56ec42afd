#include "html.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <set>

namespace skilldb::server::internal {
namespace {

bool IsWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A crude English stem, enough to match "tiling" with "tile" and "tiles".
std::string Stem(std::string word) {
  for (const char* suffix : {"ing", "ed", "es", "s", "e"}) {
    const std::string_view s(suffix);
    if (word.size() > s.size() + 2 && word.ends_with(s)) {
      word.resize(word.size() - s.size());
      break;
    }
  }
  return word;
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f", v);
  return buf;
}

bool IsKeyword(std::string_view w) {
  static const std::set<std::string, std::less<>> kWords = {
      "__global__", "__device__", "__shared__", "__restrict__", "__host__",
      "__syncthreads", "auto", "bool", "break", "case", "char", "class",
      "const", "constexpr", "continue", "def", "double", "else", "extern",
      "float", "for", "if", "import", "in", "inline", "int", "long", "return",
      "static", "struct", "template", "typename", "unsigned", "void",
      "volatile", "while", "with", "from", "as", "and", "or", "not", "None",
      "True", "False", "lambda", "pass", "size_t", "half", "float4",
      "int64_t", "uint32_t", "tl", "triton", "jit", "namespace", "using"};
  return kWords.count(w) > 0;
}

}  // namespace

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        if ((static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') ||
            c == 0x7f) {
          out += "\xEF\xBF\xBD";
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::vector<std::string> QueryWords(std::string_view query) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < query.size()) {
    while (i < query.size() && !IsWordChar(query[i])) ++i;
    size_t j = i;
    while (j < query.size() && IsWordChar(query[j])) ++j;
    if (j - i >= 2) words.push_back(Lower(query.substr(i, j - i)));
    i = j;
  }
  return words;
}

std::string HighlightWords(std::string_view text,
                           const std::vector<std::string>& words) {
  std::set<std::string> stems;
  for (const std::string& w : words) stems.insert(Stem(w));
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    if (!IsWordChar(text[i])) {
      size_t j = i;
      while (j < text.size() && !IsWordChar(text[j])) ++j;
      out += HtmlEscape(text.substr(i, j - i));
      i = j;
      continue;
    }
    size_t j = i;
    while (j < text.size() && IsWordChar(text[j])) ++j;
    const std::string_view word = text.substr(i, j - i);
    const bool hit = stems.count(Stem(Lower(word))) > 0;
    if (hit) out += "<mark>";
    out += HtmlEscape(word);
    if (hit) out += "</mark>";
    i = j;
  }
  return out;
}

std::string HighlightCode(std::string_view code) {
  std::string out;
  size_t i = 0;
  auto span = [&](const char* cls, std::string_view piece) {
    out += "<span class=\"";
    out += cls;
    out += "\">";
    out += HtmlEscape(piece);
    out += "</span>";
  };
  while (i < code.size()) {
    const char c = code[i];
    if (code.substr(i).starts_with("//") || c == '#') {
      // A line comment (C++ //, Python #; a C preprocessor line reads the
      // same way and is shown as one).
      size_t j = code.find('\n', i);
      if (j == std::string_view::npos) j = code.size();
      span("c", code.substr(i, j - i));
      i = j;
    } else if (code.substr(i).starts_with("/*")) {
      size_t j = code.find("*/", i + 2);
      j = j == std::string_view::npos ? code.size() : j + 2;
      span("c", code.substr(i, j - i));
      i = j;
    } else if (c == '"' || c == '\'') {
      size_t j = i + 1;
      while (j < code.size() && code[j] != c && code[j] != '\n') {
        j += code[j] == '\\' ? 2 : 1;
      }
      j = std::min(code.size(), j + 1);
      span("s", code.substr(i, j - i));
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i;
      while (j < code.size() && (IsWordChar(code[j]) || code[j] == '.')) ++j;
      span("n", code.substr(i, j - i));
      i = j;
    } else if (IsWordChar(c)) {
      size_t j = i;
      while (j < code.size() && IsWordChar(code[j])) ++j;
      const std::string_view word = code.substr(i, j - i);
      if (IsKeyword(word)) {
        span("k", word);
      } else {
        out += HtmlEscape(word);
      }
      i = j;
    } else {
      out += HtmlEscape(code.substr(i, 1));
      ++i;
    }
  }
  return out;
}

std::string IntervalChart(const std::vector<Interval>& intervals) {
  if (intervals.empty()) return "";
  double lo = 1.0, hi = 1.0;
  for (const Interval& iv : intervals) {
    lo = std::min({lo, iv.low, iv.point});
    hi = std::max({hi, iv.high, iv.point});
    for (double r : iv.rounds) {
      lo = std::min(lo, r);
      hi = std::max(hi, r);
    }
  }
  if (!(hi > lo)) hi = lo + 1.0;
  const double pad = (hi - lo) * 0.08;
  lo = std::max(0.0, lo - pad);
  hi += pad;
  const int left = 220, width = 420, row = 26;
  const int height = row * static_cast<int>(intervals.size()) + 30;
  auto x = [&](double v) {
    return left + static_cast<int>((v - lo) / (hi - lo) * width);
  };
  std::string svg = "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" "
                    "width=\"" + std::to_string(left + width + 20) +
                    "\" height=\"" + std::to_string(height) +
                    "\" role=\"img\" aria-label=\"speedup intervals\">";
  const int one = x(1.0);
  svg += "<line x1=\"" + std::to_string(one) + "\" y1=\"0\" x2=\"" +
         std::to_string(one) + "\" y2=\"" + std::to_string(height - 20) +
         "\" stroke=\"#999\" stroke-dasharray=\"4 3\"/>";
  svg += "<text x=\"" + std::to_string(one) + "\" y=\"" +
         std::to_string(height - 5) +
         "\" font-size=\"11\" text-anchor=\"middle\">1.0x</text>";
  for (double tick : {lo, hi}) {
    svg += "<text x=\"" + std::to_string(x(tick)) + "\" y=\"" +
           std::to_string(height - 5) +
           "\" font-size=\"11\" text-anchor=\"middle\">" + Num(tick) +
           "x</text>";
  }
  for (size_t i = 0; i < intervals.size(); ++i) {
    const Interval& iv = intervals[i];
    const int y = static_cast<int>(i) * row + 14;
    const std::string ys = std::to_string(y);
    svg += "<text x=\"4\" y=\"" + std::to_string(y + 4) +
           "\" font-size=\"12\">" + HtmlEscape(iv.label.substr(0, 34)) +
           "</text>";
    svg += "<line x1=\"" + std::to_string(x(iv.low)) + "\" y1=\"" + ys +
           "\" x2=\"" + std::to_string(x(iv.high)) + "\" y2=\"" + ys +
           "\" stroke=\"#2a6\" stroke-width=\"4\"/>";
    for (double r : iv.rounds) {
      svg += "<circle cx=\"" + std::to_string(x(r)) + "\" cy=\"" + ys +
             "\" r=\"2\" fill=\"#555\"/>";
    }
    svg += "<circle cx=\"" + std::to_string(x(iv.point)) + "\" cy=\"" + ys +
           "\" r=\"5\" fill=\"#063\"><title>" + Num(iv.point) + "x [" +
           Num(iv.low) + ", " + Num(iv.high) + "]</title></circle>";
  }
  svg += "</svg>";
  return svg;
}

std::string LineDiff(std::string_view before, std::string_view after,
                     size_t max_lines) {
  auto split = [](std::string_view s) {
    std::vector<std::string_view> lines;
    size_t start = 0;
    while (start <= s.size()) {
      size_t end = s.find('\n', start);
      if (end == std::string_view::npos) end = s.size();
      lines.push_back(s.substr(start, end - start));
      start = end + 1;
    }
    return lines;
  };
  const auto a = split(before), b = split(after);
  if (a.size() > max_lines || b.size() > max_lines) {
    return "<div class=\"note\">" + std::to_string(a.size()) + " lines -> " +
           std::to_string(b.size()) + " lines (too long to show a diff)</div>";
  }
  // lcs[i][j]: common subsequence length of a[i:] and b[j:].
  std::vector<std::vector<uint16_t>> lcs(
      a.size() + 1, std::vector<uint16_t>(b.size() + 1, 0));
  for (size_t i = a.size(); i-- > 0;) {
    for (size_t j = b.size(); j-- > 0;) {
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1
                               : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  std::string out = "<pre class=\"diff\">";
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (i < a.size() && j < b.size() && a[i] == b[j]) {
      out += "  " + HtmlEscape(a[i]) + "\n";
      ++i;
      ++j;
    } else if (j < b.size() && (i == a.size() || lcs[i][j + 1] >= lcs[i + 1][j])) {
      out += "<span class=\"add\">+ " + HtmlEscape(b[j]) + "</span>\n";
      ++j;
    } else {
      out += "<span class=\"del\">- " + HtmlEscape(a[i]) + "</span>\n";
      ++i;
    }
  }
  out += "</pre>";
  return out;
}

std::string Page(std::string_view title, std::string_view body_html) {
  std::string page =
      "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width\">"
      "<title>";
  page += HtmlEscape(title);
  page +=
      " - skilldb</title><style>"
      "body{font-family:sans-serif;margin:0;color:#222}"
      "nav{background:#234;padding:8px 16px}nav a{color:#fff;margin-right:16px;"
      "text-decoration:none}main{padding:12px 20px;max-width:1000px}"
      "mark{background:#fe6}pre{background:#f6f6f6;padding:8px;overflow-x:auto}"
      ".k{color:#07a;font-weight:bold}.c{color:#777}.s{color:#a40}.n{color:#909}"
      ".add{background:#dfd}.del{background:#fdd}.hit{margin:10px 0}"
      ".meta{color:#666;font-size:90%}.note{color:#666}"
      "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 6px;"
      "text-align:left;vertical-align:top}"
      "</style></head><body><nav><a href=\"/ui\">search</a>"
      "<a href=\"/ui/log\">commit log</a><a href=\"/ui/audit\">rejected "
      "proposals</a><a href=\"/openapi.json\">API</a></nav><main><h1>";
  page += HtmlEscape(title);
  page += "</h1>";
  page += body_html;
  page += "</main></body></html>";
  return page;
}

}  // namespace skilldb::server::internal
