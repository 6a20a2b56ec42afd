// The harness every C++ benchmark driver shares: the command line, reading
// the corpus and query files, the timing protocol, peak-RSS and on-disk-size
// measurement, and the JSON/dump output.
//
// A driver implements an Engine: Build() indexes a corpus into a directory;
// Open() returns the state a search needs; NewSearcher() makes one searcher
// per thread. Each phase runs in its own process (`driver build ...` and
// `driver search ...`), so peak RSS and open time are per phase.
//
// Timing protocol of `search` (the same in the Java and Python drivers):
//   1. open (timed: open_ms), then one searcher per thread;
//   2. warm-up: the query set with k=10 and k=100, repeated until at least
//      --warmup queries ran and --warmup-seconds passed (at least one pass);
//   3. latency: every query once with k=10, then once with k=100, on one
//      thread; only the Searcher::Search call is inside the timer;
//   4. QPS: all queries with k=10 on --threads threads pulling from a shared
//      counter, repeated until at least --min-qps-seconds elapsed;
//   5. peak RSS (VmHWM) is read here, before the dump;
//   6. the top-10 of step 3 is written as `qid<TAB>rank<TAB>id<TAB>score`.
//
// Not thread-safe beyond what is stated on each function.
#ifndef SKILLDB_BENCHMARKS_BENCH_COMMON_H_
#define SKILLDB_BENCHMARKS_BENCH_COMMON_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace skilldb::bench {

struct Query {
  std::string qid;
  std::string text;                // terms separated by single spaces
  std::vector<std::string> terms;  // distinct, in file order
};

struct Hit {
  // Either the document id, or its 0-based line number in the corpus (the
  // harness maps numbers to ids after timing; see Searcher::Hits).
  std::string id;
  int64_t docno = -1;
  double score = 0.0;
};

// One thread's searcher. Search() is the only timed call.
class Searcher {
 public:
  virtual ~Searcher() = default;
  // Runs `query` for the top `k` and keeps the engine's native result.
  virtual void Search(const Query& query, size_t k) = 0;
  // Converts the result of the last Search() into hits, best first.
  virtual void Hits(std::vector<Hit>* hits) = 0;
};

class Engine {
 public:
  virtual ~Engine() = default;
  virtual std::string name() const = 0;
  // Indexes every document of the corpus into `index_dir` (created fresh).
  // `docs(fn)` calls fn(docno, id, text) for each document in file order.
  // Extra figures (e.g. reference sizes) go into `extra` as JSON values.
  using DocFn = std::function<void(int64_t, std::string_view, std::string_view)>;
  virtual void Build(const std::string& index_dir,
                     const std::function<void(const DocFn&)>& docs,
                     std::map<std::string, std::string>* extra) = 0;
  // Opens the index for searching (timed as open_ms).
  virtual void Open(const std::string& index_dir) = 0;
  // A searcher for one thread. REQUIRES: Open() succeeded.
  virtual std::unique_ptr<Searcher> NewSearcher() = 0;
  // Optional: a whole-batch parallel path for the QPS measurement (an engine
  // whose API has its own batch call). Returns false if not provided.
  virtual bool SearchBatch(const std::vector<Query>& /*queries*/, size_t /*k*/,
                           int /*threads*/) {
    return false;
  }
  // Free-form notes that the report prints beside the engine.
  virtual std::string notes() const { return ""; }
};

// Entry point shared by the drivers: parses argv and runs the phase.
int Main(int argc, char** argv, Engine* engine);

// Helpers, exposed for drivers.
[[noreturn]] void Die(const std::string& message);
double NowSeconds();
uint64_t PeakRssBytes();  // VmHWM of this process
uint64_t DirectoryBytes(const std::string& path);
std::string JsonString(std::string_view s);

}  // namespace skilldb::bench

#endif  // SKILLDB_BENCHMARKS_BENCH_COMMON_H_
