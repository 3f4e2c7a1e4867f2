// The pixel size an image declares in its header, read without decoding it, so a small file
// that declares a huge canvas (a decompression bomb) is refused before any pixel memory is
// allocated (docs/avatar.md "Input limits").
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "util/status.h"

namespace imago {

struct ImageSize {
  uint32_t width = 0, height = 0;
};

// JPEG (the first SOFn frame header), PNG (IHDR), GIF (logical screen) and WebP (VP8, VP8L,
// VP8X). nullopt when the bytes are none of these or the header is cut short.
std::optional<ImageSize> image_size(std::string_view bytes);

// 40 megapixels (e.g. 7300 x 5475) and 16384 px on a side: beyond any portrait worth animating,
// and at most ~160 MB of decoded pixels.
inline constexpr uint64_t kMaxImagePixels = 40'000'000;
inline constexpr uint32_t kMaxImageSide = 16384;

// kInvalidArgument "<what> is 30000x30000 pixels; at most 40 megapixels and 16384 px on a side
// are accepted" (or "<what>: the image header could not be read") when over the limits.
Status check_image_size(std::string_view bytes, std::string_view what);

}  // namespace imago
