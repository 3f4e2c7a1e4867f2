// Subscription plans and the per-minute request limits of SPEC 8.1.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace imago {

enum class Plan { kFree, kCreator, kPro, kBusiness, kEnterprise };

// Cost tiers of SPEC 8.1. kExempt routes never touch a bucket (SPEC 8.2).
enum class Tier { kGenerate, kWrite, kRead, kExempt };

struct PlanLimits {
  int generate_per_min = 0;
  int write_per_min = 0;
  int read_per_min = 0;
  // Enterprise only: the account's own storage quota in bytes (0: the plan's, limits/storage_quota.h).
  int64_t storage_bytes = 0;
  int for_tier(Tier t) const;
};

std::string_view plan_name(Plan p);
std::optional<Plan> parse_plan(std::string_view s);
std::string_view tier_name(Tier t);
// The SPEC 8.1 table.
PlanLimits default_limits(Plan p);

}  // namespace imago
