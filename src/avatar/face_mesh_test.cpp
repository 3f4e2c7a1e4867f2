// The mouth and lid shapes themselves, measured on the mesh and on rendered poses of real
// portraits (docs/avatar.md "How the face moves"): rounded lips narrow the mouth without folding
// a triangle, a kiss shows no teeth, a shut lid is skin.
// No landmark predictor needed (FaceMetrics re-detects; these look at the renderer's own points).
// IMAGO_AVATAR_DUMP=/dir writes the poses looked at.
#include "avatar/face_mesh.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <random>

#include "avatar/gestures.h"
#include "avatar/renderer.h"
#include "avatar/test_support.h"

namespace imago::avatar {
namespace {
using namespace testing;
using internal::FaceMesh;
using internal::Pose;

struct Portrait {
  std::string name, path;
};
// The FaceMetrics portraits (neutral with a goatee, smiling over its teeth, the unseen shout) and
// the bearded face_swapped.jpg.
const Portrait kPortraits[] = {{"neutral", kOpenCvHtml + "230501201_1.jpg"},
                               {"smiling", kOpenCvHtml + "227943776_1.jpg"},
                               {"bearded", kOpenCvHtml + "face_swapped.jpg"},
                               {"unseen", kOpenCvData + "messi5.jpg"}};
// A portrait never tuned on that smiles over a tall row of teeth (dlib's example photo).
const Portrait kUnseenSmiling = {"unseen_smiling", kDlibFaces + "Tom_Cruise_avp_2014_4.jpg"};

std::shared_ptr<const AvatarModel> model_of(const std::string& photo) {
  static std::map<std::string, std::shared_ptr<const AvatarModel>> cache;
  auto it = cache.find(photo);
  if (it != cache.end()) return it->second;
  BuildInput in;
  in.agent_id = "mesh_test";
  in.aspect_ratio = "1:1";
  in.image_bytes = slurp(photo);
  auto imx = build_imx(in, {});
  EXPECT_TRUE(imx.ok()) << photo << ": " << imx.status().message();
  if (!imx.ok()) return nullptr;
  auto m = load_model(*imx, 512, 512);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return cache[photo] = m.ok() ? *m : nullptr;
}

void dump(const cv::Mat& rgb, const std::string& name) {
  const char* dir = std::getenv("IMAGO_AVATAR_DUMP");
  if (!dir || !*dir) return;
  cv::Mat bgr;
  cv::cvtColor(rgb, bgr, cv::COLOR_RGB2BGR);
  cv::imwrite(std::string(dir) + "/" + name + ".png", bgr);
}

// The largest stretch (singular value of the affine map from rest to pose) of the skin triangles
// around the mouth (a vertex on the lips), and whether any of them flipped.
struct Distortion {
  double stretch = 0;
  bool flipped = false;
  std::string worst, flip;
};
Distortion mouth_distortion(const FaceMesh& m, const std::vector<cv::Point2f>& full) {
  Distortion d;
  for (const auto& t : m.tris) {
    if (t.kind != FaceMesh::kSkin) continue;
    bool lips = false;
    for (int v : t.v) lips |= v >= 48 && v <= 67;
    if (!lips) continue;
    const cv::Point2f s1 = m.rest[t.v[1]] - m.rest[t.v[0]], s2 = m.rest[t.v[2]] - m.rest[t.v[0]];
    const cv::Point2f d1 = full[t.v[1]] - full[t.v[0]], d2 = full[t.v[2]] - full[t.v[0]];
    const cv::Matx22d S(s1.x, s2.x, s1.y, s2.y), D(d1.x, d2.x, d1.y, d2.y);
    const double ds = cv::determinant(S);
    if (std::abs(ds) < 1e-6) continue;
    const cv::Matx22d A = D * S.inv();
    cv::Mat w;
    cv::SVD::compute(cv::Mat(A), w);
    if (cv::determinant(A) <= 0)
      d.flipped = true,
      d.flip = std::to_string(t.v[0]) + "-" + std::to_string(t.v[1]) + "-" + std::to_string(t.v[2]);
    if (w.at<double>(0) > d.stretch) {
      d.stretch = w.at<double>(0);
      d.worst = std::to_string(t.v[0]) + "-" + std::to_string(t.v[1]) + "-" + std::to_string(t.v[2]);
    }
  }
  return d;
}

// Rounded lips (oo, the kiss) narrow the mouth, corners moving in, and never widen it: the
// corners' distance along the eye line stays at or under the rest width for every rounding,
// opening, press and the slight smile speech carries, and at full rounding it is at most 85% of
// it. Around the mouth no skin triangle flips, and rounding stretches none much more than the
// same opening without it (the old oval dragged the outer upper lip past a corner coming in: a
// sliver of moustache beside the corner stretched 10-19x, the spike at the corner on 'u').
TEST(MouthShapes, RoundedLipsNarrowTheMouthAndFoldNoTriangle) {
  for (const auto& [name, photo] : kPortraits) {
    auto model = model_of(photo);
    ASSERT_TRUE(model);
    const FaceMesh& m = internal::mesh_of(*model);
    auto width = [&](const std::vector<cv::Point2f>& p) { return (p[54] - p[48]).dot(m.ux); };
    const double rest_w = width(m.rest);
    double widest = 0, full_round = 0, worst_round = 0, worst_plain = 0;
    std::string worst_at;
    for (double open : {0.0, 0.3, 0.5, 1.0})
      for (double press : {0.0, 0.85})
        for (double smile : {0.0, 0.15})
          for (double relax : {0.0, 1.0}) {
            Pose p;
            p.mouth_open = open, p.mouth_press = press, p.smile = smile, p.speech_relax = relax;
            std::vector<cv::Point2f> full, rigid;
            internal::deform_mesh(m, p, full, rigid);
            const double plain = mouth_distortion(m, full).stretch;
            const double plain_w = width(full);
            worst_plain = std::max(worst_plain, plain);
            for (double s : {-0.25, -0.5, -0.75, -1.0}) {
              p.mouth_spread = s;
              internal::deform_mesh(m, p, full, rigid);
              const double w = width(full);
              widest = std::max(widest, w / rest_w);
              EXPECT_LE(w, std::max(rest_w, plain_w) + 0.5)
                  << name << ": rounding " << s << " widened the mouth (open " << open << ", press " << press
                  << ", smile " << smile << ")";
              if (s == -1.0) full_round = std::max(full_round, w / rest_w);
              const Distortion d = mouth_distortion(m, full);
              EXPECT_FALSE(d.flipped) << name << ": triangle " << d.flip << " at the mouth flipped (spread "
                                      << s << ", open " << open << ", press " << press << ")";
              if (d.stretch > worst_round) worst_round = d.stretch, worst_at = d.worst;
              EXPECT_LE(d.stretch, std::max(4.0, 1.5 * plain))
                  << name << ": rounding " << s << " stretched triangle " << d.worst << " (open " << open
                  << ", press " << press << ")";
            }
          }
    std::printf(
        "%s: rounded mouth width at most %.0f%% of rest, at full rounding at most %.0f%%; largest stretch "
        "at the mouth rounded %.2f (%s), unrounded %.2f\n",
        name.c_str(), 100 * widest, 100 * full_round, worst_round, worst_at.c_str(), worst_plain);
    EXPECT_LE(full_round, 0.85) << name;
  }
}

// The mouth interior's pixels (between the inner lips, grown by two pixels) of a pose.
cv::Mat interior_mask(const FaceMesh& m, const Pose& p, cv::Size size) {
  std::vector<cv::Point2f> full, rigid;
  internal::deform_mesh(m, p, full, rigid);
  std::vector<cv::Point> poly;
  for (int i = 60; i <= 67; ++i) poly.emplace_back(cvRound(full[i].x), cvRound(full[i].y));
  cv::Mat mask(size, CV_8U, cv::Scalar(0));
  cv::fillPoly(mask, std::vector<std::vector<cv::Point>>{poly}, cv::Scalar(255));
  cv::polylines(mask, std::vector<std::vector<cv::Point>>{poly}, true, cv::Scalar(255));
  cv::dilate(mask, mask, cv::getStructuringElement(cv::MORPH_ELLIPSE, {5, 5}));
  return mask;
}

// Lab (L 0..100, a and b around 0) of an RGB pixel.
cv::Vec3f lab_of(const cv::Vec3b& rgb) {
  cv::Mat px(1, 1, CV_32FC3, cv::Scalar(rgb[0] / 255.0f, rgb[1] / 255.0f, rgb[2] / 255.0f)), lab;
  cv::cvtColor(px, lab, cv::COLOR_RGB2Lab);
  return lab.at<cv::Vec3f>(0, 0);
}

// With the lips pushed forward for a kiss no teeth show: between the lips at the kiss's peak no
// pixel looks like a tooth (light, L* over 62, and hardly red: a* under 6, as the smiling
// portrait's teeth are, 1-5; its pale lips are 7-8, their highlights 9 and more). The old kiss
// showed that portrait's teeth as a thin light line between the lips (45 such pixels).
TEST(MouthShapes, AKissShowsNoTeeth) {
  auto gestures = internal::parse_gestures(internal::default_gestures_json());
  ASSERT_TRUE(gestures.ok());
  const auto& kiss = gestures->at("blow_kiss_heart");
  for (const auto& [name, photo] : kPortraits) {
    auto model = model_of(photo);
    ASSERT_TRUE(model);
    const FaceMesh& m = internal::mesh_of(*model);
    Pose p;
    internal::evaluate_gesture(kiss, 0.4, 0.4 * kiss.default_duration_s, p);
    const cv::Mat img = internal::render_pose(*model, p);
    dump(img, "mesh_test_kiss_" + name);
    const cv::Mat mask = interior_mask(m, p, img.size());
    int teeth = 0, px = 0;
    double lightest = 0;
    for (int y = 0; y < img.rows; ++y)
      for (int x = 0; x < img.cols; ++x) {
        if (!mask.at<uint8_t>(y, x)) continue;
        ++px;
        const cv::Vec3f lab = lab_of(img.at<cv::Vec3b>(y, x));
        if (lab[1] < 6) lightest = std::max(lightest, double(lab[0]));
        teeth += lab[0] > 62 && lab[1] < 6;
      }
    std::printf("%s: kiss: %d of %d pixels between the lips look like teeth (lightest unreddened L* %.0f)\n",
                name.c_str(), teeth, px, lightest);
    EXPECT_EQ(teeth, 0) << name;
  }
}

// Lips brought together for a kiss over a photo's teeth meet along a line: in the middle half
// of the mouth, the pixels between the outer lips much darker than the lips (under 60% of the
// column's median luminance) are a couple of rows at most. The old kiss painted the whole gap
// it left between the lips (some 5 px at 512x512 over a tall row of teeth) in the closing
// seam's dark brown, a flat lens: 3.9 rows on the smiling portrait and 5.2 on an unseen smiling
// one (dlib's example photo of Tom Cruise, from Debian's libdlib19.1).
TEST(MouthShapes, AKissOverTeethMeetsAlongALine) {
  auto gestures = internal::parse_gestures(internal::default_gestures_json());
  ASSERT_TRUE(gestures.ok());
  const auto& kiss = gestures->at("blow_kiss_heart");
  for (const auto& [name, photo] : {kPortraits[1], kUnseenSmiling}) {
    auto model = model_of(photo);
    ASSERT_TRUE(model);
    const FaceMesh& m = internal::mesh_of(*model);
    ASSERT_TRUE(m.mouth_open_at_rest) << name;
    Pose p;
    internal::evaluate_gesture(kiss, 0.4, 0.4 * kiss.default_duration_s, p);
    const cv::Mat img = internal::render_pose(*model, p);
    dump(img, "mesh_test_kiss_line_" + name);
    std::vector<cv::Point2f> full, rigid;
    internal::deform_mesh(m, p, full, rigid);
    cv::Mat gray;
    cv::cvtColor(img, gray, cv::COLOR_RGB2GRAY);
    const float x0 = full[60].x + 0.25f * (full[64].x - full[60].x),
                x1 = full[64].x - 0.25f * (full[64].x - full[60].x);
    double rows = 0;
    int cols = 0, widest = 0;
    for (int x = int(std::ceil(x0)); x <= int(x1); ++x) {
      // The column between the outer lips (their polylines at x).
      auto lip_y = [&](std::initializer_list<int> ids) {
        std::vector<cv::Point2f> q;
        for (int i : ids) q.push_back(full[size_t(i)]);
        for (size_t k = 0; k + 1 < q.size(); ++k)
          if ((q[k].x - x) * (q[k + 1].x - x) <= 0 && q[k].x != q[k + 1].x)
            return q[k].y + (float(x) - q[k].x) / (q[k + 1].x - q[k].x) * (q[k + 1].y - q[k].y);
        return -1.0f;
      };
      const float ya = lip_y({48, 49, 50, 51, 52, 53, 54}), yb = lip_y({48, 59, 58, 57, 56, 55, 54});
      if (ya < 0 || yb < 0) continue;
      std::vector<uint8_t> column;
      for (int y = int(std::ceil(ya)); y <= int(yb); ++y) column.push_back(gray.at<uint8_t>(y, x));
      if (column.size() < 4) continue;
      std::vector<uint8_t> sorted = column;
      std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
      const double med = sorted[sorted.size() / 2];
      int dark = 0;
      for (uint8_t v : column) dark += v < 0.6 * med;
      rows += dark, ++cols, widest = std::max(widest, dark);
    }
    ASSERT_GT(cols, 10) << name;
    std::printf("%s: kiss: %.1f rows between the lips much darker than them, per column (most %d)\n",
                name.c_str(), rows / cols, widest);
    EXPECT_LE(rows / cols, 2.5) << name << ": the lips do not meet along a line";
  }
}

// A shut lid is the person's skin: at full closure the lid over the eye's opening (from the rest
// upper lid down to 55% of the way to the lower one; the lids meet at 75%) is, on average, near
// the hue of the face's lit skin (a*, b* within 5 of the skin's) and not much darker (L* at least
// 55% of the skin's), and its lash line is a darker line, not black (no pixel of the opening
// under 16% of the lit skin's luminance). The old lid was the grey of the photo's lid in the
// socket's shadow (hue 6.3, 5.8 and 5.5 apart on the neutral, smiling and face_swapped
// portraits, L* 37% of the skin's on the smiling one) with a near-black bar (8% there).
TEST(LidShapes, AShutLidIsSkinWithASoftLashLine) {
  for (const auto& [name, photo] : kPortraits) {
    if (name == "unseen") continue;  // its eyes are some 12 px wide: a lid of a few pixels

    auto model = model_of(photo);
    ASSERT_TRUE(model);
    const FaceMesh& m = internal::mesh_of(*model);
    Pose p;
    p.eye_close = 1;
    const cv::Mat img = internal::render_pose(*model, p), rest = internal::render_pose(*model, {});
    dump(img, "mesh_test_shut_" + name);
    // The lid: the eye's opening from its upper lid down to 55% of the way to the lower one (the
    // lids meet at 75%); the lash line: the whole opening.
    cv::Mat lid(img.size(), CV_8U, cv::Scalar(0)), eye(img.size(), CV_8U, cv::Scalar(0));
    for (int e : {36, 42}) {
      auto pt = [&](cv::Point2f q) { return cv::Point(cvRound(q.x), cvRound(q.y)); };
      const auto& r = m.rest;
      std::vector<cv::Point> upper = {pt(r[e]),
                                      pt(r[e + 1]),
                                      pt(r[e + 2]),
                                      pt(r[e + 3]),
                                      pt(r[e + 2] + (r[e + 4] - r[e + 2]) * 0.55f),
                                      pt(r[e + 1] + (r[e + 5] - r[e + 1]) * 0.55f)},
                             all;
      for (int i = 0; i < 6; ++i) all.push_back(pt(r[e + i]));
      cv::fillConvexPoly(lid, upper, cv::Scalar(255));
      cv::fillConvexPoly(eye, all, cv::Scalar(255));
    }
    ASSERT_GT(cv::countNonZero(lid), 10) << name;
    cv::Mat lab_img, f;
    img.convertTo(f, CV_32FC3, 1 / 255.0);
    cv::cvtColor(f, lab_img, cv::COLOR_RGB2Lab);
    const cv::Scalar lid_lab = cv::mean(lab_img, lid);
    double darkest = 255;
    for (int y = 0; y < img.rows; ++y)
      for (int x = 0; x < img.cols; ++x)
        if (eye.at<uint8_t>(y, x)) {
          const cv::Vec3b c = img.at<cv::Vec3b>(y, x);
          darkest = std::min(darkest, 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2]);
        }
    // The face's lit skin: the nose's bridge and the cheeks under the eyes, their lighter half.
    std::vector<cv::Vec3f> skin;
    const float rad = std::max(1.0f, 0.06f * m.ed);
    for (cv::Point2f c : {(m.rest[27] + m.rest[30]) * 0.5f, (m.rest[36] + m.rest[31]) * 0.5f,
                          (m.rest[45] + m.rest[35]) * 0.5f})
      for (float dy = -rad; dy <= rad; dy += 1)
        for (float dx = -rad; dx <= rad; dx += 1)
          skin.push_back(lab_of(rest.at<cv::Vec3b>(cvRound(c.y + dy), cvRound(c.x + dx))));
    std::sort(skin.begin(), skin.end(), [](const auto& a, const auto& b) { return a[0] < b[0]; });
    cv::Vec3f sk(0, 0, 0);
    for (size_t i = skin.size() / 2; i < skin.size(); ++i) sk += skin[i];
    sk /= float(skin.size() - skin.size() / 2);
    const double dab = std::hypot(lid_lab[1] - sk[1], lid_lab[2] - sk[2]);
    // Luminance of the lit skin, for the lash line.
    cv::Mat sl(1, 1, CV_32FC3, cv::Scalar(sk[0], sk[1], sk[2])), srgb;
    cv::cvtColor(sl, srgb, cv::COLOR_Lab2RGB);
    const cv::Vec3f s = srgb.at<cv::Vec3f>(0, 0) * 255.0f;
    const double skin_y = 0.299 * s[0] + 0.587 * s[1] + 0.114 * s[2];
    std::printf(
        "%s: shut lid L*a*b* %.0f %.1f %.1f, lit skin %.0f %.1f %.1f: hue apart %.1f, lightness %.0f%%; "
        "darkest "
        "lash pixel %.0f (%.0f%% of the skin's luminance)\n",
        name.c_str(), lid_lab[0], lid_lab[1], lid_lab[2], sk[0], sk[1], sk[2], dab, 100 * lid_lab[0] / sk[0],
        darkest, 100 * darkest / skin_y);
    EXPECT_LE(dab, 5.0) << name << ": the shut lid is not the skin's colour";
    EXPECT_GE(lid_lab[0], 0.55 * sk[0]) << name << ": the shut lid is much darker than the skin";
    EXPECT_GE(darkest, 0.16 * skin_y) << name << ": the lash line is a black bar";
  }
}

// A shut lid keeps the skin's fine texture: over the core of the lid (20-80% of the way from the
// crease points down to the upper lid), the fine detail (luminance minus its Gaussian blur,
// sigma 1.5 px; the median magnitude, so a few pixels of an edge do not count) is at least the
// skin's under the eyes in the same frame. The lid blended toward a smooth tone (what the band
// stretched down carries is the crease's shadow and the lashes) kept 116%, 70%, 153% and 81% of
// it on the neutral, smiling, bearded and unseen smiling portraits and read as a flat patch at 3x;
// with the photo's fine detail put back (clamped, from the band's top down, unstretched) 130%,
// 201%, 201% and 259% (the lids are finely creased skin).
TEST(LidShapes, AShutLidKeepsTheSkinsFineTexture) {
  for (const auto& [name, photo] : {kPortraits[0], kPortraits[1], kPortraits[2], kUnseenSmiling}) {
    auto model = model_of(photo);
    ASSERT_TRUE(model);
    const FaceMesh& m = internal::mesh_of(*model);
    Pose p;
    p.eye_close = 1;
    const cv::Mat img = internal::render_pose(*model, p);
    cv::Mat gray, blur, fine;
    cv::cvtColor(img, gray, cv::COLOR_RGB2GRAY);
    gray.convertTo(gray, CV_32F);
    cv::GaussianBlur(gray, blur, {0, 0}, 1.5);
    fine = gray - blur;
    cv::Mat lid(img.size(), CV_8U, cv::Scalar(0)), skin(img.size(), CV_8U, cv::Scalar(0));
    const auto& r = m.rest;
    auto pt = [&](cv::Point2f q) { return cv::Point(cvRound(q.x), cvRound(q.y)); };
    for (int e = 0; e < 2; ++e) {
      const int c0 = e ? 42 : 36, cr = m.crease + 2 * e;
      // The core of the lid: 20-80% of the way from the crease points down to the upper lid
      // (between the crease's fold above and the lash line below).
      auto at = [&](int k, float t) {
        return r[size_t(cr + k)] + (r[size_t(c0 + 1 + k)] - r[size_t(cr + k)]) * t;
      };
      cv::fillConvexPoly(
          lid, std::vector<cv::Point>{pt(at(0, 0.2f)), pt(at(1, 0.2f)), pt(at(1, 0.8f)), pt(at(0, 0.8f))},
          cv::Scalar(255));
      // Under the eye: the cheek between the eye's lower lid and the nose's wing.
      const cv::Point2f c = (r[c0 + (e ? 5 : 4)] + r[e ? 35 : 31]) * 0.5f;
      cv::circle(skin, pt(c), std::max(2, cvRound(0.1f * m.ed)), cv::Scalar(255), cv::FILLED);
    }
    ASSERT_GT(cv::countNonZero(lid), 20) << name;
    // The median of the detail's magnitude: a few pixels of an edge do not count as texture.
    auto median_abs = [&](const cv::Mat& mask) {
      std::vector<float> v;
      for (int y = 0; y < fine.rows; ++y)
        for (int x = 0; x < fine.cols; ++x)
          if (mask.at<uint8_t>(y, x)) v.push_back(std::abs(fine.at<float>(y, x)));
      std::nth_element(v.begin(), v.begin() + long(v.size() / 2), v.end());
      return v.empty() ? 0.0 : double(v[v.size() / 2]);
    };
    const cv::Scalar lid_sd(median_abs(lid)), skin_sd(median_abs(skin));
    std::printf("%s: shut lid's fine detail %.2f grey levels, the skin's under the eyes %.2f (%.0f%%)\n",
                name.c_str(), lid_sd[0], skin_sd[0], 100 * lid_sd[0] / skin_sd[0]);
    EXPECT_GE(lid_sd[0], skin_sd[0]) << name << ": the shut lid is a flat patch";
  }
}

// A falling lid's margin is a soft edge, not stair steps: at 40%, 55% and 70% closed, in the
// middle 60% of each eye, in at most 40% of the columns do the rows the margin crosses (from the
// rest upper lid to the lower one) step by more than 60 grey levels from one row to the next.
// Drawn pixel by pixel (lid, lashes 1:1, what is left of the eye), the neutral, smiling and
// bearded portraits stepped so in 44%, 58% and 50% of their columns; with each pixel the mean of
// four samples down its height 16%, 33% and 21% (the open eyes of the neutral portrait step so in
// a third of them: sharp lashes over white).
TEST(LidShapes, AFallingLidsMarginHasNoStairSteps) {
  for (const auto& [name, photo] : kPortraits) {
    if (name == "unseen") continue;  // its eyes are some 12 px wide
    auto model = model_of(photo);
    ASSERT_TRUE(model);
    const auto& r = internal::mesh_of(*model).rest;
    int steep = 0, cols = 0;
    for (double close : {0.4, 0.55, 0.7}) {
      Pose p;
      p.eye_close = close;
      cv::Mat g;
      cv::cvtColor(internal::render_pose(*model, p), g, cv::COLOR_RGB2GRAY);
      for (int e : {36, 42}) {
        const float w = std::max(1.0f, r[e + 3].x - r[e].x);
        for (int x = cvRound(r[e].x + 0.2f * w); x <= cvRound(r[e].x + 0.8f * w); ++x, ++cols) {
          const float t = (float(x) - r[e].x) / w;
          const int ya = cvFloor(std::min(r[e + 1].y, r[e + 2].y)) - 1;
          const int yb = cvCeil(r[e].y + t * (r[e + 3].y - r[e].y) +
                                0.5f * (r[e + 5].y + r[e + 4].y - r[e + 1].y - r[e + 2].y));
          int big = 0;
          for (int y = ya; y < yb; ++y)
            big = std::max(big, std::abs(int(g.at<uint8_t>(y + 1, x)) - int(g.at<uint8_t>(y, x))));
          steep += big > 60;
        }
      }
    }
    std::printf("%s: falling lids: %d of %d columns step by more than 60 grey levels (%.0f%%)\n",
                name.c_str(), steep, cols, 100.0 * steep / cols);
    EXPECT_LE(steep, 0.4 * cols) << name << ": the falling lid's margin is stair-stepped";
  }
}

// Luminance (0..255) of an RGB image at (x, y), bilinear.
double luma_at(const cv::Mat& img, cv::Point2f q) {
  const int x = int(std::floor(q.x)), y = int(std::floor(q.y));
  const float fx = q.x - float(x), fy = q.y - float(y);
  auto l = [&](int xx, int yy) {
    const cv::Vec3b c = img.at<cv::Vec3b>(std::clamp(yy, 0, img.rows - 1), std::clamp(xx, 0, img.cols - 1));
    return 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2];
  };
  return (1 - fy) * ((1 - fx) * l(x, y) + fx * l(x + 1, y)) +
         fy * ((1 - fx) * l(x, y + 1) + fx * l(x + 1, y + 1));
}

