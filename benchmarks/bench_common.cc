#include "bench_common.h"

#include <algorithm>
#include <cmath>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>
#include <unordered_map>
#include <unordered_set>

namespace skilldb::bench {
namespace {

struct Args {
  std::string phase;
  std::string corpus, index, queries, out, dump, latencies;
  int threads = 0;
  int64_t warmup = 4000;
  double warmup_seconds = 3.0;
  double min_qps_seconds = 2.0;
};

Args ParseArgs(int argc, char** argv) {
  Args a;
  if (argc < 2) Die("usage: driver build|search --index DIR [options]");
  a.phase = argv[1];
  for (int i = 2; i < argc; ++i) {
    std::string key = argv[i];
    if (i + 1 >= argc) Die("missing value for " + key);
    std::string v = argv[++i];
    if (key == "--corpus") a.corpus = v;
    else if (key == "--index") a.index = v;
    else if (key == "--queries") a.queries = v;
    else if (key == "--out") a.out = v;
    else if (key == "--dump") a.dump = v;
    else if (key == "--latencies") a.latencies = v;
    else if (key == "--threads") a.threads = std::stoi(v);
    else if (key == "--warmup") a.warmup = std::stoll(v);
    else if (key == "--warmup-seconds") a.warmup_seconds = std::stod(v);
    else if (key == "--min-qps-seconds") a.min_qps_seconds = std::stod(v);
    else Die("unknown option " + key);
  }
  if (a.threads <= 0) a.threads = static_cast<int>(std::thread::hardware_concurrency());
  if (a.index.empty() || a.out.empty()) Die("--index and --out are required");
  return a;
}

// Calls fn(docno, id, text) for each `id<TAB>text` line of `path`.
void ForEachDoc(const std::string& path, const Engine::DocFn& fn) {
  std::ifstream in(path);
  if (!in) Die("cannot read corpus " + path);
  std::string line;
  int64_t docno = 0;
  while (std::getline(in, line)) {
    size_t tab = line.find('\t');
    if (tab == std::string::npos) Die("corpus line without a tab: " + path);
    std::string_view sv(line);
    fn(docno++, sv.substr(0, tab), sv.substr(tab + 1));
  }
}

std::vector<Query> ReadQueries(const std::string& path) {
  std::ifstream in(path);
  if (!in) Die("cannot read queries " + path);
  std::vector<Query> queries;
  std::string line;
  while (std::getline(in, line)) {
    size_t tab = line.find('\t');
    if (tab == std::string::npos) continue;
    Query q;
    q.qid = line.substr(0, tab);
    q.text = line.substr(tab + 1);
    std::istringstream ss(q.text);
    std::string t;
    while (ss >> t) {
      if (std::find(q.terms.begin(), q.terms.end(), t) == q.terms.end()) {
        q.terms.push_back(t);
      }
    }
    queries.push_back(std::move(q));
  }
  return queries;
}

struct LatencyStats {
  double p50_us = 0, p99_us = 0, mean_us = 0, max_us = 0;
  size_t n = 0;
};

LatencyStats Summarize(std::vector<double> us) {
  LatencyStats s;
  s.n = us.size();
  if (us.empty()) return s;
  std::sort(us.begin(), us.end());
  auto pct = [&](double p) {
    size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(us.size())));
    return us[std::clamp<size_t>(rank, 1, us.size()) - 1];
  };
  s.p50_us = pct(0.50);
  s.p99_us = pct(0.99);
  double sum = 0;
  for (double x : us) sum += x;
  s.mean_us = sum / static_cast<double>(us.size());
  s.max_us = us.back();
  return s;
}

std::string StatsJson(const LatencyStats& s) {
  std::ostringstream o;
  o << "{\"p50_us\": " << s.p50_us << ", \"p99_us\": " << s.p99_us
    << ", \"mean_us\": " << s.mean_us << ", \"max_us\": " << s.max_us
    << ", \"n\": " << s.n << "}";
  return o.str();
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) Die("cannot write " + path);
}

