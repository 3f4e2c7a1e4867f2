#include "billing/operations.h"

#include <gtest/gtest.h>

#include "billing/prices.h"

namespace imago::billing {
namespace {

TEST(BillingOperations, GenerationChargesAreKeyedByJob) {
  auto a = agent_generation_charge("usr_1", "job_1", "A12BCD3456");
  EXPECT_EQ(a.kind, LedgerKind::kCharge);
  EXPECT_EQ(a.amount, kAgentGenerationCredits);
  EXPECT_EQ(a.operation_key, "agent_generation:job_1");
  EXPECT_EQ(a.reference, "A12BCD3456");
  EXPECT_EQ(a.reason, "agent_generation");
  auto d = dynamics_generation_charge("usr_1", "job_2", "A12BCD3456");
  EXPECT_EQ(d.amount, kDynamicsGenerationCredits);
  EXPECT_EQ(d.operation_key, "dynamics_generation:job_2");
  EXPECT_NE(a.operation_key, agent_generation_charge("usr_1", "job_3", "A12BCD3456").operation_key);
}

TEST(BillingOperations, RefundMirrorsItsCharge) {
  auto charge = agent_generation_charge("usr_1", "job_1", "A12BCD3456");
  auto refund = refund_of(charge, "agent generation failed: no face");
  EXPECT_EQ(refund.kind, LedgerKind::kRefund);
  EXPECT_EQ(refund.account_id, "usr_1");
  EXPECT_EQ(refund.amount, charge.amount);
  EXPECT_EQ(refund.operation_key, "refund:agent_generation:job_1");
  EXPECT_EQ(refund.reference, charge.reference);
  EXPECT_EQ(refund.reason, "refund: agent generation failed: no face");
  // Rebuilding the charge from the same facts gives the same refund key: one refund per charge.
  EXPECT_EQ(refund_of(agent_generation_charge("usr_1", "job_1", "A12BCD3456"), "other").operation_key,
            refund.operation_key);
  EXPECT_LE(refund_of(charge, std::string(5000, 'x')).reason.size(), 320u);
}

TEST(BillingOperations, LiveMinutesAreKeyedBySessionAndMinute) {
  auto m0 = live_session_minute("usr_1", "ses_1", 0, MinuteRate::kExpressionCloud);
  auto m1 = live_session_minute("usr_1", "ses_1", 1, MinuteRate::kExpressionCloud);
  EXPECT_EQ(m0.amount, 4);
  EXPECT_EQ(m0.operation_key, "live_minute:ses_1:0");
  EXPECT_NE(m0.operation_key, m1.operation_key);
  EXPECT_EQ(live_session_minute("usr_1", "ses_1", 0, MinuteRate::kVoiceChat).amount, 10);
  EXPECT_EQ(live_session_minute("usr_1", "ses_1", 0, MinuteRate::kCameraChat).amount, 30);
  EXPECT_EQ(live_session_minute("usr_1", "ses_1", 0, MinuteRate::kEssenceSelfHosted).amount, 1);
}

TEST(BillingOperations, MinuteRatesFollowThePriceTable) {
  for (const auto& p : kPerMinutePrices) {
    auto r = parse_minute_rate(p.feature);
    ASSERT_TRUE(r.has_value()) << p.feature;
    EXPECT_EQ(minute_rate_name(*r), p.feature);
    EXPECT_EQ(credits_per_minute(*r), p.credits_per_minute);
  }
  EXPECT_FALSE(parse_minute_rate("essence").has_value());
}

TEST(BillingOperations, VideoRendersChargeEveryStartedMinute) {
  EXPECT_EQ(billable_minutes(0), 0);
  EXPECT_EQ(billable_minutes(1), 1);
  EXPECT_EQ(billable_minutes(60), 1);
  EXPECT_EQ(billable_minutes(61), 2);
  auto v = video_render_minutes("usr_1", "vid_1", 3, MinuteRate::kEssenceCloud);
  EXPECT_EQ(v.amount, 6);
  EXPECT_EQ(v.operation_key, "video_render:vid_1");
}

TEST(BillingOperations, OperatorTopupsReplayOnlyWithAKey) {
  auto a = operator_topup("usr_1", 500, "top-up", "req-1");
  EXPECT_EQ(a.kind, LedgerKind::kTopup);
  EXPECT_EQ(a.operation_key, "admin-topup:req-1");
  EXPECT_EQ(operator_topup("usr_1", 500, "top-up", "req-1").operation_key, a.operation_key);
  EXPECT_NE(operator_topup("usr_1", 500, "top-up", "").operation_key,
            operator_topup("usr_1", 500, "top-up", "").operation_key);
  EXPECT_EQ(initial_credits("usr_1", 1000).operation_key, "account-created");
}

}  // namespace
}  // namespace imago::billing
