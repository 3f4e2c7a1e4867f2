// The monthly live spend cap (docs/billing.md, "Live spend cap"): credits an account lets its live
// sessions spend per calendar month (UTC). The account holder and the operator each may set one;
// the lower of the two applies. The cap is checked inside the same ledger write that charges a
// live minute, so no number of nodes can spend past it (store backends call
// check_live_spend_cap with the month's spend read under the account's row lock).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "billing/ledger.h"
#include "util/status.h"

namespace imago::billing {

// Every charge whose reason starts with this is live usage (live_session_minute's reasons).
inline constexpr std::string_view kLiveUsageReasonPrefix = "live_minute:";
// The largest cap that can be set (the same guard as one ledger operation).
inline constexpr int64_t kMaxLiveSpendCap = 1'000'000'000;
// The error code the API answers with (402) when the cap refuses a minute, a token or a join.
inline constexpr std::string_view kSpendCapErrorCode = "SPEND_CAP_REACHED";

enum class CapSetter { kAccount, kOperator };
std::string_view cap_setter_name(CapSetter who);  // "account", "operator"

struct LiveSpendCap {
  std::optional<int64_t> account;    // set by the account holder (PUT /v1/spend-cap)
  std::optional<int64_t> operator_;  // set by the operator (admin API, imagod admin)
  // The cap that applies: the lower of the two; nullopt when neither is set (no cap).
  std::optional<int64_t> effective() const;
  bool operator==(const LiveSpendCap&) const = default;
};

// The calendar month (UTC) holding a time: [start_s, end_s) and its name "YYYY-MM".
struct MonthWindow {
  int64_t start_s = 0;
  int64_t end_s = 0;
  std::string label;
};
MonthWindow utc_month(int64_t now_s);

// What an account's live sessions may still spend this month.
struct LiveSpend {
  LiveSpendCap cap;
  MonthWindow month;
  int64_t spent = 0;  // credits charged for live minutes since month.start_s
  // Credits left under the effective cap (never negative); nullopt without a cap.
  std::optional<int64_t> remaining() const;
};

// A SQL LIKE pattern (escape character backslash) matching the reasons of live usage, for the month's sum.
std::string live_usage_like_pattern();

// Whether `op` counts toward the live spend cap (a charge for a live-session minute).
bool counts_toward_live_cap(const LedgerOp& op);

// Ok when `amount` more credits of live usage fit under the cap after `spent` this month; else
// kInsufficientFunds with a message starting "Monthly live spend cap reached" (is_spend_cap_refusal).
Status check_live_spend_cap(const LiveSpendCap& cap, int64_t spent, int64_t amount);
bool is_spend_cap_refusal(const Status& st);

// A cap value from a client: an integer 0..kMaxLiveSpendCap (0 stops all live usage).
Status validate_live_spend_cap(int64_t credits);

}  // namespace imago::billing