// The height at column x of the polyline through mesh points `idx` (left to right), held flat
// beyond its ends.
float y_along(const std::vector<cv::Point2f>& full, std::initializer_list<int> idx, float x) {
  std::vector<cv::Point2f> l;
  for (int i : idx) l.push_back(full[size_t(i)]);
  for (size_t i = 1; i < l.size(); ++i)
    if (x <= l[i].x || i + 1 == l.size()) {
      const float t = std::clamp((x - l[i - 1].x) / std::max(1e-3f, l[i].x - l[i - 1].x), 0.0f, 1.0f);
      return l[i - 1].y + t * (l[i].y - l[i - 1].y);
    }
  return l.back().y;
}

// Pixels of the opening's lower half (inside the inner lips 60..67, below the middle between the
// upper and lower ones) lighter than the lower lip just outside it in their column (the pixel a
// pixel and a half below the outline) by more than 12 grey levels: the lip showing lighter inside
// the outline than outside it (a light seam or patch between the lip and the cavity), where the
// cavity is dark and the lip continued into the outline is the same lip. The jaw's lower teeth
// (light and hardly red, a* under 6 as in AKissShowsNoTeeth) are not a seam and do not count.
int pale_in_lower_outline(const cv::Mat& img, const std::vector<cv::Point2f>& full) {
  int pale = 0;
  for (int x = int(std::ceil(full[60].x)); x <= int(std::floor(full[64].x)); ++x) {
    const float lo = y_along(full, {60, 67, 66, 65, 64}, float(x)),
                up = y_along(full, {60, 61, 62, 63, 64}, float(x));
    const double lip = luma_at(img, cv::Point2f(float(x), lo + 1.5f));
    for (int y = int(std::ceil(0.5f * (up + lo))); float(y) < lo; ++y)
      pale +=
          luma_at(img, cv::Point2f(float(x), float(y))) > lip + 12 && lab_of(img.at<cv::Vec3b>(y, x))[1] >= 6;
  }
  return pale;
}

