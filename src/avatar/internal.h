// Private to src/avatar: OpenCV-facing helpers shared by the builder, the renderer and tools.
// Other subsystems include only the public headers (builder.h, renderer.h, clip.h, imx.h).
#pragma once
#include <array>
#include <mutex>
#include <opencv2/core.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "avatar/imx.h"
#include "util/status.h"

namespace imago::avatar::internal {

// OpenCV runs on one thread in this process, from before its first use: sessions and jobs are
// the parallelism, not its thread pool, and its dnn results depend on the thread count (a model
// built before the process's first session, with the pool, had slightly different landmarks
// from the same photo built after it). Called by the builder, the face models and the renderer.
inline void use_one_opencv_thread() {
  static std::once_flag once;
  std::call_once(once, [] { cv::setNumThreads(1); });
}

// Frame sizes per aspect ratio (docs/avatar.md).
struct FrameSize {
  int width = 0, height = 0;
};
Result<FrameSize> frame_size_for(std::string_view aspect_ratio);

// Image decoding honouring EXIF orientation (OpenCV's IMREAD_COLOR applies it). Returns BGR.
Result<cv::Mat> decode_image(std::string_view bytes);
std::string encode_png(const cv::Mat& m);  // BGR, BGRA or gray
Result<cv::Mat> decode_png(std::string_view bytes, int flags);

// The 68 points of the iBUG 300-W layout: 0-16 jaw, 17-26 brows, 27-35 nose, 36-41 / 42-47 the
// image-left / image-right eye (36, 39 corners; 37, 38 upper lid; 40, 41 lower lid), 48-59 outer
// lips (48, 54 corners), 60-67 inner lips (61-63 upper, 65-67 lower).
using Landmarks68 = std::array<cv::Point2d, 68>;

struct FaceGeometry {
  cv::Rect2d face;
  cv::Point2d left_eye, right_eye, mouth;
  double mouth_width = 0;
  bool eyes_detected = false;
  // Landmarks in the same pixels as the rest; "template" ones are placed from eyes and mouth.
  std::optional<Landmarks68> landmarks;
  std::string landmark_source;  // "mediapipe" | "dlib" | "template"
  std::string landmark_note;    // why the template was used, or why dlib's points were not
  // The dense mesh (dense_face.h: 478 points, x and y in the same pixels, z relative depth), empty
  // for procedural avatars.
  std::vector<cv::Point3d> dense_mesh;
  std::optional<FaceEstimate> estimate;  // FaceRes's gender and age, when its model is installed
};

// dlib (landmarks.cpp; absent when built without dlib, IMAGO_FACE_LANDMARKS=OFF or AUTO without
// libdlib-dev). The model path comes from IMAGO_FACE_LANDMARKS_MODEL (default
// /usr/share/dlib/...; "off" disables it). The builder uses dlib's points only when the
// environment asks for them (IMAGO_FACE_LANDMARKS=dlib); the tests use it as a second opinion.
std::string landmark_model_path();
bool landmark_detector_available();
void set_landmarks_enabled(bool on);  // tests: force the cascade path
// Face boxes, best first, in image pixels; detection at work_px on the longest side.
std::vector<cv::Rect2d> hog_faces(const cv::Mat& bgr, int work_px = 800);
std::optional<Landmarks68> predict_landmarks(const cv::Mat& bgr, const cv::Rect2d& box);

// face_shape.cpp: landmark geometry without dlib.
// A mean face placed by a similarity on the eye centres, stretched below the eyes to `mouth`.
Landmarks68 template_landmarks(cv::Point2d left_eye, cv::Point2d right_eye, cv::Point2d mouth);
// Landmarks that make a face: eyes level-ish and apart, nose below the eyes, mouth below the
// nose, chin below the mouth, inside (a margin around) `box`. Empty string when plausible, else
// the reason.
std::string implausible_landmarks(const Landmarks68& l, const cv::Rect2d& box);
cv::Point2d eye_centre(const Landmarks68& l, bool right);
// Eye aspect ratio (Soukupova and Cech 2016): lid opening over eye width, ~0.3 open, ~0 closed.
double eye_aspect_ratio(const Landmarks68& l, bool right);
// Inner-lip opening (mean of the three vertical inner-lip distances), pixels.
double inner_lip_opening(const Landmarks68& l);
// Fills eyes, mouth, mouth width and a cascade-like face box from landmarks.
void geometry_from_landmarks(const Landmarks68& l, FaceGeometry& g);

// Haar cascades from opencv-data. kInvalidArgument "No face found in the image" when none.
// thorough: detection at 800 px with tilted (+-15 degree) retries, for photos; otherwise a quick
// upright pass at 480 px, for scanning many video frames.
Result<FaceGeometry> detect_face(const cv::Mat& bgr, bool thorough = true);
// Sharpness (variance of the Laplacian) inside `r`, for picking the best video frame.
double sharpness(const cv::Mat& bgr, const cv::Rect& r);

// Decoded media through libavformat/libavcodec (any container/codec FFmpeg knows).
struct Pcm {
  int sample_rate = 22050;
  std::vector<int16_t> samples;  // mono
};
// Up to `max_frames` frames spread evenly over the video (BGR) plus the audio track if any.
struct DecodedVideo {
  std::vector<cv::Mat> frames;
  std::vector<double> times_s;
  std::optional<Pcm> audio;
};
Result<DecodedVideo> decode_video(std::string_view bytes, int max_frames, int out_audio_rate);
Result<Pcm> decode_audio(std::string_view bytes, int out_rate);
std::string encode_wav(const Pcm& pcm);
// Lowers libav's default log level (info) to errors, once per process.
void quiet_libav_logs();

// Voice matching (docs/avatar.md): measurements of a sample and the nearest built-in voice.
struct VoiceChoice {
  std::string voice;
  speech::Axes axes;
  VoiceMatch match;
};
Result<VoiceChoice> match_voice(const Pcm& pcm);

}  // namespace imago::avatar::internal
