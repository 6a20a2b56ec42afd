#include <fstream>

#include "context.h"

namespace skilldb::cli {

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
  std::ofstream file;
  std::ostream* out = io.out;
  std::string tmp;
  if (!a.output.empty()) {
    // Write beside the target and rename, so a failed export never leaves
    // a half-written file under the requested name.
    tmp = a.output + ".tmp";
    file.open(tmp, std::ios::binary | std::ios::trunc);
    if (!file) {
      return Fail(g, io, Status::IOError("cannot write '" + a.output + "'"));
    }
    out = &file;
  }
  uint64_t count = 0;
  Status s =
      (*library)->Scan(ReadOptions{.as_of = a.as_of}, [&](const Skill& skill) {
        *out << SkillToJson(skill) << "\n";
        ++count;
        return out->good();
      });
  if (s.ok() && !out->good()) s = Status::IOError("write failed");
  if (!a.output.empty()) {
    file.close();
    std::error_code ec;
    if (s.ok() &&
        (file.fail() || (std::filesystem::rename(tmp, a.output, ec), ec))) {
      s = Status::IOError("cannot write '" + a.output + "'");
    }
    if (!s.ok()) std::filesystem::remove(tmp, ec);
  }
  if (!s.ok()) return Fail(g, io, s);
  if (!a.output.empty()) {
    if (g.json) {
      PrintJson(io, Json{{"skills", count}, {"output", a.output}});
    } else {
      *io.out << "exported " << count << " skills to " << a.output << "\n";
    }
  }
  return kExitOk;
}

}  // namespace skilldb::cli
