// The model builder (docs/avatar.md): source media -> normalized appearance + geometry + sprites +
// voice match -> .imx bytes.
#include "avatar/builder.h"

#include <cmath>
#include <opencv2/imgproc.hpp>
#include <random>

#include "avatar/gestures.h"
#include "avatar/internal.h"
#include "avatar/voice_table.h"
#include "util/clock.h"
#include "util/crypto.h"
#include "util/strings.h"

namespace imago::avatar {
namespace {
using namespace internal;

struct Placement {
  double face_h_frac;   // Haar face-box height as a fraction of the frame height
  double face_cy_frac;  // face-box centre, fraction of the frame height
};
Placement placement_for(std::string_view aspect) {
  if (aspect == "9:16") return {0.27, 0.40};
  if (aspect == "1:1") return {0.44, 0.47};
  return {0.42, 0.46};  // 16:9
}

void report(const ProgressFn& p, std::string_view step, double f, std::string_view msg) {
  if (p) p(step, f, msg);
}

cv::Point2d apply(const cv::Mat& M, cv::Point2d p) {
  return {M.at<double>(0, 0) * p.x + M.at<double>(0, 1) * p.y + M.at<double>(0, 2),
          M.at<double>(1, 0) * p.x + M.at<double>(1, 1) * p.y + M.at<double>(1, 2)};
}

// Maps the source image into the target frame: eyes levelled, face scaled and centred.
void normalize_frame(const cv::Mat& src_in, const FaceGeometry& g_in, FrameSize fs, std::string_view aspect,
                     cv::Mat& out, FaceGeometry& g) {
  Placement pl = placement_for(aspect);
  double s = pl.face_h_frac * fs.height / g_in.face.height;
  s = std::min(s, 3.5);  // beyond this a tiny face would only be blur; keep it smaller instead
  cv::Mat src = src_in;
  FaceGeometry gi = g_in;
  if (s < 0.9) {
    // Area averaging first: warpAffine's bilinear sampling aliases when shrinking a lot.
    double pre = s / 0.9 * 1.0;
    cv::resize(src_in, src, {}, pre, pre, cv::INTER_AREA);
    auto sc = [&](cv::Point2d p) { return cv::Point2d(p.x * pre, p.y * pre); };
    gi.face = cv::Rect2d(g_in.face.x * pre, g_in.face.y * pre, g_in.face.width * pre, g_in.face.height * pre);
    gi.left_eye = sc(g_in.left_eye), gi.right_eye = sc(g_in.right_eye), gi.mouth = sc(g_in.mouth);
    gi.mouth_width = g_in.mouth_width * pre;
    s /= pre;
  }
  double angle = 0;
  if (gi.eyes_detected) {
    cv::Point2d d = gi.right_eye - gi.left_eye;
    angle = std::atan2(d.y, d.x) * 180 / CV_PI;
    if (std::abs(angle) < 2 || std::abs(angle) > 30) angle = 0;
  }
  cv::Point2d fc(gi.face.x + gi.face.width / 2, gi.face.y + gi.face.height / 2);
  cv::Mat M = cv::getRotationMatrix2D(fc, angle, s);
  cv::Point2d target(fs.width / 2.0, pl.face_cy_frac * fs.height);
  M.at<double>(0, 2) += target.x - fc.x;
  M.at<double>(1, 2) += target.y - fc.y;
  int interp = s > 1 ? cv::INTER_CUBIC : cv::INTER_LINEAR;
  cv::warpAffine(src, out, M, {fs.width, fs.height}, interp, cv::BORDER_REFLECT_101);
  // Where the photo does not reach, show a heavily blurred mirror of it rather than smeared edge
  // pixels: it reads as out-of-focus background.
  cv::Mat cover;
  cv::warpAffine(cv::Mat(src.size(), CV_8UC1, cv::Scalar(255)), cover, M, out.size(), cv::INTER_LINEAR,
                 cv::BORDER_CONSTANT, cv::Scalar(0));
  if (cv::countNonZero(cover < 255) > 0) {
    cv::Mat small, blurred;
    cv::resize(out, small, {}, 0.125, 0.125, cv::INTER_AREA);
    cv::GaussianBlur(small, small, {0, 0}, 3.0);
    cv::resize(small, blurred, out.size(), 0, 0, cv::INTER_LINEAR);
    cv::Mat alpha;
    cv::erode(cover, alpha, cv::Mat(), {-1, -1}, 3);
    cv::GaussianBlur(alpha, alpha, {0, 0}, 6.0);
    for (int y = 0; y < out.rows; ++y) {
      auto* o = out.ptr<cv::Vec3b>(y);
      const auto* b = blurred.ptr<cv::Vec3b>(y);
      const auto* a = alpha.ptr<uint8_t>(y);
      for (int x = 0; x < out.cols; ++x)
        if (a[x] < 255)
          for (int c = 0; c < 3; ++c)
            o[x][c] = static_cast<uint8_t>((o[x][c] * a[x] + b[x][c] * (255 - a[x])) / 255);
    }
  }
  g.eyes_detected = gi.eyes_detected;
  double fw = gi.face.width * s, fh = gi.face.height * s;
  g.face = cv::Rect2d(target.x - fw / 2, target.y - fh / 2, fw, fh);
  g.left_eye = apply(M, gi.left_eye);
  g.right_eye = apply(M, gi.right_eye);
  g.mouth = apply(M, gi.mouth);
  g.mouth_width = gi.mouth_width * s;
}

cv::Vec3b median_color(const cv::Mat& img, cv::Rect r) {
  r &= cv::Rect(0, 0, img.cols, img.rows);
  if (r.area() <= 0) return {120, 150, 200};
  std::vector<uint8_t> ch[3];
  for (int y = r.y; y < r.y + r.height; ++y)
    for (int x = r.x; x < r.x + r.width; ++x) {
      auto p = img.at<cv::Vec3b>(y, x);
      for (int c = 0; c < 3; ++c) ch[c].push_back(p[c]);
    }
  cv::Vec3b out;
  for (int c = 0; c < 3; ++c) {
    std::nth_element(ch[c].begin(), ch[c].begin() + ch[c].size() / 2, ch[c].end());
    out[c] = ch[c][ch[c].size() / 2];
  }
  return out;
}

cv::Vec3b skin_color(const cv::Mat& img, const FaceGeometry& g) {
  const auto& f = g.face;
  cv::Rect left(int(f.x + 0.18 * f.width), int(f.y + 0.55 * f.height), int(0.14 * f.width),
                int(0.12 * f.height));
  cv::Rect right(int(f.x + 0.68 * f.width), int(f.y + 0.55 * f.height), int(0.14 * f.width),
                 int(0.12 * f.height));
  cv::Vec3b a = median_color(img, left), b = median_color(img, right);
  return {uint8_t((a[0] + b[0]) / 2), uint8_t((a[1] + b[1]) / 2), uint8_t((a[2] + b[2]) / 2)};
}

cv::Scalar shade(cv::Vec3b c, double k) {
  return cv::Scalar(std::min(255.0, c[0] * k), std::min(255.0, c[1] * k), std::min(255.0, c[2] * k));
}

// Teeth, cavity and tongue seen through the opened lips (BGR, 128x64). Drawn, not copied: the
// photo has the mouth closed, so there is nothing to copy.
cv::Mat mouth_interior() {
  cv::Mat m(64, 128, CV_8UC3);
  for (int y = 0; y < m.rows; ++y) {
    double k = 0.75 + 0.25 * y / 63.0;
    m.row(y).setTo(cv::Scalar(28 * k, 22 * k, 62 * k));
  }
  cv::ellipse(m, {64, 70}, {46, 20}, 0, 0, 360, cv::Scalar(80, 78, 170), cv::FILLED, cv::LINE_AA);  // tongue
  cv::ellipse(m, {64, 72}, {30, 12}, 0, 0, 360, cv::Scalar(95, 95, 190), cv::FILLED, cv::LINE_AA);
  // Upper teeth: a band with a rounded lower edge and faint gaps between teeth.
  cv::rectangle(m, {0, 0}, {127, 12}, cv::Scalar(222, 228, 232), cv::FILLED);
  for (int x = 4; x < 128; x += 15)
    cv::ellipse(m, {x + 7, 12}, {7, 5}, 0, 0, 180, cv::Scalar(215, 222, 228), cv::FILLED, cv::LINE_AA);
  for (int x = 4; x < 128; x += 15) cv::line(m, {x, 0}, {x, 15}, cv::Scalar(170, 176, 182), 1, cv::LINE_AA);
  cv::GaussianBlur(m, m, {3, 3}, 0);
  return m;
}

// Closed eyelids for both eyes side by side (BGRA): skin from under each eye, a crease shade and
// a lash line where the lids meet.
cv::Mat eyelids(const cv::Mat& img, const FaceGeometry& g, int& ew, int& eh) {
  double eye_dist = cv::norm(g.right_eye - g.left_eye);
  ew = std::max(8, static_cast<int>(std::lround(0.62 * eye_dist)));
  eh = std::max(6, static_cast<int>(std::lround(0.45 * ew)));
  cv::Mat out(eh, 2 * ew, CV_8UC4, cv::Scalar(0, 0, 0, 0));
  int i = 0;
  for (cv::Point2d c : {g.left_eye, g.right_eye}) {
    cv::Rect below(int(c.x - 0.2 * ew), int(c.y + 0.55 * eh), std::max(2, int(0.4 * ew)),
                   std::max(2, int(0.35 * eh)));
    cv::Vec3b skin = median_color(img, below);
    cv::Mat lid(eh, ew, CV_8UC3);
    for (int y = 0; y < eh; ++y)
      lid.row(y).setTo(shade(skin, 1.0 - 0.10 * (1.0 - std::abs(y - 0.4 * eh) / eh)));
    // The crease arc in the upper part, the lash line near 62% of the height.
    cv::ellipse(lid, {ew / 2, int(0.62 * eh)}, {int(0.46 * ew), int(0.16 * eh)}, 0, 0, 180,
                cv::Scalar(35, 35, 45), std::max(1, eh / 9), cv::LINE_AA);
    cv::ellipse(lid, {ew / 2, int(0.30 * eh)}, {int(0.38 * ew), int(0.18 * eh)}, 0, 200, 340,
                shade(skin, 0.82), std::max(1, eh / 14), cv::LINE_AA);
    cv::Mat alpha(eh, ew, CV_8UC1, cv::Scalar(0));
    cv::ellipse(alpha, {ew / 2, eh / 2}, {int(0.48 * ew), int(0.46 * eh)}, 0, 0, 360, cv::Scalar(255),
                cv::FILLED, cv::LINE_AA);
    cv::GaussianBlur(alpha, alpha, {0, 0}, std::max(0.8, eh / 12.0));
    cv::Mat rgba;
    std::vector<cv::Mat> ch;
    cv::split(lid, ch);
    ch.push_back(alpha);
    cv::merge(ch, rgba);
    rgba.copyTo(out(cv::Rect(i * ew, 0, ew, eh)));
    ++i;
  }
  return out;
}

// A stylized open hand (BGRA) for the wave gesture; the wrist pivot is the bottom centre.
cv::Mat hand_sprite(cv::Vec3b skin, double face_w) {
  int w = std::max(24, int(0.62 * face_w)), h = std::max(32, int(0.95 * face_w));
  cv::Mat col(h, w, CV_8UC3, shade(skin, 1.0)), alpha(h, w, CV_8UC1, cv::Scalar(0));
  auto both = [&](auto draw) {
    draw(col, shade(skin, 1.0));
    draw(alpha, cv::Scalar(255));
  };
  double u = w / 10.0;
  cv::Point palm(w / 2, int(h * 0.62));
  both([&](cv::Mat& m, cv::Scalar c) {
    cv::ellipse(m, palm, {int(3.4 * u), int(3.0 * u)}, 0, 0, 360, c, cv::FILLED, cv::LINE_AA);
    cv::rectangle(m, cv::Point(int(w / 2 - 2.2 * u), int(h * 0.7)), cv::Point(int(w / 2 + 2.2 * u), h - 1), c,
                  cv::FILLED);
    for (int f = 0; f < 4; ++f) {
      double ang = -18 + f * 12;
      cv::Point base(int(w / 2 + (f - 1.5) * 1.6 * u), int(h * 0.45));
      double len = (f == 1 || f == 2) ? 3.3 * u : 2.8 * u;
      cv::Point tip(int(base.x + std::sin(ang * CV_PI / 180) * len),
                    int(base.y - std::cos(ang * CV_PI / 180) * len));
      cv::line(m, base, tip, c, int(1.35 * u), cv::LINE_AA);
      cv::circle(m, tip, int(0.68 * u), c, cv::FILLED, cv::LINE_AA);
    }
    cv::line(m, cv::Point(int(w / 2 + 2.6 * u), int(h * 0.66)), cv::Point(int(w / 2 + 4.3 * u), int(h * 0.5)),
             c, int(1.4 * u), cv::LINE_AA);
  });
  // Finger separations and palm shading so the hand reads as a hand, not a blob.
  for (int f = 0; f < 3; ++f) {
    cv::Point a(int(w / 2 + (f - 0.75) * 1.6 * u), int(h * 0.47));
    cv::line(col, a, a + cv::Point(int((f - 1) * 0.4 * u), int(-2.2 * u)), shade(skin, 0.75), 1, cv::LINE_AA);
  }
  cv::ellipse(col, palm, {int(2.0 * u), int(1.6 * u)}, 0, 0, 360, shade(skin, 0.93), cv::FILLED, cv::LINE_AA);
  cv::GaussianBlur(alpha, alpha, {3, 3}, 0);
  std::vector<cv::Mat> ch;
  cv::split(col, ch);
  ch.push_back(alpha);
  cv::Mat out;
  cv::merge(ch, out);
  return out;
}

cv::Mat heart_sprite(double face_w) {
  int s = std::max(16, int(0.34 * face_w));
  cv::Mat col(s, s, CV_8UC3, cv::Scalar(70, 40, 225)), alpha(s, s, CV_8UC1, cv::Scalar(0));
  double r = s * 0.26;
  for (cv::Mat* m : {&alpha}) {
    cv::circle(*m, {int(s * 0.3), int(s * 0.34)}, int(r), 255, cv::FILLED, cv::LINE_AA);
    cv::circle(*m, {int(s * 0.7), int(s * 0.34)}, int(r), 255, cv::FILLED, cv::LINE_AA);
    std::vector<cv::Point> tri = {
        {int(s * 0.06), int(s * 0.42)}, {int(s * 0.94), int(s * 0.42)}, {s / 2, int(s * 0.93)}};
    cv::fillConvexPoly(*m, tri, 255, cv::LINE_AA);
  }
  cv::circle(col, {int(s * 0.3), int(s * 0.3)}, std::max(1, int(r * 0.35)), cv::Scalar(170, 150, 255),
             cv::FILLED, cv::LINE_AA);
  std::vector<cv::Mat> ch;
  cv::split(col, ch);
  ch.push_back(alpha);
  cv::Mat out;
  cv::merge(ch, out);
  return out;
}

// Procedural default avatar: a clean stylized face, every choice drawn from the agent id.
void procedural_avatar(const std::string& agent_id, FrameSize fs, std::string_view aspect, cv::Mat& img,
                       FaceGeometry& g) {
  std::mt19937 rng(crc32(agent_id.empty() ? std::string_view("imago") : std::string_view(agent_id)));
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  const cv::Vec3b skins[] = {{185, 205, 240}, {150, 180, 225}, {120, 160, 210}, {95, 130, 180},
                             {70, 100, 150},  {50, 75, 115},   {160, 195, 235}};
  const cv::Vec3b hairs[] = {{30, 30, 35},    {40, 60, 90},  {60, 110, 170},
                             {140, 170, 200}, {30, 45, 120}, {180, 180, 185}};
  const cv::Vec3b shirts[] = {{160, 90, 40},   {60, 130, 60},  {70, 70, 180},
                              {130, 130, 130}, {150, 60, 120}, {40, 140, 200}};
  const cv::Vec3b bgs[] = {
      {235, 220, 200}, {210, 230, 220}, {215, 215, 240}, {230, 230, 230}, {200, 220, 240}};
  const cv::Vec3b irises[] = {{90, 60, 30}, {60, 100, 40}, {150, 110, 40}, {40, 50, 70}};
  cv::Vec3b skin = skins[pick(7)], hair = hairs[pick(6)], shirt = shirts[pick(6)], bg = bgs[pick(5)],
            iris = irises[pick(4)];
  int hair_style = pick(3);
  cv::Vec3b lip = {uint8_t(skin[0] * 0.65), uint8_t(skin[1] * 0.62),
                   uint8_t(std::min(255.0, skin[2] * 0.95))};

  Placement pl = placement_for(aspect);
  double fh = pl.face_h_frac * fs.height, fw = fh;
  cv::Point2d fc(fs.width / 2.0, pl.face_cy_frac * fs.height);
  g.face = cv::Rect2d(fc.x - fw / 2, fc.y - fh / 2, fw, fh);
  img.create(fs.height, fs.width, CV_8UC3);
  for (int y = 0; y < img.rows; ++y) img.row(y).setTo(shade(bg, 1.0 - 0.18 * y / img.rows));
  auto P = [&](double rx, double ry) { return cv::Point(int(g.face.x + rx * fw), int(g.face.y + ry * fh)); };
  auto S = [&](double rx, double ry) {
    return cv::Size(std::max(1, int(rx * fw)), std::max(1, int(ry * fh)));
  };
  const auto AA = cv::LINE_AA;
  if (hair_style == 1)
    cv::ellipse(img, P(0.5, 0.55), S(0.62, 0.85), 0, 0, 360, shade(hair, 1), cv::FILLED, AA);
  cv::ellipse(img, P(0.5, 1.75), S(1.25, 0.75), 0, 180, 360, shade(shirt, 1), cv::FILLED, AA);  // shoulders
  cv::rectangle(img, P(-0.75, 1.75), cv::Point(int(g.face.x + 1.75 * fw), img.rows), shade(shirt, 1),
                cv::FILLED);
  cv::rectangle(img, P(0.36, 0.8), P(0.64, 1.12), shade(skin, 0.85), cv::FILLED, AA);  // neck
  cv::ellipse(img, P(0.5, 1.08), S(0.16, 0.08), 0, 0, 180, shade(skin, 0.85), cv::FILLED, AA);
  cv::ellipse(img, P(0.03, 0.47), S(0.07, 0.12), 0, 0, 360, shade(skin, 0.92), cv::FILLED, AA);  // ears
  cv::ellipse(img, P(0.97, 0.47), S(0.07, 0.12), 0, 0, 360, shade(skin, 0.92), cv::FILLED, AA);
  cv::ellipse(img, P(0.5, 0.45), S(0.47, 0.6), 0, 0, 360, shade(skin, 1), cv::FILLED, AA);      // head
  cv::ellipse(img, P(0.5, 0.62), S(0.40, 0.38), 0, 0, 180, shade(skin, 0.96), cv::FILLED, AA);  // jaw shade
  if (hair_style != 2) {
    cv::ellipse(img, P(0.5, 0.12), S(0.5, 0.32), 0, 180, 360, shade(hair, 1), cv::FILLED, AA);
    cv::ellipse(img, P(0.5, 0.12), S(0.5, 0.08), 0, 0, 180, shade(hair, 1), cv::FILLED, AA);
  } else {
    cv::ellipse(img, P(0.5, 0.1), S(0.46, 0.22), 0, 180, 360, shade(hair, 0.9), cv::FILLED, AA);
  }
  for (double sx : {0.31, 0.69}) {
    cv::ellipse(img, P(sx, 0.30), S(0.11, 0.035), 0, 180, 360, shade(hair, 0.9), std::max(2, int(0.025 * fh)),
                AA);
    cv::ellipse(img, P(sx, 0.40), S(0.085, 0.045), 0, 0, 360, cv::Scalar(245, 245, 245), cv::FILLED, AA);
    cv::circle(img, P(sx, 0.40), int(0.042 * fw), shade(iris, 1), cv::FILLED, AA);
    cv::circle(img, P(sx, 0.40), int(0.02 * fw), cv::Scalar(15, 15, 15), cv::FILLED, AA);
    cv::circle(img, P(sx + 0.015, 0.39), std::max(1, int(0.008 * fw)), cv::Scalar(255, 255, 255), cv::FILLED,
               AA);
    cv::ellipse(img, P(sx, 0.40), S(0.09, 0.05), 0, 190, 350, cv::Scalar(40, 40, 50),
                std::max(1, int(0.008 * fh)), AA);
    cv::ellipse(img, P(sx, 0.62), S(0.07, 0.035), 0, 0, 360, shade(skin, 0.93), cv::FILLED, AA);  // cheek
  }
  cv::ellipse(img, P(0.5, 0.6), S(0.06, 0.03), 0, 0, 180, shade(skin, 0.7), std::max(1, int(0.01 * fh)),
              AA);  // nose
  cv::line(img, P(0.5, 0.42), P(0.48, 0.58), shade(skin, 0.88), std::max(1, int(0.008 * fh)), AA);
  cv::ellipse(img, P(0.5, 0.775), S(0.17, 0.025), 0, 180, 360, shade(lip, 0.95), cv::FILLED,
              AA);                                                                             // upper lip
  cv::ellipse(img, P(0.5, 0.78), S(0.15, 0.04), 0, 0, 180, shade(lip, 1.05), cv::FILLED, AA);  // lower lip
  cv::line(img, P(0.33, 0.78), P(0.67, 0.78), shade(lip, 0.55), std::max(1, int(0.008 * fh)), AA);
  cv::GaussianBlur(img, img, {0, 0}, 0.9);
  g.left_eye = P(0.31, 0.40);
  g.right_eye = P(0.69, 0.40);
  g.mouth = P(0.5, 0.78);
  g.mouth_width = 0.34 * fw;
  g.eyes_detected = true;
}

// Chooses the video frame with the sharpest, largest frontal face: a quick upright pass over the
// sampled frames, then a thorough search on a few of them if the quick pass found nothing.
Result<std::pair<cv::Mat, FaceGeometry>> best_video_frame(const DecodedVideo& v, const ProgressFn& progress) {
  double best = -1;
  std::pair<cv::Mat, FaceGeometry> out;
  auto consider = [&](size_t i, bool thorough) {
    auto g = detect_face(v.frames[i], thorough);
    if (!g.ok()) return;
    cv::Rect fr(g->face);
    double score = sharpness(v.frames[i], fr) * std::sqrt(std::max(1.0, g->face.area())) *
                   (g->eyes_detected ? 1.5 : 1.0);
    if (score > best) best = score, out = {v.frames[i], *g};
  };
  for (size_t i = 0; i < v.frames.size(); ++i) {
    report(progress, "face", 0.1 + 0.25 * i / v.frames.size(), "Looking for the best frame");
    consider(i, false);
  }
  if (best < 0)
    for (size_t k = 0; k < 3 && k < v.frames.size(); ++k) consider((2 * k + 1) * v.frames.size() / 6, true);
  if (best < 0) return Status::Invalid("No face found in the video");
  // Refine the chosen frame's geometry with the thorough detector.
  if (auto g = detect_face(out.first, true); g.ok()) out.second = *g;
  return out;
}

}  // namespace

Result<std::string> build_imx(const BuildInput& in, const ProgressFn& progress) {
  if (in.model_type != "essence" && in.model_type != "expression")
    return Status::Invalid("model must be essence or expression");
  auto fs_r = frame_size_for(in.aspect_ratio);
  if (!fs_r.ok()) return fs_r.status();
  FrameSize fs = *fs_r;
  if (!in.voice.empty() && !find_voice_reference(in.voice))
    return Status::Invalid("Unknown voice " + in.voice + " (built-in voices are M1..M5, F1..F5)");

  report(progress, "decode", 0.02, "Reading the source media");
  Manifest m;
  cv::Mat frame;
  FaceGeometry g;
  std::optional<Pcm> voice_pcm;
  if (in.image_bytes) {
    auto img = decode_image(*in.image_bytes);
    if (!img.ok()) return img.status();
    report(progress, "face", 0.15, "Detecting the face");
    auto det = detect_face(*img);
    if (!det.ok()) return det.status();
    report(progress, "frame", 0.4, "Framing the face");
    normalize_frame(*img, *det, fs, in.aspect_ratio, frame, g);
    m.source = "image";
  } else if (in.video_bytes) {
    auto vid = decode_video(*in.video_bytes, 24, 22050);
    if (!vid.ok()) return vid.status();
    auto best = best_video_frame(*vid, progress);
    if (!best.ok()) return best.status();
    report(progress, "frame", 0.4, "Framing the face");
    normalize_frame(best->first, best->second, fs, in.aspect_ratio, frame, g);
    if (vid->audio) voice_pcm = std::move(vid->audio);
    m.source = "video";
  } else {
    report(progress, "frame", 0.4, "Drawing a default avatar");
    procedural_avatar(in.agent_id, fs, in.aspect_ratio, frame, g);
    m.source = "procedural";
  }
  if (in.audio_bytes) {
    auto pcm = decode_audio(*in.audio_bytes, 22050);
    if (!pcm.ok()) return pcm.status();
    voice_pcm = std::move(*pcm);
  }

  report(progress, "assets", 0.55, "Preparing mouth and eye shapes");
  int ew = 0, eh = 0;
  cv::Vec3b skin = skin_color(frame, g);
  std::vector<ImxChunk> chunks;
  chunks.push_back({std::string(kChunkAppearance), encode_png(frame)});
  chunks.push_back({std::string(kChunkMouthInterior), encode_png(mouth_interior())});
  chunks.push_back({std::string(kChunkEyelids), encode_png(eyelids(frame, g, ew, eh))});
  chunks.push_back({std::string(kChunkHand), encode_png(hand_sprite(skin, g.face.width))});
  chunks.push_back({std::string(kChunkHeart), encode_png(heart_sprite(g.face.width))});
  chunks.push_back({std::string(kChunkGestures), default_gestures_json()});

  report(progress, "voice", 0.75, voice_pcm ? "Matching the voice sample" : "Choosing a voice");
  uint32_t seed = crc32(in.agent_id);
  m.voice = voice_reference_table()[seed % voice_reference_table().size()].id;
  if (voice_pcm) {
    auto vc = match_voice(*voice_pcm);
    if (vc.ok()) {
      m.voice = vc->voice;
      m.axes = vc->axes;
      m.voice_match = vc->match;
    } else if (in.audio_bytes) {
      return vc.status();  // an explicit voice sample that cannot be matched is an error
    }
    // Keep at most 30 s of the sample (re-matching or future cloning can use it).
    Pcm keep = *voice_pcm;
    if (keep.samples.size() > static_cast<size_t>(keep.sample_rate) * 30)
      keep.samples.resize(keep.sample_rate * 30);
    chunks.push_back({std::string(kChunkVoiceSample), encode_wav(keep)});
  }
  if (!in.voice.empty()) {
    m.voice = in.voice;  // an explicit preset wins; measurements stay recorded
    m.axes = {};
    if (m.voice_match)
      m.voice_match->distance =
          voice_distance(*find_voice_reference(in.voice), m.voice_match->median_f0_hz,
                         m.voice_match->spectral_centroid_hz, m.voice_match->speaking_rate_syl_s);
  }

  report(progress, "package", 0.9, "Writing the model");
  m.model_type = in.model_type;
  m.agent_id = in.agent_id;
  m.name = in.name;
  m.created_at = format_rfc3339(in.created_unix_s > 0 ? in.created_unix_s : SystemClock::instance().now_s());
  m.aspect_ratio = in.aspect_ratio;
  m.width = fs.width;
  m.height = fs.height;
  // Clamp anchors into the frame: a face near the photo's edge can be framed partly outside.
  auto clampx = [&](double x) { return std::clamp(x, 0.0, fs.width - 1.0); };
  auto clampy = [&](double y) { return std::clamp(y, 0.0, fs.height - 1.0); };
  double fx0 = clampx(g.face.x), fy0 = clampy(g.face.y);
  m.face = {fx0, fy0, clampx(g.face.x + g.face.width) - fx0, clampy(g.face.y + g.face.height) - fy0};
  m.left_eye = {clampx(g.left_eye.x), clampy(g.left_eye.y)};
  m.right_eye = {clampx(g.right_eye.x), clampy(g.right_eye.y)};
  m.mouth = {clampx(g.mouth.x), clampy(g.mouth.y)};
  m.mouth_width = g.mouth_width;
  m.eyes_detected = g.eyes_detected;
  bool expr = in.model_type == "expression";
  m.visemes = expr ? 10 : 6;
  m.prosody = expr;
  m.sway = expr ? 1.2 : 1.0;
  m.seed = seed;
  std::string bytes = write_imx(m, chunks);
  // Round-trip check: never hand out a model our own reader would refuse.
  if (auto check = read_imx(bytes); !check.ok())
    return Status::Internal("built model does not verify: " + check.status().message());
  report(progress, "done", 1.0, "Model ready");
  return bytes;
}

}  // namespace imago::avatar
