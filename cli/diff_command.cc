#include "context.h"

namespace skilldb::cli {
namespace {

// Names of the fields that differ, for the one-line summary.
std::vector<std::string> ChangedFields(const Skill& a, const Skill& b) {
  std::vector<std::string> f;
  if (a.title != b.title) f.push_back("title");
  if (a.summary != b.summary) f.push_back("summary");
  if (a.body != b.body) f.push_back("body");
  if (a.code != b.code) f.push_back("code");
  if (a.language != b.language) f.push_back("language");
  if (a.tags != b.tags) f.push_back("tags");
  if (a.ops != b.ops) f.push_back("ops");
  if (a.arch != b.arch) f.push_back("arch");
  if (!(a.provenance == b.provenance)) f.push_back("provenance");
  if (!(a.lineage == b.lineage)) f.push_back("lineage");
  if (a.status != b.status) f.push_back("status");
  if (a.evidence_json != b.evidence_json) f.push_back("evidence");
  if (a.extra_json != b.extra_json) f.push_back("extra");
  return f;
}

}  // namespace

int RunDiff(const GlobalArgs& g, const DiffArgs& a, const Io& io) {
  auto library = OpenLibrary(g, /*read_only=*/true, io);
  if (!library.ok()) return Fail(g, io, library.status());
  auto diff = (*library)->Diff(a.from, a.to);
  if (!diff.ok()) return Fail(g, io, diff.status());
  if (g.json) {
    Json changes = Json::array();
    for (const DiffEntry& e : *diff) {
      Json j = AsJson(e);
      if (e.before && e.after) j["fields"] = ChangedFields(*e.before, *e.after);
      changes.push_back(std::move(j));
    }
    PrintJson(io, Json{{"from", a.from}, {"to", a.to}, {"changes", changes}});
    return kExitOk;
  }
  for (const DiffEntry& e : *diff) {
    switch (e.kind) {
      case ChangeKind::kAdded:
        *io.out << "+ " << EscapeLine(e.id) << "  "
                << EscapeLine(e.after->title) << "\n";
        break;
      case ChangeKind::kDeleted:
        *io.out << "- " << EscapeLine(e.id) << "  "
                << EscapeLine(e.before->title) << "\n";
        break;
      case ChangeKind::kUpdated: {
        *io.out << "~ " << EscapeLine(e.id) << "  (";
        const auto fields = ChangedFields(*e.before, *e.after);
        for (size_t i = 0; i < fields.size(); ++i) {
          *io.out << (i ? ", " : "") << fields[i];
        }
        *io.out << ")\n";
        break;
      }
    }
  }
  if (diff->empty()) *io.out << "no differences\n";
  return kExitOk;
}

}  // namespace skilldb::cli
