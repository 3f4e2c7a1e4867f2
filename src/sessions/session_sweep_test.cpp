// The sweep that ends a dead node's sessions (sessions/session_sweep.h), over the real SQLite
// stores and a directory that reports lapsed leases as the cluster's would (which leases are
// lapsed, on the database's clock, is the room directory's contract: room_directory_contract_test).
// A lapsed session ends once, at its lease's last renewal, with its last figures, its recording
// marked failed and one webhook, however many sweepers race; a live one is never touched.
#include "sessions/session_sweep.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <boost/json.hpp>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "blobs/blob_store.h"
#include "store/stores.h"
#include "store/test_local_backend.h"
#include "util/random.h"

namespace imago::sessions {
namespace {

// What a cluster's directory reports: the leases given as lapsed, until forgotten.
class LapsedDirectory final : public RoomDirectory {
 public:
  void start(RoomDirectoryHandlers) override {}
  void stop() override {}
  Result<bool> claim(const RoomLease&, int) override { return true; }
  void release(const RoomLease&) override {}
  Result<std::vector<RemoteRoom>> remote_rooms(const std::string&, const std::optional<std::string>&,
                                               const std::optional<std::string>&) override {
    return std::vector<RemoteRoom>{};
  }
  Status send(const std::vector<RemoteRoom>&, const std::string&, const std::string&) override {
    return Status::Ok();
  }
  Result<std::vector<LapsedLease>> lapsed(int64_t grace_us, int limit) override {
    std::lock_guard lock(mu);
    asked_grace_us = grace_us;
    ++asked;
    std::vector<LapsedLease> out(leases.begin(), leases.end());
    if (static_cast<int>(out.size()) > limit) out.resize(limit);
    return out;
  }
  void forget(const LapsedLease& l) override {
    std::lock_guard lock(mu);
    std::erase_if(leases, [&](const LapsedLease& x) { return x.session_id == l.session_id; });
  }
  std::string node_id() const override { return "node_b"; }

