// Offline render: MP4 files checked with ffprobe (Debian's ffmpeg package). The command line
// (`imagod imx`, `imagod render`) is tested in src/main/avatar_commands_test.cpp.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <opencv2/imgproc.hpp>

#include "avatar/clip.h"
#include "avatar/imx.h"
#include "avatar/internal.h"
#include "avatar/renderer.h"
#include "avatar/test_support.h"

namespace imago::avatar {
namespace {
using namespace testing;
namespace fs = std::filesystem;

TEST(OfflineRender, GestureClipDecodesToTheExpectedDurationAndFrameCount) {
  TempDir tmp;
  for (const auto& g : gesture_names()) {
    std::string out = tmp / (g + ".mp4");
    ASSERT_TRUE(render_gesture_clip(procedural_model("1:1"), g, 2.0, out).ok()) << g;
    Probe p = probe(out);
    EXPECT_EQ(p.vcodec, "h264") << g;
    EXPECT_EQ(p.acodec, "aac") << g;
    EXPECT_EQ(p.rate, "25/1") << g;
    EXPECT_EQ(p.frames, 50) << g;
    EXPECT_NEAR(p.duration, 2.0, 0.06) << g;
    EXPECT_EQ(p.width, 720);
    EXPECT_EQ(p.height, 720);
  }
  EXPECT_FALSE(render_gesture_clip(procedural_model("1:1"), "moonwalk", 2.0, tmp / "x.mp4").ok());
  EXPECT_FALSE(render_gesture_clip(procedural_model("1:1"), "laugh_react", 0, tmp / "x.mp4").ok());
  EXPECT_FALSE(render_gesture_clip("not a model", "laugh_react", 1, tmp / "x.mp4").ok());
  EXPECT_EQ(gesture_names().size(), 5u);
}

}  // namespace
}  // namespace imago::avatar
