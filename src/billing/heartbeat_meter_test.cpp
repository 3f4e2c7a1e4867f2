#include "billing/heartbeat_meter.h"

#include <gtest/gtest.h>

namespace imago::billing {
namespace {

constexpr int64_t kMin = 60'000'000;
constexpr int64_t kGrace = 300'000'000;

TEST(HeartbeatMeter, MinutesCountFromTheFirstHeartbeat) {
  auto m = observe_heartbeat(std::nullopt, "essence_self_hosted", 1000, kGrace);
  EXPECT_EQ(m.billing_type, "essence_self_hosted");
  EXPECT_EQ(m.next_minute, 0);
  EXPECT_EQ(running_minute(m, 1000, kMin), 0);
  EXPECT_TRUE(minute_due(m, 1000, kMin));
  m.next_minute = 1;
  EXPECT_FALSE(minute_due(m, 1000 + kMin - 1, kMin));
  EXPECT_TRUE(minute_due(m, 1000 + kMin, kMin));
  EXPECT_EQ(running_minute(m, 1000 + 5 * kMin, kMin), 5);
}

TEST(HeartbeatMeter, ASilenceLongerThanTheGraceIsAPauseAndNotBilled) {
  auto m = observe_heartbeat(std::nullopt, "essence_self_hosted", 0, kGrace);
  m = observe_heartbeat(m, "expression_self_hosted", 2 * kMin, kGrace);  // within the grace
  EXPECT_EQ(m.started_us, 0);
  EXPECT_EQ(m.billing_type, "essence_self_hosted");  // the first heartbeat's type stays
  m = observe_heartbeat(m, "essence_self_hosted", 2 * kMin + kGrace + 1, kGrace);
  EXPECT_EQ(m.started_us, kGrace + 1);
  EXPECT_EQ(running_minute(m, m.last_seen_us, kMin), 2);
}

TEST(HeartbeatMeter, AnOlderHeartbeatMovesNothingBack) {
  auto m = observe_heartbeat(std::nullopt, "essence_self_hosted", 10 * kMin, kGrace);
  m = observe_heartbeat(m, "essence_self_hosted", 10 * kMin - 5'000'000, kGrace);
  EXPECT_EQ(m.started_us, 10 * kMin);
  EXPECT_EQ(m.last_seen_us, 10 * kMin);
  EXPECT_EQ(running_minute(m, 10 * kMin - 5'000'000, kMin), -1);
  EXPECT_FALSE(minute_due(m, 10 * kMin - 5'000'000, kMin));
}

}  // namespace
}  // namespace imago::billing
