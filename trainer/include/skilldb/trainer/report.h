// `skilldb train report RUN_DIR`: charts of a run from RUN_DIR/steps.jsonl
// (one JSON object per step, as the trainer writes them), drawn with
// matplotlib by trainer/tools/report.py, and a self-contained HTML page
// embedding them, everything quoted from the run escaped.
//
// Charts: reward per agent, speedups, the Summary Agent's skills
// (proposed, rejected, added), the library's size, the return of rollouts
// with and without a skill written during the run, per-skill utility.
#ifndef SKILLDB_TRAINER_REPORT_H_
#define SKILLDB_TRAINER_REPORT_H_

#include <string>
#include <string_view>
#include <vector>

#include "skilldb/status.h"
#include "skilldb/util/file.h"

namespace skilldb::trainer {

struct ReportResult {
  int steps = 0;                   // step lines read
  // Lines of steps.jsonl left out, each "line N: why" (a run killed while
  // writing leaves a torn last line; a hand-edited file, anything).
  std::vector<std::string> dropped;
  std::vector<std::string> files;  // written, absolute or as given
  std::string html_path;
};

struct ReportOptions {
  // The report script (trainer/tools/report.py).
  std::string script;
  // A Python 3 with matplotlib (Debian's python3-matplotlib is for
  // /usr/bin/python3).
  std::string python = "/usr/bin/python3";
};

// The script of this build ($SKILLDB_TRAINER_TOOLS/report.py overrides it)
// and $SKILLDB_PYTHON, else /usr/bin/python3.
ReportOptions DefaultReportOptions();

// Reads RUN_DIR/steps.jsonl and writes the charts (PNG) and report.html
// into RUN_DIR. Lines that are not step objects (a torn last line,
// garbage) are left out and listed in `dropped` (and on the page).
// Errors: NotFound (no steps.jsonl), InvalidArgument when no line is a
// step object, Unavailable when the script cannot run (no Python with
// matplotlib: scripts/setup.sh installs it).
Result<ReportResult> WriteReport(const std::string& run_dir,
                                 const ReportOptions& options =
                                     DefaultReportOptions());

// The trainer's names for the shared file helpers (skilldb/util/file.h).
using util::MakeDirs;
using util::ReadFile;
// Replaces `path` atomically with `bytes`.
inline Status WriteFile(const std::string& path, std::string_view bytes) {
  return util::WriteFileAtomic(path, bytes);
}

}  // namespace skilldb::trainer

#endif  // SKILLDB_TRAINER_REPORT_H_