// Columns of the mouth's middle 70% where the lower lip, from just below the cavity (where it
// reaches 85% of its luminance three pixels below the lower inner lip) down to there, changes by
// more than 26 grey levels from one row to the next: the hard edge of a patch laid over the lip,
// where a lip is smooth.
int lip_patch_edges(const cv::Mat& img, const std::vector<cv::Point2f>& full) {
  const float w = full[64].x - full[60].x;
  int edges = 0;
  for (int x = int(std::ceil(full[60].x + 0.15f * w)); x <= int(std::floor(full[64].x - 0.15f * w)); ++x) {
    const int end = int(std::round(y_along(full, {60, 67, 66, 65, 64}, float(x)) + 3));
    const double ref = luma_at(img, cv::Point2f(float(x), float(end)));
    int y = int(std::round(0.5f * (full[62].y + full[66].y)));
    while (y < end && luma_at(img, cv::Point2f(float(x), float(y))) < 0.85 * ref) ++y;
    double step = 0;
    for (; y < end; ++y)
      step = std::max(step, std::abs(luma_at(img, cv::Point2f(float(x), float(y + 1))) -
                                     luma_at(img, cv::Point2f(float(x), float(y)))));
    edges += step > 26;
  }
  return edges;
}

// The open mouth's rim is a soft lip edge, with no light seam between lip and cavity: in an open
// vowel and a laugh, hardly a pixel of the opening's lower half is lighter than the lip just below
// the outline (pale_in_lower_outline). The old rim, the cavity's pixels cut at the outline's pixel
// centres and the photo's lip mirrored about its inner edge inside the rounded corners, showed a
// stepped row of light pixels along the smiling portrait's lower lip (38 in the vowel, 69 in the
// laugh; 6 and 0 now).
TEST(MouthShapes, TheOpeningsRimHasNoLightSeam) {
  auto gestures = internal::parse_gestures(internal::default_gestures_json());
  ASSERT_TRUE(gestures.ok());
  const auto& laugh = gestures->at("laugh_react");
  for (const auto& [name, photo] : kPortraits) {
    auto model = model_of(photo);
    ASSERT_TRUE(model);
    const FaceMesh& m = internal::mesh_of(*model);
    Pose a;
    a.mouth_open = 0.6, a.mouth_teeth = 0.5, a.speech_relax = 1;
    Pose l;
    internal::evaluate_gesture(laugh, 0.5, 0.5 * laugh.default_duration_s, l);
    for (const auto& [what, p] : {std::pair{"a", a}, std::pair{"laugh", l}}) {
      std::vector<cv::Point2f> full, rigid;
      internal::deform_mesh(m, p, full, rigid);
      const cv::Mat img = internal::render_pose(*model, p);
      dump(img, std::string("mesh_test_rim_") + what + "_" + name);
      const int pale = pale_in_lower_outline(img, full);
      std::printf("%s: '%s': %d light pixels inside the lower inner lip\n", name.c_str(), what, pale);
      EXPECT_LE(pale, 10) << name << " " << what;
    }
  }
}

