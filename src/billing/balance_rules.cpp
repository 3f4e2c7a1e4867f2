#include "billing/balance_rules.h"

#include <algorithm>

namespace imago {

std::string_view ledger_kind_name(LedgerKind k) {
  switch (k) {
    case LedgerKind::kTopup:
      return "topup";
    case LedgerKind::kGrant:
      return "grant";
    case LedgerKind::kCharge:
      return "charge";
    case LedgerKind::kRefund:
      return "refund";
  }
  return "charge";
}

std::optional<LedgerKind> parse_ledger_kind(std::string_view s) {
  for (auto k : {LedgerKind::kTopup, LedgerKind::kGrant, LedgerKind::kCharge, LedgerKind::kRefund}) {
    if (ledger_kind_name(k) == s) return k;
  }
  return std::nullopt;
}

namespace billing {

Status validate(const LedgerOp& op) {
  if (op.account_id.empty()) return Status::Invalid("account is required");
  if (op.amount <= 0 || op.amount > kMaxCreditsPerOperation) {
    return Status::Invalid("Credit amount must be a positive integer");
  }
  if (op.operation_key.empty()) return Status::Invalid("operation key is required");
  return Status::Ok();
}

int64_t signed_amount(const LedgerOp& op) {
  return op.kind == LedgerKind::kCharge ? -op.amount : op.amount;
}

Result<Applied> apply_to_balance(const Balance& before, const LedgerOp& op) {
  if (Status st = validate(op); !st.ok()) return st;
  Applied a;
  a.after = before;
  a.signed_amount = signed_amount(op);
  switch (op.kind) {
    case LedgerKind::kCharge: {
      if (before.total() < op.amount) return Status::InsufficientFunds("Insufficient credits");
      const int64_t from_plan = std::min(before.plan_credits, op.amount);
      a.after.plan_credits -= from_plan;
      a.after.topup_credits -= op.amount - from_plan;
      break;
    }
    case LedgerKind::kGrant:
      a.after.plan_credits += op.amount;
      break;
    case LedgerKind::kTopup:
    case LedgerKind::kRefund:
      a.after.topup_credits += op.amount;
      break;
  }
  return a;
}

Status check_replay(const LedgerEntry& recorded, const LedgerOp& op) {
  if (recorded.kind != op.kind || recorded.amount != signed_amount(op)) {
    return Status::Conflict("Operation key '" + op.operation_key +
                            "' was already used for a different operation");
  }
  return Status::Ok();
}

LedgerEntry make_entry(const LedgerOp& op, const Applied& applied, std::string id, int64_t now_s) {
  LedgerEntry e;
  e.id = std::move(id);
  e.account_id = op.account_id;
  e.kind = op.kind;
  e.amount = applied.signed_amount;
  e.balance_after = applied.after.total();
  e.reason = op.reason;
  e.operation_key = op.operation_key;
  e.reference = op.reference;
  e.created_at = now_s;
  return e;
}

}  // namespace billing
}  // namespace imago
