#include "context.h"

namespace skilldb::cli {

int RunTag(const GlobalArgs& g, const TagArgs& a, const Io& io) {
  auto library = OpenLibrary(g, /*read_only=*/false, io);
  if (!library.ok()) return Fail(g, io, library.status());
  if (a.remove) {
    Status s = (*library)->DeleteTag(a.name);
    if (!s.ok()) return Fail(g, io, s);
    if (g.json) {
      PrintJson(io, Json{{"deleted", a.name}});
    } else {
      *io.out << "deleted tag " << EscapeLine(a.name) << "\n";
    }
    return kExitOk;
  }
  const Version v = a.version.value_or((*library)->CurrentVersion());
  Status s = (*library)->Tag(a.name, v);
  if (!s.ok()) return Fail(g, io, s);
  if (g.json) {
    PrintJson(io, Json{{"tag", a.name}, {"version", v}});
  } else {
    *io.out << "tagged version " << v << " as " << EscapeLine(a.name) << "\n";
  }
  return kExitOk;
}

int RunTags(const GlobalArgs& g, const Io& io) {
  auto library = OpenLibrary(g, /*read_only=*/true, io);
  if (!library.ok()) return Fail(g, io, library.status());
  auto tags = (*library)->Tags();
  if (!tags.ok()) return Fail(g, io, tags.status());
  if (g.json) {
    Json list = Json::array();
    for (const TagInfo& t : *tags) list.push_back(AsJson(t));
    PrintJson(io, list);
    return kExitOk;
  }
  for (const TagInfo& t : *tags)
    *io.out << EscapeLine(t.name) << "  v" << t.version << "\n";
  if (tags->empty()) *io.out << "no tags\n";
  return kExitOk;
}

int RunGc(const GlobalArgs& g, const GcArgs& a, const Io& io) {
  if (a.keep_last.has_value() == a.keep_since.has_value()) {
    return Fail(g, io,
                Status::InvalidArgument(
                    "give exactly one of --keep-last N and --keep-since V"));
  }
  auto library = OpenLibrary(g, /*read_only=*/false, io);
  if (!library.ok()) return Fail(g, io, library.status());
  if (!g.json)
    *io.err << "skilldb: collecting garbage (this rewrites old index "
               "segments)...\n";
  Progress progress(g.progress, io.err, "collecting garbage", "");
  progress.StartTicking();
  auto report = (*library)->Gc(
      GcOptions{.keep_last = a.keep_last, .keep_since = a.keep_since});
  progress.Finish();
  if (!report.ok()) return Fail(g, io, report.status());
  const GcReport& r = *report;
  if (g.json) {
    PrintJson(io, AsJson(r));
    return kExitOk;
  }
  if (r.new_oldest == r.old_oldest) {
    *io.out << "nothing to collect: the oldest retained version is already "
            << r.old_oldest << "\n";
    return kExitOk;
  }
  *io.out << "oldest retained version " << r.old_oldest << " -> "
          << r.new_oldest;
  if (!r.tagged.empty()) *io.out << " (plus " << r.tagged.size() << " tagged)";
  *io.out << "\ndropped " << r.revisions_dropped << " revisions, "
          << r.commits_dropped << " commit records, " << r.df_entries_dropped
          << " df entries, " << r.documents_dropped << " index documents\n"
          << "disk " << r.disk_bytes_before << " -> " << r.disk_bytes_after
          << " bytes\n";
  return kExitOk;
}

int RunCompact(const GlobalArgs& g, const Io& io) {
  auto library = OpenLibrary(g, /*read_only=*/false, io);
  if (!library.ok()) return Fail(g, io, library.status());
  auto before = (*library)->Stats({});
  if (!before.ok()) return Fail(g, io, before.status());
  if (!g.json)
    *io.err << "skilldb: compacting " << before->num_segments
            << " segment(s)...\n";
  Progress progress(g.progress, io.err, "compacting", "");
  progress.StartTicking();
  Status s = (*library)->Compact();
  progress.Finish();
  if (!s.ok()) return Fail(g, io, s);
  auto after = (*library)->Stats({});
  if (!after.ok()) return Fail(g, io, after.status());
  if (g.json) {
    PrintJson(io, Json{{"segments_before", before->num_segments},
                       {"segments_after", after->num_segments},
                       {"disk_bytes_before", before->disk_bytes},
                       {"disk_bytes_after", after->disk_bytes}});
  } else {
    *io.out << "segments " << before->num_segments << " -> "
            << after->num_segments << ", disk " << before->disk_bytes << " -> "
            << after->disk_bytes << " bytes\n";
  }
  return kExitOk;
}

}  // namespace skilldb::cli
