#include "context.h"

namespace skilldb::cli {
namespace {

Json CountersJson(const std::string& id, const UsageCounters& c) {
  Json j{{"id", id}};
  j.update(AsJson(c));
  return j;
}

void PrintCounters(const Io& io, const std::string& id,
                   const UsageCounters& c) {
  *io.out << EscapeLine(id) << "  retrieved " << c.count(UsageEvent::kRetrieved)
          << ", selected " << c.count(UsageEvent::kSelected) << ", applied "
          << c.count(UsageEvent::kApplied) << ", succeeded "
          << c.count(UsageEvent::kSucceeded) << ", failed "
          << c.count(UsageEvent::kFailed) << "  utility "
          << FormatScore(c.utility()) << "  (last used at v"
          << c.last_used_version << ")\n";
}

}  // namespace

int RunUsage(const GlobalArgs& g, const UsageArgs& a, const Io& io) {
  if (!a.record.empty()) {
    if (a.id.empty())
      return Fail(g, io, Status::InvalidArgument("--record needs a skill ID"));
    auto event = ParseUsageEvent(a.record);
    if (!event.ok()) return Fail(g, io, event.status());
    // Recording works beside a writer: a read-only open spools the event.
    auto library = OpenLibrary(g, /*read_only=*/true, io);
    if (!library.ok()) return Fail(g, io, library.status());
    Status s = (*library)->RecordUsage(a.id, *event, a.count);
    if (!s.ok()) return Fail(g, io, s);
    auto c = (*library)->GetUsage(a.id);
    if (!c.ok()) return Fail(g, io, c.status());
    if (g.json) {
      PrintJson(io, CountersJson(a.id, *c));
    } else {
      PrintCounters(io, a.id, *c);
    }
    return kExitOk;
  }
  auto library = OpenLibrary(g, /*read_only=*/true, io);
  if (!library.ok()) return Fail(g, io, library.status());
  if (!a.id.empty()) {
    auto c = (*library)->GetUsage(a.id);
    if (!c.ok()) return Fail(g, io, c.status());
    if (g.json) {
      PrintJson(io, CountersJson(a.id, *c));
    } else {
      PrintCounters(io, a.id, *c);
    }
    return kExitOk;
  }
  Json list = Json::array();
  Status s =
      (*library)->ScanUsage([&](const std::string& id, const UsageCounters& c) {
        if (g.json) {
          list.push_back(CountersJson(id, c));
        } else {
          PrintCounters(io, id, c);
        }
        return true;
      });
  if (!s.ok()) return Fail(g, io, s);
  if (g.json) PrintJson(io, list);
  return kExitOk;
}

}  // namespace skilldb::cli
