// The warp's speed-ups must not change a pixel: a speaking, swaying, blinking sequence drawn the
// way the renderer draws it (one warper, only what moved redrawn), with rows on this CPU's
// fastest path against the portable row sampler.
#include <gtest/gtest.h>

#include <cmath>
#include <opencv2/core.hpp>

#include "avatar/face_mesh.h"
#include "avatar/renderer.h"
#include "avatar/test_support.h"

namespace imago::avatar {
namespace {

using internal::Pose;

// Four seconds at 25 fps: the idle sway (rotation, scale, shift, a little yaw), speech (jaw,
// spread and rounding, teeth, p/b/m presses, f/v tucks), a blink, a glance and a smile, and a
// stretch where the head holds still while the mouth moves.
std::vector<Pose> speaking_sequence() {
  std::vector<Pose> out;
  for (int n = 0; n < 100; ++n) {
    const double t = n / 25.0;
    Pose p;
    if (n < 70 || n >= 85) {
      p.head_rot = 1.4 * std::sin(1.3 * t);
      p.head_scale = 0.006 * std::sin(0.9 * t + 1);
      p.head_dx = 0.004 * std::sin(0.7 * t);
      p.head_dy = 0.003 * std::cos(1.1 * t);
      p.head_yaw = 2.0 * std::sin(0.5 * t);
    }
    p.mouth_open = std::max(0.0, 0.45 + 0.4 * std::sin(7.0 * t));
    p.mouth_spread = 0.8 * std::sin(3.1 * t);
    p.mouth_teeth = n % 9 < 5 ? 0.7 : 0.0;
    p.mouth_press = n % 17 == 3 ? 1.0 : 0.0;
    p.lip_tuck = n % 13 == 6 ? 0.8 : 0.0;
    p.speech_relax = 1;
    p.eye_close = n >= 40 && n < 47 ? std::sin((n - 40) / 6.0 * 3.14159) : 0.0;
    p.gaze_x = n >= 55 && n < 65 ? 0.12 : 0.0;
    p.gaze_y = n >= 55 && n < 65 ? -0.05 : 0.0;
    p.smile = n >= 75 && n < 90 ? 0.6 : 0.0;
    p.brow = n >= 20 && n < 30 ? 0.8 : 0.0;
    out.push_back(p);
  }
  return out;
}

TEST(WarpSequence, FastFramesEqualPortableOnes) {
  const std::string& imx = testing::portrait_model("1:1", "expression");
  ASSERT_FALSE(imx.empty()) << "the portrait model did not build (opencv-doc missing?)";
  auto model = load_model(imx, 512, 512);
  ASSERT_TRUE(model.ok()) << model.status().message();
  const std::vector<Pose> poses = speaking_sequence();
  const std::vector<cv::Mat> fast = internal::render_poses(**model, poses);
  const std::vector<cv::Mat> portable = internal::render_poses(**model, poses, internal::WarpPath::kPortable);
  ASSERT_EQ(fast.size(), poses.size());
  ASSERT_EQ(portable.size(), poses.size());
  const cv::Mat rest = internal::render_pose(**model, {}, internal::WarpPath::kPortable);
  for (size_t n = 0; n < poses.size(); ++n) {
    ASSERT_EQ(cv::norm(fast[n], portable[n], cv::NORM_INF), 0) << "frame " << n << ": fast path differs";
    // The sequence really moves the picture (a warp that drew nothing would pass the above).
    if (poses[n].head_rot != 0) {
      EXPECT_GT(cv::norm(fast[n], rest, cv::NORM_L1), 1e5) << "frame " << n;
    }
  }
}

}  // namespace
}  // namespace imago::avatar
