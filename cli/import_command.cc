#include <memory>

#include "context.h"
#include "files.h"
#include "jsonl.h"

namespace skilldb::cli {
namespace {

CommitOptions MakeCommit(const std::string& message, const std::string& author,
                         const char* kind) {
  CommitOptions o;
  o.message = message;
  o.author = author;
  o.kind = kind;
  return o;
}

}  // namespace

int RunImport(const GlobalArgs& g, const ImportArgs& a, const Io& io) {
  // The file is read and committed a chunk at a time (Library::Import):
  // memory does not grow with the file, and a bad line anywhere still
  // leaves the library as it was.
  const std::string name = a.file == "-" ? "<stdin>" : a.file;
  std::unique_ptr<InputFile> file;
  JsonlSource::ReadFn read;
  if (a.file == "-") {
    read = [&io](char* data, size_t size) -> Result<size_t> {
      io.in->read(data, static_cast<std::streamsize>(size));
      if (io.in->bad()) return Status::IOError("error reading stdin");
      return static_cast<size_t>(io.in->gcount());
    };
  } else {
    auto opened = InputFile::Open(a.file);
    if (!opened.ok()) return Fail(g, io, opened.status());
    file = std::move(opened).value();
    read = [&file](char* data, size_t size) { return file->Read(data, size); };
  }
  auto library = OpenLibrary(g, /*read_only=*/false, io);
  if (!library.ok()) return Fail(g, io, library.status());
  Progress progress(g.progress, io.err, "importing " + EscapeLine(a.file),
                    "bytes");
  JsonlSource skills(read, name, &progress, file ? file->size() : 0);
  const Version before = (*library)->CurrentVersion();
  auto version =
      (*library)->Import(skills, MakeCommit(a.message, a.author, "import"));
  progress.Finish();
  if (!version.ok() && skills.exhausted() && skills.skills() == 0) {
    return Fail(g, io,
                Status::InvalidArgument("'" + a.file + "' holds no skills"));
  }
  if (!version.ok()) return Fail(g, io, version.status());
  // Skills identical to their live revision make no revision; when none
  // differs, no version is made.
  const bool committed = *version != before;
  uint64_t added = 0, updated = 0, num_skills = 0;
  if (committed || *version > 0) {
    auto commit = (*library)->GetCommit(*version);
    if (!commit.ok()) return Fail(g, io, commit.status());
    num_skills = commit->num_skills;
    if (committed) {
      added = commit->added;
      updated = commit->updated;
    }
  }
  const uint64_t unchanged = skills.skills() - added - updated;
  if (g.json) {
    PrintJson(io, Json{{"version", *version},
                       {"committed", committed},
                       {"added", added},
                       {"updated", updated},
                       {"unchanged", unchanged},
                       {"skills", num_skills}});
  } else if (!committed) {
    *io.out << "nothing to commit: all " << skills.skills()
            << " skills are identical to version " << *version
            << " (no new version)\n";
  } else {
    *io.out << "imported " << skills.skills() << " skills (" << added
            << " added, " << updated << " updated, " << unchanged
            << " unchanged) as version " << *version << "\n";
  }
  return kExitOk;
}

int RunAdd(const GlobalArgs& g, const AddArgs& a, const Io& io) {
  auto text = ReadInput(a.file, io);
  if (!text.ok()) return Fail(g, io, text.status());
  // One skill: a JSON object, possibly spread over several lines.
  auto skill = ParseSkillJson(*text);
  if (!skill.ok()) {
    return Fail(g, io,
                skill.status().WithContext(a.file == "-" ? "<stdin>" : a.file));
  }
  auto library = OpenLibrary(g, /*read_only=*/false, io);
  if (!library.ok()) return Fail(g, io, library.status());
  const Version before = (*library)->CurrentVersion();
  auto version =
      (*library)->Put(*skill, MakeCommit(a.message, a.author, "put"));
  if (!version.ok()) return Fail(g, io, version.status());
  auto commit = (*library)->GetCommit(*version);
  if (!commit.ok()) return Fail(g, io, commit.status());
  const char* what = *version == before    ? "unchanged"
                     : commit->updated > 0 ? "updated"
                                           : "added";
  if (g.json) {
    PrintJson(io,
              Json{{"version", *version}, {"id", skill->id}, {"change", what}});
  } else {
    *io.out << what << " " << EscapeLine(skill->id) << " as version "
            << *version << "\n";
  }
  return kExitOk;
}

int RunRm(const GlobalArgs& g, const RmArgs& a, const Io& io) {
  auto library = OpenLibrary(g, /*read_only=*/false, io);
  if (!library.ok()) return Fail(g, io, library.status());
  auto version =
      (*library)->Delete(a.id, MakeCommit(a.message, a.author, "delete"));
  if (!version.ok()) return Fail(g, io, version.status());
  if (g.json) {
    PrintJson(io,
              Json{{"version", *version}, {"id", a.id}, {"change", "deleted"}});
  } else {
    *io.out << "deleted " << EscapeLine(a.id) << " as version " << *version
            << "\n";
  }
  return kExitOk;
}

}  // namespace skilldb::cli
