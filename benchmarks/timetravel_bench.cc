// Time travel at speed: the cost of a query as of an old version against the
// same query at the head of the same library, measured in one process.
//
//   timetravel_bench --corpus FILE.tsv --queries FILE.tsv --index DIR
//                    [--rounds R] [--churn PCT] [--reps N]
//
// Builds a library that has a history worth travelling through: version 1
// imports the corpus (whitespace analyzer, k1 1.2, b 0.75); then R rounds
// (default 10) each revise PCT% of the skills (default 2%: their text is
// replaced by another document's text) and delete PCT/2% in one commit.
// The queries then run, single-threaded, top-10, at three versions: the
// head, the middle version and version 1 (the oldest, whose statistics and
// live set differ most from the head's). This is done twice: on the
// segments as the merge policy left them after the rounds, and after
// Compact() (one segment holding every retained revision). Each query runs
// `reps` times per version (default 3), interleaved head / middle / oldest
// so drift cancels; the per-query median is kept, and the report prints
// the median and p99 over queries and the ratio of each version's median to
// the head's. Prints one JSON object on stdout.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "bench_common.h"
#include "skilldb/library.h"

namespace skilldb::bench {
namespace {

struct Args {
  std::string corpus, queries, index;
  int rounds = 10;
  double churn_pct = 2.0;
  int reps = 3;
};

Args Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], v = argv[i + 1];
    if (key == "--corpus") a.corpus = v;
    else if (key == "--queries") a.queries = v;
    else if (key == "--index") a.index = v;
    else if (key == "--rounds") a.rounds = std::stoi(v);
    else if (key == "--churn") a.churn_pct = std::stod(v);
    else if (key == "--reps") a.reps = std::stoi(v);
    else Die("unknown option " + key);
  }
  if (a.corpus.empty() || a.queries.empty() || a.index.empty()) {
    Die("--corpus, --queries and --index are required");
  }
  return a;
}

// Lines "id<TAB>text" (the corpus) or "qid<TAB>text" (the queries).
std::vector<std::pair<std::string, std::string>> ReadTsv(
    const std::string& path) {
  std::ifstream in(path);
  if (!in) Die("cannot read " + path);
  std::vector<std::pair<std::string, std::string>> rows;
  std::string line;
  while (std::getline(in, line)) {
    const size_t tab = line.find('\t');
    if (tab == std::string::npos) continue;
    rows.emplace_back(line.substr(0, tab), line.substr(tab + 1));
  }
  return rows;
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(p * v.size()));
  return v[i];
}

struct Pass {
  std::string name;
  std::map<Version, std::vector<double>> us;  // per version, per query
};

Pass Measure(const std::string& name, Library* lib,
             const std::vector<Version>& versions,
             const std::vector<std::string>& queries, int reps) {
  Pass pass{name, {}};
  QueryOptions o;
  o.k = 10;
  o.fields = HitFields::None();
  // Warm-up: every query once at every version.
  for (Version v : versions) {
    o.as_of = v;
    for (const auto& q : queries) (void)lib->Query(o, q);
  }
  for (const auto& q : queries) {
    std::map<Version, std::vector<double>> samples;
    for (int r = 0; r < reps; ++r) {
      for (Version v : versions) {
        o.as_of = v;
        const double t0 = NowSeconds();
        auto result = lib->Query(o, q);
        const double t1 = NowSeconds();
        if (!result.ok()) Die("query: " + result.status().ToString());
        samples[v].push_back((t1 - t0) * 1e6);
      }
    }
    for (auto& [v, s] : samples) pass.us[v].push_back(Percentile(s, 0.5));
  }
  return pass;
}

