// skilldb kernelbench import: problem files -> the task store, through a
// confined inspect runner (the problem's module runs there: its inputs,
// its model twice for the degenerate-problem screen).
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <tuple>

#include "file_util.h"
#include "kb_internal.h"
#include "skilldb/util/parallel.h"

namespace skilldb::verify::kb {
namespace {

using internal::json;
using internal::BaseName;
using internal::IsDirectory;
using internal::ListDir;
using internal::ParentDir;
using verify::internal::JoinPath;

struct ProblemFile {
  int level = 0;
  int id = 0;
  std::string file;  // name with .py
  std::string path;
};

// A runner's error that says the device (or host) ran out of memory.
bool OutOfMemory(const std::string& error) {
  std::string e = error;
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return std::tolower(c); });
  return e.find("out of memory") != std::string::npos ||
         e.find("outofmemoryerror") != std::string::npos;
}

int LevelOf(const std::string& dir_name) {
  if (dir_name.rfind("level", 0) != 0) return 0;
  const std::string d = dir_name.substr(5);
  if (d.empty() || d.find_first_not_of("0123456789") != std::string::npos) return 0;
  return std::atoi(d.c_str());
}


// The problem files under `path`, and the checkout root if it is one.
Result<std::vector<ProblemFile>> FindProblems(const ImportOptions& o, std::string* root,
                                              std::vector<Unimportable>* bad) {
  std::vector<std::pair<int, std::string>> level_dirs;
  const std::string path = o.path;
  if (!IsDirectory(path)) {
    if (!verify::internal::FileExists(path)) {
      return Status::NotFound("no such file or directory: " + path);
    }
    const int level = o.level > 0 ? o.level : LevelOf(BaseName(ParentDir(path)));
    if (level == 0) {
      return Status::InvalidArgument(path + " is not in a level<N> folder: give --level");
    }
    const std::string file = BaseName(path);
    const int id = std::atoi(file.c_str());
    if (id <= 0) {
      return Status::InvalidArgument(file + " does not start with a problem number");
    }
    return std::vector<ProblemFile>{{level, id, file, path}};
  }
  std::string kb_dir;
  if (IsDirectory(JoinPath(path, "KernelBench"))) {
    kb_dir = JoinPath(path, "KernelBench");
    *root = path;
  } else if (LevelOf(BaseName(path)) > 0) {
    level_dirs.push_back({LevelOf(BaseName(path)), path});
    if (BaseName(ParentDir(path)) == "KernelBench") *root = ParentDir(ParentDir(path));
  } else {
    kb_dir = path;
    if (BaseName(path) == "KernelBench") *root = ParentDir(path);
  }
  if (!kb_dir.empty()) {
    for (const std::string& e : ListDir(kb_dir)) {
      if (LevelOf(e) > 0 && IsDirectory(JoinPath(kb_dir, e))) {
        level_dirs.push_back({LevelOf(e), JoinPath(kb_dir, e)});
      }
    }
  }
  if (!root->empty() &&
      !verify::internal::FileExists(
          JoinPath(*root, "src/kernelbench/kernel_static_checker.py"))) {
    root->clear();
  }
  SKILLDB_ASSIGN_OR_RETURN(std::vector<int> ids, ParseIdList(o.problems));
  std::vector<ProblemFile> out;
  for (const auto& [level, dir] : level_dirs) {
    if (o.level > 0 && level != o.level) continue;
    for (const std::string& f : ListDir(dir)) {
      if (f.size() < 4 || f.compare(f.size() - 3, 3, ".py") != 0) continue;
      const std::string head = f.substr(0, f.find('_'));
      if (head.empty() || head.find_first_not_of("0123456789") != std::string::npos) {
        bad->push_back({level, 0, f, "the file name does not start with a problem number "
                                     "(KernelBench's loader skips it too)"});
        continue;
      }
      const int id = std::atoi(head.c_str());
      if (!InIdList(ids, id)) continue;
      out.push_back({level, id, f, JoinPath(dir, f)});
    }
  }
  if (out.empty()) {
    return Status::NotFound("no KernelBench problems under " + path +
                            (o.problems.empty() ? "" : " with ids " + o.problems));
  }
  return out;
}

