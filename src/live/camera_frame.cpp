#include "live/camera_frame.h"

#include "util/base64.h"

namespace imago::live {

Result<std::string> canonical_camera_frame(std::string_view url) {
  struct Format {
    std::string_view prefix;
    std::string_view signature;
  };
  static constexpr Format kFormats[] = {
      {"data:image/jpeg;base64,", std::string_view("\xFF\xD8\xFF", 3)},
      {"data:image/png;base64,", std::string_view("\x89PNG\r\n\x1A\n", 8)},
  };
  for (const Format& f : kFormats) {
    if (url.substr(0, f.prefix.size()) != f.prefix) continue;
    auto bytes = base64_decode(url.substr(f.prefix.size()));
    if (!bytes) return Status::Invalid("Field 'image' is not valid base64");
    if (bytes->empty()) return Status::Invalid("Field 'image' holds no image");
    if (bytes->size() > kMaxCameraFrameBytes) {
      return Status::Invalid("Field 'image' is " + std::to_string(bytes->size()) +
                             " bytes; a camera frame may be " + std::to_string(kMaxCameraFrameBytes) +
                             " bytes at most (send a smaller JPEG)");
    }
    if (std::string_view(*bytes).substr(0, f.signature.size()) != f.signature) {
      return Status::Invalid("Field 'image' does not hold the image its data URL declares");
    }
    return std::string(f.prefix) + base64_encode(*bytes);
  }
  return Status::Invalid("Field 'image' must be a data:image/jpeg;base64 or data:image/png;base64 URL");
}

}  // namespace imago::live
