// The credit ledger (SPEC 8.6): append-only entries, a balance that never goes negative, and an
// operation key per entry so a retried operation never charges twice.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/status.h"

namespace imago {

enum class LedgerKind { kTopup, kGrant, kCharge, kRefund };
std::string_view ledger_kind_name(LedgerKind k);

// Credit buckets of an account: plan credits (granted by the plan, spent first) and top-up
// credits (bought). balance = plan + topup.
struct Balance {
  int64_t plan_credits = 0;
  int64_t topup_credits = 0;
  int64_t total() const { return plan_credits + topup_credits; }
};

struct LedgerEntry {
  std::string id;            // "led_..."
  std::string account_id;
  LedgerKind kind = LedgerKind::kCharge;
  int64_t amount = 0;        // signed: charges negative, top-ups/grants/refunds positive
  int64_t balance_after = 0;
  std::string reason;        // e.g. "agent_generation", "refund: generation failed: no face"
  std::string operation_key; // unique per account; retries with the same key are no-ops
  std::optional<std::string> reference;  // what it paid for, e.g. the agent code
  int64_t created_at = 0;    // Unix seconds
};

// One movement of credits. For charges `amount` is the positive number of credits taken.
struct LedgerOp {
  std::string account_id;
  LedgerKind kind = LedgerKind::kCharge;
  int64_t amount = 0;
  std::string reason;
  std::string operation_key;
  std::optional<std::string> reference;
  // Top-ups/grants: which bucket receives them (plan credits for kGrant, top-up for kTopup).
};

struct LedgerPage {
  std::vector<LedgerEntry> entries;  // newest first
  int64_t total = 0;
};

class LedgerStore {
 public:
  virtual ~LedgerStore() = default;
  // Applies the operation once. A repeated operation_key returns the entry recorded the first
  // time (idempotent). A charge larger than the balance fails with kInsufficientFunds
  // ("Insufficient credits") and records nothing.
  virtual Result<LedgerEntry> apply(const LedgerOp& op) = 0;
  virtual Result<Balance> balance(const std::string& account_id) = 0;
  virtual Result<LedgerPage> list(const std::string& account_id, int limit, int offset) = 0;
};

}  // namespace imago
