// Process-local counters exported in Prometheus text format at GET /metrics. Each node exposes its
// own; a cluster is scraped node by node, as Prometheus expects.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace imago {

class Metrics {
 public:
  static constexpr std::array<double, 12> kLatencyBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                             0.05,   0.1,   0.25,   0.5,   1.0,  5.0};

  // `route` is the route pattern ("GET /v1/agent/{code}"), never the raw path, to bound cardinality.
  void observe_request(const std::string& route, int status, double seconds);
  void count_rate_limited(const std::string& tier);
  void count_auth_rejected(const std::string& reason);  // missing, invalid, throttled
  std::string render() const;

 private:
  struct Histogram {
    std::array<uint64_t, kLatencyBuckets.size()> buckets{};
    uint64_t count = 0;
    double sum = 0;
  };
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;
  std::map<std::string, Histogram> latency_;
  std::map<std::string, uint64_t> rate_limited_;
  std::map<std::string, uint64_t> auth_rejected_;
};

}  // namespace imago
