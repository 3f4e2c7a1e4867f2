// 68-point facial landmarks with dlib (Debian libdlib-dev, model from libdlib-data): the HOG
// frontal face detector finds face boxes, the shape predictor places the points in a box (also
// in a Haar cascade box when HOG misses the face). dlib is included only here (compile time).
// Built with -DIMAGO_FACE_LANDMARKS=OFF this file compiles without dlib and every face takes
// the cascade path (docs/avatar.md "Landmarks and licensing").
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <opencv2/imgproc.hpp>

#include "avatar/internal.h"

#if IMAGO_WITH_DLIB
#include <dlib/image_processing.h>
#include <dlib/image_processing/frontal_face_detector.h>
#endif

namespace imago::avatar::internal {

namespace {
std::atomic<bool> g_enabled{true};
}
void set_landmarks_enabled(bool on) {
  g_enabled = on;
}

std::string landmark_model_path() {
  if (const char* p = std::getenv("IMAGO_FACE_LANDMARKS_MODEL"); p && *p) return p;
  return "/usr/share/dlib/shape_predictor_68_face_landmarks.dat";
}

#if IMAGO_WITH_DLIB
namespace {

struct Predictor {
  dlib::shape_predictor sp;
  bool ok = false;
};

// The model is ~100 MB and takes about a second to read: loaded once per process, shared
// (shape_predictor::operator() is const).
const Predictor& predictor() {
  static Predictor p = [] {
    Predictor k;
    std::string path = landmark_model_path();
    if (path == "off" || path == "none") return k;
    std::ifstream in(path, std::ios::binary);
    if (!in) return k;
    try {
      dlib::deserialize(k.sp, in);
      k.ok = k.sp.num_parts() == 68;
    } catch (const std::exception&) {
      k.ok = false;
    }
    return k;
  }();
  return p;
}

dlib::array2d<unsigned char> to_dlib(const cv::Mat& gray) {
  dlib::array2d<unsigned char> img(gray.rows, gray.cols);
  for (int y = 0; y < gray.rows; ++y) {
    const uint8_t* row = gray.ptr<uint8_t>(y);
    for (int x = 0; x < gray.cols; ++x) img[y][x] = row[x];
  }
  return img;
}

cv::Mat gray_of(const cv::Mat& bgr) {
  if (bgr.channels() == 1) return bgr;
  cv::Mat g;
  cv::cvtColor(bgr, g, cv::COLOR_BGR2GRAY);
  return g;
}

}  // namespace

bool landmark_detector_available() {
  return g_enabled && predictor().ok;
}

std::vector<cv::Rect2d> hog_faces(const cv::Mat& bgr, int work_px) {
  // The detector is not const-callable; one per thread (construction is cheap).
  thread_local dlib::frontal_face_detector det = dlib::get_frontal_face_detector();
  cv::Mat gray = gray_of(bgr);
  // HOG finds faces of about 80 px and up: work at 800 px on the longest side, like the cascades.
  double s = double(work_px) / std::max(gray.cols, gray.rows);
  cv::Mat work;
  cv::resize(gray, work, {}, s, s, s < 1 ? cv::INTER_AREA : cv::INTER_LINEAR);
  auto img = to_dlib(work);
  std::vector<dlib::rect_detection> found;
  det(img, found, 0.0);
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return a.detection_confidence * std::sqrt(double(a.rect.area())) >
           b.detection_confidence * std::sqrt(double(b.rect.area()));
  });
  std::vector<cv::Rect2d> out;
  for (const auto& d : found)
    out.emplace_back(d.rect.left() / s, d.rect.top() / s, d.rect.width() / s, d.rect.height() / s);
  return out;
}

std::optional<Landmarks68> predict_landmarks(const cv::Mat& bgr, const cv::Rect2d& box) {
  const Predictor& p = predictor();
  if (!p.ok || !g_enabled || box.width < 8 || box.height < 8) return std::nullopt;
  // Predict on a crop around the box scaled to 600 px across the box: the cost no longer
  // depends on the photo, and the predictor's whole-pixel points are 1/600 of the face (at
  // 300 px, rounding moved a shut eye's aspect ratio by about 5%).
  cv::Rect2d grown(box.x - box.width * 0.5, box.y - box.height * 0.5, box.width * 2, box.height * 2);
  cv::Rect crop = cv::Rect(grown) & cv::Rect(0, 0, bgr.cols, bgr.rows);
  if (crop.area() <= 0) return std::nullopt;
  double s = 600.0 / box.width;
  cv::Mat work;
  cv::resize(gray_of(bgr)(crop), work, {}, s, s, s < 1 ? cv::INTER_AREA : cv::INTER_LINEAR);
  auto img = to_dlib(work);
  dlib::rectangle r(long((box.x - crop.x) * s), long((box.y - crop.y) * s),
                    long((box.x - crop.x + box.width) * s), long((box.y - crop.y + box.height) * s));
  dlib::full_object_detection shape = p.sp(img, r);
  if (shape.num_parts() != 68) return std::nullopt;
  Landmarks68 out;
  for (int i = 0; i < 68; ++i) out[i] = {shape.part(i).x() / s + crop.x, shape.part(i).y() / s + crop.y};
  return out;
}

#else

bool landmark_detector_available() {
  return false;
}
std::vector<cv::Rect2d> hog_faces(const cv::Mat&, int) {
  return {};
}
std::optional<Landmarks68> predict_landmarks(const cv::Mat&, const cv::Rect2d&) {
  return std::nullopt;
}

#endif

}  // namespace imago::avatar::internal
