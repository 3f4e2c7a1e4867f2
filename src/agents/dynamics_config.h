// Per-agent dynamics configuration (SPEC 4.12): stored as a JSON object, merged with each PUT
// (RFC 7386 merge patch: objects merge, null deletes a key), read over these defaults. Live
// sessions use `enabled` / `active_model` to pick the model and `keywords` to trigger gestures.
#pragma once
#include <boost/json.hpp>
#include <string>

#include "store/agent_store.h"
#include "util/status.h"

namespace imago::agents {

// {"enabled": false, "active_model": "talking", "keywords": {"hello": "mini_wave_hello", ...},
//  "idle_gesture": "idle_subtle", "movement_duration": 5}
const boost::json::object& default_dynamics_config();

// RFC 7386 merge of `patch` into `target`.
void merge_patch(boost::json::object& target, const boost::json::object& patch);

// Checks the known keys of a (merged) configuration; unknown keys are kept as given.
Status validate_dynamics_config(const boost::json::object& config);

// The agent's stored configuration over the defaults.
boost::json::object effective_dynamics_config(const AgentRecord& agent);

// The gesture a keyword mapping picks for `text` (first keyword found, case-insensitive), or "".
std::string gesture_for_text(const boost::json::object& config, std::string_view text);

}  // namespace imago::agents
