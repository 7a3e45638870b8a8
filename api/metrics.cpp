#include "api/metrics.h"

#include <sstream>

namespace scribe::api {

Metrics& Metrics::instance() {
  static Metrics m;
  return m;
}

void Metrics::observe(const std::string& route, const std::string& method, int status, double seconds) {
  std::lock_guard lock(mu_);
  ++requests_[{route, method, status}];
  auto& h = latency_[route];
  for (std::size_t i = 0; i < kBuckets.size(); ++i)
    if (seconds <= kBuckets[i]) ++h.counts[i];
  ++h.total;
  h.sum += seconds;
}

std::string Metrics::render() const {
  std::lock_guard lock(mu_);
  std::ostringstream out;
  out << "# HELP scribe_http_requests_total HTTP requests by route and status.\n"
      << "# TYPE scribe_http_requests_total counter\n";
  for (const auto& [k, n] : requests_)
    out << "scribe_http_requests_total{route=\"" << std::get<0>(k) << "\",method=\"" << std::get<1>(k) << "\",status=\""
        << std::get<2>(k) << "\"} " << n << "\n";
  out << "# HELP scribe_http_request_duration_seconds HTTP request latency by route.\n"
      << "# TYPE scribe_http_request_duration_seconds histogram\n";
  for (const auto& [route, h] : latency_) {
    for (std::size_t i = 0; i < kBuckets.size(); ++i)
      out << "scribe_http_request_duration_seconds_bucket{route=\"" << route << "\",le=\"" << kBuckets[i] << "\"} "
          << h.counts[i] << "\n";
    out << "scribe_http_request_duration_seconds_bucket{route=\"" << route << "\",le=\"+Inf\"} " << h.total << "\n"
        << "scribe_http_request_duration_seconds_sum{route=\"" << route << "\"} " << h.sum << "\n"
        << "scribe_http_request_duration_seconds_count{route=\"" << route << "\"} " << h.total << "\n";
  }
  return out.str();
}

}  // namespace scribe::api
