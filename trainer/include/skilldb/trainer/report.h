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

// Reads RUN_DIR/steps.jsonl and writes reward.png, speedup.png,
// skills.png, library.png and report.html into RUN_DIR. Lines that are not
// step objects (a torn last line, garbage) are left out and listed in
// `dropped` (and on the page). Errors: NotFound (no steps.jsonl),
// InvalidArgument when no line is a step object, IOError for a file that
// cannot be written.
Result<ReportResult> WriteReport(const std::string& run_dir);

// `text` with & < > " ' as HTML character references: safe inside element
// content and quoted attributes. Every string from steps.jsonl (agent names
// are keys a run writes) goes through it.
std::string HtmlEscape(std::string_view text);

// The trainer's names for the shared file helpers (skilldb/util/file.h).
using util::MakeDirs;
using util::ReadFile;
// Replaces `path` atomically with `bytes`.
inline Status WriteFile(const std::string& path, std::string_view bytes) {
  return util::WriteFileAtomic(path, bytes);
}

}  // namespace skilldb::trainer

#endif  // SKILLDB_TRAINER_REPORT_H_
