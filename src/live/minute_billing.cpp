#include "live/minute_billing.h"

#include <algorithm>

#include "billing/operations.h"

namespace imago::live {

namespace {
constexpr std::string_view kLiveTypes[] = {"essence_cloud",       "expression_cloud",
                                           "essence_self_hosted", "expression_self_hosted",
                                           "voice_chat",          "camera_chat"};
}  // namespace

bool is_live_billing_type(std::string_view t) {
  return std::find(std::begin(kLiveTypes), std::end(kLiveTypes), t) != std::end(kLiveTypes);
}

std::string_view cloud_billing_type(std::string_view model, ChatMode mode) {
  if (mode == ChatMode::kVoiceChat) return "voice_chat";
  if (mode == ChatMode::kCameraChat) return "camera_chat";
  return model == "expression" ? "expression_cloud" : "essence_cloud";
}

Result<ChatMode> chat_mode_for_join(const std::optional<std::string_view>& billing_type,
                                    bool model_sees_images) {
  if (!billing_type) return ChatMode::kAvatar;
  if (*billing_type == "voice_chat") return ChatMode::kVoiceChat;
  if (*billing_type != "camera_chat") {
    return Status::Invalid("Query parameter 'billing_type' must be 'voice_chat' or 'camera_chat'");
  }
  if (!model_sees_images) {
    return Status::Invalid(
        "billing_type 'camera_chat' needs a language model that accepts images; this server has none "
        "(the operator sets --llm-base-url and --llm-vision)");
  }
  return ChatMode::kCameraChat;
}

int64_t live_rate(std::string_view t) {
  if (!is_live_billing_type(t)) return 0;
  auto rate = billing::parse_minute_rate(t);
  return rate ? billing::credits_per_minute(*rate) : 0;
}

int64_t cheapest_live_rate() {
  int64_t best = 0;
  for (auto t : kLiveTypes) {
    int64_t r = live_rate(t);
    if (r > 0 && (best == 0 || r < best)) best = r;
  }
  return best;
}

std::string minute_operation_key(std::string_view session_id, int64_t minute) {
  return billing::live_session_minute("", std::string(session_id), minute, billing::MinuteRate::kEssenceCloud)
      .operation_key;
}

Result<LedgerEntry> charge_live_minute(LedgerStore& ledger, const std::string& account_id,
                                       const std::string& session_id, int64_t minute,
                                       std::string_view billing_type, const std::string& agent_code) {
  (void)agent_code;
  auto rate = is_live_billing_type(billing_type) ? billing::parse_minute_rate(billing_type) : std::nullopt;
  if (!rate) return Status::Invalid("unknown live billing type " + std::string(billing_type));
  // The named operation of src/billing: key live_minute:<session>:<minute>, reason live_minute:<rate>.
  return ledger.apply(billing::live_session_minute(account_id, session_id, minute, *rate));
}

Status live_cap_allows_minute(LedgerStore& ledger, const std::string& account_id, int64_t rate) {
  auto spend = ledger.live_spend(account_id);
  if (!spend.ok()) return spend.status();
  return billing::check_live_spend_cap(spend->cap, spend->spent, rate);
}

}  // namespace imago::live
