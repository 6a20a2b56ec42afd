#include "skilldb/trainer/report.h"

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "skilldb/trainer/png.h"

namespace skilldb::trainer {

using nlohmann::json;

Result<std::string> ReadFile(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    if (errno == ENOENT) return Status::NotFound(path + ": no such file");
    return Status::IOError(path + ": " + std::strerror(errno));
  }
  std::string out;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  const bool bad = std::ferror(f);
  std::fclose(f);
  if (bad) return Status::IOError(path + ": read failed");
  return out;
}

Status WriteFile(const std::string& path, const std::string& bytes) {
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return Status::IOError(tmp + ": " + std::strerror(errno));
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  if (std::fclose(f) != 0 || !ok) {
    std::remove(tmp.c_str());
    return Status::IOError(path + ": write failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return Status::IOError(path + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

Status MakeDirs(const std::string& path) {
  if (path.empty()) return Status::InvalidArgument("empty directory path");
  std::string cur;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    cur = path.substr(0, pos);
    if (cur.empty()) continue;
    if (::mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST) {
      return Status::IOError(cur + ": " + std::strerror(errno));
    }
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::IOError(path + ": not a directory");
  }
  return Status::Ok();
}

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

}  // namespace

Result<ReportResult> WriteReport(const std::string& run_dir) {
  const std::string steps_path = run_dir + "/steps.jsonl";
  SKILLDB_ASSIGN_OR_RETURN(std::string text, ReadFile(steps_path));
  std::vector<json> steps;
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object() || !j.contains("step") ||
        !j["step"].is_number()) {
      return Status::InvalidArgument(steps_path + ":" +
                                     std::to_string(line_no) +
                                     ": not a step object (needs \"step\")");
    }
    steps.push_back(std::move(j));
  }

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
  std::string html =
      "<!doctype html><html><head><meta charset=\"utf-8\"><title>skilldb "
      "training run</title><style>body{font-family:sans-serif;margin:2em}"
      "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:"
      "2px 6px;font-size:12px}</style></head><body><h1>Training run</h1><p>" +
      std::to_string(steps.size()) + " steps from steps.jsonl</p>";
  for (const Chart& c : charts) {
    ChartRange range;
    Image img = LineChart(c.series, {}, &range);
    std::string png = EncodePng(img);
    const std::string path = run_dir + "/" + c.file;
    SKILLDB_RETURN_IF_ERROR(WriteFile(path, png));
    result.files.push_back(path);
    html += "<h2>" + c.title + "</h2><img alt=\"" + c.title +
            "\" src=\"data:image/png;base64," + Base64(png) + "\"><p>";
    for (const Series& s : c.series) {
      html += "<span style=\"color:" + Hex(s.color) + "\">&#9632; " + s.name +
              "</span> ";
    }
    html += "<br>x (" + c.x_label + "): " + Fmt(range.x_min) + " to " +
            Fmt(range.x_max) + "; y (" + c.y_label + "): " + Fmt(range.y_min) +
            " to " + Fmt(range.y_max) + "</p>";
  }
  html += "<h2>Steps</h2><table><tr><th>step</th><th>json</th></tr>";
  for (const json& s : steps) {
    std::string row = s.dump();
    std::string esc;
    for (char ch : row) {
      if (ch == '<')
        esc += "&lt;";
      else if (ch == '&')
        esc += "&amp;";
      else
        esc += ch;
    }
    html += "<tr><td>" + Fmt(s["step"].get<double>()) + "</td><td><code>" +
            esc + "</code></td></tr>";
  }
  html += "</table></body></html>\n";
  result.html_path = run_dir + "/report.html";
  SKILLDB_RETURN_IF_ERROR(WriteFile(result.html_path, html));
  result.files.push_back(result.html_path);
  return result;
}

}  // namespace skilldb::trainer
