// server_load: the load generator of benchmarks/server_bench.sh. Bounded in
// time, loopback only (it refuses any other address). One JSON line out.
//
//   server_load http URL CLIENTS SECONDS QUERIES [COMMITS_PER_S]
//       CLIENTS threads, each with its own keep-alive connection, POST
//       /v1/search one query at a time (k 10, titles) until SECONDS pass;
//       throughput and per-request latency percentiles. With COMMITS_PER_S
//       > 0, a writer thread meanwhile POSTs that many proposals a second
//       (distinct new skills with a replayed passing report) and the
//       server's queue commits them; the versions committed during the
//       window are read from /healthz.
//   server_load inprocess LIBRARY THREADS SECONDS QUERIES [COMMITS_PER_S]
//       the same in this process: THREADS threads each calling Query one
//       query at a time (latency percentiles), then QueryBatch over all the
//       queries on THREADS threads (throughput). With COMMITS_PER_S > 0 the
//       library is opened for writing and a writer thread meanwhile commits
//       that many proposals a second the way the server's queue does
//       (Propose, a replayed report, Commit); otherwise it is opened
//       read-only.
//   server_load proposals URL CLIENTS COUNT
//       COUNT distinct proposals with replayed passing reports POSTed by
//       CLIENTS threads; proposals per second until the queue has decided
//       every one (polling /healthz).
//
// QUERIES: a file of JSON lines with a "query" member
// (data/relevance/queries.jsonl) or of plain lines.
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <mutex>
#include <iostream>
#include <latch>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "skilldb/json.h"
#include "skilldb/library.h"
#include "skilldb/replay_verifier.h"

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

std::vector<std::string> ReadQueries(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    json j = json::parse(line, nullptr, false);
    if (j.is_object() && j.contains("query")) {
      out.push_back(j["query"].get<std::string>());
    } else {
      out.push_back(line);
    }
  }
  return out;
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(p * v.size()));
  return v[i];
}

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

bool Loopback(const std::string& url) {
  return url.starts_with("http://127.") || url.starts_with("http://localhost:") ||
         url.starts_with("http://[::1]:");
}

skilldb::VerificationReport PassingReport() {
  skilldb::VerificationReport r;
  r.verifier = "recorded";
  r.verifier_version = "1";
  r.device_class = "host";
  r.task = "sum_dim1_fp32";
  r.compiled = true;
  r.correctness.checked = true;
  r.correctness.passed = true;
  for (int i = 0; i < 3; ++i) {
    skilldb::RoundTiming t;
    t.baseline_median_ms = 2.0;
    t.candidate_median_ms = 1.0;
    t.speedup_ratio = 2.0;
    r.rounds.push_back(t);
  }
  r.speedup = {2.0, 1.9, 2.1, 0.95};
  r.passed = true;
  return r;
}

// A distinct new skill for proposal `i` of run `run` (words no query has,
// so the readers' result lists stay those of the seed library).
skilldb::Skill BenchSkill(const std::string& run, int i) {
  const std::string id = "bench-" + run + "-" + std::to_string(i);
  // Sixteen pseudo-random words: no two proposals are near duplicates.
  std::string words;
  uint64_t x = std::hash<std::string>{}(id) | 1;
  for (int w = 0; w < 16; ++w) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;  // xorshift64
    words += (w ? " q" : "q") + std::to_string(x % 1000003);
  }
  skilldb::Skill s = skilldb::Skill::Make(id, "Benchmark " + words.substr(0, 16));
  s.body = words;
  return s;
}

std::string RunTag() {
  return std::to_string(
      std::chrono::system_clock::now().time_since_epoch().count());
}

// Calls commit(i) `per_second` times a second (i = 0, 1, ...) on its own
// thread until `stop`; counts the calls that returned true.
class PacedWriter {
 public:
  PacedWriter(double per_second, std::function<bool(int)> commit)
      : commit_(std::move(commit)) {
    if (per_second <= 0) return;
    thread_ = std::thread([this, per_second] {
      const auto start = Clock::now();
      for (int i = 0; !stop_.load(); ++i) {
        const auto due = start + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(i / per_second));
        std::this_thread::sleep_until(due);
        if (stop_.load()) break;
        if (commit_(i)) {
          ++ok_;
        } else {
          ++failed_;
        }
      }
    });
  }
  ~PacedWriter() { Stop(); }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  uint64_t ok() const { return ok_.load(); }
  uint64_t failed() const { return failed_.load(); }

 private:
  std::function<bool(int)> commit_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> ok_{0}, failed_{0};
  std::thread thread_;
};

// The library's head version as /healthz reports it, or -1.
int64_t HeadVersion(const std::string& url) {
  httplib::Client client(url);
  auto res = client.Get("/healthz");
  if (!res || res->status != 200) return -1;
  json j = json::parse(res->body, nullptr, false);
  if (!j.is_object() || !j.contains("version")) return -1;
  return j["version"].get<int64_t>();
}

