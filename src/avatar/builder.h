// The model builder: turns an image, a video and/or an audio sample (or nothing) into an .imx
// avatar model (docs/avatar.md, docs/imx-format.md). Used by the agent generation job and by
// `imagod imx build`. OpenCV and libav stay inside builder .cpp files.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "speech/synthesis.h"
#include "util/status.h"

namespace imago::avatar {

struct BuildInput {
  std::string agent_id;
  std::string name;
  std::string model_type = "essence";  // or "expression"
  std::string aspect_ratio = "16:9";   // "16:9", "9:16" or "1:1"
  // Raw file contents, already sniffed by the caller (JPEG/PNG/WebP; MP4/WebM/...; WAV/MP3/...).
  std::optional<std::string> image_bytes, video_bytes, audio_bytes;
  std::string voice = "";      // optional built-in preset (M1..M5, F1..F5); empty: match or default
  speech::Axes axes;           // tuning of `voice` (a designed voice's axes); used only with `voice`
  int64_t created_unix_s = 0;  // manifest created_at; 0: now
};

// step: short machine name ("decode", "face", "frame", "voice", "package"); fraction 0..1 of the
// whole build; message: human-readable progress text.
using ProgressFn = std::function<void(std::string_view step, double fraction, std::string_view message)>;

// Returns the .imx file bytes. Expected failures (e.g. "No face found in the image", an
// undecodable image) come back as Status::Invalid with a message fit for an agent's
// error_message. `progress` may be empty.
Result<std::string> build_imx(const BuildInput& input, const ProgressFn& progress);

// The builder's first step alone, cheap enough to run while a request waits (a decode and the
// face detector, well under a second): Status::Invalid with build_imx's message when it would
// refuse the image ("No face found in the image", an undecodable or oversized image), Ok when a
// usable face is there, kInternal when the face models are not installed (the caller then
// leaves the decision to the build).
Status check_image_has_face(std::string_view image_bytes);

// Where check_image_has_face found the face, for showing it before anything is generated: the
// decoded picture's size (after EXIF orientation) and the face's box in its pixels.
struct FaceBox {
  int image_width = 0, image_height = 0;
  double x = 0, y = 0, width = 0, height = 0;
};
// check_image_has_face's decision with the box: the same errors, the box when Ok.
Result<FaceBox> find_image_face(std::string_view image_bytes);

}  // namespace imago::avatar
