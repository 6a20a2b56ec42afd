#include "context.h"

namespace skilldb::cli {

int RunStats(const GlobalArgs& g, const StatsArgs& a, const Io& io) {
  auto library = OpenLibrary(g, /*read_only=*/true, io);
  if (!library.ok()) return Fail(g, io, library.status());
  auto stats = (*library)->Stats(ReadOptions{.as_of = a.as_of});
  if (!stats.ok()) return Fail(g, io, stats.status());
  const LibraryInfo info = (*library)->Info();
  const LibraryStats& s = *stats;
  // Evidence and usage: trust levels of the skills, and their utility.
  uint64_t trust[3] = {0, 0, 0};
  Status scanned =
      (*library)->Scan(ReadOptions{.as_of = s.version}, [&](const Skill& k) {
        ++trust[static_cast<int>(SkillTrust(k))];
        return true;
      });
  if (!scanned.ok()) return Fail(g, io, scanned);
  uint64_t used = 0, applied = 0;
  double utility_sum = 0;
  scanned =
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
    PrintJson(
        io,
        Json{
            {"path", info.path},
            {"version", s.version},
            {"head", info.head},
            {"oldest_retained", info.oldest_retained},
            {"analyzer", info.analyzer},
            {"k1", info.k1},
            {"b", info.b},
            {"skills", s.num_skills},
            {"total_length", s.total_length},
            {"avg_length", s.avg_length},
            {"status",
             {{"candidate", s.candidate},
              {"active", s.active},
              {"deprecated", s.deprecated},
              {"pruned", s.pruned}}},
            {"language",
             {{"cuda", s.cuda}, {"triton", s.triton}, {"any", s.any_language}}},
            {"trust",
             {{"unverified", trust[0]},
              {"provisional", trust[1]},
              {"trusted", trust[2]}}},
            {"usage",
             {{"skills_used", used},
              {"applied", applied},
              {"mean_utility", mean_utility}}},
            {"segments", s.num_segments},
            {"documents", s.num_documents},
            {"disk_bytes", s.disk_bytes},
            {"index_table_bytes", s.index_table_bytes},
            {"record_table_bytes", s.record_table_bytes},
            {"other_table_bytes", s.other_table_bytes}});
    return kExitOk;
  }
  std::ostream& out = *io.out;
  out << "library   " << info.path << "\n"
      << "version   " << s.version << " (head " << info.head
      << ", oldest retained " << info.oldest_retained << ")\n"
      << "analyzer  " << info.analyzer << " (BM25 k1 " << info.k1 << ", b "
      << info.b << ")\n"
      << "skills    " << s.num_skills << " (active " << s.active
      << ", candidate " << s.candidate << ", deprecated " << s.deprecated
      << ", pruned " << s.pruned << ")\n"
      << "language  cuda " << s.cuda << ", triton " << s.triton << ", any "
      << s.any_language << "\n"
      << "evidence  " << trust[2] << " trusted, " << trust[1]
      << " provisional, " << trust[0] << " unverified\n"
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
