#include "limits/plan.h"

namespace imago {

int PlanLimits::for_tier(Tier t) const {
  switch (t) {
    case Tier::kGenerate:
      return generate_per_min;
    case Tier::kWrite:
      return write_per_min;
    case Tier::kRead:
      return read_per_min;
    case Tier::kExempt:
      return 0;
  }
  return 0;
}

std::string_view plan_name(Plan p) {
  switch (p) {
    case Plan::kFree:
      return "free";
    case Plan::kCreator:
      return "creator";
    case Plan::kPro:
      return "pro";
    case Plan::kBusiness:
      return "business";
    case Plan::kEnterprise:
      return "enterprise";
  }
  return "free";
}

std::optional<Plan> parse_plan(std::string_view s) {
  if (s == "free") return Plan::kFree;
  if (s == "creator") return Plan::kCreator;
  if (s == "pro") return Plan::kPro;
  if (s == "business") return Plan::kBusiness;
  if (s == "enterprise") return Plan::kEnterprise;
  return std::nullopt;
}

std::string_view tier_name(Tier t) {
  switch (t) {
    case Tier::kGenerate:
      return "generate";
    case Tier::kWrite:
      return "write";
    case Tier::kRead:
      return "read";
    case Tier::kExempt:
      return "exempt";
  }
  return "exempt";
}

PlanLimits default_limits(Plan p) {
  switch (p) {
    case Plan::kFree:
      return {4, 30, 120};
    case Plan::kCreator:
      return {10, 60, 240};
    case Plan::kPro:
      return {30, 180, 720};
    case Plan::kBusiness:
      return {60, 360, 1440};
    case Plan::kEnterprise:
      return {120, 720, 2880};
  }
  return {4, 30, 120};
}

}  // namespace imago