  std::mutex mu;
  std::vector<LapsedLease> leases;
  int64_t asked_grace_us = 0;
  int asked = 0;
};

class SessionSweepTest : public ::testing::Test {
 protected:
  SessionSweepTest() {
    service_ = std::make_unique<SessionService>(
        SessionServiceDeps{backend_.stores.sessions.get(), backend_.stores.files.get(), backend_.blobs.get(),
                           &clock_, &public_url_});
    KeyMaterial km{"swp-" + random_base62(12), "imago_sk_x", "abcd"};
    account_ = backend_.stores.accounts->create_account("a", Plan::kFree, 0, "default", km)->first.id;
    clock_.set_us(1'795'370'400'000'000);
    Webhook w;
    w.id = "wh_1";
    w.account_id = account_;
    w.url = "https://hooks.example/x";
    w.events = {"session.ended"};
    w.secret = "whsec_x";
    EXPECT_TRUE(backend_.stores.webhooks->create(w).ok());
  }
  SessionRecord start(const std::string& id) {
    SessionRecord s;
    s.session_id = id;
    s.account_id = account_;
    s.agent_code = "AGENT1";
    s.room_id = "room_" + id;
    s.billing_type = "essence_cloud";
    s.started_us = clock_.now_us();
    EXPECT_TRUE(service_->started(s).ok());
    return s;
  }
  LapsedLease lapsed(const SessionRecord& s, int64_t renewed_us) {
    return {s.account_id, s.room_id, s.session_id, "node_a", renewed_us};
  }
  int webhooks_queued() {
    auto d = backend_.stores.webhooks->list_deliveries("wh_1", 100);
    EXPECT_TRUE(d.ok());
    return d.ok() ? static_cast<int>(d->size()) : -1;
  }

  ManualClock clock_;
  std::string account_;
  std::string public_url_ = "https://imago.example";
  LocalBackend backend_{"sweep", clock_};  // before what uses it: gone after it
  std::unique_ptr<SessionService> service_;
  LapsedDirectory directory_;
};

TEST_F(SessionSweepTest, ALapsedSessionEndsOnceAtItsLastRenewalWithItsRecordingFailed) {
  const SessionRecord dead = start("ses_dead");
  ASSERT_TRUE(service_->recording_started(dead.session_id).ok());
  ASSERT_TRUE(service_->progress(dead.session_id, 3, 4).ok());
  const SessionRecord alive = start("ses_alive");  // its lease is renewed: never reported
  const int64_t renewed = dead.started_us + 150'000'000;
  directory_.leases.push_back(lapsed(dead, renewed));
  clock_.advance_us(10 * 60'000'000LL);

  SessionSweepOptions o;
  o.grace_us = 90'000'000;
  SessionSweep sweep(directory_, *service_, clock_, o);
  EXPECT_EQ(sweep.run(), 1);
  EXPECT_EQ(directory_.asked_grace_us, 90'000'000);
  auto got = service_->get(account_, dead.session_id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->status, "ended");
  EXPECT_EQ(got->end_reason, "shutdown");
  EXPECT_EQ(got->ended_us, renewed) << "ends when its node was last seen, not when it was swept";
  EXPECT_EQ(got->minutes_charged, 3);
  EXPECT_EQ(got->viewers_peak, 4);
  ASSERT_TRUE(got->recording);
  EXPECT_EQ(got->recording->status, "failed") << "the MP4 was on the dead node's disk";
  EXPECT_EQ(webhooks_queued(), 1);
  auto d = backend_.stores.webhooks->list_deliveries("wh_1", 10);
  auto data = boost::json::parse((*d)[0].payload).as_object().at("data").as_object();
  EXPECT_EQ(data.at("end_reason").as_string(), "shutdown");
  EXPECT_DOUBLE_EQ(data.at("duration_seconds").as_double(), 150.0);
  EXPECT_EQ(data.at("minutes_charged").as_int64(), 3);
  EXPECT_FALSE(data.at("recording_url").is_null()) << "it answers if the node comes back and uploads it";
  EXPECT_TRUE(directory_.leases.empty()) << "a swept lease is forgotten";
  EXPECT_EQ(service_->get(account_, alive.session_id)->status, "active");

  // Reported again (another node's copy of the lease): nothing more happens.
  directory_.leases.push_back(lapsed(dead, renewed));
  EXPECT_EQ(sweep.run(), 0);
  EXPECT_EQ(webhooks_queued(), 1);
  EXPECT_TRUE(directory_.leases.empty());
  EXPECT_EQ(service_->get(account_, alive.session_id)->status, "active");
}

TEST_F(SessionSweepTest, ARecordingItsNodeUploadedFirstStaysReady) {
  const SessionRecord s = start("ses_back");
  ASSERT_TRUE(service_->recording_started(s.session_id).ok());
  const std::string path = backend_.dir + "/back.mp4";
  std::ofstream(path, std::ios::binary) << "mp4 bytes";
  ASSERT_TRUE(service_->recording_finished(s, {path, 9, 1000}).ok());
  directory_.leases.push_back(lapsed(s, s.started_us + 1'000'000));
  SessionSweep sweep(directory_, *service_, clock_);
  EXPECT_EQ(sweep.run(), 1);
  auto got = service_->get(account_, s.session_id);
  ASSERT_TRUE(got.ok() && got->recording);
  EXPECT_EQ(got->recording->status, "ready");
}

TEST_F(SessionSweepTest, ALeaseWithoutASessionIsForgottenAndTheNextPassWaitsForItsInterval) {
  SessionRecord never;
  never.session_id = "ses_never";
  never.account_id = account_;
  never.room_id = "r";
  directory_.leases.push_back(lapsed(never, 1));
  SessionSweepOptions o;
  o.every_us = 10'000'000;
  SessionSweep sweep(directory_, *service_, clock_, o);
  EXPECT_EQ(sweep.maybe_run(), 0);
  EXPECT_TRUE(directory_.leases.empty());
  EXPECT_EQ(directory_.asked, 1);
  clock_.advance_us(9'000'000);
  sweep.maybe_run();
  EXPECT_EQ(directory_.asked, 1);
  clock_.advance_us(1'000'000);
  sweep.maybe_run();
  EXPECT_EQ(directory_.asked, 2);
}

TEST_F(SessionSweepTest, RacingSweepersEndASessionOnceAndQueueOneWebhook) {
  std::vector<SessionRecord> sessions;
  for (int i = 0; i < 8; ++i) {
    sessions.push_back(start("ses_race" + std::to_string(i)));
    directory_.leases.push_back(lapsed(sessions.back(), sessions.back().started_us));
  }
  // Every sweeper is handed every lease (each asks before any forgets), as two nodes reading the
  // database at once would be.
  const std::vector<LapsedLease> all = directory_.leases;
  std::atomic<int> ended{0};
  std::vector<std::thread> sweepers;
  for (int i = 0; i < 4; ++i) {
    sweepers.emplace_back([&] {
      LapsedDirectory own;
      own.leases = all;
      SessionSweep sweep(own, *service_, clock_);
      ended += sweep.run();
    });
  }
  for (auto& t : sweepers) t.join();
  EXPECT_EQ(ended.load(), 8);
  EXPECT_EQ(webhooks_queued(), 8);
  for (const auto& s : sessions) EXPECT_EQ(service_->get(account_, s.session_id)->status, "ended");
}

}  // namespace
}  // namespace imago::sessions
