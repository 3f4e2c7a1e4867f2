#include "util/clock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace imago {
namespace {

TEST(ManualClock, MonotonicTimeIgnoresWallClockJumps) {
  ManualClock clock;
  const int64_t m0 = clock.monotonic_us();
  clock.set_us(0);  // the wall clock jumps back
  EXPECT_EQ(clock.monotonic_us(), m0);
  clock.advance_seconds(2);
  EXPECT_EQ(clock.monotonic_us(), m0 + 2'000'000);
  EXPECT_EQ(clock.now_us(), 2'000'000);
}

TEST(ManualClock, WaitEndsWhenTheClockIsAdvancedPastTheDeadline) {
  ManualClock clock;
  Interrupt interrupt;
  std::atomic<bool> done{false};
  bool interrupted = true;
  int64_t waited_us = 0;
  std::thread waiter([&] {
    const int64_t start = clock.monotonic_us();
    interrupted = clock.wait_for(5'000'000, interrupt);
    waited_us = clock.monotonic_us() - start;
    done = true;
  });
  // Bounded: the clock moves 1 s per step until the wait ends (5 steps after it began).
  for (int i = 0; i < 2000 && !done; ++i) {
    clock.advance_seconds(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  waiter.join();
  EXPECT_FALSE(interrupted);
  EXPECT_GE(waited_us, 5'000'000);
}

TEST(ManualClock, RaisingTheInterruptEndsTheWait) {
  ManualClock clock;
  Interrupt interrupt;
  bool interrupted = false;
  std::thread waiter([&] { interrupted = clock.wait_for(3'600'000'000, interrupt); });
  interrupt.raise();
  waiter.join();
  EXPECT_TRUE(interrupted);
  // Still raised: the next wait returns at once.
  EXPECT_TRUE(clock.wait_for(3'600'000'000, interrupt));
  interrupt.reset();
  EXPECT_FALSE(clock.wait_for(0, interrupt));
}

TEST(SystemClock, WaitTimesOutAndInterrupts) {
  auto& clock = SystemClock::instance();
  Interrupt interrupt;
  const int64_t t0 = clock.monotonic_us();
  EXPECT_FALSE(clock.wait_for(2'000, interrupt));
  EXPECT_GE(clock.monotonic_us() - t0, 2'000);
  interrupt.raise();
  EXPECT_TRUE(clock.wait_for(60'000'000, interrupt));
}

}  // namespace
}  // namespace imago
