// Two "nodes" (two directories, two pools) on one database: room leases and command delivery.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "store/postgres/pg_stores.h"
#include "store/postgres/test_db.h"

namespace imago {
namespace {

// What a node's handlers saw.
struct Seen {
  std::mutex mu;
  std::vector<RoomCommand> commands;
  std::vector<std::string> lost;
  RoomDirectoryHandlers handlers() {
    RoomDirectoryHandlers h;
    h.command = [this](const RoomCommand& c) {
      std::lock_guard lock(mu);
      commands.push_back(c);
    };
    h.lease_lost = [this](const std::string& s) {
      std::lock_guard lock(mu);
      lost.push_back(s);
    };
    return h;
  }
  size_t count() {
    std::lock_guard lock(mu);
    return commands.size();
  }
};

bool wait_for(const std::function<bool()>& f, int ms = 5000) {
  for (int i = 0; i < ms / 20; ++i) {
    if (f()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return f();
}

TEST(PgRoomDirectory, OneOwnerPerRoomAndCommandsReachIt) {
  pg::TestDb t;
  auto db_b = pg::Db::open(t.url(), 4);
  ASSERT_TRUE(db_b.ok());
  // A long poll interval: delivery within it proves the NOTIFY wake-up.
  pg::RoomDirectoryOptions o;
  o.poll_us = 30'000'000;
  auto a = pg::make_room_directory(t.db(), o);
  auto b = pg::make_room_directory(**db_b, o);
  Seen seen_a, seen_b;
  a->start(seen_a.handlers());
  b->start(seen_b.handlers());
  ASSERT_NE(a->node_id(), b->node_id());

  RoomLease lobby{"acct_1", "lobby", "A12BCD3456", "ses_b1"};
  ASSERT_TRUE(*b->claim(lobby));
  // A cannot take a room B holds.
  RoomLease stolen = lobby;
  stolen.session_id = "ses_a1";
  EXPECT_FALSE(*a->claim(stolen));
  // Only B's room, seen from A; B has none elsewhere.
  auto remote = a->remote_rooms("acct_1", std::string("A12BCD3456"), std::nullopt);
  ASSERT_TRUE(remote.ok());
  ASSERT_EQ(remote->size(), 1u);
  EXPECT_EQ((*remote)[0].session_id, "ses_b1");
  EXPECT_EQ((*remote)[0].node_id, b->node_id());
  EXPECT_TRUE(b->remote_rooms("acct_1", std::nullopt, std::nullopt)->empty());
  EXPECT_TRUE(a->remote_rooms("acct_2", std::nullopt, std::nullopt)->empty());
  EXPECT_TRUE(a->remote_rooms("acct_1", std::string("Z99ZZZ9999"), std::nullopt)->empty());
  EXPECT_TRUE(a->remote_rooms("acct_1", std::nullopt, std::string("other"))->empty());

  // Commands sent from A arrive at B, in order, and not at A.
  ASSERT_TRUE(a->send(*remote, "speak", "one").ok());
  ASSERT_TRUE(a->send(*remote, "add_context", "two").ok());
  ASSERT_TRUE(wait_for([&] { return seen_b.count() == 2; }));
  {
    std::lock_guard lock(seen_b.mu);
    EXPECT_EQ(seen_b.commands[0].kind, "speak");
    EXPECT_EQ(seen_b.commands[0].text, "one");
    EXPECT_EQ(seen_b.commands[0].session_id, "ses_b1");
    EXPECT_EQ(seen_b.commands[1].kind, "add_context");
    EXPECT_LT(seen_b.commands[0].id, seen_b.commands[1].id);
  }
  EXPECT_EQ(seen_a.count(), 0u);

  // Released: the room is free for A.
  b->release(lobby);
  EXPECT_TRUE(a->remote_rooms("acct_1", std::nullopt, std::nullopt)->empty());
  EXPECT_TRUE(*a->claim(stolen));
  a->stop();
  b->stop();
}

TEST(PgRoomDirectory, AnExpiredLeaseIsTakenOverAndItsOwnerToldSo) {
  pg::TestDb t;
  auto db_b = pg::Db::open(t.url(), 4);
  ASSERT_TRUE(db_b.ok());
  pg::RoomDirectoryOptions quick;
  quick.lease_us = 300'000;
  quick.renew_us = 100'000;
  quick.poll_us = 50'000;
  pg::RoomDirectoryOptions slow = quick;
  slow.renew_us = 1'500'000;  // "B" renews too late (a node cut off from the database for a while)
  auto a = pg::make_room_directory(t.db(), quick);
  auto b = pg::make_room_directory(**db_b, slow);
  Seen seen_a, seen_b;
  a->start(seen_a.handlers());
  b->start(seen_b.handlers());
  RoomLease mine{"acct_1", "lobby", "A12BCD3456", "ses_b1"};
  ASSERT_TRUE(*b->claim(mine));
  // A renews its own lease: it outlives many lease periods.
  RoomLease a_room{"acct_1", "hall", "A12BCD3456", "ses_a1"};
  ASSERT_TRUE(*a->claim(a_room));
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  EXPECT_EQ(b->remote_rooms("acct_1", std::nullopt, std::string("hall"))->size(), 1u);
  // B's lease has expired: it no longer counts, and A may take the room.
  EXPECT_TRUE(a->remote_rooms("acct_1", std::nullopt, std::string("lobby"))->empty());
  RoomLease taken = mine;
  taken.session_id = "ses_a2";
  ASSERT_TRUE(*a->claim(taken));
  // B learns at its next renewal that the room is no longer its own; A keeps both of its rooms.
  ASSERT_TRUE(wait_for([&] {
    std::lock_guard lock(seen_b.mu);
    return !seen_b.lost.empty();
  }));
  {
    std::lock_guard lock(seen_b.mu);
    EXPECT_EQ(seen_b.lost, std::vector<std::string>{"ses_b1"});
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  {
    std::lock_guard lock(seen_a.mu);
    EXPECT_TRUE(seen_a.lost.empty());
  }
  EXPECT_EQ(b->remote_rooms("acct_1", std::nullopt, std::nullopt)->size(), 2u);
  a->stop();
  b->stop();
}

}  // namespace
}  // namespace imago

namespace imago {
namespace {

// The owner's room state travels with its lease: written at the claim, refreshed at each renewal,
// read by the other node with the room (GET /v1/rooms across nodes).
TEST(PgRoomDirectory, OwnersPublishRoomStateWithTheirLeases) {
  pg::TestDb t;
  auto db_b = pg::Db::open(t.url(), 4);
  ASSERT_TRUE(db_b.ok());
  pg::RoomDirectoryOptions o;
  o.renew_us = 100'000;
  o.poll_us = 50'000;
  auto a = pg::make_room_directory(t.db(), o);
  auto b = pg::make_room_directory(**db_b, o);
  Seen seen_a, seen_b;
  std::mutex mu;
  int viewers = 1;
  RoomDirectoryHandlers hb = seen_b.handlers();
  hb.details = [&] {
    std::lock_guard lock(mu);
    // A session the directory does not hold is ignored.
    return std::map<std::string, std::string>{{"ses_b1", "{\"viewers\":" + std::to_string(viewers) + "}"},
                                              {"ses_not_here", "{\"viewers\":9}"}};
  };
  a->start(seen_a.handlers());
  RoomLease lobby{"acct_1", "lobby", "A12BCD3456", "ses_b1", "http://127.0.0.1:1", "{\"viewers\":0}"};
  ASSERT_TRUE(*b->claim(lobby));
  auto at_claim = a->remote_rooms("acct_1", std::nullopt, std::nullopt);
  ASSERT_TRUE(at_claim.ok());
  ASSERT_EQ(at_claim->size(), 1u);
  EXPECT_EQ((*at_claim)[0].details, "{\"viewers\":0}");
  EXPECT_EQ((*at_claim)[0].agent_code, "A12BCD3456");
  EXPECT_GT((*at_claim)[0].details_at_ms, 1'700'000'000'000);
  b->start(hb);
  auto details_seen_by_a = [&] {
    auto r = a->remote_rooms("acct_1", std::nullopt, std::nullopt);
    return r.ok() && r->size() == 1 ? (*r)[0].details : std::string("?");
  };
  EXPECT_TRUE(wait_for([&] { return details_seen_by_a() == "{\"viewers\":1}"; })) << details_seen_by_a();
  {
    std::lock_guard lock(mu);
    viewers = 3;
  }
  EXPECT_TRUE(wait_for([&] { return details_seen_by_a() == "{\"viewers\":3}"; })) << details_seen_by_a();
  // The owner's own view lists no remote rooms; a lease only B holds shows nothing of ses_not_here.
  EXPECT_TRUE(b->remote_rooms("acct_1", std::nullopt, std::nullopt)->empty());
  a->stop();
  b->stop();
}

}  // namespace
}  // namespace imago

namespace imago {
namespace {

// The per-account share holds across nodes: leases on either node count, and concurrent claims
// from two nodes (two pools) never pass it.
TEST(PgRoomDirectory, TheAccountsShareCountsEveryNode) {
  pg::TestDb t;
  auto db_b = pg::Db::open(t.url(), 8);
  ASSERT_TRUE(db_b.ok());
  auto a = pg::make_room_directory(t.db());
  auto b = pg::make_room_directory(**db_b);
  auto lease = [](const std::string& acct, const std::string& room) {
    return RoomLease{acct, room, "A12BCD3456", "ses_" + acct + "_" + room};
  };
  ASSERT_TRUE(*a->claim(lease("acct_1", "r1"), 3));
  ASSERT_TRUE(*b->claim(lease("acct_1", "r2"), 3));
  ASSERT_TRUE(*a->claim(lease("acct_1", "r3"), 3));
  EXPECT_EQ(b->claim(lease("acct_1", "r4"), 3).status().code(), Code::kRateLimited);
  EXPECT_EQ(a->claim(lease("acct_1", "r4"), 3).status().code(), Code::kRateLimited);
  b->release(lease("acct_1", "r2"));
  EXPECT_TRUE(*b->claim(lease("acct_1", "r4"), 3));

  // 40 concurrent claims of another account, half on each node, share 6: exactly 6 succeed.
  std::atomic<int> owned{0}, limited{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 40; ++i) {
    threads.emplace_back([&, i] {
      auto& dir = i % 2 ? *a : *b;
      auto r = dir.claim(lease("acct_2", "room" + std::to_string(i)), 6);
      if (r.ok() && *r) ++owned;
      if (!r.ok() && r.status().code() == Code::kRateLimited) ++limited;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(owned.load(), 6);
  EXPECT_EQ(limited.load(), 34);
}

}  // namespace
}  // namespace imago
