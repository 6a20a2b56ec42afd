#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "kb_internal.h"

namespace skilldb::verify::kb::internal {

std::string Num(double v, const char* fmt) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), fmt, v);
  return buf;
}

namespace {
// Static initialization, before main: the process's start, near enough.
const util::SteadyClock::time_point kProcessStart = util::SteadyClock::now();
}  // namespace

double ProcessMs(util::SteadyClock::time_point t) {
  return std::chrono::duration<double, std::milli>(t - kProcessStart).count();
}

void AddSpan(PhaseSplit* split, std::string name,
             util::SteadyClock::time_point start,
             util::SteadyClock::time_point end) {
  if (split->spans.size() >= PhaseSplit::kMaxSpans) {
    ++split->spans_dropped;
    return;
  }
  split->spans.push_back({std::move(name), ProcessMs(start), ProcessMs(end)});
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(n);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

std::string BaseName(const std::string& path) {
  std::string s = path;
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  const size_t slash = s.rfind('/');
  return slash == std::string::npos ? s : s.substr(slash + 1);
}

std::string ParentDir(const std::string& path) {
  std::string s = path;
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  const size_t slash = s.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : s.substr(0, slash);
}

double Round3(double v) { return std::strtod(Num(v).c_str(), nullptr); }

double Mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

}  // namespace skilldb::verify::kb::internal
