// `skilldb train report RUN_DIR`: charts of a run from RUN_DIR/steps.jsonl
// (one JSON object per step, as the trainer writes them) as PNG files and a
// self-contained HTML page embedding them (base64 data URIs).
//
// Charts: reward per agent (mean per step), speedups (mean and best of the
// policy's correct samples per step), skills added per step, library size
// over library versions.
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

// Reads RUN_DIR/steps.jsonl and writes reward.png, speedup.png,
// skills.png, library.png and report.html into RUN_DIR. Errors: NotFound
// (no steps.jsonl), InvalidArgument naming the line that is not a step
// object, IOError for a file that cannot be written.
Result<ReportResult> WriteReport(const std::string& run_dir);

// Small file helpers (POSIX stdio; no std::filesystem, see README).
Result<std::string> ReadFile(const std::string& path);
Status WriteFile(const std::string& path, const std::string& bytes);
// mkdir -p.
Status MakeDirs(const std::string& path);

}  // namespace skilldb::trainer

#endif  // SKILLDB_TRAINER_REPORT_H_
