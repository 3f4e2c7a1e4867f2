// The credit ledger (SPEC 8.6): append-only entries, a balance that never goes negative, and an
// operation key per entry so a retried operation never charges twice. The operations and the
// balance arithmetic live in src/billing; a backend only persists them (docs/billing.md).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "billing/ledger.h"
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
};

}  // namespace imago
