#include "util/image_size.h"

namespace imago {
namespace {

uint32_t be16(std::string_view b, size_t i) {
  return (uint8_t(b[i]) << 8) | uint8_t(b[i + 1]);
}
uint32_t le16(std::string_view b, size_t i) {
  return uint8_t(b[i]) | (uint8_t(b[i + 1]) << 8);
}
uint32_t le24(std::string_view b, size_t i) {
  return le16(b, i) | (uint8_t(b[i + 2]) << 16);
}
uint32_t be32(std::string_view b, size_t i) {
  return (be16(b, i) << 16) | be16(b, i + 2);
}

std::optional<ImageSize> jpeg(std::string_view b) {
  size_t i = 2;
  while (i + 4 <= b.size()) {
    if (uint8_t(b[i]) != 0xFF) return std::nullopt;
    while (i < b.size() && uint8_t(b[i]) == 0xFF) ++i;  // fill bytes
    if (i >= b.size()) return std::nullopt;
    uint8_t m = uint8_t(b[i++]);
    if (m == 0xD8 || m == 0x01 || (m >= 0xD0 && m <= 0xD7)) continue;  // no length
    if (m == 0xD9 || m == 0xDA) return std::nullopt;  // end of image / scan before any frame header
    if (i + 2 > b.size()) return std::nullopt;
    uint32_t len = be16(b, i);
    if (len < 2) return std::nullopt;
    bool sof = m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC;
    if (sof) {
      if (i + 7 > b.size()) return std::nullopt;
      return ImageSize{be16(b, i + 5), be16(b, i + 3)};
    }
    i += len;
  }
  return std::nullopt;
}

}  // namespace

std::optional<ImageSize> image_size(std::string_view b) {
  if (b.size() >= 24 && b.substr(0, 8) == std::string_view("\x89PNG\r\n\x1a\n", 8) &&
      b.substr(12, 4) == "IHDR")
    return ImageSize{be32(b, 16), be32(b, 20)};
  if (b.size() >= 4 && uint8_t(b[0]) == 0xFF && uint8_t(b[1]) == 0xD8) return jpeg(b);
  if (b.size() >= 10 && (b.substr(0, 6) == "GIF87a" || b.substr(0, 6) == "GIF89a"))
    return ImageSize{le16(b, 6), le16(b, 8)};
  if (b.size() >= 30 && b.substr(0, 4) == "RIFF" && b.substr(8, 4) == "WEBP") {
    std::string_view fourcc = b.substr(12, 4);
    if (fourcc == "VP8 " && uint8_t(b[23]) == 0x9d && uint8_t(b[24]) == 0x01 && uint8_t(b[25]) == 0x2a)
      return ImageSize{le16(b, 26) & 0x3fff, le16(b, 28) & 0x3fff};
    if (fourcc == "VP8L" && uint8_t(b[20]) == 0x2f) {
      uint32_t bits =
          uint8_t(b[21]) | (uint8_t(b[22]) << 8) | (uint8_t(b[23]) << 16) | (uint32_t(uint8_t(b[24])) << 24);
      return ImageSize{(bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1};
    }
    if (fourcc == "VP8X") return ImageSize{le24(b, 24) + 1, le24(b, 27) + 1};
  }
  return std::nullopt;
}

Status check_image_size(std::string_view bytes, std::string_view what) {
  auto s = image_size(bytes);
  std::string w(what);
  if (!s) return Status::Invalid(w + ": the image header could not be read");
  if (s->width == 0 || s->height == 0) return Status::Invalid(w + " declares no pixels");
  if (uint64_t(s->width) * s->height > kMaxImagePixels || s->width > kMaxImageSide ||
      s->height > kMaxImageSide)
    return Status::Invalid(w + " is " + std::to_string(s->width) + "x" + std::to_string(s->height) +
                           " pixels; at most 40 megapixels and 16384 px on a side are accepted");
  return Status::Ok();
}

}  // namespace imago
