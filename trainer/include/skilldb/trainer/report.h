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
#include <vector>

#include "skilldb/status.h"

namespace skilldb::trainer {

struct ReportResult {
  int steps = 0;                   // step lines read
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

// Writes the charts (PNG) and report.html into RUN_DIR. Errors: NotFound
// (no steps.jsonl), InvalidArgument with the script's message (a line that
// is not a step object, named by its number), Unavailable when the script
// cannot run (no Python with matplotlib: scripts/setup.sh installs it).
Result<ReportResult> WriteReport(const std::string& run_dir,
                                 const ReportOptions& options =
                                     DefaultReportOptions());

// Small file helpers (POSIX stdio; no std::filesystem, see README).
Result<std::string> ReadFile(const std::string& path);
Status WriteFile(const std::string& path, const std::string& bytes);
// mkdir -p.
Status MakeDirs(const std::string& path);

}  // namespace skilldb::trainer

#endif  // SKILLDB_TRAINER_REPORT_H_
