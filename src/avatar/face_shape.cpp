// Landmark geometry that needs no dlib: the mean face for the cascade path and old models,
// plausibility checks, and the measures the renderer and its tests use.
#include <algorithm>
#include <cmath>

#include "avatar/internal.h"

namespace imago::avatar::internal {
namespace {

// Mean of the shape predictor's output on frontal portraits (and their mirror images) in eye
// coordinates: image-left eye centre at (0, 0), image-right eye centre at (1, 0), y down. The
// inner lips are closed (the template stands for a face whose mouth shape is unknown).
constexpr double kMeanShape[68][2] = {
    {-0.575, 0.013},  {-0.575, 0.291},  {-0.567, 0.579}, {-0.523, 0.865}, {-0.425, 1.143}, {-0.263, 1.384},
    {-0.045, 1.587},  {0.203, 1.765},   {0.495, 1.819},  {0.782, 1.775},  {1.034, 1.601},  {1.256, 1.403},
    {1.420, 1.165},   {1.516, 0.887},   {1.560, 0.594},  {1.579, 0.304},  {1.585, 0.009},  {-0.409, -0.124},
    {-0.287, -0.265}, {-0.089, -0.311}, {0.119, -0.284}, {0.313, -0.201}, {0.695, -0.201}, {0.885, -0.283},
    {1.094, -0.313},  {1.295, -0.274},  {1.418, -0.125}, {0.503, -0.044}, {0.501, 0.143},  {0.499, 0.330},
    {0.499, 0.526},   {0.244, 0.615},   {0.367, 0.664},  {0.501, 0.708},  {0.635, 0.665},  {0.755, 0.617},
    {-0.194, -0.002}, {-0.077, -0.058}, {0.070, -0.055}, {0.213, 0.026},  {0.067, 0.043},  {-0.079, 0.046},
    {0.786, 0.025},   {0.930, -0.058},  {1.074, -0.054}, {1.196, 0.001},  {1.079, 0.042},  {0.933, 0.043},
    {-0.014, 0.913},  {0.179, 0.866},   {0.363, 0.860},  {0.502, 0.885},  {0.642, 0.859},  {0.835, 0.872},
    {1.038, 0.916},   {0.847, 1.112},   {0.652, 1.184},  {0.504, 1.200},  {0.355, 1.182},  {0.169, 1.116},
    {0.051, 0.929},   {0.361, 0.985},   {0.504, 1.004},  {0.642, 0.985},  {0.974, 0.929},  {0.642, 0.985},
    {0.504, 1.004},   {0.361, 0.985}};
constexpr double kMeanMouthY = 1.01;  // mean of the outer-lip points' y

}  // namespace

Landmarks68 template_landmarks(cv::Point2d le, cv::Point2d re, cv::Point2d mouth) {
  cv::Point2d ex = re - le;
  double L = std::max(1.0, cv::norm(ex));
  cv::Point2d ux = ex / L, uy(-ux.y, ux.x);
  // Where the mouth sits in eye coordinates decides the vertical stretch of the lower face.
  cv::Point2d mq = mouth - le;
  double my = (mq.x * uy.x + mq.y * uy.y) / L;
  double k = std::clamp(my / kMeanMouthY, 0.7, 1.4);
  Landmarks68 out;
  for (int i = 0; i < 68; ++i) {
    double x = kMeanShape[i][0], y = kMeanShape[i][1];
    if (y > 0) y *= k;
    out[i] = le + ux * (x * L) + uy * (y * L);
  }
  return out;
}

cv::Point2d eye_centre(const Landmarks68& l, bool right) {
  cv::Point2d c(0, 0);
  for (int i = 0; i < 6; ++i) c += l[(right ? 42 : 36) + i];
  return c / 6.0;
}

double eye_aspect_ratio(const Landmarks68& l, bool right) {
  int b = right ? 42 : 36;
  double w = cv::norm(l[b] - l[b + 3]);
  if (w < 1e-6) return 0;
  return (cv::norm(l[b + 1] - l[b + 5]) + cv::norm(l[b + 2] - l[b + 4])) / (2 * w);
}

double inner_lip_opening(const Landmarks68& l) {
  return (cv::norm(l[61] - l[67]) + cv::norm(l[62] - l[66]) + cv::norm(l[63] - l[65])) / 3;
}

std::string implausible_landmarks(const Landmarks68& l, const cv::Rect2d& box) {
  for (const auto& p : l)
    if (!std::isfinite(p.x) || !std::isfinite(p.y)) return "landmarks are not finite";
  cv::Point2d le = eye_centre(l, false), re = eye_centre(l, true);
  double ed = cv::norm(re - le);
  if (ed < 0.2 * box.width || ed > 0.8 * box.width) return "eye distance does not fit the face box";
  cv::Point2d ux = (re - le) / ed, uy(-ux.y, ux.x);
  auto down = [&](cv::Point2d p) { return ((p - le).x * uy.x + (p - le).y * uy.y) / ed; };
  auto across = [&](cv::Point2d p) { return ((p - le).x * ux.x + (p - le).y * ux.y) / ed; };
  if (std::abs(std::atan2(re.y - le.y, re.x - le.x)) > 0.7) return "eyes are not level enough";
  double nose = down(l[33]), mouth = down((l[51] + l[57]) / 2), chin = down(l[8]);
  if (!(nose > 0.3 && nose < 1.1)) return "nose is not below the eyes";
  if (!(mouth > nose + 0.05 && mouth < 1.6)) return "mouth is not below the nose";
  if (!(chin > mouth + 0.2 && chin < 2.6)) return "chin is not below the mouth";
  // A frontal face: the nose tip sits between the eyes (profiles put it outside).
  double nx = across(l[30]);
  if (nx < 0.05 || nx > 0.95) return "face is turned too far from the camera";
  cv::Rect2d grown(box.x - box.width * 0.6, box.y - box.height * 0.6, box.width * 2.2, box.height * 2.2);
  for (const auto& p : l)
    if (!grown.contains(p)) return "landmarks fall outside the face";
  return {};
}

void geometry_from_landmarks(const Landmarks68& l, FaceGeometry& g) {
  g.left_eye = eye_centre(l, false);
  g.right_eye = eye_centre(l, true);
  cv::Point2d m(0, 0);
  for (int i = 48; i < 60; ++i) m += l[i];
  g.mouth = m / 12.0;
  g.mouth_width = cv::norm(l[54] - l[48]);
  g.eyes_detected = true;
  // A square box like the Haar frontal-face cascade's: jaw width, from the brows' top to the chin.
  double x0 = 1e9, x1 = -1e9;
  for (int i = 0; i <= 16; ++i) x0 = std::min(x0, l[i].x), x1 = std::max(x1, l[i].x);
  double brow = 1e9;
  for (int i = 17; i <= 26; ++i) brow = std::min(brow, l[i].y);
  double w = (x1 - x0) * 1.08;
  double cy = (brow + l[8].y) / 2 - 0.03 * w;
  g.face = cv::Rect2d((x0 + x1) / 2 - w / 2, cy - w / 2, w, w);
}

}  // namespace imago::avatar::internal
