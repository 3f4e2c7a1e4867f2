// A room's context: bounded in items and bytes, oldest evicted first.
#include "live/room_context.h"

#include <gtest/gtest.h>

namespace imago::live {
namespace {

TEST(RoomContext, KeepsAtMostItsItemsOldestEvictedFirst) {
  RoomLimits l;
  l.context_items = 3;
  RoomContext c(l);
  for (std::string s : {"a", "b", "c", "d", "e"}) c.add(s);
  EXPECT_EQ(c.items(), (std::vector<std::string>{"c", "d", "e"}));
  EXPECT_EQ(c.evicted(), 2u);
  EXPECT_EQ(c.accounted_bytes(), 3 * (1 + kContextItemOverheadBytes));
}

TEST(RoomContext, KeepsAtMostItsBytesOldestEvictedFirst) {
  RoomLimits l;
  l.context_bytes = 3 * (100 + kContextItemOverheadBytes);
  RoomContext c(l);
  for (char ch : std::string("vwxyz")) c.add(std::string(100, ch));
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c.items().front(), std::string(100, 'x'));
  EXPECT_LE(c.accounted_bytes(), l.context_bytes);
  // A bigger item evicts as many old ones as it needs.
  c.add(std::string(200, 'q'));
  EXPECT_EQ(c.items(), (std::vector<std::string>{std::string(100, 'z'), std::string(200, 'q')}));
  EXPECT_LE(c.accounted_bytes(), l.context_bytes);
}

TEST(RoomContext, FloodStaysUnderTheBound) {
  RoomLimits l;
  RoomContext c(l);
  for (int i = 0; i < 6000; ++i) c.add(std::string(4000, 'k'));
  EXPECT_LE(c.accounted_bytes(), l.context_bytes);
  EXPECT_LE(c.size(), l.context_items);
  EXPECT_EQ(c.size() + c.evicted(), 6000u);
}

}  // namespace
}  // namespace imago::live