int RunBuild(const Args& a, Engine* engine) {
  if (a.corpus.empty()) Die("build needs --corpus");
  std::filesystem::remove_all(a.index);
  std::map<std::string, std::string> extra;
  int64_t n_docs = 0;
  const double t0 = NowSeconds();
  engine->Build(
      a.index,
      [&](const Engine::DocFn& fn) {
        ForEachDoc(a.corpus, [&](int64_t docno, std::string_view id,
                                 std::string_view text) {
          ++n_docs;
          fn(docno, id, text);
        });
      },
      &extra);
  const double build_s = NowSeconds() - t0;
  const uint64_t rss = PeakRssBytes();
  std::ostringstream o;
  o.precision(10);
  o << "{\"engine\": " << JsonString(engine->name())
    << ", \"phase\": \"build\", \"n_docs\": " << n_docs
    << ", \"build_s\": " << build_s
    << ", \"index_bytes\": " << DirectoryBytes(a.index)
    << ", \"peak_rss_bytes\": " << rss;
  for (const auto& [k, v] : extra) o << ", " << JsonString(k) << ": " << v;
  o << ", \"notes\": " << JsonString(engine->notes()) << "}\n";
  WriteFile(a.out, o.str());
  std::cerr << "[" << engine->name() << "] built " << n_docs << " docs in "
            << build_s << " s\n";
  return 0;
}

std::vector<double> TimePass(Searcher* s, const std::vector<Query>& queries,
                             size_t k,
                             std::vector<std::vector<Hit>>* keep) {
  std::vector<double> us;
  us.reserve(queries.size());
  if (keep != nullptr) keep->assign(queries.size(), {});
  for (size_t i = 0; i < queries.size(); ++i) {
    auto t0 = std::chrono::steady_clock::now();
    s->Search(queries[i], k);
    auto t1 = std::chrono::steady_clock::now();
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    if (keep != nullptr) s->Hits(&(*keep)[i]);
  }
  return us;
}

double MeasureQps(const Args& a, Engine* engine,
                  std::vector<std::unique_ptr<Searcher>>* searchers,
                  const std::vector<Query>& queries, int64_t* executed) {
  const size_t n = queries.size();
  int64_t total = 0;
  const double t0 = NowSeconds();
  do {
    if (engine->SearchBatch(queries, 10, a.threads)) {
      total += static_cast<int64_t>(n);
      continue;
    }
    std::atomic<size_t> next{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < a.threads; ++t) {
      pool.emplace_back([&, t] {
        Searcher* s = (*searchers)[t].get();
        for (size_t i; (i = next.fetch_add(1)) < n;) s->Search(queries[i], 10);
      });
    }
    for (auto& th : pool) th.join();
    total += static_cast<int64_t>(n);
  } while (NowSeconds() - t0 < a.min_qps_seconds);
  *executed = total;
  return static_cast<double>(total) / (NowSeconds() - t0);
}

void WriteDump(const Args& a, const std::vector<Query>& queries,
               std::vector<std::vector<Hit>>* top) {
  // Map doc numbers to ids (read after all timing, so not in peak RSS).
  std::unordered_set<int64_t> wanted;
  for (auto& hits : *top)
    for (auto& h : hits)
      if (h.id.empty()) wanted.insert(h.docno);
  if (!wanted.empty()) {
    if (a.corpus.empty()) Die("search needs --corpus to map doc numbers");
    std::unordered_map<int64_t, std::string> ids;
    ForEachDoc(a.corpus, [&](int64_t docno, std::string_view id,
                             std::string_view) {
      if (wanted.count(docno)) ids[docno] = std::string(id);
    });
    for (auto& hits : *top)
      for (auto& h : hits)
        if (h.id.empty()) h.id = ids[h.docno];
  }
  std::ofstream out(a.dump);
  out.precision(17);
  for (size_t i = 0; i < queries.size(); ++i) {
    const auto& hits = (*top)[i];
    for (size_t r = 0; r < hits.size() && r < 10; ++r) {
      out << queries[i].qid << '\t' << r + 1 << '\t' << hits[r].id << '\t'
          << hits[r].score << '\n';
    }
  }
  if (!out) Die("cannot write " + a.dump);
}

