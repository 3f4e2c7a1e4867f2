// Gesture clips: short MP4 videos of one gesture rendered from an .imx model. Used by the
// dynamics generation job (SPEC 2.2 `gestures` map) and by `imagod render --gesture`.
#pragma once
#include <string>
#include <string_view>
#include <vector>

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

}  // namespace imago::avatar
