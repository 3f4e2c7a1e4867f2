#include "live/minute_billing.h"

#include <algorithm>

#include "billing/prices.h"

namespace imago::live {

namespace {
constexpr std::string_view kLiveTypes[] = {"essence_cloud", "expression_cloud", "essence_self_hosted",
                                           "expression_self_hosted"};
}

bool is_live_billing_type(std::string_view t) {
  return std::find(std::begin(kLiveTypes), std::end(kLiveTypes), t) != std::end(kLiveTypes);
}

int64_t live_rate(std::string_view t) {
  if (!is_live_billing_type(t)) return 0;
  for (const auto& p : billing::kPerMinutePrices) {
    if (p.feature == t) return p.credits_per_minute;
  }
  return 0;
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
  return "live:" + std::string(session_id) + ":" + std::to_string(minute);
}

Result<LedgerEntry> charge_live_minute(LedgerStore& ledger, const std::string& account_id,
                                       const std::string& session_id, int64_t minute,
                                       std::string_view billing_type, const std::string& agent_code) {
  const int64_t rate = live_rate(billing_type);
  if (rate <= 0) return Status::Invalid("unknown live billing type " + std::string(billing_type));
  LedgerOp op;
  op.account_id = account_id;
  op.kind = LedgerKind::kCharge;
  op.amount = rate;
  op.reason = "live_minute:" + std::string(billing_type);
  op.operation_key = minute_operation_key(session_id, minute);
  op.reference = agent_code.empty() ? session_id : agent_code + "/" + session_id;
  return ledger.apply(op);
}

}  // namespace imago::live
