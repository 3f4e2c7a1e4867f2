#include "avatar/builder.h"

#include <gtest/gtest.h>

#include <chrono>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "avatar/imx.h"
#include "avatar/internal.h"
#include "avatar/renderer.h"
#include "avatar/test_support.h"

namespace imago::avatar {
namespace {
using namespace testing;

Result<std::string> build_image(const std::string& bytes, const std::string& aspect = "16:9") {
  BuildInput in;
  in.agent_id = "a1";
  in.name = "A";
  in.aspect_ratio = aspect;
  in.image_bytes = bytes;
  return build_imx(in, {});
}

std::string encode(const cv::Mat& m, const char* ext) {
  std::vector<uint8_t> out;
  cv::imencode(ext, m, out);
  return {out.begin(), out.end()};
}

// Inserts an EXIF APP1 segment with the given Orientation right after the JPEG SOI marker.
std::string with_exif_orientation(const std::string& jpeg, uint16_t orientation) {
  std::string tiff = std::string("II*\0", 4) + std::string("\x08\0\0\0", 4);  // little endian, IFD at 8
  tiff += std::string("\x01\0", 2);                                           // one entry
  tiff += std::string("\x12\x01\x03\0\x01\0\0\0", 8);                         // 0x0112 SHORT x1
  tiff += static_cast<char>(orientation & 0xff);
  tiff += static_cast<char>(orientation >> 8);
  tiff += std::string("\0\0", 2);
  tiff += std::string("\0\0\0\0", 4);  // no next IFD
  std::string payload = std::string("Exif\0\0", 6) + tiff;
  uint16_t len = static_cast<uint16_t>(payload.size() + 2);
  std::string app1 = "\xFF\xE1";
  app1 += static_cast<char>(len >> 8);
  app1 += static_cast<char>(len & 0xff);
  app1 += payload;
  return jpeg.substr(0, 2) + app1 + jpeg.substr(2);
}

TEST(Builder, FindsTheFaceInARealPhotoAndReportsProgress) {
  BuildInput in;
  in.agent_id = "agent_messi";
  in.name = "Messi";
  in.image_bytes = slurp(kOpenCvData + "messi5.jpg");
  std::vector<std::pair<std::string, double>> steps;
  auto r = build_imx(in, [&](std::string_view step, double f, std::string_view msg) {
    EXPECT_FALSE(msg.empty());
    steps.emplace_back(std::string(step), f);
  });
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_GE(steps.size(), 4u);
  for (size_t i = 1; i < steps.size(); ++i) EXPECT_GE(steps[i].second, steps[i - 1].second);
  EXPECT_EQ(steps.back().second, 1.0);
  auto f = read_imx(*r);
  ASSERT_TRUE(f.ok()) << f.status().message();
  const Manifest& m = f->manifest;
  EXPECT_EQ(m.source, "image");
  EXPECT_EQ(m.width, 1280);
  EXPECT_EQ(m.height, 720);
  // Face placed sensibly: centred horizontally, in the upper-middle, a good size.
  EXPECT_NEAR(m.face.x + m.face.w / 2, 640, 2);
  EXPECT_GT(m.face.h, 0.15 * 720);  // a 40 px face is enlarged at most 3.5x
  EXPECT_LT(m.face.h, 0.6 * 720);
  // Anatomy: eyes above the mouth, left eye left of right eye, mouth inside the face box.
  EXPECT_LT(m.left_eye.x, m.right_eye.x);
  EXPECT_LT(std::max(m.left_eye.y, m.right_eye.y), m.mouth.y);
  EXPECT_GT(m.mouth.y, m.face.y + 0.55 * m.face.h);
  EXPECT_LT(m.mouth.y, m.face.y + 1.0 * m.face.h);
  for (auto t : {"APPR", "MINT", "LIDS", "HAND", "HART", "GEST"}) EXPECT_NE(f->find(t), nullptr) << t;
  auto model = load_model(*r);
  ASSERT_TRUE(model.ok()) << model.status().message();
}

TEST(Builder, FindsFacesInOtherRealPhotos) {
  for (const std::string& p : {kOpenCvHtml + "face_swapped.jpg", kOpenCvHtml + "facereg.jpg"}) {
    auto r = build_image(slurp(p));
    ASSERT_TRUE(r.ok()) << p << ": " << r.status().message();
    auto f = read_imx(*r);
    ASSERT_TRUE(f.ok());
    const Manifest& m = f->manifest;
    EXPECT_TRUE(m.eyes_detected) << p;
    // Levelled by the framing, about one mouth width apart, above the mouth.
    EXPECT_NEAR(m.left_eye.y, m.right_eye.y, 0.02 * m.face.w) << p;
    EXPECT_NEAR(m.right_eye.x - m.left_eye.x, m.mouth_width, 0.2 * m.mouth_width) << p;
    EXPECT_GT(m.mouth.y - m.left_eye.y, 0.25 * m.face.h) << p;
  }
}

TEST(Builder, PhotoWithoutAFaceFailsClearly) {
  for (const char* name : {"fruits.jpg", "building.jpg"}) {
    auto r = build_image(slurp(kOpenCvData + name));
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_EQ(r.status().message(), "No face found in the image");
  }
  auto bad = build_image("GIF89a not really an image");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("could not be decoded"), std::string::npos);
}

TEST(Builder, AcceptsPngAndWebpAndHonoursExifOrientation) {
  cv::Mat img = cv::imread(kOpenCvHtml + "face_swapped.jpg");
  ASSERT_FALSE(img.empty());
  EXPECT_TRUE(build_image(encode(img, ".png")).ok());
  EXPECT_TRUE(build_image(encode(img, ".webp")).ok());
  // Pixels stored rotated 90 degrees clockwise plus EXIF orientation 8 ("rotate 90 counter-
  // clockwise to display") must build the same model as the upright photo.
  cv::Mat rotated;
  cv::rotate(img, rotated, cv::ROTATE_90_CLOCKWISE);
  auto upright = build_image(encode(img, ".jpg"));
  auto exif = build_image(with_exif_orientation(encode(rotated, ".jpg"), 8));
  auto sideways = build_image(encode(rotated, ".jpg"));
  ASSERT_TRUE(upright.ok() && exif.ok()) << exif.status().message();
  auto fu = read_imx(*upright), fe = read_imx(*exif);
  const Manifest &mu = fu->manifest, &me = fe->manifest;
  double tol = 0.06 * mu.face.w;
  EXPECT_NEAR(me.face.w, mu.face.w, tol);
  EXPECT_NEAR(me.left_eye.x, mu.left_eye.x, tol);
  EXPECT_NEAR(me.left_eye.y, mu.left_eye.y, tol);
  EXPECT_NEAR(me.mouth.y, mu.mouth.y, 1.5 * tol);  // the lip-line search is the least stable
  if (sideways.ok()) {
    // Ignoring EXIF can only find something else (a false positive), not this framing.
    auto fs = read_imx(*sideways);
    ASSERT_TRUE(fs.ok());
    const Manifest& ms = fs->manifest;
    EXPECT_GT(std::abs(ms.face.w - mu.face.w) + std::abs(ms.left_eye.y - mu.left_eye.y), tol);
  }
}

TEST(Builder, NormalizesEveryAspectRatio) {
  std::string photo = slurp(kOpenCvData + "messi5.jpg");
  struct Case {
    const char* aspect;
    int w, h;
  };
  for (auto c : {Case{"16:9", 1280, 720}, Case{"9:16", 720, 1280}, Case{"1:1", 720, 720}}) {
    auto r = build_image(photo, c.aspect);
    ASSERT_TRUE(r.ok()) << c.aspect << ": " << r.status().message();
    auto f = read_imx(*r);
    ASSERT_TRUE(f.ok());
    EXPECT_EQ(f->manifest.width, c.w) << c.aspect;
    EXPECT_EQ(f->manifest.height, c.h) << c.aspect;
    EXPECT_EQ(f->manifest.aspect_ratio, c.aspect);
    auto img = internal::decode_png(*f->find("APPR"), cv::IMREAD_COLOR);
    ASSERT_TRUE(img.ok());
    EXPECT_EQ(img->cols, c.w);
    EXPECT_EQ(img->rows, c.h);
  }
  EXPECT_FALSE(build_image(photo, "4:3").ok());
}

TEST(Builder, BuildsA1MegapixelPhotoInUnder5Seconds) {
  cv::Mat img = cv::imread(kOpenCvData + "messi5.jpg");
  cv::Mat big;
  cv::resize(img, big, {1280, 800}, 0, 0, cv::INTER_CUBIC);  // 1.02 MP
  std::string jpeg = encode(big, ".jpg");
  auto t0 = std::chrono::steady_clock::now();
  auto r = build_image(jpeg);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_LT(s, 5.0);
  std::printf("builder: 1.02 MP photo -> .imx in %.3f s\n", s);
}

TEST(Builder, ProceduralAvatarIsDeterministicFromTheAgentId) {
  const std::string& a1 = procedural_model("16:9", "essence", "agent_x");
  const std::string& a2 = procedural_model("16:9", "essence", "agent_y");
  ASSERT_FALSE(a1.empty());
  ASSERT_FALSE(a2.empty());
  BuildInput in;
  in.agent_id = "agent_x";
  in.name = "Default";
  in.created_unix_s = 1'800'000'000;
  auto again = build_imx(in, {});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, a1);  // byte for byte
  auto f1 = read_imx(a1), f2 = read_imx(a2);
  ASSERT_TRUE(f1.ok() && f2.ok());
  EXPECT_EQ(f1->manifest.source, "procedural");
  EXPECT_NE(*f1->find("APPR"), *f2->find("APPR"));
  EXPECT_NE(f1->manifest.voice_match.has_value(), true);
  auto model = load_model(a1);
  EXPECT_TRUE(model.ok()) << model.status().message();
}

