// The arithmetic of the ledger, free of any database: whether an operation may be applied to a
// balance and what the balance becomes. Every store backend calls these inside its transaction and
// writes the result with a conditional update (docs/billing.md), so the rules live once.
#pragma once
#include <cstdint>
#include <string>

#include "billing/ledger.h"
#include "util/status.h"

namespace imago::billing {

// The largest amount one operation may move (a guard against typos and overflow).
inline constexpr int64_t kMaxCreditsPerOperation = 1'000'000'000;

// kInvalidArgument for a malformed operation (no account, no key, amount out of range).
Status validate(const LedgerOp& op);

// The entry's signed amount: charges negative, everything else positive.
int64_t signed_amount(const LedgerOp& op);

struct Applied {
  Balance after;
  int64_t signed_amount = 0;
};

// Applies `op` to `before`. Charges spend plan credits first, then top-up credits (plan credits
// come with the subscription, top-ups were paid for). Grants add plan credits; top-ups and refunds
// add top-up credits (a refund must survive the next plan reset). kInsufficientFunds
// ("Insufficient credits") when a charge exceeds the balance; the balance never goes negative.
Result<Applied> apply_to_balance(const Balance& before, const LedgerOp& op);

// Whether a recorded entry is the same operation as `op` (a reused key with a different kind or
// amount is a client bug: kConflict rather than a silent replay).
Status check_replay(const LedgerEntry& recorded, const LedgerOp& op);

// The entry to record for `op` once applied.
LedgerEntry make_entry(const LedgerOp& op, const Applied& applied, std::string id, int64_t now_s);

}  // namespace imago::billing
