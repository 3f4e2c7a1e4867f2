#include "billing/spend_cap.h"

#include <gtest/gtest.h>

#include "billing/operations.h"

namespace imago::billing {
namespace {

TEST(LiveSpendCap, NoCapWithoutEitherSetting) {
  LiveSpendCap cap;
  EXPECT_FALSE(cap.effective());
  EXPECT_TRUE(check_live_spend_cap(cap, 1'000'000, 4).ok());
  LiveSpend spend{cap, utc_month(0), 50};
  EXPECT_FALSE(spend.remaining());
}

TEST(LiveSpendCap, TheLowerOfHolderAndOperatorApplies) {
  EXPECT_EQ(LiveSpendCap({100, std::nullopt}).effective(), 100);
  EXPECT_EQ(LiveSpendCap({std::nullopt, 40}).effective(), 40);
  EXPECT_EQ(LiveSpendCap({100, 40}).effective(), 40);
  EXPECT_EQ(LiveSpendCap({30, 40}).effective(), 30);
}

TEST(LiveSpendCap, AMinuteFitsOnlyWhollyUnderTheCap) {
  LiveSpendCap cap{10, std::nullopt};
  EXPECT_TRUE(check_live_spend_cap(cap, 6, 4).ok());  // lands exactly on the cap
  Status st = check_live_spend_cap(cap, 8, 4);        // would end at 12
  EXPECT_EQ(st.code(), Code::kInsufficientFunds);
  EXPECT_TRUE(is_spend_cap_refusal(st));
  EXPECT_NE(st.message().find("8 of 10"), std::string::npos) << st.message();
  // A zero cap stops every live minute.
  EXPECT_TRUE(is_spend_cap_refusal(check_live_spend_cap({0, std::nullopt}, 0, 1)));
  // A plain shortage of credits is not a cap refusal.
  EXPECT_FALSE(is_spend_cap_refusal(Status::InsufficientFunds("Insufficient credits")));
  EXPECT_FALSE(is_spend_cap_refusal(Status::Ok()));
}

TEST(LiveSpendCap, RemainingNeverGoesNegative) {
  LiveSpend s{{10, std::nullopt}, utc_month(0), 4};
  EXPECT_EQ(s.remaining(), 6);
  s.spent = 12;  // a cap lowered below what was already spent
  EXPECT_EQ(s.remaining(), 0);
}

TEST(LiveSpendCap, OnlyLiveMinuteChargesCount) {
  EXPECT_TRUE(counts_toward_live_cap(live_session_minute("usr_1", "ses_1", 0, MinuteRate::kEssenceCloud)));
  EXPECT_TRUE(
      counts_toward_live_cap(live_session_minute("usr_1", "sh:x", 3, MinuteRate::kExpressionSelfHosted)));
  EXPECT_FALSE(counts_toward_live_cap(agent_generation_charge("usr_1", "job_1", "A1")));
  EXPECT_FALSE(counts_toward_live_cap(video_render_minutes("usr_1", "vid_1", 2, MinuteRate::kEssenceCloud)));
  EXPECT_FALSE(counts_toward_live_cap(operator_topup("usr_1", 100, "top-up", "k")));
  // A refund of a live minute is not itself a charge.
  EXPECT_FALSE(counts_toward_live_cap(
      refund_of(live_session_minute("usr_1", "ses_1", 0, MinuteRate::kEssenceCloud), "test")));
}

TEST(LiveSpendCap, CalendarMonthInUtc) {
  // 2026-11-22T18:00:00Z
  MonthWindow w = utc_month(1795370400);
  EXPECT_EQ(w.label, "2026-11");
  EXPECT_EQ(w.start_s, 1793491200);  // 2026-11-01T00:00:00Z
  EXPECT_EQ(w.end_s, 1796083200);    // 2026-12-01T00:00:00Z
  // The last second of a month and the first of the next.
  EXPECT_EQ(utc_month(1796083199).label, "2026-11");
  EXPECT_EQ(utc_month(1796083200).label, "2026-12");
  // December rolls into the next year; February of a leap year has 29 days.
  MonthWindow dec = utc_month(1796083200);
  EXPECT_EQ(dec.end_s, 1798761600);         // 2027-01-01T00:00:00Z
  MonthWindow feb = utc_month(1709251199);  // 2024-02-29T23:59:59Z
  EXPECT_EQ(feb.label, "2024-02");
  EXPECT_EQ(feb.end_s - feb.start_s, 29 * 86400);
  EXPECT_EQ(utc_month(0).label, "1970-01");
}

TEST(LiveSpendCap, ValidatesValues) {
  EXPECT_TRUE(validate_live_spend_cap(0).ok());
  EXPECT_TRUE(validate_live_spend_cap(kMaxLiveSpendCap).ok());
  EXPECT_EQ(validate_live_spend_cap(-1).code(), Code::kInvalidArgument);
  EXPECT_EQ(validate_live_spend_cap(kMaxLiveSpendCap + 1).code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace imago::billing
