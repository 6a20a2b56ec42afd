// skilldb driver: our engine through its public API only (skilldb/library.h).
// Build: Library::Open(create_if_missing, analyzer "whitespace", k1 1.2,
// b 0.75, sync_commits false), then PutMany of Skill{id, title = the text}
// in commits of --batch documents (default 100k). The library stores the
// records too (RocksDB), so its on-disk size includes a copy of the text.
// Search: Library::Open of the existing library (read-write, the usual
// serving mode), Query(QueryOptions{k, fields=None}) per call on one
// thread; QPS through QueryBatch on all threads. Hits come back as id strings
// (the peers are timed up to internal doc numbers; ids are mapped after).
#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "bench_common.h"
#include "skilldb/library.h"

namespace skilldb::bench {
namespace {

// SKILLDB_BENCH_ALGORITHM=wand times block-max WAND instead of the default
// windowed block-max MaxScore (same results).
QueryOptions MakeOptions(size_t k) {
  QueryOptions o;
  o.k = k;
  o.fields = HitFields::None();
  const char* algorithm = std::getenv("SKILLDB_BENCH_ALGORITHM");
  o.block_max_wand = algorithm != nullptr && std::string(algorithm) == "wand";
  return o;
}

class SkilldbSearcher : public Searcher {
 public:
  explicit SkilldbSearcher(Library* lib) : lib_(lib) {}
  void Search(const Query& q, size_t k) override {
    result_ = lib_->Query(MakeOptions(k), q.text);
  }
  void Hits(std::vector<Hit>* hits) override {
    hits->clear();
    if (!result_->ok()) Die("skilldb query: " + result_->status().ToString());
    for (const auto& h : (*result_)->hits) hits->push_back({h.id, -1, h.score});
  }

 private:
  Library* lib_;
  // Result<T> has no default state: keep it optional.
  std::optional<Result<QueryResult>> result_;
};

class SkilldbEngine : public Engine {
 public:
  std::string name() const override { return "skilldb"; }
  std::string notes() const override {
    return "exact BM25 (Lucene formula, exact lengths); stores the records "
           "(text) beside the index in RocksDB";
  }
  void Build(const std::string& dir,
             const std::function<void(const DocFn&)>& docs,
             std::map<std::string, std::string>* extra) override {
    Options options;
    options.create_if_missing = true;
    options.analyzer = Analyzer::kWhitespace;
    options.k1 = 1.2;
    options.b = 0.75;
    options.sync_commits = false;
    // The indexing memory Lucene (setRAMBufferSizeMB) and tantivy
    // (heap_size) are given in these benchmarks.
    options.segment_build_bytes = size_t{256} << 20;
    auto lib = Library::Open(options, dir);
    if (!lib.ok()) Die("skilldb open: " + lib.status().ToString());
    const char* env = std::getenv("SKILLDB_BENCH_BATCH");
    const size_t batch = env ? std::strtoull(env, nullptr, 10) : 100000;
    std::vector<Skill> pending;
    pending.reserve(batch);
    int commits = 0;
    auto flush = [&] {
      if (pending.empty()) return;
      auto v = (*lib)->PutMany(pending);
      if (!v.ok()) Die("skilldb PutMany: " + v.status().ToString());
      pending.clear();
      ++commits;
    };
    docs([&](int64_t, std::string_view id, std::string_view text) {
      pending.push_back(Skill::Make(std::string(id), std::string(text)));
      if (pending.size() >= batch) flush();
    });
    flush();
    // Like Lucene's forceMerge(1) and PISA's compression: the index the
    // queries run on is one compacted segment. Counted in build time.
    const auto compact_start = std::chrono::steady_clock::now();
    Status compacted = (*lib)->Compact();
    if (!compacted.ok()) Die("skilldb Compact: " + compacted.ToString());
    (*extra)["compact_s"] =
        std::to_string(std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - compact_start)
                           .count());
    auto stats = (*lib)->Stats(ReadOptions{});
    if (stats.ok()) {
      (*extra)["segments"] = std::to_string(stats->num_segments);
      (*extra)["skills"] = std::to_string(stats->num_skills);
      // The BM25 index alone (postings, doc tables, df history, ends), as
      // against the records (the skills' text) stored beside it.
      (*extra)["index_table_bytes"] = std::to_string(stats->index_table_bytes);
      (*extra)["record_table_bytes"] =
          std::to_string(stats->record_table_bytes);
    }
    (*extra)["commits"] = std::to_string(commits);
    (*extra)["batch_docs"] = std::to_string(batch);
  }
  void Open(const std::string& dir) override {
    Options options;  // existing library: creation settings are stored
    auto lib = Library::Open(options, dir);
    if (!lib.ok()) Die("skilldb open: " + lib.status().ToString());
    lib_ = std::move(*lib);
    LibraryInfo info = lib_->Info();
    if (info.analyzer != Analyzer::kWhitespace || info.k1 != 1.2 || info.b != 0.75) {
      Die("library at " + dir + " was not built with whitespace/1.2/0.75");
    }
  }
  std::unique_ptr<Searcher> NewSearcher() override {
    return std::make_unique<SkilldbSearcher>(lib_.get());
  }
  bool SearchBatch(const std::vector<Query>& queries, size_t k,
                   int threads) override {
    if (texts_.size() != queries.size()) {
      texts_.clear();
      for (const auto& q : queries) texts_.push_back(q.text);
    }
    auto r = lib_->QueryBatch(MakeOptions(k), texts_, threads);
    if (!r.ok()) Die("skilldb QueryBatch: " + r.status().ToString());
    return true;
  }

 private:
  std::unique_ptr<Library> lib_;
  std::vector<std::string> texts_;
};

}  // namespace
}  // namespace skilldb::bench

int main(int argc, char** argv) {
  skilldb::bench::SkilldbEngine engine;
  return skilldb::bench::Main(argc, argv, &engine);
}
