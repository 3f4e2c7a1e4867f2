// The credit ledger (SPEC 8.6): append-only entries, a balance that never goes negative, and an
// operation key per entry so a retried operation never charges twice. The operations and the
// balance arithmetic live in src/billing; a backend only persists them (docs/billing.md).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "billing/ledger.h"
#include "billing/spend_cap.h"
#include "util/status.h"

namespace imago {

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

  // Monthly live spend cap (billing/spend_cap.h). apply() refuses a live-minute charge that would
  // take the month's live spend past the account's effective cap (is_spend_cap_refusal, nothing
  // recorded); the cap and the month's spend are read in the same transaction as the charge,
  // under the lock that serializes the account's credit movements, so concurrent writers (threads
  // or nodes) never overshoot it together.
  //
  // The caps and what live minutes cost in the current calendar month (UTC, the store's clock).
  virtual Result<billing::LiveSpend> live_spend(const std::string& account_id) = 0;
  // Sets (credits) or clears (nullopt) the cap of `who`. kNotFound for an unknown account.
  virtual Status set_live_spend_cap(const std::string& account_id, billing::CapSetter who,
                                    std::optional<int64_t> credits) = 0;
};

}  // namespace imago
