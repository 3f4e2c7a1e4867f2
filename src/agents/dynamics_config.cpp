#include "agents/dynamics_config.h"

#include <algorithm>

#include "avatar/clip.h"
#include "util/strings.h"

namespace imago::agents {

const boost::json::object& default_dynamics_config() {
  static const boost::json::object cfg = {
      {"enabled", false},
      {"active_model", "talking"},
      {"keywords",
       {{"hello", "mini_wave_hello"},
        {"hi", "mini_wave_hello"},
        {"hey", "mini_wave_hello"},
        {"welcome", "mini_wave_hello"},
        {"goodbye", "mini_wave_hello"},
        {"bye", "mini_wave_hello"},
        {"yes", "talk_head_nod_subtle"},
        {"agree", "talk_head_nod_subtle"},
        {"exactly", "talk_head_nod_subtle"},
        {"of course", "talk_head_nod_subtle"},
        {"love", "blow_kiss_heart"},
        {"kiss", "blow_kiss_heart"},
        {"thank you", "blow_kiss_heart"},
        {"haha", "laugh_react"},
        {"funny", "laugh_react"},
        {"lol", "laugh_react"},
        {"joke", "laugh_react"}}},
      {"idle_gesture", "idle_subtle"},
      {"movement_duration", 5},
  };
  return cfg;
}

void merge_patch(boost::json::object& target, const boost::json::object& patch) {
  for (const auto& kv : patch) {
    if (kv.value().is_null()) {
      target.erase(kv.key());
    } else if (kv.value().is_object() && target.contains(kv.key()) && target.at(kv.key()).is_object()) {
      merge_patch(target.at(kv.key()).as_object(), kv.value().as_object());
    } else {
      target[kv.key()] = kv.value();
    }
  }
}

namespace {
bool known_gesture(std::string_view g) {
  const auto& names = avatar::gesture_names();
  return std::find(names.begin(), names.end(), g) != names.end();
}
}  // namespace

Status validate_dynamics_config(const boost::json::object& c) {
  if (auto* v = c.if_contains("enabled"); v && !v->is_bool())
    return Status::Invalid("dynamics.enabled must be a boolean");
  if (auto* v = c.if_contains("active_model")) {
    if (!v->is_string() || (v->as_string() != "dynamics" && v->as_string() != "talking")) {
      return Status::Invalid("dynamics.active_model must be 'dynamics' or 'talking'");
    }
  }
  if (auto* v = c.if_contains("keywords")) {
    if (!v->is_object())
      return Status::Invalid("dynamics.keywords must be an object of keyword -> gesture name");
    if (v->as_object().size() > 200) return Status::Invalid("dynamics.keywords has more than 200 entries");
    for (const auto& kv : v->as_object()) {
      if (kv.key().empty() || kv.key().size() > 100)
        return Status::Invalid("dynamics.keywords: keywords are 1-100 characters");
      if (!kv.value().is_string() || !known_gesture(kv.value().as_string())) {
        return Status::Invalid(
            "dynamics.keywords." + std::string(kv.key()) + " must name a gesture (" +
            "mini_wave_hello, talk_head_nod_subtle, blow_kiss_heart, laugh_react, idle_subtle)");
      }
    }
  }
  if (auto* v = c.if_contains("idle_gesture")) {
    if (!v->is_string() || !known_gesture(v->as_string()))
      return Status::Invalid("dynamics.idle_gesture must name a gesture");
  }
  if (auto* v = c.if_contains("movement_duration")) {
    if (!v->is_number() || v->to_number<double>() <= 0 || v->to_number<double>() > 30) {
      return Status::Invalid("dynamics.movement_duration must be a number in (0, 30]");
    }
  }
  return Status::Ok();
}

boost::json::object effective_dynamics_config(const AgentRecord& agent) {
  boost::json::object cfg = default_dynamics_config();
  boost::system::error_code ec;
  auto stored = boost::json::parse(agent.dynamics_config, ec);
  if (!ec && stored.is_object()) merge_patch(cfg, stored.as_object());
  return cfg;
}

std::string gesture_for_text(const boost::json::object& config, std::string_view text) {
  auto* kw = config.if_contains("keywords");
  if (!kw || !kw->is_object()) return "";
  std::string lower = to_lower(text);
  size_t best = std::string::npos;
  std::string gesture;
  for (const auto& kv : kw->as_object()) {
    if (!kv.value().is_string()) continue;
    std::string key = to_lower(kv.key());
    // Whole words only: "hi" must not fire inside "this".
    for (size_t pos = lower.find(key); pos != std::string::npos; pos = lower.find(key, pos + 1)) {
      bool left = pos == 0 || !std::isalnum(static_cast<unsigned char>(lower[pos - 1]));
      size_t end = pos + key.size();
      bool right = end >= lower.size() || !std::isalnum(static_cast<unsigned char>(lower[end]));
      if (left && right) {
        if (pos < best) {
          best = pos;
          gesture = std::string(kv.value().as_string());
        }
        break;
      }
    }
  }
  return gesture;
}

}  // namespace imago::agents
