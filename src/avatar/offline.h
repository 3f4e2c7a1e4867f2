// Offline rendering of a model to an MP4 file (gesture clips, and `imagod render` in
// src/main/avatar_commands.cpp, its one user outside src/avatar/).
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "speech/synthesis.h"
#include "util/status.h"

namespace imago::avatar::internal {

struct OfflineRender {
  std::optional<speech::Audio> speech;  // with phoneme timing when from the speech engine
  std::string gesture;                  // empty: none
  double gesture_duration_s = 0;        // <= 0: the gesture's default
  double min_duration_s = 0;            // the video lasts at least this long
  double tail_s = 0.4;                  // idle after the speech ends
  int width = 0, height = 0;            // 0: the model's frame size
};

struct OfflineResult {
  int64_t frames = 0;
  double duration_s = 0;
};

// Any audio file libavformat reads, as mono 24 kHz speech without timing (envelope lip sync).
Result<speech::Audio> decode_speech_audio(std::string_view bytes);

Result<OfflineResult> render_mp4(std::string_view imx_bytes, const OfflineRender& job,
                                 const std::string& out_path);

}  // namespace imago::avatar::internal
