// The vocabulary of money (SPEC 8.6): what a ledger operation is, what an entry records and the two
// credit buckets of an account. Store backends persist these; only src/billing builds them.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace imago {

enum class LedgerKind { kTopup, kGrant, kCharge, kRefund };
std::string_view ledger_kind_name(LedgerKind k);
std::optional<LedgerKind> parse_ledger_kind(std::string_view s);

// Credit buckets of an account: plan credits (granted by the plan, spent first) and top-up credits
// (bought). balance = plan + topup.
struct Balance {
  int64_t plan_credits = 0;
  int64_t topup_credits = 0;
  int64_t total() const { return plan_credits + topup_credits; }
  bool operator==(const Balance&) const = default;
};

// One movement of credits, built by the named operations of billing/operations.h. `amount` is
// the positive number of credits moved; the kind says in which direction.
struct LedgerOp {
  std::string account_id;
  LedgerKind kind = LedgerKind::kCharge;
  int64_t amount = 0;
  std::string reason;
  std::string operation_key;             // unique per account: a replay returns the first entry
  std::optional<std::string> reference;  // what it paid for, e.g. the agent code
};

// What the ledger recorded for an operation.
struct LedgerEntry {
  std::string id;  // "led_..."
  std::string account_id;
  LedgerKind kind = LedgerKind::kCharge;
  int64_t amount = 0;  // signed: charges negative, top-ups/grants/refunds positive
  int64_t balance_after = 0;
  std::string reason;
  std::string operation_key;
  std::optional<std::string> reference;
  int64_t created_at = 0;  // Unix seconds
};

}  // namespace imago
