// Contract of SessionStore (docs/sessions.md): sessions are account-scoped and listed newest first
// with a total; transcript lines come back in time order and a retried line is not repeated; a
// session ends once, and only that end queues the session.ended webhook (so two nodes or a retry
// never send it twice); a recording is a file record, gone with its file.
#include <atomic>
#include <thread>

#include "store/contracts/store_backends.h"

namespace imago::contracts {
namespace {

constexpr int64_t kT0 = 1'795'370'400'000'000;  // 2026-11-22T18:00:00Z, in microseconds

class SessionStoreContract : public StoreContract {
 protected:
  static SessionRecord session(const std::string& acct, const std::string& id, int64_t started_us) {
    SessionRecord s;
    s.session_id = id;
    s.account_id = acct;
    s.agent_code = "AGENT1";
    s.room_id = "lobby";
    s.billing_type = "essence_cloud";
    s.started_us = started_us;
    return s;
  }
  static SessionEnd ending(int64_t minutes) { return SessionEnd{kT0 + 90'000'000, "terminated", minutes, 2}; }
  Webhook hook(const std::string& acct) {
    Webhook w;
    w.id = "wh_" + acct;
    w.account_id = acct;
    w.url = "http://127.0.0.1:9/hook";
    w.events = {"session.ended"};
    w.secret = "whsec_x";
    return w;
  }
};

TEST_P(SessionStoreContract, SessionsAreScopedToTheirAccountAndListedNewestFirst) {
  auto a = new_account(0), b = new_account(0);
  ASSERT_TRUE(sessions().create(session(a, "ses_1", kT0)).ok());
  ASSERT_TRUE(sessions().create(session(a, "ses_2", kT0 + 1'000'000)).ok());
  ASSERT_TRUE(sessions().create(session(a, "ses_3", kT0 + 2'000'000)).ok());
  EXPECT_EQ(sessions().create(session(a, "ses_1", kT0)).code(), Code::kConflict);

  auto got = sessions().get(a, "ses_2");
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->status, "active");
  EXPECT_EQ(got->agent_code, "AGENT1");
  EXPECT_EQ(got->room_id, "lobby");
  EXPECT_EQ(got->started_us, kT0 + 1'000'000);
  EXPECT_FALSE(got->ended_us);
  EXPECT_FALSE(got->end_reason);
  EXPECT_FALSE(got->recording);
  EXPECT_EQ(sessions().get(b, "ses_2").status().code(), Code::kNotFound);
  EXPECT_EQ(sessions().transcript(b, "ses_2").status().code(), Code::kNotFound);

  auto page = sessions().list(a, "", 2, 0);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->total, 3);
  ASSERT_EQ(page->sessions.size(), 2u);
  EXPECT_EQ(page->sessions[0].session_id, "ses_3");
  EXPECT_EQ(page->sessions[1].session_id, "ses_2");
  page = sessions().list(a, "", 2, 2);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->sessions.size(), 1u);
  EXPECT_EQ(page->sessions[0].session_id, "ses_1");
  EXPECT_EQ(sessions().list(b, "", 20, 0)->total, 0);
}

TEST_P(SessionStoreContract, AnAgentFilterListsThatAgentsSessionsOnly) {
  auto a = new_account(0), b = new_account(0);
  SessionRecord other = session(a, "ses_o", kT0 + 1'000'000);
  other.agent_code = "AGENT2";
  ASSERT_TRUE(sessions().create(session(a, "ses_1", kT0)).ok());
  ASSERT_TRUE(sessions().create(other).ok());
  ASSERT_TRUE(sessions().create(session(a, "ses_2", kT0 + 2'000'000)).ok());
  ASSERT_TRUE(sessions().create(session(b, "ses_b", kT0 + 3'000'000)).ok());  // same code, other account

  auto page = sessions().list(a, "AGENT1", 20, 0);
  ASSERT_TRUE(page.ok()) << page.status().message();
  EXPECT_EQ(page->total, 2);
  ASSERT_EQ(page->sessions.size(), 2u);
  EXPECT_EQ(page->sessions[0].session_id, "ses_2");
  EXPECT_EQ(page->sessions[1].session_id, "ses_1");
  page = sessions().list(a, "AGENT1", 1, 1);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->total, 2);
  ASSERT_EQ(page->sessions.size(), 1u);
  EXPECT_EQ(page->sessions[0].session_id, "ses_1");
  page = sessions().list(a, "AGENT2", 20, 0);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->sessions.size(), 1u);
  EXPECT_EQ(page->sessions[0].session_id, "ses_o");
  EXPECT_EQ(sessions().list(a, "NOSUCH", 20, 0)->total, 0);
}

