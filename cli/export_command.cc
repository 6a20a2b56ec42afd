#include <filesystem>

#include "context.h"
#include "files.h"

namespace skilldb::cli {
namespace {

// The number of skills live at `version` (0 if unknown), for progress.
uint64_t SkillsAt(Library& library, std::optional<Version> version) {
  auto commit = library.GetCommit(version.value_or(library.CurrentVersion()));
  return commit.ok() ? commit->num_skills : 0;
}

// Writes every skill as of `as_of` to `out` as JSONL; `name` is what a
// write error calls `out` ("stdout", "'file.tmp'").
Status WriteJsonl(Library& library, std::optional<Version> as_of,
                  std::ostream& out, const std::string& name,
                  Progress& progress, uint64_t* count) {
  const uint64_t total = SkillsAt(library, as_of);
  Status s = library.Scan(ReadOptions{.as_of = as_of}, [&](const Skill& skill) {
    out << SkillToJson(skill) << "\n";
    progress.Update(++*count, total);
    return out.good();
  });
  // A write that failed stopped the scan: that is the error to report.
  Status written = StreamStatus(out, name);
  return written.ok() ? s : written;
}

// Export to a file: written beside the target and renamed, so a failed
// export never leaves a half-written file under the requested name.
Status ExportToFile(Library& library, const ExportArgs& a, Progress& progress,
                    uint64_t* count) {
  const std::string tmp = a.output + ".tmp";
  SKILLDB_ASSIGN_OR_RETURN(auto file, OutputFile::Create(tmp));
  Status s = WriteJsonl(library, a.as_of, file->stream(), "'" + tmp + "'",
                        progress, count);
  Status closed = file->Close();
  if (s.ok()) s = closed;
  std::error_code ec;
  if (s.ok()) {
    std::filesystem::rename(tmp, a.output, ec);
    if (ec) {
      s = Status::IOError("cannot rename '" + tmp + "' to '" + a.output +
                          "': " + ec.message());
    }
  }
  if (!s.ok()) std::filesystem::remove(tmp, ec);
  return s;
}

}  // namespace

int RunExport(const GlobalArgs& g, const ExportArgs& a, const Io& io) {
  if (!a.sqlite.empty()) {
    if (!a.output.empty()) {
      return Fail(
          g, io,
          Status::InvalidArgument("give --sqlite or --output, not both"));
    }
    return RunExportSqlite(g, a, io);
  }
  auto library = OpenLibrary(g, /*read_only=*/true, io);
  if (!library.ok()) return Fail(g, io, library.status());
  Progress progress(g.progress, io.err, "exporting", "skills");
  uint64_t count = 0;
  Status s = a.output.empty() ? WriteJsonl(**library, a.as_of, *io.out,
                                           "stdout", progress, &count)
                              : ExportToFile(**library, a, progress, &count);
  progress.Finish();
  if (!s.ok()) return Fail(g, io, s);
  if (!a.output.empty()) {
    if (g.json) {
      PrintJson(io, Json{{"skills", count}, {"output", a.output}});
    } else {
      *io.out << "exported " << count << " skills to " << EscapeLine(a.output)
              << "\n";
    }
  }
  return kExitOk;
}

}  // namespace skilldb::cli
