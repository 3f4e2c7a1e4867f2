// Contract of the room directory's per-account share (store/room_directory.h): a claim past
// max_account_rooms is refused with kRateLimited, the room being claimed does not count against
// itself, a release frees a place, other accounts are not affected, and concurrent claims of one
// account never pass the share (the count and the claim are one step). And the leases a dead node
// leaves lapse, for the other nodes only, after the grace (RoomDirectory::lapsed).
#include <atomic>
#include <set>
#include <thread>

#include "store/contracts/store_backends.h"
#include "store/postgres/db.h"

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

// The leases of a node that stopped renewing (killed) lapse for the other nodes once the grace has
// passed on the database's clock; never for the node itself, never while renewed. A claim that takes
// over a lapsed lease keeps the displaced session findable. On a single node nothing ever lapses.
TEST_P(RoomDirectoryContract, ALeaseNotRenewedForTheGraceLapsesForOtherNodesOnly) {
  auto other = open_another();
  ASSERT_TRUE(other.ok()) << other.status().message();
  RoomDirectory& dead = *other->rooms;  // claims, then never renews (its thread is not started)
  RoomDirectory& sweeper = rooms();
  ASSERT_TRUE(*dead.claim(lease("acct_1", "lobby")));
  ASSERT_TRUE(*dead.claim(lease("acct_1", "hall")));
  // Just claimed: nothing has lapsed, even with no grace at all.
  ASSERT_TRUE(sweeper.lapsed(0, 100).ok());
  EXPECT_TRUE(sweeper.lapsed(0, 100)->empty());
  if (!stores().pg_db) return;  // one node: its journal ends its own sessions (Rooms::recover)

  // The dead node's leases as they look two minutes after its last renewal.
  // `who`: a node id (all its leases) or a session id.
  auto age = [&](const std::string& who, int64_t by_us) {
    ASSERT_TRUE(stores()
                    .pg_db
                    ->write([&](sql::Connection& c) -> Status {
                      c.prepare(
                           "UPDATE room_leases SET renewed_at = renewed_at - ?1,"
                           " lease_until = renewed_at - ?1 + 15000000 WHERE node_id = ?2 OR session_id = ?2")
                          .bind(1, by_us)
                          .bind(2, who)
                          .run();
                      return Status::Ok();
                    })
                    .ok());
  };
  age(dead.node_id(), 120'000'000);
  auto l = sweeper.lapsed(60'000'000, 100);
  ASSERT_TRUE(l.ok()) << l.status().message();
  ASSERT_EQ(l->size(), 2u);
  for (const auto& x : *l) {
    EXPECT_EQ(x.node_id, dead.node_id());
    EXPECT_EQ(x.account_id, "acct_1");
    EXPECT_EQ(x.session_id, "ses_acct_1_" + x.room_id);
    EXPECT_GT(x.renewed_us, 0);
  }
  EXPECT_TRUE(dead.lapsed(0, 100)->empty()) << "a node never sweeps its own leases";
  EXPECT_TRUE(sweeper.lapsed(600'000'000, 100)->empty()) << "within the grace";
  EXPECT_EQ(sweeper.lapsed(60'000'000, 1)->size(), 1u);

  // A viewer starts a new session in the hall on the sweeping node: the lease names it now, and
  // the dead node's session there is still reported (once).
  RoomLease fresh{"acct_1", "hall", "A12BCD3456", "ses_new"};
  ASSERT_TRUE(*sweeper.claim(fresh));
  l = sweeper.lapsed(60'000'000, 100);
  ASSERT_EQ(l->size(), 2u);
  std::set<std::string> ids;
  for (const auto& x : *l) ids.insert(x.session_id);
  EXPECT_EQ(ids, (std::set<std::string>{"ses_acct_1_lobby", "ses_acct_1_hall"}));

  // A lease renewed after the sweep read it belongs to a live node: forgetting it keeps it.
  age("ses_acct_1_lobby", -120'000'000);
  for (const auto& x : *l) sweeper.forget(x);
  l = sweeper.lapsed(0, 100);
  ASSERT_TRUE(l.ok());
  EXPECT_TRUE(l->empty());
  auto remote = dead.remote_rooms("acct_1", std::nullopt, std::nullopt);
  ASSERT_TRUE(remote.ok());
  ASSERT_EQ(remote->size(), 1u) << "the new hall session's lease is untouched";
  EXPECT_EQ((*remote)[0].session_id, "ses_new");
  age("ses_acct_1_lobby", 120'000'000);
  l = sweeper.lapsed(60'000'000, 100);
  ASSERT_EQ(l->size(), 1u) << "the renewed lobby lease was kept";
  EXPECT_EQ((*l)[0].session_id, "ses_acct_1_lobby");
}

IMAGO_STORE_CONTRACT(RoomDirectoryContract);

}  // namespace
}  // namespace imago::contracts
