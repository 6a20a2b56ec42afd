#include "skilldb/trainer/report.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "skilldb/trainer/png.h"
#include "skilldb/util/json.h"

namespace skilldb::trainer {

using nlohmann::json;

namespace {

const uint32_t kColors[] = {0x1f77b4, 0xd62728, 0x2ca02c,
                            0xff7f0e, 0x9467bd, 0x8c564b};

double Num(const json& j, const char* a, const char* b = nullptr) {
  if (!j.is_object() || !j.contains(a)) return NAN;
  const json* v = &j[a];
  if (b) {
    if (!v->is_object() || !v->contains(b)) return NAN;
    v = &(*v)[b];
  }
  return v->is_number() ? v->get<double>() : NAN;
}

std::string Hex(uint32_t c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%06x", c);
  return buf;
}

std::string Fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

struct Chart {
  std::string file, title, x_label, y_label;
  std::vector<Series> series;
};

// The step objects of steps.jsonl, and the lines dropped: unparsable ones
// (a run killed mid-write leaves a torn last line) and objects without a
// numeric "step".
struct StepLines {
  std::vector<json> steps;
  std::vector<std::string> dropped;
};

StepLines ReadStepLines(const std::string& text) {
  StepLines out;
  size_t pos = 0;
  int line_no = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    const bool last = end == std::string::npos;
    if (last) end = text.size();
    const std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    auto j = util::ParseUntrustedJson(line, "step line");
    std::string why;
    if (!j.ok()) {
      why = last ? "torn last line (" + std::to_string(line.size()) +
                       " bytes without a newline)"
                 : "not JSON";
    } else if (!j->is_object() || !j->contains("step") ||
               !(*j)["step"].is_number()) {
      why = "not a step object (needs a numeric \"step\")";
    }
    if (!why.empty()) {
      out.dropped.push_back("line " + std::to_string(line_no) + ": " + why);
      continue;
    }
    out.steps.push_back(std::move(*j));
  }
  return out;
}

}  // namespace

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
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
        out += c;
    }
  }
  return out;
}

Result<ReportResult> WriteReport(const std::string& run_dir) {
  const std::string steps_path = run_dir + "/steps.jsonl";
  SKILLDB_ASSIGN_OR_RETURN(std::string text, util::ReadFile(steps_path));
  StepLines lines = ReadStepLines(text);
  if (lines.steps.empty()) {
    return Status::InvalidArgument(
        steps_path + ": no step line" +
        (lines.dropped.empty() ? "" : " (" + lines.dropped.front() + ")"));
  }
  const std::vector<json>& steps = lines.steps;

  std::vector<Chart> charts(4);
  charts[0] = {"reward.png", "Mean reward per agent", "step", "reward", {}};
  charts[1] = {"speedup.png",
               "Policy speedups (correct samples)",
               "step",
               "speedup",
               {}};
  charts[2] = {"skills.png", "Skills added per step", "step", "skills", {}};
  charts[3] = {"library.png",
               "Library size over versions",
               "library version",
               "skills",
               {}};
  std::map<std::string, Series> per_agent;
  Series sp_mean{"mean speedup", kColors[0], {}, false};
  Series sp_best{"best speedup", kColors[1], {}, false};
  Series added{"skills added", kColors[2], {}, true};
  Series lib{"library size", kColors[4], {}, false};
  for (const json& s : steps) {
    const double step = s["step"].get<double>();
    if (s.contains("reward") && s["reward"].is_object()) {
      for (auto& [agent, v] : s["reward"].items()) {
        double m = Num(s["reward"], agent.c_str(), "mean");
        if (!std::isfinite(m)) continue;
        auto& series = per_agent[agent];
        series.name = agent;
        series.points.push_back({step, m});
      }
    }
    sp_mean.points.push_back({step, Num(s, "speedup", "mean")});
    sp_best.points.push_back({step, Num(s, "speedup", "best")});
    added.points.push_back({step, Num(s, "skills_added")});
    lib.points.push_back(
        {Num(s, "library", "version"), Num(s, "library", "size")});
  }
  size_t ci = 0;
  for (auto& [agent, series] : per_agent) {
    series.color = kColors[ci++ % 6];
    charts[0].series.push_back(series);
  }
  charts[1].series = {sp_mean, sp_best};
  charts[2].series = {added};
  charts[3].series = {lib};

  ReportResult result;
  result.steps = static_cast<int>(steps.size());
  result.dropped = lines.dropped;
  std::string html =
      "<!doctype html><html><head><meta charset=\"utf-8\"><title>skilldb "
      "training run</title><style>body{font-family:sans-serif;margin:2em}"
      "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:"
      "2px 6px;font-size:12px}</style></head><body><h1>Training run</h1><p>" +
      std::to_string(steps.size()) + " steps from steps.jsonl</p>";
  for (const std::string& d : result.dropped) {
    html += "<p>dropped from steps.jsonl: " + HtmlEscape(d) + "</p>";
  }
  for (const Chart& c : charts) {
    ChartRange range;
    Image img = LineChart(c.series, {}, &range);
    std::string png = EncodePng(img);
    const std::string path = run_dir + "/" + c.file;
    SKILLDB_RETURN_IF_ERROR(util::WriteFileAtomic(path, png));
    result.files.push_back(path);
    html += "<h2>" + HtmlEscape(c.title) + "</h2><img alt=\"" +
            HtmlEscape(c.title) +
            "\" src=\"data:image/png;base64," + Base64(png) + "\"><p>";
    for (const Series& s : c.series) {
      html += "<span style=\"color:" + Hex(s.color) + "\">&#9632; " +
              HtmlEscape(s.name) + "</span> ";
    }
    html += "<br>x (" + HtmlEscape(c.x_label) + "): " + Fmt(range.x_min) +
            " to " + Fmt(range.x_max) + "; y (" + HtmlEscape(c.y_label) +
            "): " + Fmt(range.y_min) + " to " + Fmt(range.y_max) + "</p>";
  }
  html += "<h2>Steps</h2><table><tr><th>step</th><th>json</th></tr>";
  for (const json& s : steps) {
    html += "<tr><td>" + Fmt(s["step"].get<double>()) + "</td><td><code>" +
            HtmlEscape(util::DumpLossy(s)) + "</code></td></tr>";
  }
  html += "</table></body></html>\n";
  result.html_path = run_dir + "/report.html";
  SKILLDB_RETURN_IF_ERROR(util::WriteFileAtomic(result.html_path, html));
  result.files.push_back(result.html_path);
  return result;
}

}  // namespace skilldb::trainer