int Http(const std::string& url, int clients, double seconds,
         const std::vector<std::string>& queries, double commits_per_s) {
  std::vector<std::vector<double>> latency(clients);
  std::atomic<uint64_t> errors{0};
  std::mutex mu;
  std::string first_error;
  const int64_t first_version = HeadVersion(url);
  const std::string run = RunTag();
  httplib::Client writer_client(url);
  writer_client.set_keep_alive(true);
  writer_client.set_tcp_nodelay(true);
  PacedWriter writer(commits_per_s, [&](int i) {
    skilldb::QueuedRequest q;
    q.candidate = BenchSkill(run, i);
    q.replay_report = PassingReport();
    auto res = writer_client.Post("/v1/proposals", skilldb::ToJson(q),
                                  "application/json");
    return res && res->status == 202;
  });
  // Every client connects and sends one untimed request first (its
  // latency is reported as connect_max_us); the timed window starts when
  // all are connected.
  std::vector<double> connect(clients);
  std::latch connected(clients + 1);
  std::latch go(1);
  Clock::time_point deadline;
  std::vector<std::thread> threads;
  auto search = [&](httplib::Client& client, size_t* i) {
    const std::string body =
        json{{"query", queries[(*i)++ % queries.size()]},
             {"options", {{"k", 10}, {"fields", "title"}}}}
            .dump();
    auto res = client.Post("/v1/search", body, "application/json");
    if (!res || res->status != 200) {
      ++errors;
      std::lock_guard<std::mutex> lock(mu);
      if (first_error.empty()) {
        first_error = res ? "HTTP " + std::to_string(res->status) + ": " +
                                res->body.substr(0, 200)
                          : httplib::to_string(res.error());
      }
    }
  };
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      httplib::Client client(url);
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);
      size_t i = static_cast<size_t>(c) * 7919;
      const auto t0 = Clock::now();
      search(client, &i);
      connect[c] = Since(t0) * 1e6;
      connected.count_down();
      go.wait();
      while (Clock::now() < deadline) {
        const auto t = Clock::now();
        search(client, &i);
        latency[c].push_back(Since(t) * 1e6);
      }
    });
  }
  connected.arrive_and_wait();
  const auto start = Clock::now();
  deadline = start + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(seconds));
  go.count_down();
  for (auto& t : threads) t.join();
  const double elapsed = Since(start);
  writer.Stop();
  const int64_t last_version = HeadVersion(url);
  std::vector<double> all;
  for (const auto& l : latency) all.insert(all.end(), l.begin(), l.end());
  std::cout << json{{"mode", "http"},
                    {"clients", clients},
                    {"requests", all.size()},
                    {"errors", errors.load()},
                    {"first_error", first_error},
                    {"seconds", elapsed},
                    {"qps", all.size() / elapsed},
                    {"p50_us", Percentile(all, 0.50)},
                    {"p90_us", Percentile(all, 0.90)},
                    {"p99_us", Percentile(all, 0.99)},
                    {"max_us", Percentile(all, 1.0)},
                    {"connect_max_us", Percentile(connect, 1.0)},
                    {"commits_per_s_asked", commits_per_s},
                    {"proposals_posted", writer.ok()},
                    {"proposals_refused", writer.failed()},
                    {"versions_committed",
                     first_version < 0 || last_version < 0
                         ? json(nullptr)
                         : json(last_version - first_version)}}
                   .dump()
            << "\n";
  return errors.load() == 0 && writer.failed() == 0 ? 0 : 1;
}

