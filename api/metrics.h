#pragma once
#include <array>
#include <atomic>
#include <map>
#include <mutex>
#include <string>

namespace scribe::api {

// In-process Prometheus metrics: requests by route and status, and a latency
// histogram by route. The event-store and projection gauges are added at
// scrape time by the /metrics handler.
class Metrics {
 public:
  static Metrics& instance();
  void observe(const std::string& route, const std::string& method, int status, double seconds);
  std::string render() const;

 private:
  static constexpr std::array<double, 12> kBuckets = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                      0.1,   0.25,   0.5,   1.0,  5.0,   30.0};
  struct Histogram {
    std::array<uint64_t, kBuckets.size()> counts{};
    uint64_t total = 0;
    double sum = 0;
  };
  mutable std::mutex mu_;
  std::map<std::tuple<std::string, std::string, int>, uint64_t> requests_;
  std::map<std::string, Histogram> latency_;
};

}  // namespace scribe::api
