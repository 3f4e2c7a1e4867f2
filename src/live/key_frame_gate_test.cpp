// A viewer that falls behind gets no picture whose reference it lost: after a drop, nothing but a
// key frame; a key frame is asked for only once the queue has drained.
#include "live/key_frame_gate.h"

#include <gtest/gtest.h>

namespace imago::live {
namespace {

TEST(KeyFrameGate, StartsAtAKeyFrameDropsToTheNextOneAndAsksOnlyWithRoom) {
  KeyFrameGate g(1000);
  EXPECT_TRUE(g.wants_key_frame(0));  // nothing sent yet
  EXPECT_FALSE(g.admit(false, 0));    // a P-frame before any key frame is useless
  EXPECT_TRUE(g.admit(true, 0));      // the first key frame
  EXPECT_FALSE(g.wants_key_frame(0));
  EXPECT_TRUE(g.admit(false, 999));      // under the bound
  EXPECT_FALSE(g.admit(false, 1000));    // at the bound: dropped ...
  EXPECT_FALSE(g.admit(false, 10));      // ... and every P-frame after it, with room or not
  EXPECT_FALSE(g.wants_key_frame(600));  // still more than half full: asking would not help yet
  EXPECT_TRUE(g.wants_key_frame(400));
  EXPECT_FALSE(g.admit(true, 1200));  // a key frame while still over the bound is dropped too
  EXPECT_TRUE(g.admit(true, 400));
  EXPECT_TRUE(g.admit(false, 400));
  EXPECT_EQ(g.dropped(), 4);
  g.broken();  // queued pictures were discarded (an interrupt)
  EXPECT_FALSE(g.admit(false, 0));
  EXPECT_TRUE(g.admit(true, 0));
  EXPECT_EQ(g.dropped(), 5);
}

}  // namespace
}  // namespace imago::live