// A wide opening on a photo that shows only its upper teeth shows the jaw's lower row too: in
// the middle 40% of an open vowel's mouth, most columns have a pixel that looks like a tooth
// (L* over 55, a* under 6: light and hardly red) within 8% of the mouth's width above the lower
// inner lip. The lower row was drawn only in pixels the photo's rows partly covered, never in the
// gap itself: every column read none, and the opening was upper teeth over a bare cavity.
TEST(MouthShapes, AWideOpeningOverUpperTeethShowsTheLowerRow) {
  for (const auto& [name, photo] : {kPortraits[1], kUnseenSmiling}) {
    auto model = model_of(photo);
    ASSERT_TRUE(model);
    const FaceMesh& m = internal::mesh_of(*model);
    ASSERT_TRUE(m.mouth_open_at_rest) << name;
    Pose p;
    p.mouth_open = 0.85, p.speech_relax = 1;
    std::vector<cv::Point2f> full, rigid;
    internal::deform_mesh(m, p, full, rigid);
    const cv::Mat img = internal::render_pose(*model, p);
    dump(img, "mesh_test_lower_row_" + name);
    const float w = full[64].x - full[60].x, reach = 0.08f * w;
    int cols = 0, teeth = 0;
    for (int x = int(std::ceil(full[60].x + 0.3f * w)); x <= int(std::floor(full[64].x - 0.3f * w)); ++x) {
      ++cols;
      const float yb = y_along(full, {60, 67, 66, 65, 64}, float(x));
      bool tooth = false;
      for (int y = int(std::floor(yb - reach)); y <= int(std::ceil(yb)) && !tooth; ++y) {
        const cv::Vec3f lab = lab_of(img.at<cv::Vec3b>(y, x));
        tooth = lab[0] > 55 && lab[1] < 6;
      }
      teeth += tooth;
    }
    ASSERT_GT(cols, 10) << name;
    std::printf("%s: open vowel: %d of %d middle columns show a lower tooth above the lower lip\n",
                name.c_str(), teeth, cols);
    EXPECT_GE(teeth, cols / 2) << name << ": no lower row in the open mouth";
  }
}