Problem FromReply(const ProblemFile& f, const std::string& source, const json& h,
                  const ImportOptions& o, const std::string& root) {
  Problem p;
  p.level = f.level;
  p.id = f.id;
  p.name = f.file;
  p.source = source;
  p.source_path = f.path;
  p.kernelbench_root = root;
  p.code_hash = h.value("code_hash", "");
  p.init_inputs_json = internal::Dump(h.value("init_inputs", json::array()));
  p.inputs = internal::SpecsFromJson(h.value("spec", json::array()));
  p.precision = o.precision;
  p.tolerance = ToleranceFor(o.precision).value_or(1e-4);
  p.input_bytes = h.value("input_bytes", int64_t{-1});
  p.flops = h.value("flops", int64_t{-1});
  const json screen = h.value("screen", json::object());
  if (screen.contains("skipped")) {
    p.degenerate = "unknown";
    p.degenerate_reason = "not screened: " + screen.value("skipped", "");
  } else if (screen.value("degenerate", false)) {
    p.degenerate = "yes";
    p.degenerate_reason = screen.value("reason", "");
  } else {
    p.degenerate = "no";
    p.degenerate_reason = screen.value("note", "");
  }
  return p;
}

}  // namespace

Result<ImportSummary> ImportProblems(const ImportOptions& o, TaskStore* store) {
  SKILLDB_RETURN_IF_ERROR(ToleranceFor(o.precision).status());
  std::string root;
  ImportSummary summary;
  SKILLDB_ASSIGN_OR_RETURN(std::vector<ProblemFile> files,
                           FindProblems(o, &root, &summary.skipped));
  // By level and id (a directory lists 10_ before 1_ and 2_).
  std::stable_sort(files.begin(), files.end(), [](const ProblemFile& a, const ProblemFile& b) {
    return a.level != b.level ? a.level < b.level : a.id < b.id;
  });
  RunnerOptions ro = WithDefaults(o.runner);
  std::shared_ptr<internal::BytecodeFill> fill;  // joined when the import ends
  if (!o.bytecode_dir.empty())
    fill = internal::UseBytecodeCache(&ro, o.bytecode_dir);
  internal::RunnerStart start;
  start.role = "inspect";
  start.device = ro.device;
  std::map<int, std::vector<Unimportable>> failed;
  for (const Unimportable& u : summary.skipped) failed[u.level].push_back(u);
  // Each worker inspects the next file with its own runner; what they find
  // is kept by file index, so the summary is in id order whatever the
  // order they finish in.
  // A problem that ran out of memory beside others (or whose runner could
  // not start for it) is inspected again at the end, alone, and its runner
  // stops: the import backs off to fewer runners when the device is full.
  std::vector<std::optional<Problem>> imported(files.size());
  std::mutex mu;       // guards failed, retry, first_error, done, store, progress
  Status first_error;  // a runner that cannot start stops the import
  std::vector<size_t> order(files.size()), retry;
  for (size_t i = 0; i < files.size(); ++i) order[i] = i;
  std::atomic<size_t> next{0};
  bool shared = false;  // other runners inspect at the same time
  int done = 0;
  auto work = [&]() {
    std::unique_ptr<internal::Runner> runner;
    for (size_t k = next++; k < order.size(); k = next++) {
      const size_t i = order[k];
      const ProblemFile& f = files[i];
      {
        std::lock_guard<std::mutex> lock(mu);
        if (!first_error.ok()) return;
      }
      auto text = verify::internal::ReadFile(f.path, 8 << 20);
      if (!text.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        ++done;
        failed[f.level].push_back({f.level, f.id, f.file, text.status().message()});
        continue;
      }
      if (!runner || !runner->alive()) {
        auto r = internal::Runner::Start(ro, start);
        if (!r.ok()) {
          std::lock_guard<std::mutex> lock(mu);
          if (shared && OutOfMemory(r.status().message())) {
            // The device is full of the other runners' problems: one
            // runner fewer from now on; this problem waits for the end.
            retry.push_back(i);
            return;
          }
          if (first_error.ok()) first_error = r.status();
          return;
        }
        runner = std::move(*r);
      }
      internal::Reply reply = runner->Request({{"op", "inspect"},
                                               {"problem", *text},
                                               {"seed", 42},
                                               {"precision", o.precision},
                                               {"max_screen_bytes", o.max_screen_bytes}},
                                              "", o.timeout_s);
      const std::string line = "level " + std::to_string(f.level) + " problem " +
                               std::to_string(f.id) + " (" + f.file + "): ";
      if (!reply.answered_ok()) {
        const std::string why = reply.error_text(1500);
        if (!reply.ok) runner.reset();  // it died or hung: a fresh one next
        std::lock_guard<std::mutex> lock(mu);
        if (shared && OutOfMemory(why)) {
          // Inspected again alone at the end; one runner fewer from now on.
          retry.push_back(i);
          if (o.progress) o.progress(line + "out of memory beside other problems: again alone");
          return;
        }
        ++done;
        failed[f.level].push_back({f.level, f.id, f.file, why});
        if (o.progress) o.progress(line + "not imported: " + why);
        continue;
      }
      Problem p = FromReply(f, *text, reply.header, o, root);
      std::lock_guard<std::mutex> lock(mu);
      ++done;
      const Status put = store->Put(p);
      if (!put.ok()) {
        if (first_error.ok()) first_error = put;
        return;
      }
      if (o.progress) {
        o.progress(line + "imported" +
                   (p.degenerate == "yes" ? ", degenerate: " + p.degenerate_reason
                    : p.degenerate == "unknown" ? " (" + p.degenerate_reason + ")"
                                                : "") +
                   " [" + std::to_string(done) + "/" + std::to_string(files.size()) + "]");
      }
      imported[i] = std::move(p);
    }
  };
  int jobs = o.jobs > 0 ? o.jobs
                        : std::clamp(static_cast<int>(std::thread::hardware_concurrency()) / 4, 1, 8);
  jobs = std::max(1, std::min<int>(jobs, static_cast<int>(files.size())));
  shared = jobs > 1;
  util::RunOnThreads(static_cast<size_t>(jobs), work);
  // Then alone: the problems that ran out of memory, and any no runner
  // took because every one stopped at an out-of-memory.
  for (size_t k = std::min(next.load(), order.size()); k < order.size(); ++k) {
    retry.push_back(order[k]);
  }
  if (first_error.ok() && !retry.empty()) {
    std::sort(retry.begin(), retry.end());
    order = retry;
    next = 0;
    shared = false;
    work();
  }
  if (!first_error.ok()) return first_error;
  for (auto& [level, list] : failed) {
    std::sort(list.begin(), list.end(), [](const Unimportable& a, const Unimportable& b) {
      return std::tie(a.id, a.file) < std::tie(b.id, b.file);
    });
  }
  for (std::optional<Problem>& p : imported) {
    if (p) summary.imported.push_back(std::move(*p));
  }
  // Each level's list of problems that could not be imported: this import's
  // failures replace earlier entries for the same files.
  std::map<int, bool> levels;
  for (const ProblemFile& f : files) levels[f.level] = true;
  for (auto& [level, list] : failed) levels[level] = true;
  for (const auto& entry : levels) {
    const int level = entry.first;  // a structured binding: clang 14 cannot capture it
    SKILLDB_ASSIGN_OR_RETURN(std::vector<Unimportable> old, store->ListUnimportable(level));
    std::vector<Unimportable> merged;
    for (const Unimportable& u : old) {
      const bool redone = std::any_of(files.begin(), files.end(), [&](const ProblemFile& f) {
        return f.level == level && f.file == u.file;
      });
      if (!redone) merged.push_back(u);
    }
    for (const Unimportable& u : failed[level]) {
      merged.push_back(u);
      summary.skipped.push_back(u);
    }
    SKILLDB_RETURN_IF_ERROR(store->PutUnimportable(level, merged));
  }
  // The early-skipped (bad file names) were added twice.
  std::sort(summary.skipped.begin(), summary.skipped.end(),
            [](const Unimportable& a, const Unimportable& b) {
              return std::tie(a.level, a.id, a.file) < std::tie(b.level, b.id, b.file);
            });
  summary.skipped.erase(std::unique(summary.skipped.begin(), summary.skipped.end(),
                                    [](const Unimportable& a, const Unimportable& b) {
                                      return a.level == b.level && a.file == b.file;
                                    }),
                        summary.skipped.end());
  return summary;
}

}  // namespace skilldb::verify::kb
