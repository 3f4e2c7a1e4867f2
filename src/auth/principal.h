// Who is calling: set by the authentication middleware, read by handlers.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "limits/plan.h"

namespace imago {

struct Principal {
  std::string account_id;  // "usr_..." : the SPEC's user_id
  std::string account_name;
  std::string key_id;  // "key_..."
  std::string key_alias;
  Plan plan = Plan::kFree;
  std::optional<PlanLimits> custom_limits;  // enterprise overrides
  // Set instead of the key fields when a signed-in dashboard member is calling.
  std::string member_id;   // "mem_..."
  std::string session_id;  // "ses_..."
};

}  // namespace imago
