#include "live/media_quality.h"

#include <algorithm>
#include <string>

#include "avatar/renderer.h"

namespace imago::live {

EncoderSettings quality_settings(const EncodedMediaOptions& o, VideoQuality q) {
  EncoderSettings s;
  s.keyframe_interval_frames = std::max(1, o.keyframe_s) * avatar::kFps;
  s.video_bitrate = int64_t{o.video_kbps} * 1000;
  s.audio_bitrate = int64_t{o.audio_kbps} * 1000;
  s.max_side = o.video_max_side;
  if (q == VideoQuality::kLow) {
    s.video_bitrate /= 2;
    s.audio_bitrate = std::max<int64_t>(24'000, s.audio_bitrate * 3 / 4);
    s.max_side = std::min(s.max_side, 360);
  } else if (q == VideoQuality::kHigh) {
    s.video_bitrate *= 2;
  }
  return s;
}

Result<MediaFormat> media_format_for_join(const std::optional<std::string_view>& media) {
  // A literal '+' in a query string is form-decoded as a space: both spellings are taken.
  if (!media || *media == "jpeg+pcm" || *media == "jpeg pcm") return MediaFormat::kJpegPcm;
  if (*media == "h264+opus" || *media == "h264 opus") return MediaFormat::kH264Opus;
  return Status::Invalid("Query parameter 'media' must be 'h264+opus' or 'jpeg+pcm'");
}

Result<VideoQuality> video_quality_for_join(const std::optional<std::string_view>& quality) {
  if (!quality || *quality == "standard") return VideoQuality::kStandard;
  if (*quality == "low") return VideoQuality::kLow;
  if (*quality == "high") return VideoQuality::kHigh;
  return Status::Invalid("Query parameter 'quality' must be 'low', 'standard' or 'high'");
}

std::string_view quality_name(VideoQuality q) {
  switch (q) {
    case VideoQuality::kLow:
      return "low";
    case VideoQuality::kHigh:
      return "high";
    case VideoQuality::kStandard:
      break;
  }
  return "standard";
}

}  // namespace imago::live