int RunSearch(const Args& a, Engine* engine) {
  if (a.queries.empty() || a.dump.empty()) Die("search needs --queries, --dump");
  std::vector<Query> queries = ReadQueries(a.queries);
  if (queries.empty()) Die("no queries in " + a.queries);

  const double t0 = NowSeconds();
  engine->Open(a.index);
  const double open_ms = (NowSeconds() - t0) * 1e3;
  const uint64_t rss_after_open = PeakRssBytes();

  std::vector<std::unique_ptr<Searcher>> searchers;
  for (int t = 0; t < a.threads; ++t) searchers.push_back(engine->NewSearcher());
  Searcher* s0 = searchers[0].get();

  const double w0 = NowSeconds();
  int64_t warm = 0;
  do {
    TimePass(s0, queries, 10, nullptr);
    TimePass(s0, queries, 100, nullptr);
    warm += 2 * static_cast<int64_t>(queries.size());
  } while (warm < a.warmup || NowSeconds() - w0 < a.warmup_seconds);
  const double warm_s = NowSeconds() - w0;

  std::vector<std::vector<Hit>> top10, top100;
  const std::vector<double> us10 = TimePass(s0, queries, 10, &top10);
  LatencyStats l10 = Summarize(us10);
  if (!a.latencies.empty()) {
    // One line per query of the timed top-10 pass: qid, microseconds.
    std::ostringstream lat;
    for (size_t i = 0; i < queries.size(); ++i) {
      lat << queries[i].qid << '\t' << us10[i] << '\n';
    }
    WriteFile(a.latencies, lat.str());
  }
  LatencyStats l100 = Summarize(TimePass(s0, queries, 100, &top100));
  double mean_hits = 0;
  for (auto& h : top100) mean_hits += static_cast<double>(h.size());
  mean_hits /= static_cast<double>(queries.size());

  int64_t qps_queries = 0;
  const double qps = MeasureQps(a, engine, &searchers, queries, &qps_queries);
  const uint64_t rss = PeakRssBytes();
  WriteDump(a, queries, &top10);

  std::ostringstream o;
  o.precision(10);
  o << "{\"engine\": " << JsonString(engine->name())
    << ", \"phase\": \"search\", \"n_queries\": " << queries.size()
    << ", \"open_ms\": " << open_ms
    << ", \"rss_after_open_bytes\": " << rss_after_open
    << ", \"warmup_queries\": " << warm << ", \"warmup_s\": " << warm_s
    << ", \"latency\": {\"10\": " << StatsJson(l10)
    << ", \"100\": " << StatsJson(l100) << "}"
    << ", \"mean_hits_k100\": " << mean_hits << ", \"qps\": " << qps
    << ", \"qps_threads\": " << a.threads
    << ", \"qps_queries\": " << qps_queries
    << ", \"peak_rss_bytes\": " << rss
    << ", \"notes\": " << JsonString(engine->notes()) << "}\n";
  WriteFile(a.out, o.str());
  std::cerr << "[" << engine->name() << "] p50 k10 " << l10.p50_us
            << " us, p99 " << l10.p99_us << " us, qps " << qps << "\n";
  return 0;
}

}  // namespace

void Die(const std::string& message) {
  std::cerr << "error: " << message << "\n";
  std::exit(1);
}

double NowSeconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

uint64_t PeakRssBytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) {
      return std::stoull(line.substr(6)) * 1024;  // reported in kB
    }
  }
  return 0;
}

uint64_t DirectoryBytes(const std::string& path) {
  namespace fs = std::filesystem;
  uint64_t total = 0;
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return fs::file_size(path, ec);
  for (auto it = fs::recursive_directory_iterator(path, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec)) total += it->file_size(ec);
  }
  return total;
}

std::string JsonString(std::string_view s) {
  std::string o = "\"";
  for (char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\t': o += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          o += buf;
        } else {
          o += c;
        }
    }
  }
  return o + "\"";
}

int Main(int argc, char** argv, Engine* engine) {
  Args a = ParseArgs(argc, argv);
  if (a.phase == "build") return RunBuild(a, engine);
  if (a.phase == "search") return RunSearch(a, engine);
  Die("unknown phase " + a.phase + " (build | search)");
}

}  // namespace skilldb::bench
