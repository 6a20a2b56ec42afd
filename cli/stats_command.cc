#include "context.h"

namespace skilldb::cli {

int RunStats(const GlobalArgs& g, const StatsArgs& a, const Io& io) {
  auto library = OpenLibrary(g, /*read_only=*/true, io);
  if (!library.ok()) return Fail(g, io, library.status());
  auto stats = (*library)->Stats(ReadOptions{.as_of = a.as_of});
  if (!stats.ok()) return Fail(g, io, stats.status());
  const LibraryInfo info = (*library)->Info();
  const LibraryStats& s = *stats;
  // Usage: the skills used, and their utility.
  uint64_t used = 0, applied = 0;
  double utility_sum = 0;
  Status scanned =
      (*library)->ScanUsage([&](const std::string&, const UsageCounters& c) {
        ++used;
        applied += c.count(UsageEvent::kApplied);
        utility_sum += c.utility();
        return true;
      });
  if (!scanned.ok()) return Fail(g, io, scanned);
  const double mean_utility =
      used ? utility_sum / static_cast<double>(used) : 0.0;
  if (g.json) {
    // The stats' and the library info's codecs, with the usage summary this
    // command computes.
    Json j = AsJson(s);
    Json about = AsJson(info);
    for (const char* key : {"path", "head", "oldest_retained", "analyzer", "k1",
                            "b", "field_weights"}) {
      j[key] = about[key];
    }
    j["usage"] = {{"skills_used", used},
                  {"applied", applied},
                  {"mean_utility", mean_utility}};
    PrintJson(io, j);
    return kExitOk;
  }
  std::ostream& out = *io.out;
  out << "library   " << EscapeLine(info.path) << "\n"
      << "version   " << s.version << " (head " << info.head
      << ", oldest retained " << info.oldest_retained << ")\n"
      << "analyzer  " << AnalyzerName(info.analyzer) << " (BM25 k1 " << info.k1
      << ", b " << info.b << ")\n"
      << "skills    " << s.num_skills << " (active " << s.active
      << ", candidate " << s.candidate << ", deprecated " << s.deprecated
      << ", pruned " << s.pruned << ")\n"
      << "language  cuda " << s.cuda << ", triton " << s.triton << ", any "
      << s.any_language << "\n"
      << "evidence  " << s.trusted << " trusted, " << s.provisional
      << " provisional, " << s.unverified << " unverified\n"
      << "usage     " << used << " skills used, " << applied
      << " applications, mean utility " << FormatScore(mean_utility) << "\n"
      << "length    " << s.total_length << " terms, "
      << FormatScore(s.avg_length) << " per skill\n"
      << "index     " << s.num_segments << " segments, " << s.num_documents
      << " documents (all revisions)\n"
      << "disk      " << s.disk_bytes << " bytes (tables: index "
      << s.index_table_bytes << ", records " << s.record_table_bytes
      << ", other " << s.other_table_bytes << ")\n";
  return kExitOk;
}

}  // namespace skilldb::cli
