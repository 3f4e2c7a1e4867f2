// Credit prices of SPEC 8.6. The one place that says what anything costs.
#pragma once
#include <cstdint>
#include <string_view>

namespace imago::billing {

inline constexpr int64_t kCreditsPerDollar = 100;

// One-time operations.
inline constexpr int64_t kAgentGenerationCredits = 250;
inline constexpr int64_t kDynamicsGenerationCredits = 250;

// Per-minute features, in the order of the credit summary's minutes_estimate.
struct PerMinutePrice {
  std::string_view feature;  // key in minutes_estimate
  int64_t credits_per_minute;
};
inline constexpr PerMinutePrice kPerMinutePrices[] = {
    {"voice_chat", 10},         {"camera_chat", 30},     {"essence_cloud", 2},
    {"essence_self_hosted", 1}, {"expression_cloud", 4}, {"expression_self_hosted", 2},
};

}  // namespace imago::billing
