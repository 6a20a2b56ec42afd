// Metrics: the server's counters and request-latency histograms, rendered
// in Prometheus' text exposition format (version 0.0.4). Internal.
//
// Thread-safe: one mutex around small maps (a request adds to two entries).
#ifndef SKILLDB_SERVER_METRICS_H_
#define SKILLDB_SERVER_METRICS_H_

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace skilldb::server::internal {

// One gauge sampled at render time.
struct GaugeSample {
  std::string name;  // skilldb_...
  std::string help;
  std::string labels;  // `state="queued"` or ""
  double value = 0;
};

class Metrics {
 public:
  // Upper bounds of the latency histogram's buckets, seconds.
  static constexpr std::array<double, 12> kBuckets = {
      0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
      0.05,   0.1,   0.25,   0.5,   1.0,  5.0};

  // One request served on route `route` with HTTP status `code`.
  void ObserveRequest(const std::string& route, int code, double seconds);
  // Adds `delta` to the counter `family`{`key`="`value`"} (family ends in
  // _total; help is kept from the first call).
  void Increment(const std::string& family, const std::string& help,
                 const std::string& key, const std::string& value,
                 uint64_t delta = 1);
  uint64_t Counter(const std::string& family, const std::string& key,
                   const std::string& value) const;
  // Everything, then `gauges`, in the text format.
  std::string Render(const std::vector<GaugeSample>& gauges) const;

 private:
  struct Histogram {
    std::array<uint64_t, kBuckets.size()> buckets{};
    uint64_t count = 0;
    double sum = 0;
  };
  struct Family {
    std::string help;
    std::map<std::pair<std::string, std::string>, uint64_t> values;
  };
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;  // route, code
  std::map<std::string, Histogram> latency_;                  // by route
  std::map<std::string, Family> counters_;
};

// A Prometheus label value with \, " and newlines escaped.
std::string EscapeLabel(const std::string& value);

}  // namespace skilldb::server::internal

#endif  // SKILLDB_SERVER_METRICS_H_
