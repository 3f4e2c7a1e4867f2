// The model builder (docs/avatar.md): source media -> normalized appearance + geometry + sprites +
// voice match -> .imx bytes.
#include "avatar/builder.h"

#include <cmath>
#include <cstdlib>
#include <opencv2/imgproc.hpp>
#include <random>

#include "avatar/dense_face.h"
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
    if (gi.landmarks)
      for (auto& q : *gi.landmarks) q = sc(q);
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
  g.landmarks = gi.landmarks;
  g.landmark_source = gi.landmark_source;
  g.landmark_note = gi.landmark_note;
  if (g.landmarks)
    for (auto& q : *g.landmarks) q = apply(M, q);
  g.estimate = gi.estimate;
  g.dense_mesh.clear();
  for (const auto& q : g_in.dense_mesh) {
    // The pre-shrink and the warp together scale by s_total; depth scales with them.
    double pre = gi.face.width / g_in.face.width;
    cv::Point2d p = apply(M, {q.x * pre, q.y * pre});
    g.dense_mesh.push_back({p.x, p.y, q.z * pre * s});
  }
}

cv::Scalar shade(cv::Vec3b c, double k) {
  return cv::Scalar(std::min(255.0, c[0] * k), std::min(255.0, c[1] * k), std::min(255.0, c[2] * k));
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
  // Landmarks: the mean face, with eyes and lips put exactly on what was drawn so blinks and
  // speech move the drawn lids and lips.
  Landmarks68 lm = template_landmarks(g.left_eye, g.right_eye, g.mouth);
  auto Q = [&](double rx, double ry) { return cv::Point2d(g.face.x + rx * fw, g.face.y + ry * fh); };
  for (int e = 0; e < 2; ++e) {
    double sx = e == 0 ? 0.31 : 0.69;
    for (int k = 0; k < 6; ++k) {
      double th = CV_PI + 2 * CV_PI * k / 6;
      lm[36 + 6 * e + k] = Q(sx + 0.085 * std::cos(th), 0.40 + 0.045 * std::sin(th));
    }
  }
  const double outer[12][2] = {{0.33, 0.78},  {0.38, 0.762}, {0.44, 0.752}, {0.5, 0.75},
                               {0.56, 0.752}, {0.62, 0.762}, {0.67, 0.78},  {0.62, 0.806},
                               {0.56, 0.816}, {0.5, 0.82},   {0.44, 0.816}, {0.38, 0.806}};
  for (int i = 0; i < 12; ++i) lm[48 + i] = Q(outer[i][0], outer[i][1]);
  const double inner[8] = {0.35, 0.44, 0.5, 0.56, 0.65, 0.56, 0.5, 0.44};
  for (int i = 0; i < 8; ++i) lm[60 + i] = Q(inner[i], 0.78);
  g.landmarks = lm;
  g.landmark_source = "template";
}

// dlib's 68 points instead of the mesh's, when the environment asks for them
// (IMAGO_FACE_LANDMARKS=dlib) and the build has dlib (docs/avatar.md "Landmarks and licensing").
bool dlib_landmarks_requested() {
  const char* v = std::getenv("IMAGO_FACE_LANDMARKS");
  return v && std::string_view(v) == "dlib";
}

// dlib's points in the face the detector accepted: HOG's box around the mesh's nose tip, else a
// box like HOG's from the mesh's 68 points. Empty with the reason when they cannot be had.
std::optional<Landmarks68> dlib_points(const cv::Mat& img, const Landmarks68& mesh68, std::string& why) {
  if (!landmark_detector_available()) {
    why = "dlib's landmarks were asked for but this build or machine has no dlib model";
    return std::nullopt;
  }
  cv::Rect2d box = cv::boundingRect(std::vector<cv::Point2f>(mesh68.begin(), mesh68.end()));
  for (const cv::Rect2d& b : hog_faces(img))
    if (b.contains(mesh68[30])) {
      box = b;
      break;
    }
  auto lm = predict_landmarks(img, box);
  if (!lm) {
    why = "dlib placed no landmarks";
    return std::nullopt;
  }
  why = implausible_landmarks(*lm, box);
  if (!why.empty()) return std::nullopt;
  return lm;
}

