// Contract of the room directory's per-account share (store/room_directory.h): a claim past
// max_account_rooms is refused with kRateLimited, the room being claimed does not count against
// itself, a release frees a place, other accounts are not affected, and concurrent claims of one
// account never pass the share (the count and the claim are one step).
#include <atomic>
#include <thread>

#include "store/contracts/store_backends.h"

namespace imago::contracts {
namespace {

class RoomDirectoryContract : public StoreContract {
 protected:
  RoomDirectory& rooms() { return *stores().rooms; }
  static RoomLease lease(const std::string& acct, const std::string& room) {
    return {acct, room, "A12BCD3456", "ses_" + acct + "_" + room};
  }
};

TEST_P(RoomDirectoryContract, ClaimsPastTheAccountsShareAreRefused) {
  auto r1 = rooms().claim(lease("acct_1", "r1"), 2);
  ASSERT_TRUE(r1.ok()) << r1.status().message();
  EXPECT_TRUE(*r1);
  EXPECT_TRUE(*rooms().claim(lease("acct_1", "r2"), 2));
  auto r3 = rooms().claim(lease("acct_1", "r3"), 2);
  ASSERT_FALSE(r3.ok());
  EXPECT_EQ(r3.status().code(), Code::kRateLimited);
  // Claiming a room it holds again (a restart of that room) is not one more.
  EXPECT_TRUE(*rooms().claim(lease("acct_1", "r2"), 2));
  // Without a share, or for another account: no refusal.
  EXPECT_TRUE(*rooms().claim(lease("acct_2", "r1"), 2));
  EXPECT_TRUE(*rooms().claim(lease("acct_1", "r4"), 0));
  rooms().release(lease("acct_1", "r4"));
  // A release frees its place.
  rooms().release(lease("acct_1", "r1"));
  EXPECT_TRUE(*rooms().claim(lease("acct_1", "r3"), 2));
  EXPECT_EQ(rooms().claim(lease("acct_1", "r5"), 2).status().code(), Code::kRateLimited);
}

TEST_P(RoomDirectoryContract, ConcurrentClaimsNeverPassTheShare) {
  constexpr int kShare = 5, kThreads = 24;
  std::atomic<int> owned{0}, limited{0}, other{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      auto r = rooms().claim(lease("acct_1", "room" + std::to_string(i)), kShare);
      if (r.ok() && *r)
        ++owned;
      else if (!r.ok() && r.status().code() == Code::kRateLimited)
        ++limited;
      else
        ++other;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(owned.load(), kShare);
  EXPECT_EQ(limited.load(), kThreads - kShare);
  EXPECT_EQ(other.load(), 0);
}

IMAGO_STORE_CONTRACT(RoomDirectoryContract);

}  // namespace
}  // namespace imago::contracts
