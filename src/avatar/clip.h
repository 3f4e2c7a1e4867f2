// Gesture clips: short MP4 videos of one gesture rendered from an .imx model. Used by the
// dynamics generation job (SPEC 2.2 `gestures` map) and by `imagod render --gesture`.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "speech/synthesis.h"
#include "util/status.h"

namespace imago::avatar {

// The five known gesture action names (SPEC 2.2), in a stable order:
// mini_wave_hello, talk_head_nod_subtle, blow_kiss_heart, laugh_react, idle_subtle.
const std::vector<std::string>& gesture_names();

// Renders `gesture` for `duration_s` seconds (idle before/after blended in and out) at 25 FPS as
// H.264 + silent AAC in MP4 to `out_mp4_path`. Invalid model, unknown gesture or a non-positive
// duration -> Status::Invalid; encoder/file errors -> Status::Internal.
Status render_gesture_clip(std::string_view imx_bytes, std::string_view gesture, double duration_s,
                           const std::string& out_mp4_path);

// A talking video: `speech` (with phoneme timing when it comes from the speech engine, else
// envelope lip sync) rendered from the model at its frame size, 25 FPS H.264 + AAC in MP4, with a
// short idle tail. Returns the video's duration in seconds. Used by the video job (docs/api/video.md).
Result<double> render_talking_video(std::string_view imx_bytes, const speech::Audio& speech,
                                    const std::string& out_mp4_path);

// Any audio file libavformat reads (WAV, MP3, OGG, ...), as mono speech without timing.
Result<speech::Audio> decode_speech(std::string_view bytes);

}  // namespace imago::avatar
