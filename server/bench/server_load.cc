// server_load: the load generator of benchmarks/server_bench.sh. Bounded in
// time, loopback only (it refuses any other address). One JSON line out.
//
//   server_load http URL CLIENTS SECONDS QUERIES
//       CLIENTS threads, each with its own keep-alive connection, POST
//       /v1/search one query at a time (k 10, titles) until SECONDS pass;
//       throughput and per-request latency percentiles.
//   server_load inprocess LIBRARY THREADS SECONDS QUERIES
//       the same queries in this process: QueryBatch over all of them on
//       THREADS threads, repeated for SECONDS (throughput), then THREADS
//       threads each calling Query (latency percentiles).
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
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "skilldb/json.h"
#include "skilldb/library.h"

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

int Http(const std::string& url, int clients, double seconds,
         const std::vector<std::string>& queries) {
  std::vector<std::vector<double>> latency(clients);
  std::atomic<uint64_t> errors{0};
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration<double>(seconds);
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      httplib::Client client(url);
      client.set_keep_alive(true);
      size_t i = static_cast<size_t>(c) * 7919;
      while (Clock::now() < deadline) {
        const std::string body =
            json{{"query", queries[i++ % queries.size()]},
                 {"options", {{"k", 10}, {"fields", "title"}}}}
                .dump();
        const auto t = Clock::now();
        auto res = client.Post("/v1/search", body, "application/json");
        latency[c].push_back(Since(t) * 1e6);
        if (!res || res->status != 200) ++errors;
      }
    });
  }
  for (auto& t : threads) t.join();
  const double elapsed = Since(start);
  std::vector<double> all;
  for (const auto& l : latency) all.insert(all.end(), l.begin(), l.end());
  std::cout << json{{"mode", "http"},
                    {"clients", clients},
                    {"requests", all.size()},
                    {"errors", errors.load()},
                    {"seconds", elapsed},
                    {"qps", all.size() / elapsed},
                    {"p50_us", Percentile(all, 0.50)},
                    {"p99_us", Percentile(all, 0.99)}}
                   .dump()
            << "\n";
  return errors.load() == 0 ? 0 : 1;
}

int InProcess(const std::string& path, int threads, double seconds,
              const std::vector<std::string>& queries) {
  skilldb::Options options;
  options.read_only = true;
  auto lib = skilldb::Library::Open(options, path);
  if (!lib.ok()) {
    std::cerr << lib.status().ToString() << "\n";
    return 2;
  }
  skilldb::QueryOptions q;
  q.k = 10;
  q.fields = {skilldb::HitField::kTitle};
  // Throughput: QueryBatch over every query, on `threads` threads.
  uint64_t done = 0;
  auto start = Clock::now();
  while (Since(start) < seconds) {
    auto r = (*lib)->QueryBatch(q, queries, threads);
    if (!r.ok()) return 2;
    done += r->size();
  }
  const double batch_qps = done / Since(start);
  // Latency: `threads` threads, each timing one Query at a time.
  std::vector<std::vector<double>> latency(threads);
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  std::vector<std::thread> pool;
  start = Clock::now();
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      size_t i = static_cast<size_t>(t) * 7919;
      while (Clock::now() < deadline) {
        const auto s = Clock::now();
        auto r = (*lib)->Query(q, queries[i++ % queries.size()]);
        latency[t].push_back(Since(s) * 1e6);
        if (!r.ok()) std::abort();
      }
    });
  }
  for (auto& t : pool) t.join();
  const double elapsed = Since(start);
  std::vector<double> all;
  for (const auto& l : latency) all.insert(all.end(), l.begin(), l.end());
  std::cout << json{{"mode", "inprocess"},
                    {"threads", threads},
                    {"batch_qps", batch_qps},
                    {"query_qps", all.size() / elapsed},
                    {"p50_us", Percentile(all, 0.50)},
                    {"p99_us", Percentile(all, 0.99)}}
                   .dump()
            << "\n";
  return 0;
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

int Proposals(const std::string& url, int clients, int count) {
  std::atomic<int> next{0};
  std::atomic<uint64_t> errors{0};
  const auto start = Clock::now();
  const std::string run = std::to_string(
      std::chrono::system_clock::now().time_since_epoch().count());
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&] {
      httplib::Client client(url);
      client.set_keep_alive(true);
      for (int i = next++; i < count; i = next++) {
        skilldb::QueuedRequest q;
        const std::string id = "bench-" + run + "-" + std::to_string(i);
        q.candidate = skilldb::Skill::Make(id, "Benchmark technique " + id);
        q.candidate.body = "Distinct words " + id + " " + std::to_string(i * 7);
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
  if (a.size() == 5 && a[0] == "http") {
    if (!Loopback(a[1])) {
      std::cerr << "server_load: only loopback urls\n";
      return 1;
    }
    return Http(a[1], std::stoi(a[2]), std::stod(a[3]), ReadQueries(a[4]));
  }
  if (a.size() == 5 && a[0] == "inprocess") {
    return InProcess(a[1], std::stoi(a[2]), std::stod(a[3]), ReadQueries(a[4]));
  }
  if (a.size() == 4 && a[0] == "proposals") {
    if (!Loopback(a[1])) {
      std::cerr << "server_load: only loopback urls\n";
      return 1;
    }
    return Proposals(a[1], std::stoi(a[2]), std::stoi(a[3]));
  }
  std::cerr << "usage: server_load http URL CLIENTS SECONDS QUERIES\n"
               "       server_load inprocess LIBRARY THREADS SECONDS QUERIES\n"
               "       server_load proposals URL CLIENTS COUNT\n";
  return 1;
}
