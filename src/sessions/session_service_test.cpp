// SessionService over the real SQLite stores and the filesystem blob store: a finished recording
// goes through the blob store, becomes a file of the agent (the storage quota counts it) and is
// served and deleted; the session.ended event's data names the URLs; a second end sends nothing.
#include "sessions/session_service.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "blobs/blob_store.h"
#include "store/stores.h"
#include "store/test_local_backend.h"
#include "util/random.h"

namespace imago::sessions {
namespace {

class SessionServiceTest : public ::testing::Test {
 protected:
  SessionServiceTest() {
    service_ = std::make_unique<SessionService>(
        SessionServiceDeps{backend_.stores.sessions.get(), backend_.stores.files.get(), backend_.blobs.get(),
                           &clock_, &public_url_});
    KeyMaterial km{"svc-" + random_base62(12), "imago_sk_x", "abcd"};
    account_ = backend_.stores.accounts->create_account("a", Plan::kFree, 0, "default", km)->first.id;
    clock_.set_us(1'795'370'400'000'000);
  }
  SessionRecord session(const std::string& id) {
    SessionRecord s;
    s.session_id = id;
    s.account_id = account_;
    s.agent_code = "AGENT1";
    s.room_id = "lobby";
    s.billing_type = "essence_cloud";
    s.started_us = clock_.now_us();
    return s;
  }

  ManualClock clock_;
  std::string account_;
  std::string public_url_ = "https://imago.example";
  LocalBackend backend_{"sessions", clock_};  // before what uses it: gone after it
  std::unique_ptr<SessionService> service_;
};

TEST_F(SessionServiceTest, AFinishedRecordingIsStoredServedCountedAndDeleted) {
  const SessionRecord s = session("ses_rec");
  ASSERT_TRUE(service_->started(s).ok());
  ASSERT_TRUE(service_->recording_started(s.session_id).ok());
  EXPECT_EQ(service_->open_recording(account_, s.session_id).status().code(), Code::kNotFound);

  // Larger than one blob chunk: written and read chunk by chunk.
  const std::string bytes = random_bytes(kBlobChunkBytes + 12345);
  const std::string path = backend_.dir + "/local.mp4";
  std::ofstream(path, std::ios::binary) << bytes;
  ASSERT_TRUE(service_->recording_finished(s, {path, static_cast<int64_t>(bytes.size()), 2500}).ok());
  EXPECT_FALSE(std::filesystem::exists(path)) << "the local file is removed once stored";

  auto got = service_->get(account_, s.session_id);
  ASSERT_TRUE(got.ok());
  ASSERT_TRUE(got->recording);
  EXPECT_EQ(got->recording->status, "ready");
  EXPECT_EQ(got->recording->bytes, static_cast<int64_t>(bytes.size()));
  EXPECT_EQ(got->recording->duration_ms, 2500);
  EXPECT_EQ(got->recording->video_codec, "h264");
  EXPECT_EQ(got->recording->audio_codec, "opus");
  EXPECT_EQ(*backend_.stores.files->usage_bytes(account_), static_cast<int64_t>(bytes.size()));

  auto reader = service_->open_recording(account_, s.session_id);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  std::string read;
  while (static_cast<int64_t>(read.size()) < (*reader)->size()) {
    auto piece = (*reader)->read(static_cast<int64_t>(read.size()), kBlobChunkBytes);
    ASSERT_TRUE(piece.ok());
    ASSERT_FALSE(piece->empty());
    read += *piece;
  }
  EXPECT_EQ(read, bytes);
  EXPECT_EQ(service_->open_recording("usr_other", s.session_id).status().code(), Code::kNotFound);

  ASSERT_TRUE(service_->delete_recording(account_, s.session_id).ok());
  EXPECT_EQ(*backend_.stores.files->usage_bytes(account_), 0);
  EXPECT_EQ(service_->open_recording(account_, s.session_id).status().code(), Code::kNotFound);
  EXPECT_EQ(service_->delete_recording(account_, s.session_id).code(), Code::kNotFound);
  int blob_files = 0;
  for (const auto& f : std::filesystem::recursive_directory_iterator(backend_.dir + "/blobs"))
    blob_files += f.is_regular_file();
  EXPECT_EQ(blob_files, 0) << "the blob is deleted";
}

TEST_F(SessionServiceTest, AMissingLocalFileMarksTheRecordingFailed) {
  const SessionRecord s = session("ses_gone");
  ASSERT_TRUE(service_->started(s).ok());
  ASSERT_TRUE(service_->recording_started(s.session_id).ok());
  EXPECT_FALSE(service_->recording_finished(s, {backend_.dir + "/nope.mp4", 10, 1000}).ok());
  auto got = service_->get(account_, s.session_id);
  ASSERT_TRUE(got.ok() && got->recording);
  EXPECT_EQ(got->recording->status, "failed");
  EXPECT_EQ(*backend_.stores.files->usage_bytes(account_), 0);
}

TEST_F(SessionServiceTest, TheEndEventNamesItsUrlsAndASecondEndChangesNothing) {
  const SessionRecord s = session("ses_end");
  ASSERT_TRUE(service_->started(s).ok());
  const SessionEnd e{s.started_us + 61'500'000, "left", 2, 3};
  const std::string data = session_ended_event_json(s, e, service_->recording_url(s.session_id),
                                                    service_->transcript_url(s.session_id));
  auto v = boost::json::parse(data).as_object();
  EXPECT_EQ(v.at("session_id").as_string(), "ses_end");
  EXPECT_EQ(v.at("agent_code").as_string(), "AGENT1");
  EXPECT_EQ(v.at("room_id").as_string(), "lobby");
  EXPECT_DOUBLE_EQ(v.at("duration_seconds").as_double(), 61.5);
  EXPECT_EQ(v.at("minutes_charged").as_int64(), 2);
  EXPECT_EQ(v.at("end_reason").as_string(), "left");
  EXPECT_EQ(v.at("recording_url").as_string(), "https://imago.example/v1/sessions/ses_end/recording");
  EXPECT_EQ(v.at("transcript_url").as_string(), "https://imago.example/v1/sessions/ses_end/transcript");
  EXPECT_TRUE(boost::json::parse(session_ended_event_json(s, e, std::nullopt, "t"))
                  .as_object()
                  .at("recording_url")
                  .is_null());

  auto first = service_->ended(s, e, false);
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(*first);
  auto second = service_->ended(s, SessionEnd{e.ended_us + 1, "shutdown", 5, 5}, false);
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(*second);
  auto got = service_->get(account_, s.session_id);
  EXPECT_EQ(got->end_reason, "left");
  EXPECT_EQ(got->minutes_charged, 2);
}

}  // namespace
}  // namespace imago::sessions