// The rounded vowel (oo): below its small opening the lower lip is the lip, not a pale patch with
// hard edges: in at most 3 columns of the mouth's middle does the lip below the cavity step by
// more than 26 grey levels from row to row (lip_patch_edges). The old opening filled the outline's
// dip below the drawn cavity's rounded outline with one row of the photo's lip (mirrored about its
// inner edge, at least a third of the lip in): on the smiling portrait a flat, pale triangle whose
// edges stepped by 30 and more in 7-8 columns (now 1-2).
TEST(MouthShapes, NoPalePatchUnderTheRoundedOpening) {
  for (const auto& [name, photo] : kPortraits) {
    auto model = model_of(photo);
    ASSERT_TRUE(model);
    const FaceMesh& m = internal::mesh_of(*model);
    for (double open : {0.15, 0.3}) {
      Pose p;
      p.mouth_open = open, p.mouth_spread = -1, p.speech_relax = 1;
      std::vector<cv::Point2f> full, rigid;
      internal::deform_mesh(m, p, full, rigid);
      const cv::Mat img = internal::render_pose(*model, p);
      dump(img, "mesh_test_oo_" + name + "_" + std::to_string(int(open * 100)));
      const int edges = lip_patch_edges(img, full);
      std::printf("%s: oo (open %.2f): %d columns with a patch's edge in the lower lip\n", name.c_str(), open,
                  edges);
      EXPECT_LE(edges, 3) << name << " (open " << open << ")";
    }
  }
}