// Is there a human face, and where: MediaPipe's detector and face mesh decide (both must be sure,
// dense_face.h); the 68 points the renderer uses come from the mesh (or from dlib, when asked
// for). A picture without a face, a drawing, an animal or a face turned to a profile fails with
// `no_face` (kInvalidArgument); missing models are kInternal (the job retries, then refunds).
Result<FaceGeometry> locate_face(const cv::Mat& img, const std::string& no_face, bool estimate = true) {
  auto faces = find_dense_faces(img);
  if (!faces.ok()) return faces.status();
  if (faces->empty() || !accepted(faces->front())) return Status::Invalid(no_face);
  const DenseFace& f = faces->front();
  FaceGeometry g;
  Landmarks68 lm = landmarks68_from_mesh(f.mesh);
  g.landmark_source = "mediapipe";
  if (dlib_landmarks_requested()) {
    std::string why;
    if (auto d = dlib_points(img, lm, why)) {
      lm = *d;
      g.landmark_source = "dlib";
    } else {
      g.landmark_note = "Using the face mesh's landmarks (" + why + ")";
    }
  }
  geometry_from_landmarks(lm, g);
  // A face turned to a profile cannot be animated from one photo: the renderer needs both eyes.
  if (std::string why = implausible_landmarks(lm, g.face); !why.empty())
    return Status::Invalid(no_face + " (the face is turned away or cut off: " + why + ")");
  g.landmarks = lm;
  g.dense_mesh = f.mesh;
  if (estimate) g.estimate = estimate_face(f);
  return g;
}

// Chooses the video frame with the sharpest, largest accepted face: the face detector on each
// sampled frame, then the full location (landmarks, estimate) on the best one.
Result<std::pair<cv::Mat, FaceGeometry>> best_video_frame(const DecodedVideo& v, const ProgressFn& progress) {
  double best = -1;
  size_t best_i = 0;
  for (size_t i = 0; i < v.frames.size(); ++i) {
    report(progress, "face", 0.1 + 0.25 * i / v.frames.size(), "Looking for the best frame");
    auto faces = find_dense_faces(v.frames[i]);
    if (!faces.ok()) return faces.status();
    if (faces->empty() || !accepted(faces->front())) continue;
    const DenseFace& f = faces->front();
    double score = sharpness(v.frames[i], cv::Rect(f.box)) * std::sqrt(std::max(1.0, f.box.area()));
    if (score > best) best = score, best_i = i;
  }
  if (best < 0) return Status::Invalid("No face found in the video");
  auto g = locate_face(v.frames[best_i], "No face found in the video");
  if (!g.ok()) return g.status();
  return std::make_pair(v.frames[best_i], *g);
}

}  // namespace

Result<FaceBox> find_image_face(std::string_view image_bytes) {
  auto img = decode_image(image_bytes);
  if (!img.ok()) return img.status();
  auto g = locate_face(*img, "No face found in the image", false);
  if (!g.ok()) return g.status();
  cv::Rect2d r = g->face & cv::Rect2d(0, 0, img->cols, img->rows);
  return FaceBox{img->cols, img->rows, r.x, r.y, r.width, r.height};
}

Status check_image_has_face(std::string_view image_bytes) {
  auto f = find_image_face(image_bytes);
  return f.ok() ? Status::Ok() : f.status();
}

Result<std::string> build_imx(const BuildInput& in, const ProgressFn& progress) {
  use_one_opencv_thread();
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
    auto det = locate_face(*img, "No face found in the image");
    if (!det.ok()) return det.status();
    if (!det->landmark_note.empty()) report(progress, "face", 0.3, det->landmark_note);
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

  report(progress, "assets", 0.55, "Placing the face mesh");
  if (!g.landmarks) {
    // Procedural avatars, and video frames where only the quick cascade pass found the face.
    g.landmarks = template_landmarks(g.left_eye, g.right_eye, g.mouth);
    g.landmark_source = "template";
  }
  FaceLandmarks lm;
  lm.source = g.landmark_source;
  lm.note = g.landmark_note;
  for (const auto& q : *g.landmarks) lm.points.push_back({q.x, q.y});
  std::vector<ImxChunk> chunks;
  chunks.push_back({std::string(kChunkAppearance), encode_png(frame)});
  chunks.push_back({std::string(kChunkLandmarks), landmarks_to_json(lm)});
  chunks.push_back({std::string(kChunkGestures), default_gestures_json()});
  if (!g.dense_mesh.empty()) {
    DenseMesh dm;
    for (const auto& q : g.dense_mesh) dm.points.push_back({q.x, q.y, q.z});
    chunks.push_back({std::string(kChunkMesh), mesh_to_json(dm)});
  }

  report(progress, "voice", 0.75, voice_pcm ? "Matching the voice sample" : "Choosing a voice");
  uint32_t seed = crc32(in.agent_id);
  m.voice = voice_reference_table()[seed % voice_reference_table().size()].id;
  m.face_estimate = g.estimate;
  if (g.estimate) {
    // Without a sample or a choice, a voice of the face's estimated gender; which of the five
    // comes from the agent id (docs/avatar.md "The default voice").
    m.voice = std::string(g.estimate->female >= 0.5 ? "F" : "M") + std::to_string(1 + seed % 5);
  }
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
    m.axes = in.axes;
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
