#include "skilldb/trainer/report.h"

#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <utility>

#ifndef SKILLDB_TRAINER_TOOLS_DIR
#define SKILLDB_TRAINER_TOOLS_DIR ""
#endif

extern char** environ;

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

// Runs argv with stdout and stderr into one pipe; returns (exit status,
// output). Unavailable when it cannot start.
Result<std::pair<int, std::string>> RunCapture(
    const std::vector<std::string>& args) {
  int fds[2];
  if (::pipe(fds) != 0) return Status::IOError(std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int err =
      ::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (err != 0) {
    ::close(fds[0]);
    return Status::Unavailable("cannot run " + args[0] + ": " +
                               std::strerror(err));
  }
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return std::make_pair(WIFEXITED(status) ? WEXITSTATUS(status) : 128, out);
}

std::string LastLine(const std::string& text) {
  size_t end = text.find_last_not_of("\n");
  if (end == std::string::npos) return "";
  const size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1,
                     end - (start == std::string::npos ? 0 : start + 1) + 1);
}

}  // namespace

ReportOptions DefaultReportOptions() {
  ReportOptions o;
  const char* tools = std::getenv("SKILLDB_TRAINER_TOOLS");
  o.script = std::string(tools && *tools ? tools : SKILLDB_TRAINER_TOOLS_DIR) +
             "/report.py";
  const char* py = std::getenv("SKILLDB_PYTHON");
  if (py && *py) o.python = py;
  return o;
}

Result<ReportResult> WriteReport(const std::string& run_dir,
                                 const ReportOptions& options) {
  const std::string steps_path = run_dir + "/steps.jsonl";
  if (::access(steps_path.c_str(), R_OK) != 0) {
    return Status::NotFound(steps_path + ": no such file");
  }
  SKILLDB_ASSIGN_OR_RETURN(auto ran,
                           RunCapture({options.python, options.script, run_dir}));
  const auto& [code, out] = ran;
  if (code != 0) {
    const std::string why = LastLine(out);
    if (why.rfind("report: ", 0) == 0) {
      return Status::InvalidArgument(why.substr(8));
    }
    return Status::Unavailable(
        options.script + " failed (exit " + std::to_string(code) +
        "; it needs " + options.python +
        " with matplotlib: scripts/setup.sh installs python3-matplotlib): " +
        why);
  }
  json j = json::parse(LastLine(out), nullptr, false);
  if (!j.is_object() || !j.value("steps", json()).is_number_integer()) {
    return Status::Internal(options.script + " printed no result: " +
                            LastLine(out));
  }
  ReportResult r;
  r.steps = j["steps"].get<int>();
  for (const auto& f : j.value("files", json::array())) {
    if (f.is_string()) r.files.push_back(f.get<std::string>());
  }
  r.html_path = j.value("html", "");
  return r;
}

}  // namespace skilldb::trainer
