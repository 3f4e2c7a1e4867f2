// Content sniffing by magic bytes: uploads and agent inputs are typed by what they contain, never
// by their name or a Content-Type header.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace imago::fetch {

enum class MediaKind { kImage, kVideo, kAudio };
std::string_view media_kind_name(MediaKind k);  // "image", "video", "audio"

struct Sniffed {
  MediaKind kind;
  std::string mime;  // e.g. "image/png"
  std::string ext;   // e.g. "png" (no dot)
};

// Recognises JPEG, PNG, GIF, WebP; MP4, QuickTime, WebM, Matroska, AVI, Ogg video; WAV, MP3,
// AAC (ADTS), M4A, Ogg (Opus/Vorbis), FLAC. nullopt for anything else.
std::optional<Sniffed> sniff(std::string_view bytes);

// Size limits per kind (SPEC 8.7: image 10 MB, video 100 MB; audio is ours: 25 MB).
size_t max_bytes_for(MediaKind k);
inline constexpr size_t kMaxImageBytes = 10u << 20;
inline constexpr size_t kMaxVideoBytes = 100u << 20;
inline constexpr size_t kMaxAudioBytes = 25u << 20;
// The largest of the three: the most any single fetch or upload may carry.
inline constexpr size_t kMaxMediaBytes = kMaxVideoBytes;

}  // namespace imago::fetch
