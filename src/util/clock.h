// Clock: the one source of time. Token buckets, token expiry, heartbeats, leases and billing ticks
// all read it, so tests drive time with ManualClock instead of sleeping. Wall time (now_us) is for
// timestamps; monotonic time (monotonic_us) is for durations, deadlines and waits, since the wall
// clock may jump.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <set>

namespace imago {

// A latch that ends waits early: once raised, every Clock::wait_for on it returns at once until it
// is reset (shutdown of a heartbeat or billing-tick loop, a session that ended).
class Interrupt {
 public:
  void raise() {
    {
      std::lock_guard lock(mu_);
      raised_ = true;
    }
    cv_.notify_all();
  }
  void reset() {
    std::lock_guard lock(mu_);
    raised_ = false;
  }
  bool raised() const {
    std::lock_guard lock(mu_);
    return raised_;
  }

 private:
  friend class SystemClock;
  friend class ManualClock;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool raised_ = false;
};

class Clock {
 public:
  virtual ~Clock() = default;
  // Wall-clock time in microseconds since the Unix epoch.
  virtual int64_t now_us() const = 0;
  // Monotonic time in microseconds from an arbitrary origin; never goes back.
  virtual int64_t monotonic_us() const = 0;
  // Waits `us` microseconds of this clock's monotonic time, or less when `interrupt` is raised.
  // Returns true when interrupted (also when it was raised before the call).
  virtual bool wait_for(int64_t us, Interrupt& interrupt) const = 0;

  int64_t now_ms() const { return now_us() / 1000; }
  int64_t now_s() const { return now_us() / 1000000; }
  double now_seconds() const { return static_cast<double>(now_us()) / 1e6; }
  int64_t monotonic_ms() const { return monotonic_us() / 1000; }
};

class SystemClock final : public Clock {
 public:
  int64_t now_us() const override;
  int64_t monotonic_us() const override;
  bool wait_for(int64_t us, Interrupt& interrupt) const override;
  static SystemClock& instance();
};

// A clock that only moves when told to; thread safe. Wall and monotonic time advance together;
// advancing wakes the waits whose time has come.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(int64_t start_us = 1'700'000'000'000'000) : now_(start_us) {}
  int64_t now_us() const override { return now_.load(); }
  int64_t monotonic_us() const override { return mono_.load(); }
  bool wait_for(int64_t us, Interrupt& interrupt) const override;
  void advance_us(int64_t us);
  void advance_seconds(double s) { advance_us(static_cast<int64_t>(s * 1e6)); }
  // Sets wall time only (a wall-clock jump); monotonic time is unaffected.
  void set_us(int64_t us) { now_.store(us); }

 private:
  std::atomic<int64_t> now_;
  std::atomic<int64_t> mono_{0};
  mutable std::mutex waiters_mu_;  // taken before an Interrupt's mutex, never after
  mutable std::multiset<Interrupt*> waiters_;
};

}  // namespace imago
