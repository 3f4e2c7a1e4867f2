// The .imx avatar model container (docs/imx-format.md): a versioned header, a JSON manifest and
// checksummed binary chunks. This layer knows bytes and JSON only (no OpenCV), so the fuzz
// target and tools that only inspect models stay small.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "speech/synthesis.h"
#include "util/status.h"

namespace imago::avatar {

inline constexpr uint16_t kImxMajor = 1;
inline constexpr uint16_t kImxMinor = 0;
inline constexpr size_t kImxHeaderSize = 32;
inline constexpr size_t kImxChunkHeaderSize = 24;
inline constexpr uint32_t kImxMaxChunks = 1024;

// Chunk types (four ASCII characters). Readers skip types they do not know.
inline constexpr std::string_view kChunkManifest = "MANI";       // JSON manifest, always first
inline constexpr std::string_view kChunkAppearance = "APPR";     // PNG, the normalized frame
inline constexpr std::string_view kChunkMouthInterior = "MINT";  // PNG, teeth/cavity texture
inline constexpr std::string_view kChunkEyelids = "LIDS";        // PNG RGBA, closed-lid sprites
inline constexpr std::string_view kChunkHand = "HAND";           // PNG RGBA, hand sprite (wave)
inline constexpr std::string_view kChunkHeart = "HART";          // PNG RGBA, heart sprite (kiss)
inline constexpr std::string_view kChunkGestures = "GEST";       // JSON gesture motion tracks
inline constexpr std::string_view kChunkVoiceSample = "VOIC";    // WAV, mono s16 voice sample

struct Point {
  double x = 0, y = 0;
};
struct Box {
  double x = 0, y = 0, w = 0, h = 0;
};

// Measurements behind a voice match (docs/avatar.md "Voice matching").
struct VoiceMatch {
  double median_f0_hz = 0;
  double spectral_centroid_hz = 0;
  double speaking_rate_syl_s = 0;
  double voiced_seconds = 0;
  double distance = 0;  // normalized distance to the chosen built-in voice
};

struct Manifest {
  uint16_t version_major = kImxMajor;
  uint16_t version_minor = kImxMinor;
  std::string model_type = "essence";  // essence | expression
  std::string agent_id;
  std::string name;
  std::string created_at;        // RFC 3339
  std::string source = "image";  // image | video | procedural
  // Frame
  std::string aspect_ratio = "16:9";
  int width = 1280;
  int height = 720;
  int fps = 25;
  std::string pixel_format = "rgb24";
  // Geometry, in frame pixels
  Box face;
  Point left_eye, right_eye;  // image left / image right
  Point mouth;                // centre of the lip line
  double mouth_width = 0;
  bool eyes_detected = false;
  // Voice
  std::string voice = "M1";
  speech::Axes axes;
  std::string language = "en";
  std::optional<VoiceMatch> voice_match;
  // Renderer parameters
  int visemes = 6;               // mouth shapes: 6 (essence) or 10 (expression)
  double mouth_max_open = 0.11;  // jaw drop at full open, fraction of face width
  double sway = 1.0;             // idle motion amplitude multiplier
  double blink_min_s = 2.0, blink_max_s = 6.0;
  bool prosody = false;  // head/brow motion driven by speech prosody (expression)
  uint32_t seed = 0;     // deterministic idle motion / blink schedule

  // Manifest fields this reader does not know, kept so info/rewrites do not lose them.
  std::string raw_json;
};

std::string manifest_to_json(const Manifest& m);
Result<Manifest> manifest_from_json(std::string_view json);

struct ImxChunk {
  std::string type;  // 4 characters
  std::string data;
  uint32_t flags = 0;
};

struct ImxFile {
  Manifest manifest;
  uint16_t version_major = 0, version_minor = 0;
  std::vector<ImxChunk> chunks;      // known and unknown, in file order (MANI excluded)
  std::vector<std::string> skipped;  // types of unknown chunks
  const std::string* find(std::string_view type) const;
};

// Serializes: header, MANI (manifest_to_json(m)), then `chunks` in order.
std::string write_imx(const Manifest& m, const std::vector<ImxChunk>& chunks);

// Parses and verifies every checksum. Errors are Status::Invalid with a precise reason
// ("not an .imx file", "unsupported .imx version 2.0 (this build reads 1.x)",
// "truncated .imx: ...", "corrupt .imx: chunk APPR checksum mismatch", ...). Never throws.
Result<ImxFile> read_imx(std::string_view bytes);

}  // namespace imago::avatar
