// Face, eye and mouth location with OpenCV's Haar cascades (Debian opencv-data). Cascades are
// loaded once per thread: CascadeClassifier is not safe to share between threads.
#include <cstdlib>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/objdetect.hpp>

#include "avatar/internal.h"

namespace imago::avatar::internal {
namespace {

std::string cascade_dir() {
  if (const char* d = std::getenv("IMAGO_HAAR_DIR"); d && *d) return d;
  return "/usr/share/opencv4/haarcascades";
}

struct Cascades {
  cv::CascadeClassifier face, face_alt, eye, eye_glasses;
  bool ok = false;
};

Cascades& cascades() {
  thread_local Cascades c = [] {
    Cascades k;
    std::string d = cascade_dir();
    k.ok = k.face.load(d + "/haarcascade_frontalface_default.xml") &&
           k.face_alt.load(d + "/haarcascade_frontalface_alt2.xml") &&
           k.eye.load(d + "/haarcascade_eye.xml") &&
           k.eye_glasses.load(d + "/haarcascade_eye_tree_eyeglasses.xml");
    return k;
  }();
  return c;
}

// Two eyes in the upper part of a face box, one on each side, roughly level; nullopt otherwise.
std::optional<std::pair<cv::Point2d, cv::Point2d>> find_eyes(Cascades& cc, const cv::Mat& gray,
                                                             const cv::Rect2d& f) {
  cv::Rect upper(static_cast<int>(f.x), static_cast<int>(f.y + f.height * 0.15), static_cast<int>(f.width),
                 static_cast<int>(f.height * 0.45));
  upper &= cv::Rect(0, 0, gray.cols, gray.rows);
  if (upper.width < 8 || upper.height < 4) return std::nullopt;
  double eye_scale = 240.0 / upper.width;  // a fixed working size: eyes 24..110 px
  cv::Mat plain, eq;
  cv::resize(gray(upper), plain, {}, eye_scale, eye_scale, eye_scale < 1 ? cv::INTER_AREA : cv::INTER_LINEAR);
  cv::equalizeHist(plain, eq);
  // Equalization helps dim photos and hurts bright ones; glasses need their own cascade. Try the
  // combinations until one gives a plausible pair.
  for (const cv::Mat* img : {&plain, &eq}) {
    for (cv::CascadeClassifier* cascade : {&cc.eye, &cc.eye_glasses}) {
      std::vector<cv::Rect> eyes;
      cascade->detectMultiScale(*img, eyes, 1.08, 3, 0, {24, 24}, {110, 110});
      std::optional<cv::Point2d> le, re;
      double la = 0, ra = 0;
      for (const auto& e : eyes) {
        cv::Point2d c(upper.x + (e.x + e.width / 2.0) / eye_scale,
                      upper.y + (e.y + e.height / 2.0) / eye_scale);
        double rel = (c.x - f.x) / f.width;
        double area = e.area();
        if (rel > 0.12 && rel < 0.48 && area > la) la = area, le = c;
        if (rel > 0.52 && rel < 0.88 && area > ra) ra = area, re = c;
      }
      if (le && re && std::abs(le->y - re->y) < 0.15 * f.height && (re->x - le->x) > 0.25 * f.width)
        return std::make_pair(*le, *re);
    }
  }
  return std::nullopt;
}

}  // namespace

Result<FrameSize> frame_size_for(std::string_view aspect) {
  if (aspect == "16:9") return FrameSize{1280, 720};
  if (aspect == "9:16") return FrameSize{720, 1280};
  if (aspect == "1:1") return FrameSize{720, 720};
  return Status::Invalid("aspect_ratio must be one of 16:9, 9:16, 1:1");
}

Result<cv::Mat> decode_image(std::string_view bytes) {
  if (bytes.empty()) return Status::Invalid("The image is empty");
  cv::Mat buf(1, static_cast<int>(bytes.size()), CV_8UC1, const_cast<char*>(bytes.data()));
  cv::Mat img;
  try {
    img = cv::imdecode(buf, cv::IMREAD_COLOR);  // applies EXIF orientation
  } catch (const cv::Exception&) {
    img.release();
  }
  if (img.empty()) return Status::Invalid("The image could not be decoded (supported: JPEG, PNG, WebP)");
  if (img.cols < 32 || img.rows < 32) return Status::Invalid("The image is too small");
  return img;
}

std::string encode_png(const cv::Mat& m) {
  std::vector<uint8_t> out;
  cv::imencode(".png", m, out, {cv::IMWRITE_PNG_COMPRESSION, 3});
  return std::string(out.begin(), out.end());
}

Result<cv::Mat> decode_png(std::string_view bytes, int flags) {
  if (bytes.empty()) return Status::Invalid("corrupt .imx: empty image chunk");
  cv::Mat buf(1, static_cast<int>(bytes.size()), CV_8UC1, const_cast<char*>(bytes.data()));
  cv::Mat img;
  try {
    img = cv::imdecode(buf, flags);
  } catch (const cv::Exception&) {
    img.release();
  }
  if (img.empty()) return Status::Invalid("corrupt .imx: image chunk does not decode");
  return img;
}

double sharpness(const cv::Mat& bgr, const cv::Rect& r) {
  cv::Rect rr = r & cv::Rect(0, 0, bgr.cols, bgr.rows);
  if (rr.area() <= 0) return 0;
  cv::Mat gray, lap;
  cv::cvtColor(bgr(rr), gray, cv::COLOR_BGR2GRAY);
  cv::Laplacian(gray, lap, CV_32F);
  cv::Scalar mean, stddev;
  cv::meanStdDev(lap, mean, stddev);
  return stddev[0] * stddev[0];
}

namespace {

// Finds the best face in `work` (gray, equalized at detection size); geometry in `work` pixels.
struct Found {
  FaceGeometry g;
  double score = -1e18;
};

Found detect_in(Cascades& cc, const cv::Mat& work, bool thorough) {
  cv::Mat eq;
  cv::equalizeHist(work, eq);
  // Quick mode looks for faces at least 1/6 of the frame (a talking head), in bigger steps.
  int min_side = std::max(20, std::min(eq.cols, eq.rows) / (thorough ? 20 : 6));
  double step = thorough ? 1.1 : 1.2;
  std::vector<cv::Rect> faces;
  std::vector<int> levels;
  std::vector<double> weights;
  cc.face.detectMultiScale(eq, faces, levels, weights, step, 4, 0, {min_side, min_side}, {}, true);
  if (faces.empty())
    cc.face_alt.detectMultiScale(eq, faces, levels, weights, step, 3, 0, {min_side, min_side}, {}, true);
  Found best;
  for (size_t i = 0; i < faces.size(); ++i) {
    cv::Rect2d f(faces[i]);
    auto eyes = find_eyes(cc, work, f);
    double w = i < weights.size() ? weights[i] : 0;
    // Two eyes where eyes belong beat raw cascade confidence: false positives on clothing or
    // crowds rarely have them.
    double score = std::min(w, 6.0) + (eyes ? 4.0 : 0.0) + 0.5 * std::log(f.width);
    if (score <= best.score) continue;
    best.score = score;
    best.g.face = f;
    best.g.eyes_detected = eyes.has_value();
    if (eyes) {
      best.g.left_eye = eyes->first;
      best.g.right_eye = eyes->second;
    } else {
      // Typical eye positions inside the Haar frontal-face box.
      best.g.left_eye = {f.x + 0.31 * f.width, f.y + 0.39 * f.height};
      best.g.right_eye = {f.x + 0.69 * f.width, f.y + 0.39 * f.height};
    }
  }
  return best;
}

// Mouth: the lip line is the darkest row in the lower face around its expected place (about one
// eye distance below the eyes); smoothed row means resist skin texture.
void locate_mouth(const cv::Mat& gray, FaceGeometry& g) {
  const cv::Rect2d& f = g.face;
  double eye_dist = cv::norm(g.right_eye - g.left_eye);
  double mid_x = (g.left_eye.x + g.right_eye.x) / 2;
  double eye_y = (g.left_eye.y + g.right_eye.y) / 2;
  g.mouth_width = std::clamp(0.95 * eye_dist, 0.3 * f.width, 0.5 * f.width);
  double expect_y = eye_y + 1.0 * eye_dist;
  int x0 = static_cast<int>(mid_x - 0.25 * g.mouth_width),
      x1 = static_cast<int>(mid_x + 0.25 * g.mouth_width);
  int y0 = static_cast<int>(expect_y - 0.28 * eye_dist), y1 = static_cast<int>(expect_y + 0.28 * eye_dist);
  cv::Rect mr =
      cv::Rect(x0, y0, std::max(1, x1 - x0), std::max(1, y1 - y0)) & cv::Rect(0, 0, gray.cols, gray.rows);
  double mouth_y = expect_y;
  if (mr.height > 4 && mr.width > 2) {
    cv::Mat rows;
    cv::reduce(gray(mr), rows, 1, cv::REDUCE_AVG, CV_32F);
    cv::GaussianBlur(rows, rows, {1, 5}, 0);
    double best_v = 1e9;
    for (int i = 0; i < rows.rows; ++i) {
      double prior = 1.0 + 0.6 * std::abs((mr.y + i) - expect_y) / (0.28 * eye_dist);
      double v = rows.at<float>(i) * prior;
      if (v < best_v) best_v = v, mouth_y = mr.y + i;
    }
  }
  g.mouth = {mid_x, mouth_y};
}

}  // namespace

Result<FaceGeometry> detect_face(const cv::Mat& bgr, bool thorough) {
  Cascades& cc = cascades();
  if (!cc.ok)
    return Status::Internal("Face detection data missing (opencv-data cascades not found in " +
                            cascade_dir() + ")");
  // Detect at 800 px on the longest side: small photos are enlarged so small faces reach the
  // cascade's working size, large ones shrunk for speed (Haar cascades are scale invariant).
  cv::Mat gray;
  cv::cvtColor(bgr, gray, cv::COLOR_BGR2GRAY);
  double ws = (thorough ? 800.0 : 480.0) / std::max(gray.cols, gray.rows);
  cv::Mat work;
  cv::resize(gray, work, {}, ws, ws, ws < 1 ? cv::INTER_AREA : cv::INTER_LINEAR);
  // Upright first; tilted heads (up to ~20 degrees) are found on rotated copies.
  cv::Point2f centre(work.cols / 2.f, work.rows / 2.f);
  Found best;
  double best_angle = 0;
  cv::Mat best_img;
  for (double angle : {0.0, 15.0, -15.0}) {
    if (angle != 0 && !thorough) break;
    cv::Mat img = work;
    if (angle != 0) {
      cv::warpAffine(work, img, cv::getRotationMatrix2D(centre, angle, 1.0), work.size(), cv::INTER_LINEAR,
                     cv::BORDER_REPLICATE);
    }
    Found f = detect_in(cc, img, thorough);
    if (angle != 0) f.score -= 0.5;  // prefer upright when equally good
    if (f.score > best.score) best = f, best_angle = angle, best_img = img;
    if (angle == 0 && best.g.eyes_detected && best.score > 4) break;  // a clear upright face
  }
  if (best.score <= -1e17) return Status::Invalid("No face found in the image");
  FaceGeometry g = best.g;
  locate_mouth(best_img, g);
  // Back to source pixels: undo the rotation, then the working scale.
  cv::Mat inv;
  cv::invertAffineTransform(cv::getRotationMatrix2D(centre, best_angle, 1.0), inv);
  auto back = [&](cv::Point2d p) {
    cv::Point2d q(inv.at<double>(0, 0) * p.x + inv.at<double>(0, 1) * p.y + inv.at<double>(0, 2),
                  inv.at<double>(1, 0) * p.x + inv.at<double>(1, 1) * p.y + inv.at<double>(1, 2));
    return q / ws;
  };
  cv::Point2d fc = back({g.face.x + g.face.width / 2, g.face.y + g.face.height / 2});
  double fw = g.face.width / ws, fh = g.face.height / ws;
  FaceGeometry out;
  out.face = cv::Rect2d(fc.x - fw / 2, fc.y - fh / 2, fw, fh);
  out.left_eye = back(g.left_eye);
  out.right_eye = back(g.right_eye);
  out.mouth = back(g.mouth);
  out.mouth_width = g.mouth_width / ws;
  // Without detected eyes the default eye positions carry the search angle, so the framing can
  // still level the face.
  out.eyes_detected = g.eyes_detected || best_angle != 0;
  return out;
}

}  // namespace imago::avatar::internal
