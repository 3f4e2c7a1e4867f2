#include "limits/token_bucket.h"

#include <gtest/gtest.h>

#include <random>

#include "limits/plan.h"

namespace imago {
namespace {

// For any window of length T, admitted requests never exceed capacity + rate*T.
TEST(TokenBucket, NeverAdmitsMoreThanCapacityPlusRateTimesWindow) {
  std::mt19937_64 rng(42);
  for (int per_minute : {4, 30, 120, 2880}) {
    const double capacity = per_minute, rate = per_minute / 60.0;
    BucketState st;
    int64_t t = 1'000'000;
    std::vector<int64_t> admitted;
    for (int i = 0; i < 20000; ++i) {
      t += static_cast<int64_t>(rng() % 200'000);  // requests every 0..200 ms, bursty
      if (take_token(st, capacity, rate, t).allowed) admitted.push_back(t);
    }
    ASSERT_GT(admitted.size(), 10u);
    // Check every window that starts at an admitted request (the worst case starts there).
    for (size_t i = 0; i < admitted.size(); ++i) {
      for (double window_s : {0.5, 1.0, 7.0, 60.0, 300.0}) {
        int64_t end = admitted[i] + static_cast<int64_t>(window_s * 1e6);
        size_t j = i;
        while (j < admitted.size() && admitted[j] <= end) ++j;
        double count = static_cast<double>(j - i);
        ASSERT_LE(count, capacity + rate * window_s + 1e-6)
            << "per_minute=" << per_minute << " window=" << window_s << " at " << i;
      }
    }
  }
}

TEST(TokenBucket, DrainedBucketAdmitsAgainAfterExactlyTheRefillTime) {
  for (int per_minute : {4, 30, 120}) {
    const double capacity = per_minute, rate = per_minute / 60.0;
    BucketState st;
    int64_t t = 5'000'000;
    for (int i = 0; i < per_minute; ++i) ASSERT_TRUE(take_token(st, capacity, rate, t).allowed);
    auto denied = take_token(st, capacity, rate, t);
    ASSERT_FALSE(denied.allowed);
    const int64_t refill_us = static_cast<int64_t>(std::ceil(1e6 / rate));
    EXPECT_EQ(denied.retry_after_us, refill_us);
    EXPECT_FALSE(take_token(st, capacity, rate, t + refill_us - 1).allowed);
    EXPECT_TRUE(take_token(st, capacity, rate, t + refill_us).allowed);
  }
}

TEST(TokenBucket, StartsFullAndRefillsToCapacityOnly) {
  BucketState st;
  auto d = take_token(st, 10, 1, 0);
  EXPECT_TRUE(d.allowed);
  EXPECT_DOUBLE_EQ(d.tokens, 9);
  EXPECT_EQ(d.full_in_us, 1'000'000);
  d = take_token(st, 10, 1, 3600'000'000);
  EXPECT_DOUBLE_EQ(d.tokens, 9);
}

TEST(TokenBucket, DowngradeClampsTokensToTheNewCapacity) {
  BucketState st;
  take_token(st, 720, 12, 0);
  auto d = take_token(st, 30, 0.5, 1);
  EXPECT_TRUE(d.allowed);
  EXPECT_LE(d.tokens, 29.0);
}

TEST(Plans, MatchSpecTable) {
  EXPECT_EQ(default_limits(Plan::kFree).generate_per_min, 4);
  EXPECT_EQ(default_limits(Plan::kCreator).write_per_min, 60);
  EXPECT_EQ(default_limits(Plan::kPro).read_per_min, 720);
  EXPECT_EQ(default_limits(Plan::kBusiness).generate_per_min, 60);
  EXPECT_EQ(default_limits(Plan::kEnterprise).read_per_min, 2880);
  EXPECT_EQ(parse_plan("business"), Plan::kBusiness);
  EXPECT_FALSE(parse_plan("gold").has_value());
}

}  // namespace
}  // namespace imago
