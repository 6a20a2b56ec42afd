#include "metrics.h"

#include <cstdio>
#include <sstream>

namespace skilldb::server::internal {
namespace {

std::string FormatValue(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

}  // namespace

std::string EscapeLabel(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void Metrics::ObserveRequest(const std::string& route, int code,
                             double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  ++requests_[{route, code}];
  Histogram& h = latency_[route];
  for (size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) ++h.buckets[i];
  }
  ++h.count;
  h.sum += seconds;
}

void Metrics::Increment(const std::string& family, const std::string& help,
                        const std::string& key, const std::string& value,
                        uint64_t delta) {
  std::lock_guard<std::mutex> lock(mu_);
  Family& f = counters_[family];
  if (f.help.empty()) f.help = help;
  f.values[{key, value}] += delta;
}

uint64_t Metrics::Counter(const std::string& family, const std::string& key,
                          const std::string& value) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto f = counters_.find(family);
  if (f == counters_.end()) return 0;
  auto v = f->second.values.find({key, value});
  return v == f->second.values.end() ? 0 : v->second;
}

std::string Metrics::Render(const std::vector<GaugeSample>& gauges) const {
  std::ostringstream out;
  std::lock_guard<std::mutex> lock(mu_);
  out << "# HELP skilldb_http_requests_total HTTP requests served, by route "
         "and status code.\n"
         "# TYPE skilldb_http_requests_total counter\n";
  for (const auto& [key, n] : requests_) {
    out << "skilldb_http_requests_total{route=\"" << EscapeLabel(key.first)
        << "\",code=\"" << key.second << "\"} " << n << "\n";
  }
  out << "# HELP skilldb_http_request_duration_seconds Time to serve a "
         "request, by route.\n"
         "# TYPE skilldb_http_request_duration_seconds histogram\n";
  for (const auto& [route, h] : latency_) {
    const std::string label = "route=\"" + EscapeLabel(route) + "\"";
    for (size_t i = 0; i < kBuckets.size(); ++i) {
      out << "skilldb_http_request_duration_seconds_bucket{" << label
          << ",le=\"" << FormatValue(kBuckets[i]) << "\"} " << h.buckets[i]
          << "\n";
    }
    out << "skilldb_http_request_duration_seconds_bucket{" << label
        << ",le=\"+Inf\"} " << h.count << "\n";
    out << "skilldb_http_request_duration_seconds_sum{" << label << "} "
        << FormatValue(h.sum) << "\n";
    out << "skilldb_http_request_duration_seconds_count{" << label << "} "
        << h.count << "\n";
  }
  for (const auto& [name, f] : counters_) {
    out << "# HELP " << name << " " << f.help << "\n# TYPE " << name
        << " counter\n";
    for (const auto& [key, n] : f.values) {
      out << name << "{" << key.first << "=\"" << EscapeLabel(key.second)
          << "\"} " << n << "\n";
    }
  }
  std::string last;
  for (const GaugeSample& g : gauges) {
    if (g.name != last) {
      out << "# HELP " << g.name << " " << g.help << "\n# TYPE " << g.name
          << " gauge\n";
      last = g.name;
    }
    out << g.name;
    if (!g.labels.empty()) out << "{" << g.labels << "}";
    out << " " << FormatValue(g.value) << "\n";
  }
  return out.str();
}

}  // namespace skilldb::server::internal
