#include "limits/storage_quota.h"

#include <gtest/gtest.h>

namespace imago {
namespace {

TEST(StorageQuota, DefaultsGrowWithThePlan) {
  auto q = default_storage_quotas();
  EXPECT_EQ(q.for_plan(Plan::kFree), 500'000'000);
  EXPECT_LT(q.for_plan(Plan::kFree), q.for_plan(Plan::kCreator));
  EXPECT_LT(q.for_plan(Plan::kBusiness), q.for_plan(Plan::kEnterprise));
}

TEST(StorageQuota, OperatorSpecOverridesNamedPlans) {
  auto q = parse_storage_quotas("free=1, pro=0");
  ASSERT_FALSE(q.ok());  // spaces are not allowed: the entry is named
  EXPECT_NE(q.status().message().find("' pro=0'"), std::string::npos);
  auto ok = parse_storage_quotas("free=1,pro=0");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->for_plan(Plan::kFree), 1'000'000);
  EXPECT_EQ(ok->for_plan(Plan::kPro), 0);  // unlimited
  EXPECT_EQ(ok->for_plan(Plan::kCreator), default_storage_quotas().for_plan(Plan::kCreator));
  EXPECT_FALSE(parse_storage_quotas("gold=5").ok());
  EXPECT_FALSE(parse_storage_quotas("free=-1").ok());
  EXPECT_FALSE(parse_storage_quotas("free=12x").ok());
  EXPECT_TRUE(parse_storage_quotas("").ok());
}

TEST(StorageQuota, EnterpriseAccountsMayCarryTheirOwn) {
  auto q = default_storage_quotas();
  PlanLimits custom;
  custom.storage_bytes = 42;
  EXPECT_EQ(effective_storage_quota(q, Plan::kEnterprise, custom), 42);
  EXPECT_EQ(effective_storage_quota(q, Plan::kEnterprise, std::nullopt), q.for_plan(Plan::kEnterprise));
  EXPECT_EQ(effective_storage_quota(q, Plan::kPro, custom), q.for_plan(Plan::kPro));
}

TEST(StorageQuota, CheckRefusesWhatWouldPassTheQuota) {
  EXPECT_TRUE(check_storage_quota(0, 100, 100).ok());
  EXPECT_TRUE(check_storage_quota(50, 50, 100).ok());
  auto st = check_storage_quota(50, 51, 100);
  EXPECT_EQ(st.code(), Code::kQuotaExceeded);
  EXPECT_NE(st.message().find("Storage quota exceeded"), std::string::npos);
  EXPECT_EQ(check_storage_quota(100, 1, 100).code(), Code::kQuotaExceeded);  // at the quota: no new work
  EXPECT_TRUE(check_storage_quota(1'000'000'000'000, 1, 0).ok());            // 0: unlimited
}

}  // namespace
}  // namespace imago
