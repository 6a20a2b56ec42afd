// `skilldb train report` (see report.h): trainer/tools/report.py run as a
// child process, its one-line JSON result read back.
#include "skilldb/trainer/report.h"

#include <spawn.h>
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
  for (const auto& d : j.value("dropped", json::array())) {
    if (d.is_string()) r.dropped.push_back(d.get<std::string>());
  }
  r.html_path = j.value("html", "");
  return r;
}

}  // namespace skilldb::trainer
