#include "avatar/gestures.h"

#include <boost/json.hpp>
#include <cmath>
#include <numbers>

namespace imago::avatar::internal {
namespace {
namespace json = boost::json;

constexpr const char* kChannelNames[kChannelCount] = {
    "head_dx",      "head_dy",     "head_rot",    "head_scale", "head_yaw",  "mouth_open",
    "mouth_spread", "mouth_teeth", "mouth_press", "smile",      "eye_close", "brow"};

double num(const json::value& v) {
  return v.is_number() ? v.to_number<double>() : 0.0;
}

double smooth(double x) {
  return x * x * (3 - 2 * x);
}

}  // namespace

double& channel(Pose& p, int c) {
  switch (c) {
    case kHeadDx:
      return p.head_dx;
    case kHeadDy:
      return p.head_dy;
    case kHeadRot:
      return p.head_rot;
    case kHeadScale:
      return p.head_scale;
    case kHeadYaw:
      return p.head_yaw;
    case kMouthOpen:
      return p.mouth_open;
    case kMouthSpread:
      return p.mouth_spread;
    case kMouthTeeth:
      return p.mouth_teeth;
    case kMouthPress:
      return p.mouth_press;
    case kSmile:
      return p.smile;
    case kEyeClose:
      return p.eye_close;
    default:
      return p.brow;
  }
}

int channel_by_name(std::string_view name) {
  for (int i = 0; i < kChannelCount; ++i)
    if (name == kChannelNames[i]) return i;
  return -1;
}

// Keyframes: [[u, value], ...] with smoothstep easing between keys; oscillators add
// amp * sin(2 pi hz t + phase) inside their window (tapered at its ends).
std::string default_gestures_json() {
  // Face and head only (docs/avatar.md "Gestures"): hands need a source video that shows them.
  return R"({"gestures":{
 "mini_wave_hello":{"default_duration_s":2.6,"mouth_weight":0.4,
  "tracks":{"brow":[[0,0],[0.2,0.85],[0.7,0.6],[1,0]],"smile":[[0,0],[0.2,0.85],[0.85,0.8],[1,0]],
            "head_rot":[[0,0],[0.25,4.5],[0.75,4.5],[1,0]],"head_yaw":[[0,0],[0.3,2.5],[0.75,2.5],[1,0]],
            "head_dy":[[0,0],[0.2,-0.012],[0.85,-0.012],[1,0]]},
  "osc":[{"channel":"head_dy","hz":1.6,"amp":0.012,"phase":0,"from":0.25,"to":0.75}]},
 "talk_head_nod_subtle":{"default_duration_s":2.0,"mouth_weight":0.0,
  "tracks":{"brow":[[0,0],[0.3,0.3],[0.7,0.3],[1,0]],"smile":[[0,0],[0.3,0.3],[0.8,0.3],[1,0]],
            "eye_close":[[0,0],[0.3,0.12],[0.7,0.12],[1,0]]},
  "osc":[{"channel":"head_dy","hz":1.5,"amp":0.035,"phase":0,"from":0.05,"to":0.95},
         {"channel":"head_scale","hz":1.5,"amp":-0.01,"phase":0,"from":0.05,"to":0.95}]},
 "blow_kiss_heart":{"default_duration_s":2.8,"mouth_weight":1.0,
  "tracks":{"mouth_spread":[[0,0],[0.22,-1],[0.52,-1],[0.66,0.25],[1,0]],
            "mouth_open":[[0,0],[0.18,0.04],[0.45,0.04],[0.55,0],[1,0]],
            "mouth_press":[[0,0],[0.22,0.85],[0.5,0.85],[0.6,0],[1,0]],
            "eye_close":[[0,0],[0.25,0.92],[0.5,0.92],[0.64,0],[1,0]],
            "head_rot":[[0,0],[0.28,-5],[0.55,-5],[1,0]],"head_dx":[[0,0],[0.25,0.015],[0.5,0.015],[1,0]],
            "head_scale":[[0,0],[0.25,0],[0.4,0.012],[0.5,0.012],[0.62,0],[1,0]],
            "head_dy":[[0,0],[0.3,0.012],[0.55,0.012],[0.7,-0.008],[1,0]],
            "smile":[[0,0],[0.52,0],[0.7,0.75],[0.9,0.6],[1,0]],"brow":[[0,0],[0.55,0],[0.72,0.4],[1,0]]}},
 "laugh_react":{"default_duration_s":2.4,"mouth_weight":1.0,
  "tracks":{"mouth_open":[[0,0],[0.18,0.62],[0.85,0.62],[1,0]],"mouth_spread":[[0,0],[0.18,0.7],[0.85,0.7],[1,0]],
            "mouth_teeth":[[0,0],[0.12,1],[0.85,1],[1,0]],"smile":[[0,0],[0.15,1],[0.88,1],[1,0]],
            "eye_close":[[0,0],[0.15,0.4],[0.85,0.4],[1,0]],"brow":[[0,0],[0.15,0.4],[0.85,0.4],[1,0]],
            "head_rot":[[0,0],[0.2,-3],[0.8,-3],[1,0]],"head_dy":[[0,0],[0.2,-0.018],[0.8,-0.018],[1,0]],
            "head_scale":[[0,0],[0.2,0.012],[0.8,0.012],[1,0]]},
  "osc":[{"channel":"mouth_open","hz":4.5,"amp":0.22,"phase":0,"from":0.15,"to":0.85},
         {"channel":"head_dy","hz":4.5,"amp":0.012,"phase":0.6,"from":0.15,"to":0.85},
         {"channel":"head_rot","hz":2.25,"amp":1.2,"phase":0,"from":0.15,"to":0.85}]},
 "idle_subtle":{"default_duration_s":4.0,"mouth_weight":0.2,
  "tracks":{"head_yaw":[[0,0],[0.3,3],[0.55,3],[0.8,-2.5],[1,0]],
            "head_rot":[[0,0],[0.3,2],[0.55,2],[0.8,-1.5],[1,0]],
            "eye_close":[[0,0],[0.42,0],[0.45,1],[0.48,0],[1,0]],"smile":[[0,0],[0.3,0.25],[0.8,0.25],[1,0]],
            "brow":[[0,0],[0.6,0],[0.7,0.35],[0.85,0],[1,0]]}}
}})";
}