TEST(Builder, PicksAFrameAndTheVoiceFromAVideo) {
  BuildInput in;
  in.agent_id = "agent_video";
  in.video_bytes = slurp(kOpenCvData + "Megamind.avi");
  auto r = build_imx(in, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  auto f = read_imx(*r);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->manifest.source, "video");
  ASSERT_TRUE(f->manifest.voice_match.has_value()) << "the video's audio track is the voice sample";
  EXPECT_GT(f->manifest.voice_match->median_f0_hz, 60);
  EXPECT_NE(f->find("VOIC"), nullptr);

  BuildInput none;
  none.agent_id = "agent_video2";
  none.video_bytes = "not a video at all";
  auto bad = build_imx(none, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument);
}

TEST(Builder, RejectsBadOptions) {
  BuildInput in;
  in.model_type = "photoreal";
  EXPECT_FALSE(build_imx(in, {}).ok());
  in.model_type = "expression";
  in.voice = "Z9";
  auto r = build_imx(in, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("Unknown voice"), std::string::npos);
  in.voice = "F2";
  auto ok = build_imx(in, {});
  ASSERT_TRUE(ok.ok());
  auto f = read_imx(*ok);
  EXPECT_EQ(f->manifest.voice, "F2");
  EXPECT_EQ(f->manifest.visemes, 10);
  EXPECT_TRUE(f->manifest.prosody);
}

}  // namespace
}  // namespace imago::avatar