int InProcess(const std::string& path, int threads, double seconds,
              const std::vector<std::string>& queries, double commits_per_s) {
  skilldb::Options options;
  options.read_only = commits_per_s <= 0;
  auto opened = skilldb::Library::Open(options, path);
  if (!opened.ok()) {
    std::cerr << opened.status().ToString() << "\n";
    return 2;
  }
  std::unique_ptr<skilldb::Library> lib = std::move(opened).value();
  const skilldb::Version first_version = lib->CurrentVersion();
  skilldb::QueryOptions q;
  q.k = 10;
  q.fields = {skilldb::HitField::kTitle};
  const std::string run = RunTag();
  std::atomic<uint64_t> errors{0};
  // The writer commits as the server's queue worker does.
  PacedWriter writer(commits_per_s, [&](int i) {
    skilldb::ProposalOptions po;
    auto p = lib->Propose(BenchSkill(run, i), po);
    if (!p.ok()) return false;
    skilldb::ReplayVerifier replay(PassingReport());
    skilldb::VerificationRequest request;
    request.task = "sum_dim1_fp32";
    if (!(*p)->Verify(replay, request).ok()) return false;
    auto outcome = (*p)->Commit();
    return outcome.ok() && outcome->accepted;
  });
  // Latency: `threads` threads, each timing one Query at a time.
  std::vector<std::vector<double>> latency(threads);
  auto start = Clock::now();
  const auto deadline = start + std::chrono::duration<double>(seconds);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      size_t i = static_cast<size_t>(t) * 7919;
      while (Clock::now() < deadline) {
        const auto s = Clock::now();
        auto r = lib->Query(q, queries[i++ % queries.size()]);
        latency[t].push_back(Since(s) * 1e6);
        if (!r.ok()) ++errors;
      }
    });
  }
  for (auto& t : pool) t.join();
  const double elapsed = Since(start);
  // Throughput of QueryBatch over every query, on `threads` threads (a
  // quarter of the time, the writer still committing).
  uint64_t done = 0;
  start = Clock::now();
  while (Since(start) < seconds / 4) {
    auto r = lib->QueryBatch(q, queries, threads);
    if (!r.ok()) return 2;
    done += r->size();
  }
  const double batch_qps = done / Since(start);
  writer.Stop();
  std::vector<double> all;
  for (const auto& l : latency) all.insert(all.end(), l.begin(), l.end());
  std::cout << json{{"mode", "inprocess"},
                    {"threads", threads},
                    {"queries", all.size()},
                    {"errors", errors.load()},
                    {"seconds", elapsed},
                    {"query_qps", all.size() / elapsed},
                    {"p50_us", Percentile(all, 0.50)},
                    {"p90_us", Percentile(all, 0.90)},
                    {"p99_us", Percentile(all, 0.99)},
                    {"max_us", Percentile(all, 1.0)},
                    {"batch_qps", batch_qps},
                    {"commits_per_s_asked", commits_per_s},
                    {"commits_failed", writer.failed()},
                    {"versions_committed", lib->CurrentVersion() - first_version}}
                   .dump()
            << "\n";
  return errors.load() == 0 && writer.failed() == 0 ? 0 : 1;
}

int Proposals(const std::string& url, int clients, int count) {
  std::atomic<int> next{0};
  std::atomic<uint64_t> errors{0};
  const auto start = Clock::now();
  const std::string run = RunTag();
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&] {
      httplib::Client client(url);
      client.set_keep_alive(true);
      for (int i = next++; i < count; i = next++) {
        skilldb::QueuedRequest q;
        q.candidate = BenchSkill(run, i);
        q.replay_report = PassingReport();
        auto res = client.Post("/v1/proposals", skilldb::ToJson(q),
                               "application/json");
        if (!res || res->status != 202) ++errors;
      }
    });
  }
  for (auto& t : threads) t.join();
  const double submitted = Since(start);
  httplib::Client client(url);
  uint64_t committed = 0;
  while (true) {
    auto res = client.Get("/healthz");
    if (!res) return 2;
    json j = json::parse(res->body);
    const auto& p = j["proposals"];
    committed = p["committed"].get<uint64_t>();
    if (p["queued"].get<uint64_t>() + p["verifying"].get<uint64_t>() == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const double elapsed = Since(start);
  std::cout << json{{"mode", "proposals"},
                    {"clients", clients},
                    {"proposals", count},
                    {"errors", errors.load()},
                    {"committed_total", committed},
                    {"submit_seconds", submitted},
                    {"submitted_per_s", count / submitted},
                    {"seconds", elapsed},
                    {"decided_per_s", count / elapsed}}
                   .dump()
            << "\n";
  return errors.load() == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> a(argv + 1, argv + argc);
  try {
    if ((a.size() == 5 || a.size() == 6) && a[0] == "http") {
      if (!Loopback(a[1])) {
        std::cerr << "server_load: only loopback urls\n";
        return 1;
      }
      return Http(a[1], std::stoi(a[2]), std::stod(a[3]), ReadQueries(a[4]),
                  a.size() == 6 ? std::stod(a[5]) : 0.0);
    }
    if ((a.size() == 5 || a.size() == 6) && a[0] == "inprocess") {
      return InProcess(a[1], std::stoi(a[2]), std::stod(a[3]),
                       ReadQueries(a[4]), a.size() == 6 ? std::stod(a[5]) : 0.0);
    }
    if (a.size() == 4 && a[0] == "proposals") {
      if (!Loopback(a[1])) {
        std::cerr << "server_load: only loopback urls\n";
        return 1;
      }
      return Proposals(a[1], std::stoi(a[2]), std::stoi(a[3]));
    }
  } catch (const std::exception& e) {  // std::stoi, json
    std::cerr << "server_load: " << e.what() << "\n";
    return 1;
  }
  std::cerr << "usage: server_load http URL CLIENTS SECONDS QUERIES [COMMITS_PER_S]\n"
               "       server_load inprocess LIBRARY THREADS SECONDS QUERIES "
               "[COMMITS_PER_S]\n"
               "       server_load proposals URL CLIENTS COUNT\n";
  return 1;
}