// The opening's distance to its outline, measured only near the edges (outline_distance), against
// the distance of every pixel to every edge with the crossing test per pixel: the same sign
// everywhere, the same value within half a pixel of the outline (where the coverage blend uses it)
// and half a pixel or more elsewhere. Outlines of eight points, as the inner lips', around
// ellipses flat and tall, jittered (a sagging lip), some with points on whole and half pixels
// (edges through pixel centres, horizontal edges along a row, a vertex on a centre).
TEST(MouthShapes, OutlineDistanceIsTheDistanceToTheNearestEdge) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> uni(0, 1);
  internal::OpeningScratch scratch;
  int near = 0, inside = 0;
  for (int k = 0; k < 400; ++k) {
    const cv::Point2f c(40 + 10 * uni(rng), 30 + 10 * uni(rng));
    const float rx = 3 + 25 * uni(rng), ry = 0.3f + 12 * uni(rng);
    std::vector<cv::Point2f> ring;
    for (int i = 0; i < 8; ++i) {
      const float th = float(M_PI) * (1 + i / 4.0f), jx = (uni(rng) - 0.5f) * rx * 0.3f,
                  jy = (uni(rng) - 0.5f) * ry * 0.8f;
      cv::Point2f q(c.x + rx * std::cos(th) + jx, c.y + ry * std::sin(th) + jy);
      if (k % 3 == 1) q = {std::round(q.x), std::round(q.y)};
      if (k % 3 == 2) q = {std::round(2 * q.x) / 2, std::round(2 * q.y) / 2};
      ring.push_back(q);
    }
    // Part of the box can be cut off by the frame's edge, as the warper's clip does.
    const cv::Rect box(k % 5 == 0 ? 30 : 0, k % 7 == 0 ? 28 : 0, 90, 70);
    const auto [r0, r1] = internal::outline_distance(ring, box, scratch);
    ASSERT_EQ(scratch.sd.size(), size_t(box.area()));
    float y0 = 1e9f, y1 = -1e9f;
    for (const auto& q : ring) y0 = std::min(y0, q.y), y1 = std::max(y1, q.y);
    for (int y = 0; y < box.height; ++y)
      for (int x = 0; x < box.width; ++x) {
        const cv::Point2f p(float(box.x + x), float(box.y + y));
        float want = 1e9f;
        if (p.y >= y0 - 1 && p.y <= y1 + 1) {
          float d2 = 1e18f;
          bool in = false;
          for (size_t i = 0, j = ring.size() - 1; i < ring.size(); j = i++) {
            const cv::Point2f a = ring[j], b = ring[i], ab = b - a;
            const float t = std::clamp((p - a).dot(ab) / std::max(1e-9f, ab.dot(ab)), 0.0f, 1.0f);
            const cv::Point2f e = p - (a + ab * t);
            d2 = std::min(d2, e.dot(e));
            if ((a.y > p.y) != (b.y > p.y) && p.x < a.x + (p.y - a.y) / (b.y - a.y) * ab.x) in = !in;
          }
          want = in ? -std::sqrt(d2) : std::sqrt(d2);
          ASSERT_TRUE(y >= r0 && y <= r1) << "row " << y << " of outline " << k;
        }
        const float got = scratch.sd[size_t(y * box.width + x)];
        ASSERT_EQ(got <= 0, want <= 0) << "pixel (" << p.x << ", " << p.y << ") of outline " << k;
        if (std::abs(want) < 0.5f)
          ASSERT_EQ(got, want) << "pixel (" << p.x << ", " << p.y << ") of outline " << k;
        else
          ASSERT_GE(std::abs(got), 0.5f) << "pixel (" << p.x << ", " << p.y << ") of outline " << k;
        near += std::abs(want) < 0.5f, inside += want <= 0;
      }
  }
  // The outlines did pass through and around pixels.
  EXPECT_GT(near, 10000);
  EXPECT_GT(inside, 20000);
}

}  // namespace
}  // namespace imago::avatar
