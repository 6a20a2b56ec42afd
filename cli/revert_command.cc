#include "context.h"

namespace skilldb::cli {

int RunRevert(const GlobalArgs& g, const RevertArgs& a, const Io& io) {
  auto library = OpenLibrary(g, /*read_only=*/false, io);
  if (!library.ok()) return Fail(g, io, library.status());
  CommitOptions o;
  o.message = a.message;
  o.author = a.author;
  auto v = (*library)->Revert(a.version, o);
  if (!v.ok()) return Fail(g, io, v.status());
  if (g.json) {
    PrintJson(io, Json{{"version", *v}, {"reverted", a.version}});
  } else {
    *io.out << "reverted version " << a.version << " as version " << *v << "\n";
  }
  return kExitOk;
}

int RunSetStatus(const GlobalArgs& g, const SetStatusArgs& a, const Io& io) {
  auto status = ParseSkillStatus(a.status);
  if (!status.ok()) return Fail(g, io, status.status());
  auto library = OpenLibrary(g, /*read_only=*/false, io);
  if (!library.ok()) return Fail(g, io, library.status());
  CommitOptions o;
  o.message = a.message;
  o.author = a.author;
  auto v = (*library)->SetStatus(a.ids, *status, o);
  if (!v.ok()) return Fail(g, io, v.status());
  if (g.json) {
    PrintJson(io, Json{{"version", *v}, {"status", a.status}, {"ids", a.ids}});
  } else {
    *io.out << "set " << a.ids.size() << " skill(s) to " << EscapeLine(a.status)
            << " as version " << *v << "\n";
  }
  return kExitOk;
}

}  // namespace skilldb::cli
