// Private to src/avatar: OpenCV-facing helpers shared by the builder, the renderer and tools.
// Other subsystems include only the public headers (builder.h, renderer.h, clip.h, imx.h).
#pragma once
#include <opencv2/core.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "avatar/imx.h"
#include "util/status.h"

namespace imago::avatar::internal {

// Frame sizes per aspect ratio (docs/avatar.md).
struct FrameSize {
  int width = 0, height = 0;
};
Result<FrameSize> frame_size_for(std::string_view aspect_ratio);

// Image decoding honouring EXIF orientation (OpenCV's IMREAD_COLOR applies it). Returns BGR.
Result<cv::Mat> decode_image(std::string_view bytes);
std::string encode_png(const cv::Mat& m);  // BGR, BGRA or gray
Result<cv::Mat> decode_png(std::string_view bytes, int flags);

struct FaceGeometry {
  cv::Rect2d face;
  cv::Point2d left_eye, right_eye, mouth;
  double mouth_width = 0;
  bool eyes_detected = false;
};

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
