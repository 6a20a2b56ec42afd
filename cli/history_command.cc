#include "context.h"

namespace skilldb::cli {

int RunHistory(const GlobalArgs& g, const HistoryArgs& a, const Io& io) {
  auto library = OpenLibrary(g, /*read_only=*/true, io);
  if (!library.ok()) return Fail(g, io, library.status());
  auto history = (*library)->History(a.id);
  if (!history.ok()) return Fail(g, io, history.status());
  Json list = Json::array();
  for (const Revision& rev : *history) {
    auto commit = (*library)->GetCommit(rev.version);
    if (!commit.ok()) return Fail(g, io, commit.status());
    if (g.json) {
      Json j = AsJson(rev);
      j["time_ms"] = commit->time_ms;
      j["author"] = commit->author;
      j["message"] = commit->message;
      list.push_back(std::move(j));
    } else {
      *io.out << "v" << rev.version << "  " << FormatTime(commit->time_ms)
              << "  " << EscapeLine(commit->author) << "  "
              << (rev.deleted ? "deleted" : EscapeLine(rev.skill.title));
      if (!commit->message.empty()) {
        *io.out << "  (" << EscapeLine(commit->message) << ")";
      }
      *io.out << "\n";
    }
  }
  if (g.json) PrintJson(io, list);
  return kExitOk;
}

}  // namespace skilldb::cli
