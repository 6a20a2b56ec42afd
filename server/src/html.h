// HTML helpers of the read-only web page: escaping, highlighted search hits
// and code, an SVG chart of speedup intervals, and line diffs. Internal.
//
// Everything the library holds is untrusted (skills are written by models):
// every function here escapes all text it is given, and its output is safe
// to place in an HTML element body. Pure functions; thread-safe.
#ifndef SKILLDB_SERVER_HTML_H_
#define SKILLDB_SERVER_HTML_H_

#include <string>
#include <string_view>
#include <vector>

namespace skilldb::server::internal {

// & < > " ' as entities. Control characters other than tab and newline
// become U+FFFD; invalid UTF-8 is left to the browser's replacement.
std::string HtmlEscape(std::string_view text);

// The words of a query worth highlighting: lower-case runs of letters and
// digits, two characters or more.
std::vector<std::string> QueryWords(std::string_view query);

// `text` escaped, with every word that matches one of `words` (case
// folded, common English suffixes dropped: "tiling" matches "tile")
// wrapped in <mark>.
std::string HighlightWords(std::string_view text,
                           const std::vector<std::string>& words);

// `code` escaped, with <span class="k|c|s|n"> around keywords (C++, CUDA,
// Python/Triton), comments, string literals and numbers.
std::string HighlightCode(std::string_view code);

// One speedup interval of the evidence chart.
struct Interval {
  std::string label;
  double low = 0, point = 0, high = 0;
  std::vector<double> rounds;  // per-round ratios, drawn as dots
};
// An inline SVG: one row per interval on a shared axis that includes 1.0
// (no speedup), drawn as a dashed line.
std::string IntervalChart(const std::vector<Interval>& intervals);

// A line diff of `before` and `after` (longest common subsequence), as
// escaped lines with class "add" or "del" (context lines unmarked).
// Texts over `max_lines` lines are summarized instead.
std::string LineDiff(std::string_view before, std::string_view after,
                     size_t max_lines = 400);

// A whole page: the shared style, the navigation, `title` (escaped) and
// `body_html` (already safe).
std::string Page(std::string_view title, std::string_view body_html);

}  // namespace skilldb::server::internal

#endif  // SKILLDB_SERVER_HTML_H_
