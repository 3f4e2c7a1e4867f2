// A viewer's camera frame in a camera_chat session (docs/live-protocol.md, "Camera frames"): a
// JPEG or PNG still sent as a data: URL, kept until the next model turn takes it.
#pragma once
#include <string>
#include <string_view>

#include "util/status.h"

namespace imago::live {

// Decoded size bound of one frame. The WebSocket message limit is 64 KiB of text, and base64
// makes 48 KiB of image 64 KiB; a 320x240 JPEG at quality 70 is about 15 KiB.
inline constexpr size_t kMaxCameraFrameBytes = 48 * 1024;

// Checks `data_url` ("data:image/jpeg;base64,..." or "data:image/png;base64,...") and returns it
// in canonical form (standard base64 with padding). kInvalidArgument, with a message a viewer can
// act on, for any other scheme or type, bad base64, an empty or oversized image, or bytes that are
// not the declared format's signature. The pixels are not decoded here: the model endpoint does
// that, and the size bound keeps a frame small whatever it declares.
Result<std::string> canonical_camera_frame(std::string_view data_url);

}  // namespace imago::live
