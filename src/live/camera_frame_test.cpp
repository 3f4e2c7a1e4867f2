#include "live/camera_frame.h"

#include <gtest/gtest.h>

#include "util/base64.h"

namespace imago::live {
namespace {

const std::string kJpeg = std::string("\xFF\xD8\xFF\xE0", 4) + "rest of a jpeg";
const std::string kPng = std::string("\x89PNG\r\n\x1A\n", 8) + "IHDR...";

TEST(CameraFrame, JpegAndPngComeBackCanonical) {
  // URL-safe base64 without padding is accepted and returned as standard base64.
  auto j = canonical_camera_frame("data:image/jpeg;base64," + base64url_encode(kJpeg));
  ASSERT_TRUE(j.ok()) << j.status().message();
  EXPECT_EQ(*j, "data:image/jpeg;base64," + base64_encode(kJpeg));
  auto p = canonical_camera_frame("data:image/png;base64," + base64_encode(kPng));
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(*p, "data:image/png;base64," + base64_encode(kPng));
}

TEST(CameraFrame, AnythingElseIsRefusedWithAReason) {
  auto why = [](const std::string& url) {
    auto r = canonical_camera_frame(url);
    EXPECT_FALSE(r.ok()) << url;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    return r.ok() ? std::string() : r.status().message();
  };
  EXPECT_NE(why("https://127.0.0.1/cam.jpg").find("data:image/jpeg;base64"), std::string::npos);
  EXPECT_NE(why("data:image/gif;base64," + base64_encode("GIF89a")).find("data:image/jpeg"),
            std::string::npos);
  EXPECT_NE(why("data:image/jpeg;base64,@@@").find("base64"), std::string::npos);
  EXPECT_NE(why("data:image/jpeg;base64,").find("no image"), std::string::npos);
  EXPECT_NE(why("data:image/jpeg;base64," + base64_encode(kPng)).find("declares"), std::string::npos);
  EXPECT_NE(why("data:image/png;base64," + base64_encode(kJpeg)).find("declares"), std::string::npos);
  std::string big = kJpeg + std::string(kMaxCameraFrameBytes, 'x');
  EXPECT_NE(why("data:image/jpeg;base64," + base64_encode(big)).find("at most"), std::string::npos);
}

}  // namespace
}  // namespace imago::live
