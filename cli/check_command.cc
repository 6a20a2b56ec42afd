#include "context.h"

namespace skilldb::cli {

// `skilldb check`: Library::Check, read-only. A library that cannot even be
// opened because of damage is a failed check (exit 2) with the reason as its
// problem; one that does not exist is a user error (exit 1).
int RunCheck(const GlobalArgs& g, const Io& io) {
  CheckReport report;
  std::string path;
  auto library = OpenLibrary(g, /*read_only=*/true, io);
  if (!library.ok()) {
    const StatusCode code = library.status().code();
    if (code != StatusCode::kCorruption && code != StatusCode::kIOError) {
      return Fail(g, io, library.status());
    }
    report.problems.push_back(library.status().message());
  } else {
    path = (*library)->Info().path;
    auto checked = (*library)->Check();
    if (!checked.ok()) return Fail(g, io, checked.status());
    report = std::move(*checked);
  }
  if (g.json) {
    Json j{{"ok", report.ok()},
           {"tables", report.tables},
           {"table_bytes", report.table_bytes},
           {"segments", report.segments},
           {"skills", report.skills},
           {"problems", report.problems}};
    if (!path.empty()) j["path"] = path;
    PrintJson(io, j);
  } else if (report.ok()) {
    *io.out << "ok: " << report.tables << " table files (" << report.table_bytes
            << " bytes) verified, " << report.segments << " index segments, "
            << report.skills << " skills match the index\n";
  } else {
    *io.out << "damaged: " << report.problems.size() << " problem(s)\n";
    for (const std::string& p : report.problems) {
      *io.out << "  " << EscapeLine(p) << "\n";
    }
  }
  if (!report.ok()) {
    *io.err << "skilldb: error: the library is damaged ("
            << report.problems.size() << " problem(s))\n";
    return kExitInternalError;
  }
  return kExitOk;
}

}  // namespace skilldb::cli
