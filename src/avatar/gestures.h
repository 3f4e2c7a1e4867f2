// Gesture motion definitions (the GEST chunk) and the pose they drive. Private to src/avatar.
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace imago::avatar::internal {

// Every animatable quantity of the 2D renderer. Offsets are relative to the photo's neutral pose;
// lengths are fractions of the face width, angles degrees.
struct Pose {
  double head_dx = 0, head_dy = 0, head_rot = 0, head_scale = 0;
  double head_yaw = 0;      // degrees, a turn of a few degrees (parallax of the face mesh)
  double mouth_open = 0;    // 0 closed .. 1 fully open jaw
  double mouth_spread = 0;  // -1 rounded/puckered .. +1 spread
  double mouth_teeth = 0;   // 0 .. 1 visibility of the upper teeth inside the opening
  double mouth_press = 0;   // 0 .. 1 lips pressed together (p, b, m)
  double smile = 0;         // 0 .. 1 mouth corners up
  double eye_close = 0;     // 0 open .. 1 closed
  double brow = 0;          // 0 .. 1 brows raised
  // Not gesture channels (set by the renderer itself):
  double lip_tuck = 0;            // 0 .. 1 lower lip drawn up under the upper teeth (f, v)
  double speech_relax = 0;        // 0 .. 1 a turn is being spoken (a photo's open mouth relaxes)
  double gaze_x = 0, gaze_y = 0;  // iris offset in the eye opening, fractions of the eye's width
};

// Gestures move the face and head only: 1.0 models' GEST chunks also name "hand", "hand_angle"
// and "heart" (pasted sprites), which parse_gestures ignores like any unknown channel.
enum Channel : int {
  kHeadDx,
  kHeadDy,
  kHeadRot,
  kHeadScale,
  kHeadYaw,
  kMouthOpen,
  kMouthSpread,
  kMouthTeeth,
  kMouthPress,
  kSmile,
  kEyeClose,
  kBrow,
  kChannelCount
};
double& channel(Pose& p, int c);
int channel_by_name(std::string_view name);  // -1 when unknown

struct GestureDef {
  std::string name;
  double default_duration_s = 2.5;
  double mouth_weight = 1.0;  // how much the gesture may override speech mouth shapes
  struct Track {
    int channel;
    std::vector<std::pair<double, double>> keys;  // (normalized time 0..1, value)
  };
  struct Osc {
    int channel;
    double hz, amp, phase;
    double from = 0, to = 1;  // active window in normalized time
  };
  std::vector<Track> tracks;
  std::vector<Osc> oscillators;
};

// The gesture motion definitions the builder writes into the GEST chunk (the five of SPEC 2.2).
std::string default_gestures_json();

// Parses the GEST chunk; unknown channels are ignored (forward compatible).
Result<std::map<std::string, GestureDef>> parse_gestures(std::string_view json);
// Gesture values at normalized time `u` (0..1) and elapsed seconds `t` (for oscillators),
// written into `out` (channels the gesture does not drive stay 0). Returns which channels it set.
uint32_t evaluate_gesture(const GestureDef& g, double u, double t, Pose& out);

}  // namespace imago::avatar::internal
