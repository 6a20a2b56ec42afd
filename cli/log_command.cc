#include "context.h"

namespace skilldb::cli {

int RunLog(const GlobalArgs& g, const LogArgs& a, const Io& io) {
  auto library = OpenLibrary(g, /*read_only=*/true, io);
  if (!library.ok()) return Fail(g, io, library.status());
  auto log = (*library)->Log(LogOptions{.limit = a.limit});
  if (!log.ok()) return Fail(g, io, log.status());
  if (g.json) {
    Json list = Json::array();
    for (const CommitInfo& c : *log) list.push_back(AsJson(c));
    PrintJson(io, list);
    return kExitOk;
  }
  for (const CommitInfo& c : *log) {
    *io.out << "v" << c.version << "  " << FormatTime(c.time_ms) << "  "
            << EscapeLine(c.kind) << "  " << EscapeLine(c.author) << "  +"
            << c.added << " ~" << c.updated << " -" << c.deleted << "  ("
            << c.num_skills << " skills)";
    if (!c.message.empty()) *io.out << "  " << EscapeLine(c.message);
    *io.out << "\n";
  }
  return kExitOk;
}

}  // namespace skilldb::cli
