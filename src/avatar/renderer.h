// The real-time avatar renderer (docs/avatar.md): a 2D renderer that warps and composites the
// mouth, eye, brow and head regions of the model's photo, driven by visemes (from espeak-ng
// phoneme timing, or from the audio envelope when only PCM is pushed), blinks, idle motion and
// gestures. It is not a neural photoreal renderer.
//
// Shape: push 16-bit mono PCM (any sample rate, optionally with word/phoneme timing), pull frames
// on a 25 FPS clock. Frame n covers audio [n/25, (n+1)/25) s and carries exactly
// audio_rate/25 samples. Frames continue (idle) when nothing is queued. The caller paces pulls in
// real time (live sessions) or pulls as fast as it likes (offline render).
// Thread safety: all methods may be called from different threads (one internal mutex).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "avatar/imx.h"
#include "speech/synthesis.h"
#include "util/status.h"

namespace imago::avatar {

inline constexpr int kFps = 25;
// Longest speech a renderer queues (pushes beyond it fail with kTooLarge).
inline constexpr int kMaxQueuedSeconds = 600;

struct ModelData;  // decoded pixels and sprites (private)

// A loaded .imx model at one output size; immutable, shared by any number of sessions.
class AvatarModel {
 public:
  const Manifest& manifest() const;
  int width() const;
  int height() const;
  const ModelData& data() const { return *d_; }
  explicit AvatarModel(std::unique_ptr<ModelData> d);
  ~AvatarModel();

 private:
  std::unique_ptr<ModelData> d_;
};

// Verifies and decodes `imx_bytes`. width/height 0: the manifest's frame size; otherwise the
// model is scaled at load time (same aspect ratio required, +-1 px).
Result<std::shared_ptr<const AvatarModel>> load_model(std::string_view imx_bytes, int width = 0,
                                                      int height = 0);

struct Frame {
  int64_t index = 0;
  double pts_s = 0;  // index / 25
  int width = 0, height = 0;
  bool has_image = true;     // false when the caller asked to skip the picture (catching up)
  std::vector<uint8_t> rgb;  // RGB24, row-major, width*3 bytes per row, no padding
  // Instead of `rgb` when next_frame was asked not to copy the picture: the renderer's own
  // pixels (same layout), valid until that renderer's next next_frame call.
  const uint8_t* view = nullptr;
  // The picture, copied or viewed (nullptr without one).
  const uint8_t* pixels() const { return view ? view : has_image && !rgb.empty() ? rgb.data() : nullptr; }
  int sample_rate = 24000;
  std::vector<int16_t> audio;  // mono s16, exactly sample_rate / 25 samples (silence when idle)
  bool speaking = false;       // this frame carries queued speech audio
  bool end_of_speech = false;  // last frame of a turn (or the frame after interrupt())
  bool interrupted = false;
  std::string gesture;    // active gesture name, empty if none
  double mouth_open = 0;  // renderer's jaw opening 0..1 (diagnostics)
};

struct RendererOptions {
  int audio_rate = 24000;     // output sample rate; must be a multiple of 25
  uint64_t session_seed = 0;  // varies the blink schedule between sessions of one model
  bool idle_motion = true;    // head sway and breathing (blinks stay on)
  bool blinks = true;         // off for tools that look at speech shapes (avatar_contact_sheet)
};

class Renderer {
 public:
  static Result<std::unique_ptr<Renderer>> create(std::shared_ptr<const AvatarModel> model,
                                                  const RendererOptions& options = {});
  ~Renderer();

  // Queues speech after anything already queued. Phoneme timing in `audio` drives visemes; without
  // it the audio envelope does. end_of_turn=false when more chunks of the same turn follow.
  // kTooLarge when more than kMaxQueuedSeconds would be queued.
  Status push_audio(const speech::Audio& audio, bool end_of_turn = true);
  Status push_pcm(const int16_t* samples, size_t count, int sample_rate, bool end_of_turn = true);
  // Marks the turn finished after the audio already queued (for streamed turns).
  void end_turn();
  // Drops all queued speech; the next frame is idle (mouth at rest) and has end_of_speech set.
  void interrupt();
  // Starts a gesture (SPEC 2.2 names, or any in the model's GEST chunk), blended in and out.
  // duration_s <= 0: the gesture's default duration.
  Status trigger_gesture(std::string_view name, double duration_s = 0);
  // The model's default duration of a gesture in seconds; 0 when the model has no such gesture.
  double gesture_default_s(std::string_view name) const;

  // Produces the next frame. render_image=false skips drawing (has_image=false) but advances
  // time and audio exactly the same, so a consumer that fell behind can catch up cheaply.
  // copy_image=false leaves out.rgb empty and points out.view at the renderer's picture (a
  // consumer that is done with it before the next call saves a whole-frame copy).
  void next_frame(Frame& out, bool render_image = true, bool copy_image = true);
  Frame next_frame();

  bool speaking() const;
  double queued_seconds() const;  // speech audio not yet emitted
  int64_t frame_index() const;    // index of the next frame
  int width() const;
  int height() const;
  int audio_rate() const;
  int samples_per_frame() const;
  const Manifest& manifest() const;

  struct Impl;

 private:
  explicit Renderer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The frame's picture as JPEG (libjpeg through OpenCV, which other subsystems do not include),
// for viewers that show still images, e.g. a browser canvas over WebSocket. quality 1..100.
// kInvalidArgument for a frame without an image.
Result<std::string> encode_jpeg(const Frame& frame, int quality = 80);

// Visemes (docs/avatar.md): espeak-ng phoneme mnemonic -> mouth shape class.
enum class Viseme { kRest, kMBP, kAA, kEE, kOO, kFV, kTD, kSH, kOH, kEH };
Viseme viseme_for_phoneme(std::string_view espeak_phoneme);
const char* viseme_name(Viseme v);

}  // namespace imago::avatar
