#include "billing/balance_rules.h"

#include <gtest/gtest.h>

#include "billing/operations.h"

namespace imago::billing {
namespace {

LedgerOp op_of(LedgerKind kind, int64_t amount) {
  LedgerOp op;
  op.account_id = "usr_1";
  op.kind = kind;
  op.amount = amount;
  op.operation_key = "k";
  return op;
}

TEST(BalanceRules, ChargeSpendsPlanCreditsFirst) {
  auto r = apply_to_balance({100, 500}, op_of(LedgerKind::kCharge, 250));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->after, (Balance{0, 350}));
  EXPECT_EQ(r->signed_amount, -250);
}

TEST(BalanceRules, ChargeWithinPlanCreditsLeavesTopupsAlone) {
  auto r = apply_to_balance({300, 40}, op_of(LedgerKind::kCharge, 250));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->after, (Balance{50, 40}));
}

TEST(BalanceRules, ChargeOfExactlyTheBalanceEmptiesIt) {
  auto r = apply_to_balance({100, 150}, op_of(LedgerKind::kCharge, 250));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->after.total(), 0);
}

TEST(BalanceRules, ChargeBeyondTheBalanceIsRefused) {
  auto r = apply_to_balance({100, 149}, op_of(LedgerKind::kCharge, 250));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInsufficientFunds);
  EXPECT_EQ(r.status().message(), "Insufficient credits");
}

TEST(BalanceRules, GrantsFillPlanCreditsTopupsAndRefundsFillTopups) {
  EXPECT_EQ(apply_to_balance({1, 2}, op_of(LedgerKind::kGrant, 10))->after, (Balance{11, 2}));
  EXPECT_EQ(apply_to_balance({1, 2}, op_of(LedgerKind::kTopup, 10))->after, (Balance{1, 12}));
  EXPECT_EQ(apply_to_balance({1, 2}, op_of(LedgerKind::kRefund, 10))->after, (Balance{1, 12}));
  EXPECT_EQ(apply_to_balance({1, 2}, op_of(LedgerKind::kRefund, 10))->signed_amount, 10);
}

TEST(BalanceRules, MalformedOperationsAreInvalid) {
  EXPECT_EQ(apply_to_balance({}, op_of(LedgerKind::kTopup, 0)).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(apply_to_balance({}, op_of(LedgerKind::kTopup, -5)).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(apply_to_balance({}, op_of(LedgerKind::kTopup, kMaxCreditsPerOperation + 1)).status().code(),
            Code::kInvalidArgument);
  auto no_key = op_of(LedgerKind::kTopup, 5);
  no_key.operation_key.clear();
  EXPECT_EQ(apply_to_balance({}, no_key).status().code(), Code::kInvalidArgument);
  auto no_account = op_of(LedgerKind::kTopup, 5);
  no_account.account_id.clear();
  EXPECT_EQ(apply_to_balance({}, no_account).status().code(), Code::kInvalidArgument);
}

TEST(BalanceRules, ReplayMustDescribeTheSameOperation) {
  auto op = op_of(LedgerKind::kCharge, 250);
  auto applied = apply_to_balance({0, 1000}, op);
  ASSERT_TRUE(applied.ok());
  LedgerEntry e = make_entry(op, *applied, "led_1", 42);
  EXPECT_EQ(e.amount, -250);
  EXPECT_EQ(e.balance_after, 750);
  EXPECT_EQ(e.created_at, 42);
  EXPECT_TRUE(check_replay(e, op).ok());
  EXPECT_EQ(check_replay(e, op_of(LedgerKind::kCharge, 251)).code(), Code::kConflict);
  EXPECT_EQ(check_replay(e, op_of(LedgerKind::kRefund, 250)).code(), Code::kConflict);
}

TEST(BalanceRules, KindNamesRoundTrip) {
  for (auto k : {LedgerKind::kTopup, LedgerKind::kGrant, LedgerKind::kCharge, LedgerKind::kRefund}) {
    EXPECT_EQ(parse_ledger_kind(ledger_kind_name(k)), k);
  }
  EXPECT_FALSE(parse_ledger_kind("debit").has_value());
}

}  // namespace
}  // namespace imago::billing