Result<std::map<std::string, GestureDef>> parse_gestures(std::string_view text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) return Status::Invalid("corrupt .imx: gesture chunk is not JSON");
  auto* g = v.as_object().if_contains("gestures");
  if (!g || !g->is_object()) return Status::Invalid("corrupt .imx: gesture chunk has no gestures");
  std::map<std::string, GestureDef> out;
  for (const auto& [name, body] : g->as_object()) {
    if (!body.is_object())
      return Status::Invalid("corrupt .imx: gesture " + std::string(name) + " is not an object");
    const auto& o = body.as_object();
    GestureDef d;
    d.name = std::string(name);
    if (auto* x = o.if_contains("default_duration_s")) d.default_duration_s = std::clamp(num(*x), 0.2, 60.0);
    if (auto* x = o.if_contains("mouth_weight")) d.mouth_weight = std::clamp(num(*x), 0.0, 1.0);
    if (auto* t = o.if_contains("tracks"); t && t->is_object()) {
      for (const auto& [ch, keys] : t->as_object()) {
        int c = channel_by_name(ch);
        if (c < 0 || !keys.is_array()) continue;
        GestureDef::Track tr{c, {}};
        for (const auto& k : keys.as_array()) {
          if (!k.is_array() || k.as_array().size() != 2) continue;
          double u = std::clamp(num(k.as_array()[0]), 0.0, 1.0);
          double val = num(k.as_array()[1]);
          if (!std::isfinite(val)) continue;
          if (!tr.keys.empty() && u < tr.keys.back().first) continue;  // keys must be ordered
          tr.keys.emplace_back(u, std::clamp(val, -1000.0, 1000.0));
        }
        if (!tr.keys.empty()) d.tracks.push_back(std::move(tr));
      }
    }
    if (auto* os = o.if_contains("osc"); os && os->is_array()) {
      for (const auto& e : os->as_array()) {
        if (!e.is_object()) continue;
        const auto& eo = e.as_object();
        auto* ch = eo.if_contains("channel");
        if (!ch || !ch->is_string()) continue;
        int c = channel_by_name(ch->as_string());
        if (c < 0) continue;
        GestureDef::Osc osc{c, 1, 0, 0};
        if (auto* x = eo.if_contains("hz")) osc.hz = std::clamp(num(*x), 0.0, 20.0);
        if (auto* x = eo.if_contains("amp")) osc.amp = std::clamp(num(*x), -1000.0, 1000.0);
        if (auto* x = eo.if_contains("phase")) osc.phase = std::clamp(num(*x), -100.0, 100.0);
        if (auto* x = eo.if_contains("from")) osc.from = std::clamp(num(*x), 0.0, 1.0);
        if (auto* x = eo.if_contains("to")) osc.to = std::clamp(num(*x), osc.from, 1.0);
        d.oscillators.push_back(osc);
      }
    }
    out.emplace(d.name, std::move(d));
  }
  return out;
}

uint32_t evaluate_gesture(const GestureDef& g, double u, double t, Pose& out) {
  uint32_t set = 0;
  u = std::clamp(u, 0.0, 1.0);
  for (const auto& tr : g.tracks) {
    double v = tr.keys.front().second;
    if (u >= tr.keys.back().first) {
      v = tr.keys.back().second;
    } else {
      for (size_t i = 1; i < tr.keys.size(); ++i) {
        if (u < tr.keys[i].first) {
          auto [u0, v0] = tr.keys[i - 1];
          auto [u1, v1] = tr.keys[i];
          double x = u1 > u0 ? (u - u0) / (u1 - u0) : 1;
          v = v0 + (v1 - v0) * smooth(x);
          break;
        }
      }
    }
    channel(out, tr.channel) = v;
    set |= 1u << tr.channel;
  }
  for (const auto& o : g.oscillators) {
    if (u < o.from || u > o.to) continue;
    // Taper over the first/last 10% of the window so oscillations start and stop smoothly.
    double span = std::max(1e-6, o.to - o.from);
    double x = (u - o.from) / span;
    double taper = smooth(std::clamp(std::min(x, 1 - x) / 0.1, 0.0, 1.0));
    channel(out, o.channel) += taper * o.amp * std::sin(2 * std::numbers::pi * o.hz * t + o.phase);
    set |= 1u << o.channel;
  }
  return set;
}

}  // namespace imago::avatar::internal
