// BlazeFace, the MediaPipe face mesh with irises, and FaceRes through OpenCV's dnn module (the
// models converted from @vladmandic/human at setup time: scripts/face_models/). Pre- and
// post-processing follow the JavaScript of that package (src/face/blazeface.ts, facemesh.ts,
// iris.ts, faceres.ts).
#include "avatar/dense_face.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <opencv2/dnn.hpp>
#include <opencv2/imgproc.hpp>

namespace imago::avatar::internal {

std::string face_models_dir() {
  if (const char* d = std::getenv("IMAGO_FACE_MODELS_DIR"); d && *d) return d;
  return "/usr/local/share/imago/face-models";
}

namespace {

constexpr int kDetectorSize = 256;
constexpr int kMeshSize = 192;
constexpr int kIrisSize = 64;
constexpr int kFaceResSize = 224;

bool readable(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return f.good();
}

struct Nets {
  cv::dnn::Net detector, mesh, iris, faceres;
  bool ok = false, have_faceres = false;
  std::string dir, error;
};

cv::dnn::Net load(const std::string& path) {
  cv::dnn::Net net = cv::dnn::readNetFromONNX(path);
  net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
  net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
  return net;
}

Nets load_nets(const std::string& d) {
  Nets k;
  k.dir = d;
  try {
    for (auto [net, file] : {std::pair{&k.detector, "blazeface.onnx"}, std::pair{&k.mesh, "facemesh.onnx"},
                             std::pair{&k.iris, "iris.onnx"}}) {
      std::string path = d + "/" + file;
      if (!readable(path)) {
        k.error = "Face models missing (" + path + "; run scripts/setup.sh)";
        return k;
      }
      *net = load(path);
    }
    k.ok = true;
    if (readable(d + "/faceres.onnx")) {
      k.faceres = load(d + "/faceres.onnx");
      k.have_faceres = true;
    }
  } catch (const cv::Exception& e) {
    k.ok = false;
    k.error = std::string("Face models do not load: ") + e.what();
  }
  return k;
}

// One set of networks per process (about 20 MB of weights), used under a mutex: a forward pass
// changes the network's state, and OpenCV already spreads each pass over the cores. Loaded on
// first use, again when the directory changes or the last load failed.
std::mutex g_nets_mu;
Nets& nets_locked() {
  static Nets n;
  std::string d = face_models_dir();
  if (!n.ok || n.dir != d) n = load_nets(d);
  return n;
}

double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

struct Anchor {
  float x, y;
};
// BlazeFace's SSD anchors at 256 px: a 16x16 grid (stride 16) with 2 anchors per cell, then an
// 8x8 grid (stride 32) with 6, in the order of the model's two output heads.
const std::vector<Anchor>& anchors() {
  static const std::vector<Anchor> a = [] {
    std::vector<Anchor> v;
    for (auto [stride, per] : {std::pair{16, 2}, std::pair{32, 6}}) {
      int grid = (kDetectorSize + stride - 1) / stride;
      for (int gy = 0; gy < grid; ++gy)
        for (int gx = 0; gx < grid; ++gx)
          for (int k = 0; k < per; ++k) v.push_back({stride * (gx + 0.5f), stride * (gy + 0.5f)});
    }
    return v;
  }();
  return a;
}

struct Detection {
  cv::Rect2d box;
  double score;
  cv::Point2d eyes[2];  // the subject's right eye (image left), left eye
};

std::vector<Detection> run_detector(cv::dnn::Net& net, const cv::Mat& bgr, double min_score) {
  // Letterbox to a square so faces keep their shape, then 256x256, RGB in [-1, 1].
  int side = std::max(bgr.cols, bgr.rows);
  cv::Mat square(side, side, CV_8UC3, cv::Scalar(0, 0, 0));
  int ox = (side - bgr.cols) / 2, oy = (side - bgr.rows) / 2;
  bgr.copyTo(square(cv::Rect(ox, oy, bgr.cols, bgr.rows)));
  cv::Mat small;
  cv::resize(square, small, {kDetectorSize, kDetectorSize}, 0, 0, cv::INTER_AREA);
  cv::Mat blob = cv::dnn::blobFromImage(small, 1.0 / 127.5, {}, cv::Scalar(127.5, 127.5, 127.5), true);
  net.setInput(blob);
  std::vector<cv::Mat> outs;
  net.forward(outs, std::vector<cv::String>{"Identity", "Identity_1", "Identity_2", "Identity_3"});
  const auto& an = anchors();
  std::vector<cv::Rect2d> boxes;
  std::vector<float> scores;
  std::vector<Detection> cands;
  double s = double(side) / kDetectorSize;
  int base = 0;
  for (int head = 0; head < 2; ++head) {
    const cv::Mat& logits = outs[head];
    const cv::Mat& reg = outs[head + 2];
    int n = static_cast<int>(logits.total());
    const float* lg = logits.ptr<float>();
    const float* rg = reg.ptr<float>();
    for (int i = 0; i < n; ++i) {
      double score = sigmoid(lg[i]);
      if (score < min_score) continue;
      const float* r = rg + 16 * i;
      const Anchor& a = an[base + i];
      double cx = a.x + r[0], cy = a.y + r[1], w = r[2], h = r[3];
      Detection d;
      d.box = cv::Rect2d((cx - w / 2) * s - ox, (cy - h / 2) * s - oy, w * s, h * s);
      d.score = score;
      for (int k = 0; k < 2; ++k) d.eyes[k] = {(a.x + r[4 + 2 * k]) * s - ox, (a.y + r[5 + 2 * k]) * s - oy};
      cands.push_back(d);
      boxes.push_back(d.box);
      scores.push_back(static_cast<float>(score));
    }
    base += n;
  }
  std::vector<cv::Rect2d> nms_boxes(boxes.begin(), boxes.end());
  std::vector<int> keep;
  cv::dnn::NMSBoxes(nms_boxes, scores, static_cast<float>(min_score), 0.3f, keep);
  std::vector<Detection> out;
  for (int k : keep) out.push_back(cands[k]);
  std::sort(out.begin(), out.end(), [](const Detection& a, const Detection& b) { return a.score > b.score; });
  return out;
}

// An affine map from the image to a size x size crop: `centre` to the crop's centre, `angle_deg`
// levelled, `span` image pixels across.
cv::Mat crop_transform(cv::Point2d centre, double angle_deg, double span, int size) {
  cv::Mat M = cv::getRotationMatrix2D(centre, angle_deg, size / span);
  M.at<double>(0, 2) += size / 2.0 - centre.x;
  M.at<double>(1, 2) += size / 2.0 - centre.y;
  return M;
}

cv::Point2d map_point(const cv::Mat& M, cv::Point2d p) {
  return {M.at<double>(0, 0) * p.x + M.at<double>(0, 1) * p.y + M.at<double>(0, 2),
          M.at<double>(1, 0) * p.x + M.at<double>(1, 1) * p.y + M.at<double>(1, 2)};
}

// Runs the face mesh on a crop around `centre`; fills mesh (image pixels) and score.
void run_mesh(cv::dnn::Net& net, const cv::Mat& bgr, cv::Point2d centre, double angle_deg, double span,
              DenseFace& f) {
  cv::Mat M = crop_transform(centre, angle_deg, span, kMeshSize);
  cv::warpAffine(bgr, f.crop, M, {kMeshSize, kMeshSize}, cv::INTER_LINEAR, cv::BORDER_CONSTANT);
  net.setInput(cv::dnn::blobFromImage(f.crop, 1.0 / 255, {}, cv::Scalar(), true));
  std::vector<cv::Mat> outs;
  net.forward(outs, std::vector<cv::String>{"Identity_1", "Identity_2"});
  f.mesh_score = outs[0].ptr<float>()[0];
  cv::Mat inv;
  cv::invertAffineTransform(M, inv);
  double zs = span / kMeshSize;
  const float* p = outs[1].ptr<float>();
  f.mesh.resize(kMeshPoints);
  for (int i = 0; i < kMeshPoints; ++i) {
    cv::Point2d q = map_point(inv, {p[3 * i], p[3 * i + 1]});
    f.mesh[i] = {q.x, q.y, p[3 * i + 2] * zs};
  }
}

// The mesh's lid rings (MediaPipe's EyeUpper0 / EyeLower0 annotations), which the iris model's
// eye contour replaces (its points 9-15 the upper ring, 0-8 the lower), as MediaPipe's refined
// landmarks do: the iris model sees the eye at three times the mesh's resolution. (Renders
// blink measurably shut-er with them: re-detected EAR at a blink 57% / 48% of open on the test
// portraits, against 59% / 54% with the mesh's own rings.)
constexpr int kRightUpper0[7] = {246, 161, 160, 159, 158, 157, 173};
constexpr int kRightLower0[9] = {33, 7, 163, 144, 145, 153, 154, 155, 133};
constexpr int kLeftUpper0[7] = {466, 388, 387, 386, 385, 384, 398};
constexpr int kLeftLower0[9] = {263, 249, 390, 373, 374, 380, 381, 382, 362};

// The iris model on a 64x64 crop around one eye's corners (2.3 times their distance), the
// subject's left eye mirrored as the model expects: its eye contour replaces the mesh's lid
// rings (as MediaPipe's refined landmarks do; the iris model sees the eye at three times the
// mesh's resolution), and the 5 iris points (centre first) are appended.
void add_iris(cv::dnn::Net& net, const cv::Mat& bgr, DenseFace& f, int corner_a, int corner_b, bool flip) {
  cv::Point2d a(f.mesh[corner_a].x, f.mesh[corner_a].y), b(f.mesh[corner_b].x, f.mesh[corner_b].y);
  cv::Point2d d = b - a;
  if (flip) d = -d;
  double angle = std::atan2(d.y, d.x) * 180 / CV_PI;
  double span = std::max(4.0, 2.3 * cv::norm(b - a));
  cv::Mat M = crop_transform((a + b) / 2, angle, span, kIrisSize);
  cv::Mat eye;
  cv::warpAffine(bgr, eye, M, {kIrisSize, kIrisSize}, cv::INTER_LINEAR, cv::BORDER_REPLICATE);
  if (flip) cv::flip(eye, eye, 1);
  net.setInput(cv::dnn::blobFromImage(eye, 1.0 / 255, {}, cv::Scalar(), true));
  cv::Mat out = net.forward();
  const float* p = out.ptr<float>();
  cv::Mat inv;
  cv::invertAffineTransform(M, inv);
  double zs = span / kIrisSize;
  // 71 eye-contour points, then the iris: centre and four around it.
  auto point = [&](int i) {
    double x = p[3 * i], y = p[3 * i + 1];
    if (flip) x = kIrisSize - x;
    cv::Point2d q = map_point(inv, {x, y});
    return cv::Point3d(q.x, q.y, p[3 * i + 2] * zs);
  };
  const int* upper = flip ? kLeftUpper0 : kRightUpper0;
  const int* lower = flip ? kLeftLower0 : kRightLower0;
  for (int j = 0; j < 7; ++j) {
    cv::Point3d q = point(9 + j);
    f.mesh[upper[j]] = {q.x, q.y, (q.z + f.mesh[upper[j]].z) / 2};
  }
  for (int j = 0; j < 9; ++j) {
    cv::Point3d q = point(j);
    f.mesh[lower[j]] = {q.x, q.y, (q.z + f.mesh[lower[j]].z) / 2};
  }
  for (int i = 71; i < 76; ++i) f.mesh.push_back(point(i));
}

cv::Point2d xy(const cv::Point3d& p) {
  return {p.x, p.y};
}

}  // namespace

bool dense_face_models_available() {
  std::lock_guard lock(g_nets_mu);
  return nets_locked().ok;
}

Result<std::vector<DenseFace>> find_dense_faces(const cv::Mat& bgr, double min_detector_score) {
  use_one_opencv_thread();
  std::lock_guard lock(g_nets_mu);
  Nets& n = nets_locked();
  if (!n.ok) return Status::Internal(n.error);
  std::vector<DenseFace> out;
  for (const Detection& d : run_detector(n.detector, bgr, min_detector_score)) {
    DenseFace f;
    f.box = d.box;
    f.detector_score = d.score;
    // First pass: BlazeFace's box enlarged 1.4x (as @vladmandic/human does), levelled on its eyes.
    cv::Point2d e = d.eyes[1] - d.eyes[0];
    double angle = std::atan2(e.y, e.x) * 180 / CV_PI;
    cv::Point2d c(d.box.x + d.box.width / 2, d.box.y + d.box.height / 2);
    run_mesh(n.mesh, bgr, c, angle, 1.4 * std::max(d.box.width, d.box.height), f);
    if (f.mesh_score >= 0.5) {
      // Second pass on the mesh's own frame (MediaPipe's tracking crop): centred on the mesh,
      // levelled on its eye corners (33, 263), 1.5x its extent. It follows the face better than
      // the detector's box, most of all on tilted heads and small faces (basketball1.png's 30 px
      // face scores 0.55 in the detector's crop and 0.9998 in this one); the better one counts.
      cv::Point2d lo(1e18, 1e18), hi(-1e18, -1e18);
      for (const auto& p : f.mesh)
        lo = {std::min(lo.x, p.x), std::min(lo.y, p.y)}, hi = {std::max(hi.x, p.x), std::max(hi.y, p.y)};
      cv::Point2d ee = xy(f.mesh[263]) - xy(f.mesh[33]);
      double a2 = std::atan2(ee.y, ee.x) * 180 / CV_PI;
      DenseFace g = f;
      run_mesh(n.mesh, bgr, (lo + hi) / 2, a2, 1.5 * std::max(hi.x - lo.x, hi.y - lo.y), g);
      if (g.mesh_score > f.mesh_score) f = std::move(g);
    }
    if (f.mesh_score < kMeshMinScore) {
      f.mesh.clear();
    } else {
      add_iris(n.iris, bgr, f, 33, 133, false);  // the subject's right eye: outer, inner corner
      add_iris(n.iris, bgr, f, 263, 362, true);  // the left eye, mirrored
    }
    out.push_back(std::move(f));
  }
  // Accepted faces first, then by size and score (the framing uses the first).
  std::stable_sort(out.begin(), out.end(), [](const DenseFace& a, const DenseFace& b) {
    if (accepted(a) != accepted(b)) return accepted(a);
    return a.detector_score * std::sqrt(a.box.area()) > b.detector_score * std::sqrt(b.box.area());
  });
  return out;
}

// The iBUG 68-point layout from MediaPipe's mesh indices: jaw 0-16, brows 17-26, nose 27-35,
// eyes 36-47 (corners 36/39, 42/45), outer lips 48-59, inner lips 60-67. The jaw follows dlib's
// silhouette: for each mirrored pair of jaw points, the pair of mesh vertices nearest to dlib's
// on the test portraits (the often-quoted map's jaw was 0.2-0.5 eye distances off, which made
// the face box, and so the framing, wider than dlib's). MediaPipe's brow points lie on the brow's
// lower edge, dlib's along its middle.
constexpr int kMeshTo68[68] = {127, 227, 137, 58,  172, 136, 149, 148, 152, 377, 378, 365,
                               397, 288, 366, 447, 356,                                     // jaw
                               70,  63,  105, 66,  107, 336, 296, 334, 293, 300,            // brows
                               168, 197, 5,   4,   75,  97,  2,   326, 305,                 // nose
                               33,  160, 158, 133, 153, 144, 362, 385, 387, 263, 373, 380,  // eyes
                               61,  39,  37,  0,   267, 269, 291, 405, 314, 17,  84,  181,  // outer lips
                               78,  82,  13,  312, 308, 317, 14,  87};                      // inner lips

Landmarks68 landmarks68_from_mesh(const std::vector<cv::Point3d>& mesh) {
  Landmarks68 out;
  for (int i = 0; i < 68; ++i) out[i] = xy(mesh.at(kMeshTo68[i]));
  return out;
}

std::optional<FaceEstimate> estimate_face(const DenseFace& face) {
  std::lock_guard lock(g_nets_mu);
  Nets& n = nets_locked();
  if (!n.ok || !n.have_faceres || face.crop.empty()) return std::nullopt;
  // FaceRes takes the mesh's aligned crop at 224x224, RGB in 0..255.
  n.faceres.setInput(
      cv::dnn::blobFromImage(face.crop, 1.0, {kFaceResSize, kFaceResSize}, cv::Scalar(), true));
  std::vector<cv::Mat> outs;
  n.faceres.forward(outs, std::vector<cv::String>{"gender_pred/Sigmoid", "age_pred/Softmax"});
  FaceEstimate a;
  a.female = 1.0 - outs[0].ptr<float>()[0];  // the model's output is the probability of "male"
  const float* p = outs[1].ptr<float>();
  int best = static_cast<int>(std::max_element(p, p + 100) - p);
  // The model's own refinement between neighbouring bins (faceres.ts).
  double lo = best > 0 ? p[best - 1] : 0, hi = best < 99 ? p[best + 1] : 0;
  a.age = (lo > hi ? 10.0 * best - 100.0 * lo : 10.0 * best + 100.0 * hi) / 10.0;
  return a;
}

}  // namespace imago::avatar::internal
