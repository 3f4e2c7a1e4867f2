#include "billing/operations.h"

#include <cmath>

#include "billing/prices.h"
#include "util/random.h"

namespace imago::billing {

namespace {

constexpr MinuteRate kAllRates[] = {MinuteRate::kVoiceChat,       MinuteRate::kCameraChat,
                                    MinuteRate::kEssenceCloud,    MinuteRate::kEssenceSelfHosted,
                                    MinuteRate::kExpressionCloud, MinuteRate::kExpressionSelfHosted};

LedgerOp charge(const std::string& account_id, int64_t amount, std::string reason, std::string key,
                std::optional<std::string> reference) {
  LedgerOp op;
  op.account_id = account_id;
  op.kind = LedgerKind::kCharge;
  op.amount = amount;
  op.reason = std::move(reason);
  op.operation_key = std::move(key);
  op.reference = std::move(reference);
  return op;
}

static_assert(std::size(kPerMinutePrices) == std::size(kAllRates), "one MinuteRate per priced feature");

}  // namespace

std::string_view minute_rate_name(MinuteRate r) {
  // The per-minute table lists the rates in enum order.
  return kPerMinutePrices[static_cast<size_t>(r)].feature;
}

std::optional<MinuteRate> parse_minute_rate(std::string_view name) {
  for (MinuteRate r : kAllRates) {
    if (minute_rate_name(r) == name) return r;
  }
  return std::nullopt;
}

int64_t credits_per_minute(MinuteRate r) {
  return kPerMinutePrices[static_cast<size_t>(r)].credits_per_minute;
}

int64_t billable_minutes(double seconds) {
  if (!(seconds > 0)) return 0;
  return static_cast<int64_t>(std::ceil(seconds / 60.0));
}

LedgerOp agent_generation_charge(const std::string& account_id, const std::string& job_id,
                                 const std::string& agent_code) {
  return charge(account_id, kAgentGenerationCredits, "agent_generation", "agent_generation:" + job_id,
                agent_code);
}

LedgerOp dynamics_generation_charge(const std::string& account_id, const std::string& job_id,
                                    const std::string& agent_code) {
  return charge(account_id, kDynamicsGenerationCredits, "dynamics_generation",
                "dynamics_generation:" + job_id, agent_code);
}

LedgerOp live_session_minute(const std::string& account_id, const std::string& session_id,
                             int64_t minute_index, MinuteRate rate) {
  return charge(account_id, credits_per_minute(rate), "live_minute:" + std::string(minute_rate_name(rate)),
                "live_minute:" + session_id + ":" + std::to_string(minute_index), session_id);
}

LedgerOp video_render_minutes(const std::string& account_id, const std::string& video_job_id, int64_t minutes,
                              MinuteRate rate) {
  return charge(account_id, minutes * credits_per_minute(rate),
                "video_render:" + std::string(minute_rate_name(rate)) + ":" + std::to_string(minutes) + "min",
                "video_render:" + video_job_id, video_job_id);
}

LedgerOp refund_of(const LedgerOp& charge, std::string_view why) {
  LedgerOp op;
  op.account_id = charge.account_id;
  op.kind = LedgerKind::kRefund;
  op.amount = charge.amount;
  std::string reason = "refund: " + std::string(why);
  if (reason.size() > 320) reason.resize(320);
  op.reason = std::move(reason);
  op.operation_key = "refund:" + charge.operation_key;
  op.reference = charge.reference;
  return op;
}

LedgerOp operator_topup(const std::string& account_id, int64_t amount, std::string reason,
                        std::string_view idempotency_key) {
  LedgerOp op;
  op.account_id = account_id;
  op.kind = LedgerKind::kTopup;
  op.amount = amount;
  op.reason = std::move(reason);
  op.operation_key =
      "admin-topup:" + (idempotency_key.empty() ? random_base62(24) : std::string(idempotency_key));
  return op;
}

LedgerOp initial_credits(const std::string& account_id, int64_t amount) {
  LedgerOp op;
  op.account_id = account_id;
  op.kind = LedgerKind::kTopup;
  op.amount = amount;
  op.reason = "initial credits";
  op.operation_key = "account-created";
  return op;
}

}  // namespace imago::billing
