#include "speech/voices.h"

#include <cmath>

namespace imago::speech {

namespace {
// Coefficients of the axes (see apply_axes in voices.h).
constexpr double kGenderF0 = 1.2;        // octaves per unit
constexpr double kGenderFormant = 0.47;  // natural log of the formant factor per unit
constexpr double kPitch = 1.0;           // octaves per unit
constexpr double kRate = 1.5;            // octaves of words-per-minute per unit
constexpr double kBrightness = 2.0;      // tone tilt per unit

// The neutral reference the projections are measured from: between the male and female sets.
constexpr double kRefF0 = 140;
constexpr double kRefFormant = 1.06;
constexpr double kRefRate = 175;

VoiceDefinition def(double f0, double range, double formant, double tilt, int rate, bool female,
                    int flutter = 0, int roughness = 0) {
  VoiceDefinition d;
  d.pitch_base_hz = f0;
  d.pitch_range_hz = range;
  d.formant_scale = formant;
  d.tone_tilt = tilt;
  d.rate_wpm = rate;
  d.female = female;
  d.flutter = flutter;
  d.roughness = roughness;
  return d;
}
}  // namespace

const std::vector<BuiltinVoice>& builtin_voice_table() {
  // English: RHVoice's slt, clb, bdl, alan and flite's rms, awb, slt, moved in pitch, tilt and
  // rate no further than they stay clear (docs/speech.md has the word error rates). Every pair
  // differs by more than 5% in median F0 or in spectral centroid on the same sentence, and every
  // male voice is lower than every female one (voices_test.cpp).
  // espeak-ng (other languages): the formant voices tuned the same way.
  static const std::vector<BuiltinVoice> table = {
      {"M1",
       "neutral American male (RHVoice bdl)",
       {"rhvoice", "bdl", def(119, 0, 1.00, 0.0, 175, false)},
       {"flite", "rms", def(102, 0, 1.00, 0.0, 175, false)},
       def(100, 45, 1.00, 0.0, 175, false)},
      {"M2",
       "deep, dark American male (flite rms)",
       {"flite", "rms", def(102, 0, 1.00, -0.4, 165, false)},
       {"flite", "rms", def(102, 0, 1.00, -0.4, 165, false)},
       def(78, 35, 0.92, -0.5, 165, false)},
      {"M3",
       "bright Scottish male (RHVoice alan)",
       {"rhvoice", "alan", def(135, 0, 1.00, 0.3, 180, false)},
       {"flite", "awb", def(135, 0, 1.00, 0.3, 180, false)},
       def(120, 55, 1.04, 0.5, 185, false)},
      {"M4",
       "calm, low Scottish narrator (flite awb)",
       {"flite", "awb", def(111, 0, 1.00, 0.0, 160, false)},
       {"flite", "awb", def(111, 0, 1.00, 0.0, 160, false)},
       def(90, 25, 0.97, 0.25, 160, false, 0, 2)},
      {"M5",
       "lively, higher American male (RHVoice bdl)",
       {"rhvoice", "bdl", def(145, 0, 1.00, 0.2, 190, false)},
       {"flite", "kal16", def(140, 0, 1.00, 0.2, 190, false)},
       def(140, 65, 1.07, -0.2, 190, false)},
      {"F1",
       "neutral American female (RHVoice slt)",
       {"rhvoice", "slt", def(173, 0, 1.15, 0.0, 175, true)},
       {"flite", "slt", def(173, 0, 1.15, 0.0, 175, true)},
       def(190, 80, 1.15, 0.0, 175, true)},
      {"F2",
       "low, warm American female (RHVoice clb)",
       {"rhvoice", "clb", def(160, 0, 1.15, -0.3, 170, true)},
       {"flite", "slt", def(158, 0, 1.15, -0.3, 170, true)},
       def(160, 60, 1.10, -0.4, 170, true)},
      {"F3",
       "high, bright American female (flite slt)",
       {"flite", "slt", def(215, 0, 1.15, 0.3, 180, true)},
       {"flite", "slt", def(215, 0, 1.15, 0.3, 180, true)},
       def(235, 90, 1.19, 0.4, 185, true)},
      {"F4",
       "crisp American female (RHVoice clb)",
       {"rhvoice", "clb", def(195, 0, 1.15, 0.5, 180, true)},
       {"flite", "slt", def(195, 0, 1.15, 0.5, 180, true)},
       def(200, 50, 1.12, 0.7, 180, true)},
      {"F5",
       "soft, dark American female (RHVoice slt)",
       {"rhvoice", "slt", def(185, 0, 1.15, -0.6, 165, true)},
       {"flite", "slt", def(185, 0, 1.15, -0.6, 165, true)},
       def(175, 70, 1.16, -0.8, 165, true, 0, 1)},
  };
  return table;
}

const BuiltinVoice* find_builtin_voice(const std::string& id) {
  for (const auto& v : builtin_voice_table()) {
    if (id == v.id) return &v;
  }
  return nullptr;
}

VoiceDefinition apply_axes(const VoiceDefinition& voice, const Axes& a) {
  VoiceDefinition d = voice;
  double f0_factor = std::pow(2.0, kGenderF0 * a.gender + kPitch * a.pitch);
  d.pitch_base_hz *= f0_factor;
  d.pitch_range_hz *= f0_factor;
  d.formant_scale *= std::exp(kGenderFormant * a.gender);
  d.rate_wpm = static_cast<int>(std::lround(voice.rate_wpm * std::pow(2.0, kRate * a.rate)));
  d.tone_tilt += kBrightness * a.brightness;
  return d;
}

Axes project_onto_axes(const VoiceDefinition& v) {
  Axes a;
  // Gender moves (log2 F0, ln formant) along (kGenderF0, kGenderFormant); pitch moves log2 F0 only.
  // The formant scale is explained by gender alone; the rest of the F0 offset is pitch.
  double lf = std::log(v.formant_scale / kRefFormant);
  a.gender = lf / kGenderFormant;
  double l2f0 = std::log2(v.pitch_base_hz / kRefF0);
  a.pitch = (l2f0 - kGenderF0 * a.gender) / kPitch;
  a.rate = std::log2(v.rate_wpm / kRefRate) / kRate;
  a.brightness = v.tone_tilt / kBrightness;
  return a;
}

std::vector<AxisInfo> axis_table() {
  std::vector<AxisInfo> axes = {
      {"gender",
       "Moves F0 (x2^(1.2g)) and the formants (x e^(0.47g)) together; positive is more feminine.",
       -0.3,
       0.3,
       {}},
      {"pitch",
       "Moves the fundamental frequency and its intonation range (x2^p); positive is higher.",
       -0.3,
       0.3,
       {}},
      {"rate", "Speaking rate in words per minute (x2^(1.5r)); positive is faster.", -0.3, 0.3, {}},
      {"brightness",
       "Tilts the spectrum around 1.2 kHz; positive is brighter (higher spectral centroid).",
       -0.3,
       0.3,
       {}},
  };
  for (const auto& v : builtin_voice_table()) {
    Axes p = project_onto_axes(v.english.definition);
    auto round3 = [](double x) { return std::round(x * 1000) / 1000; };
    axes[0].anchor_projections.emplace_back(v.id, round3(p.gender));
    axes[1].anchor_projections.emplace_back(v.id, round3(p.pitch));
    axes[2].anchor_projections.emplace_back(v.id, round3(p.rate));
    axes[3].anchor_projections.emplace_back(v.id, round3(p.brightness));
  }
  return axes;
}

Status validate_axes(const Axes& a) {
  for (auto [name, v] : {std::pair<const char*, double>{"gender", a.gender},
                         {"pitch", a.pitch},
                         {"rate", a.rate},
                         {"brightness", a.brightness}}) {
    if (!std::isfinite(v) || v < kAxisMin || v > kAxisMax) {
      return Status::Invalid("axes." + std::string(name) + " must be between " +
                             std::to_string(kAxisMin).substr(0, 4) + " and " +
                             std::to_string(kAxisMax).substr(0, 3));
    }
  }
  return Status::Ok();
}

Status parse_axes(const std::vector<std::pair<std::string, double>>& items, Axes* out) {
  Axes a;
  for (const auto& [name, v] : items) {
    if (name == "gender")
      a.gender = v;
    else if (name == "pitch")
      a.pitch = v;
    else if (name == "rate")
      a.rate = v;
    else if (name == "brightness")
      a.brightness = v;
    else
      return Status::Invalid("unknown axis '" + name + "' (expected gender, pitch, rate, brightness)");
  }
  Status s = validate_axes(a);
  if (!s.ok()) return s;
  *out = a;
  return Status::Ok();
}

}  // namespace imago::speech
