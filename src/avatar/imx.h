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
// 1.1: LMKS chunk; HAND/HART/LIDS no longer written. 1.2: MESH chunk, voice.face_estimate.
inline constexpr uint16_t kImxMinor = 2;
inline constexpr size_t kImxHeaderSize = 32;
inline constexpr size_t kImxChunkHeaderSize = 24;
inline constexpr uint32_t kImxMaxChunks = 1024;

// Chunk types (four ASCII characters). Readers skip types they do not know.
inline constexpr std::string_view kChunkManifest = "MANI";    // JSON manifest, always first
inline constexpr std::string_view kChunkAppearance = "APPR";  // PNG, the normalized frame
// 1.0 models also carry MINT, LIDS, HAND and HART (sprites of the old sticker renderer); 1.1
// readers skip them and 1.1 writers no longer write them.
inline constexpr std::string_view kChunkGestures = "GEST";     // JSON gesture motion tracks
inline constexpr std::string_view kChunkVoiceSample = "VOIC";  // WAV, mono s16 voice sample
inline constexpr std::string_view kChunkLandmarks = "LMKS";    // JSON, 68 facial landmarks (1.1)
inline constexpr std::string_view kChunkMesh = "MESH";         // JSON, 478-point dense face mesh (1.2)

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

// What the face detector estimated from the face (docs/avatar.md "The default voice"): the
// probability that it is a woman's face and an age in years. Recorded when the voice was chosen
// from the face or could have been.
struct FaceEstimate {
  double female = 0.5;
  double age = 0;
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
  std::optional<FaceEstimate> face_estimate;  // voice.face_estimate (1.2)
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

// The LMKS chunk (docs/imx-format.md): the 68 points of the iBUG 300-W layout in frame pixels of
// the appearance image. source: "mediapipe" (taken from the dense mesh, 1.2), "dlib" (detected by
// the shape predictor) or "template" (a mean face placed from the eyes and mouth: procedural
// avatars, and models built before 1.2 when landmarks were unavailable).
inline constexpr size_t kLandmarkCount = 68;
struct FaceLandmarks {
  std::vector<Point> points;  // kLandmarkCount
  std::string source = "dlib";
  std::string note;  // why the template was used, empty for "dlib"
};
std::string landmarks_to_json(const FaceLandmarks& l);
// Unknown fields are ignored; fewer or more than 68 points, or non-finite values, are an error.
Result<FaceLandmarks> landmarks_from_json(std::string_view json);

// The MESH chunk (1.2, optional): MediaPipe's dense face mesh in frame pixels of the appearance
// image, 468 points of the face (MediaPipe's canonical order) then 5 per iris (centre first; the
// subject's right eye, image left, first). z is relative depth in the same pixel scale, negative
// toward the camera. Older files have no MESH chunk; readers then use LMKS alone.
inline constexpr size_t kMeshPointCount = 478;
struct Point3 {
  double x = 0, y = 0, z = 0;
};
struct DenseMesh {
  std::vector<Point3> points;  // kMeshPointCount
  std::string source = "mediapipe";
};
std::string mesh_to_json(const DenseMesh& m);
// Unknown fields are ignored; a point count other than 478, or non-finite values, are an error.
Result<DenseMesh> mesh_from_json(std::string_view json);

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
