// What a room encodes for consumers that take encoded media (docs/live-protocol.md, "Encoded
// media"): the operator's settings (--live-video-kbps, --live-audio-kbps, --live-keyframe-s,
// --live-video-max-side) scaled by the quality a room starts with, and the media a viewer asks for
// with the `media=` query parameter of its WebSocket join.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

#include "util/status.h"

namespace imago::live {

// What one viewer receives: today's JPEG pictures and raw PCM, or H.264 and Opus.
enum class MediaFormat { kJpegPcm, kH264Opus };
// A room's quality, chosen when it starts (`quality=` on the first join).
enum class VideoQuality { kLow, kStandard, kHigh };

// Operator settings for `standard`; `low` and `high` scale them (quality_settings()).
struct EncodedMediaOptions {
  int video_kbps = 400;      // H.264 peak rate (VBV) at standard quality
  int audio_kbps = 32;       // Opus target rate at standard quality
  int keyframe_s = 2;        // an IDR at least this often
  int video_max_side = 512;  // longest side of the encoded picture (larger frames are scaled down)
};

// The encoder settings of a room of `quality`.
struct EncoderSettings {
  int64_t video_bitrate = 400'000;  // bits per second
  int64_t audio_bitrate = 32'000;
  int keyframe_interval_frames = 50;
  int max_side = 512;
};
// low: half the video rate, pictures at most 360 px on their longest side, 3/4 of the audio rate
// (at least 24 kbit/s); standard: the options as they are; high: twice the video rate.
EncoderSettings quality_settings(const EncodedMediaOptions& options, VideoQuality quality);

// The `media` query parameter: absent -> jpeg+pcm (what clients got before it existed),
// "jpeg+pcm", "h264+opus" (with the "+" escaped or not); anything else kInvalidArgument.
Result<MediaFormat> media_format_for_join(const std::optional<std::string_view>& media);
// The `quality` query parameter: absent -> standard; "low", "standard", "high".
Result<VideoQuality> video_quality_for_join(const std::optional<std::string_view>& quality);
std::string_view quality_name(VideoQuality q);

}  // namespace imago::live
