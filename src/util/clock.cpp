#include "util/clock.h"

namespace imago {

int64_t SystemClock::now_us() const {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t SystemClock::monotonic_us() const {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool SystemClock::wait_for(int64_t us, Interrupt& interrupt) const {
  std::unique_lock lock(interrupt.mu_);
  return interrupt.cv_.wait_for(lock, std::chrono::microseconds(std::max<int64_t>(0, us)),
                                [&] { return interrupt.raised_; });
}

SystemClock& SystemClock::instance() {
  static SystemClock clock;
  return clock;
}

bool ManualClock::wait_for(int64_t us, Interrupt& interrupt) const {
  const int64_t deadline = mono_.load() + std::max<int64_t>(0, us);
  {
    std::lock_guard lock(waiters_mu_);
    waiters_.insert(&interrupt);
  }
  bool raised;
  {
    std::unique_lock lock(interrupt.mu_);
    interrupt.cv_.wait(lock, [&] { return interrupt.raised_ || mono_.load() >= deadline; });
    raised = interrupt.raised_;
  }
  std::lock_guard lock(waiters_mu_);
  waiters_.erase(waiters_.find(&interrupt));
  return raised;
}

void ManualClock::advance_us(int64_t us) {
  now_.fetch_add(us);
  mono_.fetch_add(std::max<int64_t>(0, us));
  std::lock_guard lock(waiters_mu_);
  for (Interrupt* i : waiters_) {
    // Taking the waiter's mutex orders this notify after its predicate check (no lost wake-up).
    { std::lock_guard inner(i->mu_); }
    i->cv_.notify_all();
  }
}

}  // namespace imago
