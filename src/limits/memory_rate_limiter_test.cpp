#include <gtest/gtest.h>

#include "limits/rate_limiter.h"

namespace imago {
namespace {

TEST(MemoryRateLimiter, HeadersFollowTheBucket) {
  ManualClock clock(1'700'000'000'000'000);
  auto limiter = make_memory_rate_limiter(clock);
  auto d = limiter->take("acct:a:generate", 4);
  EXPECT_TRUE(d.allowed);
  EXPECT_EQ(d.limit, 4);
  EXPECT_EQ(d.remaining, 3);
  EXPECT_EQ(d.reset_unix_s, 1'700'000'000 + 15);  // one token refills in 15 s
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limiter->take("acct:a:generate", 4).allowed);
  auto denied = limiter->take("acct:a:generate", 4);
  EXPECT_FALSE(denied.allowed);
  EXPECT_EQ(denied.remaining, 0);
  EXPECT_EQ(denied.retry_after_s, 15);
  EXPECT_EQ(denied.reset_unix_s, 1'700'000'000 + 60);
  // Other keys are independent.
  EXPECT_TRUE(limiter->take("acct:b:generate", 4).allowed);
  clock.advance_seconds(15);
  EXPECT_TRUE(limiter->take("acct:a:generate", 4).allowed);
}

TEST(MemoryRateLimiter, RetryAfterIsNeverZeroWhenDenied) {
  ManualClock clock;
  auto limiter = make_memory_rate_limiter(clock);
  for (int i = 0; i < 2880; ++i) limiter->take("k", 2880);
  auto d = limiter->take("k", 2880);
  EXPECT_FALSE(d.allowed);
  EXPECT_GE(d.retry_after_s, 1);
}

TEST(MemoryWindowCounter, BlocksUntilTheWindowClears) {
  ManualClock clock;
  auto w = make_memory_window_counter(clock);
  EXPECT_FALSE(w->peek("ip", 3, 60).blocked);
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(w->hit("ip", 3, 60).blocked);
  auto p = w->peek("ip", 3, 60);
  EXPECT_TRUE(p.blocked);
  EXPECT_EQ(p.retry_after_s, 60);
  clock.advance_seconds(59.5);
  p = w->peek("ip", 3, 60);
  EXPECT_TRUE(p.blocked);
  EXPECT_EQ(p.retry_after_s, 1);
  clock.advance_seconds(0.5);
  EXPECT_FALSE(w->peek("ip", 3, 60).blocked);
  EXPECT_FALSE(w->hit("ip", 3, 60).blocked);
}

TEST(MemoryWindowCounter, HitBeyondLimitIsBlocked) {
  ManualClock clock;
  auto w = make_memory_window_counter(clock);
  for (int i = 0; i < 120; ++i) ASSERT_FALSE(w->hit("anon", 120, 60).blocked);
  EXPECT_TRUE(w->hit("anon", 120, 60).blocked);
}

TEST(MemoryWindowCounter, ReleaseTakesBackOneCountedEventInTheOpenWindow) {
  ManualClock clock;
  auto w = make_memory_window_counter(clock);
  for (int i = 0; i < 3; ++i) ASSERT_FALSE(w->hit("k", 3, 60).blocked);
  w->release("k", 60);
  EXPECT_FALSE(w->peek("k", 3, 60).blocked);
  EXPECT_FALSE(w->hit("k", 3, 60).blocked);
  EXPECT_TRUE(w->hit("k", 3, 60).blocked);
  for (int i = 0; i < 10; ++i) w->release("k", 60);  // never below zero
  EXPECT_EQ(w->peek("k", 3, 60).count, 0);
  w->release("unknown", 60);
  EXPECT_EQ(w->peek("unknown", 3, 60).count, 0);
}

}  // namespace
}  // namespace imago
