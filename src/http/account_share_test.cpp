#include "http/account_share.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace imago::http {
namespace {

TEST(AccountShare, OneAccountIsCappedWhileOthersAreServed) {
  AccountShare share(2);
  auto a1 = share.try_acquire("acct_a");
  auto a2 = share.try_acquire("acct_a");
  EXPECT_TRUE(a1);
  EXPECT_TRUE(a2);
  EXPECT_FALSE(share.try_acquire("acct_a")) << "a third place for the same account";
  auto b1 = share.try_acquire("acct_b");
  EXPECT_TRUE(b1) << "another account is not affected";
  EXPECT_EQ(share.in_progress("acct_a"), 2);
  a1.release();
  EXPECT_EQ(share.in_progress("acct_a"), 1);
  EXPECT_TRUE(share.try_acquire("acct_a")) << "a finished request frees its place";
}

TEST(AccountShare, LeasesReleaseOnDestructionAndMove) {
  AccountShare share(1);
  {
    auto l = share.try_acquire("x");
    ASSERT_TRUE(l);
    AccountShare::Lease moved = std::move(l);
    EXPECT_FALSE(l);
    EXPECT_TRUE(moved);
    EXPECT_EQ(share.in_progress("x"), 1);
  }
  EXPECT_EQ(share.in_progress("x"), 0);
  AccountShare zero(0);  // a share below 1 still lets one request through
  EXPECT_EQ(zero.per_account(), 1);
  EXPECT_TRUE(zero.try_acquire("y"));
}

TEST(AccountShare, NeverMoreThanTheShareUnderConcurrency) {
  AccountShare share(3);
  std::atomic<int> running{0}, peak{0}, refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        auto l = share.try_acquire("busy");
        if (!l) {
          refused++;
          continue;
        }
        int now = ++running;
        int p = peak.load();
        while (now > p && !peak.compare_exchange_weak(p, now)) {
        }
        --running;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_LE(peak.load(), 3);
  EXPECT_EQ(share.in_progress("busy"), 0);
}

}  // namespace
}  // namespace imago::http
