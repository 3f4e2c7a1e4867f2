#include "fetch/sniff.h"

#include <cstdint>

namespace imago::fetch {

std::string_view media_kind_name(MediaKind k) {
  switch (k) {
    case MediaKind::kImage:
      return "image";
    case MediaKind::kVideo:
      return "video";
    case MediaKind::kAudio:
      return "audio";
  }
  return "unknown";
}

size_t max_bytes_for(MediaKind k) {
  switch (k) {
    case MediaKind::kImage:
      return kMaxImageBytes;
    case MediaKind::kVideo:
      return kMaxVideoBytes;
    case MediaKind::kAudio:
      return kMaxAudioBytes;
  }
  return kMaxImageBytes;
}

namespace {

bool at(std::string_view b, size_t off, std::string_view magic) {
  return b.size() >= off + magic.size() && b.substr(off, magic.size()) == magic;
}

uint8_t byte(std::string_view b, size_t i) {
  return static_cast<uint8_t>(b[i]);
}

// MPEG audio frame header: 11 sync bits, a valid version, layer III/II/I, and a bitrate index
// that is neither free (0) nor bad (15) nor a bad sample-rate index.
bool mpeg_audio_frame(std::string_view b, size_t off) {
  if (b.size() < off + 4) return false;
  uint8_t b1 = byte(b, off), b2 = byte(b, off + 1), b3 = byte(b, off + 2);
  if (b1 != 0xFF || (b2 & 0xE0) != 0xE0) return false;
  if (((b2 >> 3) & 3) == 1) return false;  // reserved version
  if (((b2 >> 1) & 3) == 0) return false;  // layer 0 is ADTS/reserved
  uint8_t bitrate = b3 >> 4, rate = (b3 >> 2) & 3;
  return bitrate != 0 && bitrate != 15 && rate != 3;
}

bool adts_frame(std::string_view b) {
  return b.size() >= 7 && byte(b, 0) == 0xFF && (byte(b, 1) & 0xF6) == 0xF0 && ((byte(b, 2) >> 2) & 0xF) < 13;
}

}  // namespace

std::optional<Sniffed> sniff(std::string_view b) {
  using K = MediaKind;
  if (b.size() < 4) return std::nullopt;
  // Images.
  if (at(b, 0, "\xFF\xD8\xFF")) return Sniffed{K::kImage, "image/jpeg", "jpg"};
  if (at(b, 0, "\x89PNG\r\n\x1A\n")) return Sniffed{K::kImage, "image/png", "png"};
  if (at(b, 0, "GIF87a") || at(b, 0, "GIF89a")) return Sniffed{K::kImage, "image/gif", "gif"};
  if (at(b, 0, "RIFF") && at(b, 8, "WEBP")) return Sniffed{K::kImage, "image/webp", "webp"};
  // RIFF containers.
  if (at(b, 0, "RIFF") && at(b, 8, "AVI ")) return Sniffed{K::kVideo, "video/x-msvideo", "avi"};
  if ((at(b, 0, "RIFF") || at(b, 0, "RF64")) && at(b, 8, "WAVE"))
    return Sniffed{K::kAudio, "audio/wav", "wav"};
  // ISO base media (MP4, MOV, M4A): a box of type ftyp first; the major brand tells them apart.
  if (at(b, 4, "ftyp") && b.size() >= 12) {
    std::string_view brand = b.substr(8, 4);
    if (brand == "M4A " || brand == "M4B " || brand == "M4P ") return Sniffed{K::kAudio, "audio/mp4", "m4a"};
    if (brand == "qt  ") return Sniffed{K::kVideo, "video/quicktime", "mov"};
    if (brand.substr(0, 3) == "3gp" || brand.substr(0, 3) == "3g2")
      return Sniffed{K::kVideo, "video/3gpp", "3gp"};
    if (brand == "avif" || brand == "avis" || brand == "heic" || brand == "heix" || brand == "mif1") {
      return std::nullopt;  // still-image HEIF/AVIF: not supported by the model builder
    }
    return Sniffed{K::kVideo, "video/mp4", "mp4"};
  }
  // Older QuickTime files start with a moov/mdat/wide atom instead of ftyp.
  if (at(b, 4, "moov") || at(b, 4, "mdat") || at(b, 4, "wide"))
    return Sniffed{K::kVideo, "video/quicktime", "mov"};
  // EBML: WebM declares DocType "webm" in its header; anything else is Matroska.
  if (at(b, 0, "\x1A\x45\xDF\xA3")) {
    std::string_view head = b.substr(0, std::min<size_t>(b.size(), 64));
    if (head.find("webm") != std::string_view::npos) return Sniffed{K::kVideo, "video/webm", "webm"};
    return Sniffed{K::kVideo, "video/x-matroska", "mkv"};
  }
  // Ogg: the first packet names the codec.
  if (at(b, 0, "OggS")) {
    std::string_view head = b.substr(0, std::min<size_t>(b.size(), 128));
    if (head.find("theora") != std::string_view::npos) return Sniffed{K::kVideo, "video/ogg", "ogv"};
    if (head.find("OpusHead") != std::string_view::npos) return Sniffed{K::kAudio, "audio/ogg", "opus"};
    return Sniffed{K::kAudio, "audio/ogg", "ogg"};
  }
  if (at(b, 0, "fLaC")) return Sniffed{K::kAudio, "audio/flac", "flac"};
  if (at(b, 0, "ID3")) return Sniffed{K::kAudio, "audio/mpeg", "mp3"};
  if (adts_frame(b)) return Sniffed{K::kAudio, "audio/aac", "aac"};
  if (mpeg_audio_frame(b, 0)) return Sniffed{K::kAudio, "audio/mpeg", "mp3"};
  return std::nullopt;
}

}  // namespace imago::fetch