TEST_P(SessionStoreContract, TranscriptComesBackInTimeOrderAndARetriedLineIsNotRepeated) {
  auto a = new_account(0);
  ASSERT_TRUE(sessions().create(session(a, "ses_t", kT0)).ok());
  // A speak line is written when it finished playing, after the viewer's later line was written.
  std::vector<TranscriptEntry> first = {{1, "user", "text", "Hello there", 1000, 1000},
                                        {2, "agent", "responder", "Hi! How can I help?", 1200, 2400}};
  ASSERT_TRUE(sessions().add_transcript("ses_t", first).ok());
  ASSERT_TRUE(sessions().add_transcript("ses_t", first).ok());  // a retry
  ASSERT_TRUE(sessions().add_transcript("ses_t", {{3, "agent", "speak", "Welcome", 500, 900}}).ok());
  EXPECT_EQ(sessions().add_transcript("ses_nope", first).code(), Code::kNotFound);

  auto t = sessions().transcript(a, "ses_t");
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->size(), 3u);
  EXPECT_EQ((*t)[0].text, "Welcome");
  EXPECT_EQ((*t)[0].source, "speak");
  EXPECT_EQ((*t)[0].start_ms, 500);
  EXPECT_EQ((*t)[0].end_ms, 900);
  EXPECT_EQ((*t)[1].role, "user");
  EXPECT_EQ((*t)[1].text, "Hello there");
  EXPECT_EQ((*t)[2].role, "agent");
  EXPECT_EQ((*t)[2].source, "responder");
}

TEST_P(SessionStoreContract, ASessionEndsOnceAndOnlyThatEndQueuesTheWebhook) {
  auto a = new_account(0);
  ASSERT_TRUE(webhooks().create(hook(a)).ok());
  ASSERT_TRUE(sessions().create(session(a, "ses_e", kT0)).ok());
  ASSERT_TRUE(sessions().update_progress("ses_e", 1, 3).ok());
  ASSERT_TRUE(sessions().update_progress("ses_e", 0, 1).ok());  // never lowered
  auto got = sessions().get(a, "ses_e");
  EXPECT_EQ(got->minutes_charged, 1);
  EXPECT_EQ(got->viewers_peak, 3);

  auto ended = sessions().end("ses_e", ending(2), R"({"session_id":"ses_e"})");
  ASSERT_TRUE(ended.ok()) << ended.status().message();
  EXPECT_TRUE(*ended);
  auto again = sessions().end("ses_e", ending(5), R"({"session_id":"ses_e"})");
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
  EXPECT_EQ(sessions().end("ses_nope", ending(1), "{}").status().code(), Code::kNotFound);

  got = sessions().get(a, "ses_e");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->status, "ended");
  EXPECT_EQ(got->ended_us, kT0 + 90'000'000);
  EXPECT_EQ(got->end_reason, "terminated");
  EXPECT_EQ(got->minutes_charged, 2);
  EXPECT_EQ(got->viewers_peak, 3);
  auto deliveries = webhooks().list_deliveries("wh_" + a, 10);
  ASSERT_TRUE(deliveries.ok());
  ASSERT_EQ(deliveries->size(), 1u);
  EXPECT_EQ((*deliveries)[0].event_type, "session.ended");
  EXPECT_NE((*deliveries)[0].payload.find(R"("session_id":"ses_e")"), std::string::npos);
}

