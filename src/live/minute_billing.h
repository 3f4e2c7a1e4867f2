// Paying for one minute of a live session (SPEC 8.6). The one place a session touches the ledger,
// so it can move onto src/billing's named live-session-minute operation without touching rooms.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "store/ledger_store.h"
#include "util/status.h"

namespace imago::live {

// Credits per minute for a billing type: essence_cloud 2, expression_cloud 4,
// essence_self_hosted 1, expression_self_hosted 2 (billing/prices.h). 0 for anything else.
int64_t live_rate(std::string_view billing_type);
// The cheapest per-minute avatar rate (what a runtime token requires as a balance).
int64_t cheapest_live_rate();
bool is_live_billing_type(std::string_view billing_type);

// "live_minute:<session_id>:<minute>" (billing/operations.h): a retried or duplicated tick never
// charges twice.
std::string minute_operation_key(std::string_view session_id, int64_t minute);

// Charges minute `minute` (0-based) of `session_id`. kInsufficientFunds when the balance cannot
// pay it; the same key again returns the first entry.
Result<LedgerEntry> charge_live_minute(LedgerStore& ledger, const std::string& account_id,
                                       const std::string& session_id, int64_t minute,
                                       std::string_view billing_type, const std::string& agent_code);

}  // namespace imago::live
