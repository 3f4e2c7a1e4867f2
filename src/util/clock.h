// Clock: the one source of time. Token buckets, token expiry, heartbeats, leases and billing ticks
// all read it, so tests drive time with ManualClock instead of sleeping.
#pragma once
#include <chrono>
#include <cstdint>
#include <mutex>

namespace imago {

class Clock {
 public:
  virtual ~Clock() = default;
  // Wall-clock time in microseconds since the Unix epoch.
  virtual int64_t now_us() const = 0;

  int64_t now_ms() const { return now_us() / 1000; }
  int64_t now_s() const { return now_us() / 1000000; }
  double now_seconds() const { return static_cast<double>(now_us()) / 1e6; }
};

class SystemClock final : public Clock {
 public:
  int64_t now_us() const override;
  static SystemClock& instance();
};

// A clock that only moves when told to; thread safe.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(int64_t start_us = 1'700'000'000'000'000) : now_(start_us) {}
  int64_t now_us() const override {
    std::lock_guard lock(mu_);
    return now_;
  }
  void advance_us(int64_t us) {
    std::lock_guard lock(mu_);
    now_ += us;
  }
  void advance_seconds(double s) { advance_us(static_cast<int64_t>(s * 1e6)); }
  void set_us(int64_t us) {
    std::lock_guard lock(mu_);
    now_ = us;
  }

 private:
  mutable std::mutex mu_;
  int64_t now_;
};

}  // namespace imago
