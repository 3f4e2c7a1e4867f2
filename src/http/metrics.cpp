#include "http/metrics.h"

#include <sstream>

namespace imago {

namespace {
std::string escape_label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
  return out;
}
}  // namespace

void Metrics::observe_request(const std::string& route, int status, double seconds) {
  std::lock_guard lock(mu_);
  ++requests_[{route, status}];
  auto& h = latency_[route];
  for (size_t i = 0; i < kLatencyBuckets.size(); ++i) {
    if (seconds <= kLatencyBuckets[i]) ++h.buckets[i];
  }
  ++h.count;
  h.sum += seconds;
}

void Metrics::count_rate_limited(const std::string& tier) {
  std::lock_guard lock(mu_);
  ++rate_limited_[tier];
}

void Metrics::count_auth_rejected(const std::string& reason) {
  std::lock_guard lock(mu_);
  ++auth_rejected_[reason];
}

std::string Metrics::render() const {
  std::lock_guard lock(mu_);
  std::ostringstream o;
  o << "# HELP imago_http_requests_total HTTP requests by route and status.\n"
       "# TYPE imago_http_requests_total counter\n";
  for (const auto& [k, v] : requests_) {
    o << "imago_http_requests_total{route=\"" << escape_label(k.first) << "\",status=\"" << k.second << "\"} "
      << v << "\n";
  }
  o << "# HELP imago_http_request_duration_seconds Time from request received to response ready.\n"
       "# TYPE imago_http_request_duration_seconds histogram\n";
  for (const auto& [route, h] : latency_) {
    std::string r = escape_label(route);
    for (size_t i = 0; i < kLatencyBuckets.size(); ++i) {
      o << "imago_http_request_duration_seconds_bucket{route=\"" << r << "\",le=\"" << kLatencyBuckets[i]
        << "\"} " << h.buckets[i] << "\n";
    }
    o << "imago_http_request_duration_seconds_bucket{route=\"" << r << "\",le=\"+Inf\"} " << h.count << "\n";
    o << "imago_http_request_duration_seconds_sum{route=\"" << r << "\"} " << h.sum << "\n";
    o << "imago_http_request_duration_seconds_count{route=\"" << r << "\"} " << h.count << "\n";
  }
  o << "# HELP imago_rate_limited_total Requests refused by a rate-limit bucket, by tier.\n"
       "# TYPE imago_rate_limited_total counter\n";
  for (const auto& [k, v] : rate_limited_)
    o << "imago_rate_limited_total{tier=\"" << escape_label(k) << "\"} " << v << "\n";
  o << "# HELP imago_auth_rejected_total Requests refused by authentication, by reason.\n"
       "# TYPE imago_auth_rejected_total counter\n";
  for (const auto& [k, v] : auth_rejected_) {
    o << "imago_auth_rejected_total{reason=\"" << escape_label(k) << "\"} " << v << "\n";
  }
  return o.str();
}

}  // namespace imago