TEST_P(SessionStoreContract, ConcurrentEndsFromTwoOpeningsEndItOnce) {
  auto a = new_account(0);
  ASSERT_TRUE(webhooks().create(hook(a)).ok());
  auto other = open_another();
  ASSERT_TRUE(other.ok()) << other.status().message();
  for (int i = 0; i < 5; ++i) {
    const std::string id = "ses_c" + std::to_string(i);
    ASSERT_TRUE(sessions().create(session(a, id, kT0 + i)).ok());
    std::atomic<int> winners{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      SessionStore& store = t % 2 ? *other->sessions : sessions();
      threads.emplace_back([&store, &winners, id] {
        auto r = store.end(id, ending(1), "{}");
        if (r.ok() && *r) ++winners;
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(winners.load(), 1) << id;
  }
  EXPECT_EQ(webhooks().list_deliveries("wh_" + a, 100)->size(), 5u);
}

// The end of a session whose node died with its disk (a sweep, docs/sessions.md): a recording
// still being made becomes failed with the end, and only by the call that ends it.
TEST_P(SessionStoreContract, AnEndThatLosesTheRecordingFailsOnlyOneStillBeingMade) {
  auto a = new_account(0);
  SessionEnd lost = ending(1);
  lost.recording_lost = true;
  ASSERT_TRUE(sessions().create(session(a, "ses_lost", kT0)).ok());
  ASSERT_TRUE(sessions().set_recording("ses_lost", {"recording", std::nullopt, 0, 0, "", ""}).ok());
  EXPECT_TRUE(*sessions().end("ses_lost", lost, "{}"));
  EXPECT_EQ(sessions().get(a, "ses_lost")->recording->status, "failed");

  // Already ended (its node ended it, then the recorder reported): a later lost end changes nothing.
  ASSERT_TRUE(sessions().create(session(a, "ses_done", kT0)).ok());
  ASSERT_TRUE(sessions().set_recording("ses_done", {"recording", std::nullopt, 0, 0, "", ""}).ok());
  EXPECT_TRUE(*sessions().end("ses_done", ending(1), "{}"));
  EXPECT_FALSE(*sessions().end("ses_done", lost, "{}"));
  EXPECT_EQ(sessions().get(a, "ses_done")->recording->status, "recording");

  // A session without a recording gets none.
  ASSERT_TRUE(sessions().create(session(a, "ses_none", kT0)).ok());
  EXPECT_TRUE(*sessions().end("ses_none", lost, "{}"));
  EXPECT_FALSE(sessions().get(a, "ses_none")->recording.has_value());
}

TEST_P(SessionStoreContract, ARecordingIsAFileRecordAndGoesWithIt) {
  auto a = new_account(0), b = new_account(0);
  ASSERT_TRUE(sessions().create(session(a, "ses_r", kT0)).ok());
  ASSERT_TRUE(sessions().set_recording("ses_r", {"recording", std::nullopt, 0, 0, "", ""}).ok());
  EXPECT_EQ(sessions().get(a, "ses_r")->recording->status, "recording");

  FileRecord f;
  f.id = "file_rec1";
  f.account_id = a;
  f.agent_code = "AGENT1";
  f.purpose = "recording";
  f.blob_key = "agents/" + a + "/AGENT1/file_rec1.mp4";
  f.kind = "video";
  f.mime = "video/mp4";
  f.ext = "mp4";
  f.size = 12345;
  ASSERT_TRUE(
      sessions().finish_recording("ses_r", {"ready", std::nullopt, 12345, 3000, "h264", "opus"}, f).ok());
  auto got = sessions().get(a, "ses_r");
  ASSERT_TRUE(got.ok());
  ASSERT_TRUE(got->recording);
  EXPECT_EQ(got->recording->status, "ready");
  EXPECT_EQ(got->recording->file_id, "file_rec1");
  EXPECT_EQ(got->recording->bytes, 12345);
  EXPECT_EQ(got->recording->duration_ms, 3000);
  EXPECT_EQ(got->recording->video_codec, "h264");
  EXPECT_EQ(got->recording->audio_codec, "opus");
  // It counts against the account's storage.
  EXPECT_EQ(*files().usage_bytes(a), 12345);

  EXPECT_EQ(sessions().remove_recording(b, "ses_r").status().code(), Code::kNotFound);
  auto keys = sessions().remove_recording(a, "ses_r");
  ASSERT_TRUE(keys.ok()) << keys.status().message();
  ASSERT_EQ(keys->size(), 1u);
  EXPECT_EQ((*keys)[0], f.blob_key);
  EXPECT_FALSE(sessions().get(a, "ses_r")->recording);
  EXPECT_EQ(*files().usage_bytes(a), 0);
  EXPECT_EQ(sessions().remove_recording(a, "ses_r").status().code(), Code::kNotFound);

  // A file deleted with its agent leaves the session without a recording.
  f.id = "file_rec2";
  ASSERT_TRUE(
      sessions().finish_recording("ses_r", {"ready", std::nullopt, 10, 1000, "h264", "opus"}, f).ok());
  ASSERT_TRUE(sessions().get(a, "ses_r")->recording);
  ASSERT_TRUE(files().remove(a, "file_rec2").ok());
  EXPECT_FALSE(sessions().get(a, "ses_r")->recording);
}

IMAGO_STORE_CONTRACT(SessionStoreContract);

}  // namespace
}  // namespace imago::contracts
