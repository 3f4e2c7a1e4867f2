// The control-message buckets: per connection, per room, refunds, and the close after sustained
// abuse, all on passed-in time.
#include "live/control_rate.h"

#include <gtest/gtest.h>

namespace imago::live {
namespace {

TEST(ControlRate, AConnectionGetsItsBurstThenItsRate) {
  RoomLimits l;
  ControlRate r(l);
  int a = 0;
  const int x = 1;
  for (int i = 0; i < 100; ++i) a += r.admit(&x, 0).allowed;
  EXPECT_EQ(a, static_cast<int>(l.control_burst_connection));
  auto d = r.admit(&x, 0);
  EXPECT_FALSE(d.allowed);
  EXPECT_GT(d.retry_after_us, 0);
  // One second later: the connection's rate again.
  a = 0;
  for (int i = 0; i < 100; ++i) a += r.admit(&x, 1'000'000).allowed;
  EXPECT_EQ(a, static_cast<int>(l.control_per_s_connection));
}

TEST(ControlRate, ManyConnectionsShareTheRoomsBucket) {
  RoomLimits l;
  ControlRate r(l);
  int conns[50];
  int a = 0;
  for (int& c : conns)
    for (int i = 0; i < 5; ++i) a += r.admit(&c, 0).allowed;
  EXPECT_EQ(a, static_cast<int>(l.control_burst_room));
  // A connection refused by the room kept its own token: once the room refills, it is admitted.
  int fresh = 0;
  EXPECT_FALSE(r.admit(&fresh, 0).allowed);
  EXPECT_TRUE(r.admit(&fresh, 100'000).allowed);  // 0.1 s: two room tokens back at 20/s
}

TEST(ControlRate, SustainedAbuseAsksToCloseAndAnAdmittedMessageResetsTheCount) {
  RoomLimits l;
  l.refusals_before_close = 10;
  ControlRate r(l);
  const int x = 1;
  int refused = 0;
  ControlDecision d;
  for (int i = 0; i < 100 && !d.close; ++i) {
    d = r.admit(&x, 0);
    refused += !d.allowed;
  }
  EXPECT_TRUE(d.close);
  EXPECT_EQ(refused, 10);
  EXPECT_TRUE(r.admit(&x, 1'000'000).allowed);
  EXPECT_FALSE(r.admit(&x, 1'000'000 + 0).close);
  r.forget(&x);
  EXPECT_EQ(r.connections(), 0u);
}

}  // namespace
}  // namespace imago::live