int Run(int argc, char** argv) {
  const Args a = Parse(argc, argv);
  const auto corpus = ReadTsv(a.corpus);
  std::vector<std::string> queries;
  for (auto& [qid, text] : ReadTsv(a.queries)) queries.push_back(text);
  if (corpus.empty() || queries.empty()) Die("empty corpus or query file");

  Options options;
  options.create_if_missing = true;
  options.error_if_exists = true;
  options.analyzer = Analyzer::kWhitespace;
  options.k1 = 1.2;
  options.b = 0.75;
  options.sync_commits = false;
  auto opened = Library::Open(options, a.index);
  if (!opened.ok()) Die("open: " + opened.status().ToString());
  Library* lib = opened->get();

  const double t0 = NowSeconds();
  std::vector<Skill> all;
  all.reserve(corpus.size());
  for (const auto& [id, text] : corpus) all.push_back(Skill::Make(id, text));
  auto first = lib->PutMany(all);
  if (!first.ok()) Die("import: " + first.status().ToString());
  all.clear();
  std::fprintf(stderr, "[timetravel] imported %zu docs in %.1f s\n",
               corpus.size(), NowSeconds() - t0);

  std::mt19937_64 rng(20261129);
  std::vector<size_t> live(corpus.size());
  for (size_t i = 0; i < live.size(); ++i) live[i] = i;
  const size_t revise = static_cast<size_t>(corpus.size() * a.churn_pct / 100);
  const size_t remove = revise / 2;
  std::vector<Version> history = {*first};
  for (int r = 0; r < a.rounds; ++r) {
    std::shuffle(live.begin(), live.end(), rng);
    std::vector<Skill> puts;
    std::vector<std::string> deletes;
    for (size_t i = 0; i < revise && i < live.size(); ++i) {
      const auto& donor = corpus[rng() % corpus.size()];
      puts.push_back(Skill::Make(corpus[live[i]].first, donor.second));
    }
    for (size_t i = revise; i < revise + remove && i < live.size(); ++i) {
      deletes.push_back(corpus[live[i]].first);
    }
    auto v = lib->Commit(puts, deletes);
    if (!v.ok()) Die("round commit: " + v.status().ToString());
    history.push_back(*v);
    live.erase(live.begin() + static_cast<std::ptrdiff_t>(revise),
               live.begin() + static_cast<std::ptrdiff_t>(
                                  std::min(live.size(), revise + remove)));
  }
  std::fprintf(stderr, "[timetravel] %d rounds of %zu revisions + %zu deletes\n",
               a.rounds, revise, remove);

  const Version head = history.back();
  const Version middle = history[history.size() / 2];
  const Version oldest = history.front();
  const std::vector<Version> versions = {head, middle, oldest};
  std::vector<Pass> passes;
  auto stats = lib->Stats(ReadOptions{});
  const uint64_t segments_before = stats.ok() ? stats->num_segments : 0;
  passes.push_back(Measure("merge-policy segments", lib, versions, queries,
                           a.reps));
  Status compacted = lib->Compact();
  if (!compacted.ok()) Die("compact: " + compacted.ToString());
  passes.push_back(Measure("compacted", lib, versions, queries, a.reps));

  std::printf("{\"corpus\": %s, \"docs\": %zu, \"queries\": %zu, \"rounds\": %d, "
              "\"revised_per_round\": %zu, \"deleted_per_round\": %zu, "
              "\"segments_before_compact\": %llu, \"versions\": {\"head\": %llu, "
              "\"middle\": %llu, \"oldest\": %llu}, \"passes\": [",
              JsonString(a.corpus).c_str(), corpus.size(), queries.size(),
              a.rounds, revise, remove,
              static_cast<unsigned long long>(segments_before),
              static_cast<unsigned long long>(head),
              static_cast<unsigned long long>(middle),
              static_cast<unsigned long long>(oldest));
  const char* names[] = {"head", "middle", "oldest"};
  for (size_t p = 0; p < passes.size(); ++p) {
    const Pass& pass = passes[p];
    const double head_p50 = Percentile(pass.us.at(head), 0.5);
    std::printf("%s{\"pass\": %s", p ? ", " : "", JsonString(pass.name).c_str());
    for (size_t i = 0; i < versions.size(); ++i) {
      const auto& us = pass.us.at(versions[i]);
      const double p50 = Percentile(us, 0.5);
      std::printf(", \"%s\": {\"p50_us\": %.1f, \"p99_us\": %.1f, "
                  "\"p50_ratio_to_head\": %.3f}",
                  names[i], p50, Percentile(us, 0.99), p50 / head_p50);
      std::fprintf(stderr, "[timetravel] %-22s %-6s (v%llu) p50 %8.1f us  p99 %9.1f us  x%.2f of head\n",
                   pass.name.c_str(), names[i],
                   static_cast<unsigned long long>(versions[i]), p50,
                   Percentile(us, 0.99), p50 / head_p50);
    }
    std::printf("}");
  }
  std::printf("]}\n");
  return 0;
}

}  // namespace
}  // namespace skilldb::bench

int main(int argc, char** argv) { return skilldb::bench::Run(argc, argv); }
