#include "context.h"

namespace skilldb::cli {

int RunAudit(const GlobalArgs& g, const AuditArgs& a, const Io& io) {
  auto library = OpenLibrary(g, /*read_only=*/true, io);
  if (!library.ok()) return Fail(g, io, library.status());
  auto entries = (*library)->Audit(AuditOptions{.limit = a.limit});
  if (!entries.ok()) return Fail(g, io, entries.status());
  if (g.json) {
    Json list = Json::array();
    for (const AuditEntry& e : *entries) list.push_back(AsJson(e));
    PrintJson(io, list);
    return kExitOk;
  }
  for (const AuditEntry& e : *entries) {
    *io.out << "#" << e.seq << "  " << FormatTime(e.time_ms) << "  "
            << EscapeLine(e.event) << "  " << EscapeLine(e.skill_id)
            << "  (proposal " << EscapeLine(e.proposal_id) << ", at v"
            << e.base_version;
    if (e.version) *io.out << ", committed as v" << e.version;
    *io.out << ")\n";
    for (const auto& r : e.reasons) {
      *io.out << "    - " << EscapeLine(r) << "\n";
    }
  }
  if (entries->empty()) *io.out << "the audit log is empty\n";
  return kExitOk;
}

}  // namespace skilldb::cli
