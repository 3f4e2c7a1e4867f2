// Talking videos without HTTP: real stores (SQLite in a temporary directory), blobs and a
// ManualClock. The speech comes from an inline WAV (input type "audio"), so no synthesis runs.
#include "agents/video_service.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "agents/agent_service.h"
#include "blobs/blob_store.h"
#include "store/stores.h"
#include "store/test_local_backend.h"
#include "util/base64.h"
#include "util/random.h"

namespace imago::agents {
namespace {

// A portrait (Debian opencv-doc), base64: generation refuses a picture without a face.
std::string face_base64() {
  std::ifstream in("/usr/share/doc/opencv-doc/opencv4/html/face_swapped.jpg", std::ios::binary);
  return base64_encode(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
}

// A mono 16-bit WAV of `seconds` of a 220 Hz tone, as a data: URI.
std::string wav_data_uri(double seconds) {
  const int rate = 16000;
  const auto n = static_cast<uint32_t>(seconds * rate);
  std::string w;
  auto u32 = [&](uint32_t v) {
    for (int i = 0; i < 4; ++i) w.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  auto u16 = [&](uint16_t v) {
    w.push_back(static_cast<char>(v & 0xff));
    w.push_back(static_cast<char>(v >> 8));
  };
  w += "RIFF";
  u32(36 + n * 2);
  w += "WAVEfmt ";
  u32(16);
  u16(1);
  u16(1);
  u32(rate);
  u32(rate * 2);
  u16(2);
  u16(16);
  w += "data";
  u32(n * 2);
  for (uint32_t i = 0; i < n; ++i)
    u16(static_cast<uint16_t>(static_cast<int16_t>(8000 * std::sin(i * 0.0864))));
  return "data:audio/wav;base64," + base64_encode(w);
}

class VideoServiceTest : public ::testing::Test {
 protected:
  VideoServiceTest() {
    AgentServiceDeps ad;
    ad.agents = backend_.stores.agents.get();
    ad.files = backend_.stores.files.get();
    ad.blobs = backend_.blobs.get();
    ad.clock = &clock_;
    ad.public_url = &public_url_;
    agents_ = std::make_unique<AgentService>(ad);
    VideoServiceDeps vd;
    vd.agents = backend_.stores.agents.get();
    vd.files = backend_.stores.files.get();
    vd.blobs = backend_.blobs.get();
    vd.jobs = backend_.stores.jobs.get();
    vd.ledger = backend_.stores.ledger.get();
    vd.clock = &clock_;
    vd.public_url = &public_url_;
    vd.wake_workers = [this] { ++wakes_; };
    video_ = std::make_unique<VideoService>(vd);
  }

  std::string account(int64_t credits) {
    KeyMaterial km{"svc-" + random_base62(12), "imago_sk_x", "abcd"};
    return backend_.stores.accounts->create_account("a", Plan::kFree, credits, "default", km)->first.id;
  }
  int64_t balance(const std::string& acct) { return backend_.stores.ledger->balance(acct)->total(); }

  // An agent whose generation finished: generated through the domain, its job claimed and
  // finished with a model file.
  std::string ready_agent(const std::string& acct) {
    GenerateRequest r;
    r.image = face_base64();
    auto g = agents_->generate(acct, r);
    EXPECT_TRUE(g.ok()) << g.status().message();
    auto job = backend_.stores.jobs->claim(kLaneGenerate, "w", 60'000'000);
    EXPECT_TRUE(job.ok() && job->has_value());
    FileRecord model;
    model.id = "file_" + random_base62(20);
    model.account_id = acct;
    model.agent_code = g->agent_id;
    model.purpose = "model";
    model.blob_key = "models/" + g->agent_id + ".imx";
    model.kind = "model";
    model.mime = "application/octet-stream";
    model.ext = "imx";
    model.size = 100;
    GenerationOutcome o;
    o.account_id = acct;  // agent codes are per account
    o.code = g->agent_id;
    o.lease = {(*job)->id, "w"};
    o.success = true;
    o.files = {model};
    o.model_file = model.id;
    o.event = "agent.ready";
    o.event_data = "{}";
    auto done = backend_.stores.agents->finish_generation(o);
    EXPECT_TRUE(done.ok() && *done) << (done.ok() ? "" : done.status().message());
    EXPECT_NE(backend_.stores.jobs->get((*job)->id)->state, "running");  // finishing closed the job
    return g->agent_id;
  }

  VideoRequest audio_request(const std::string& code, double seconds = 3) {
    VideoRequest r;
    r.agent_code = code;
    r.input_type = "audio";
    r.audio_url = wav_data_uri(seconds);
    return r;
  }
  int video_jobs(const std::string& acct) {
    int n = 0;
    while (auto j = *backend_.stores.jobs->claim(kLaneGenerate, "counter", 60'000'000)) {
      n += j->kind == kJobVideoRender && j->account_id == acct;
      EXPECT_TRUE(*backend_.stores.jobs->release(j->id, "counter", 0));
      if (n > 100) break;
    }
    return n;
  }

  // Moves the ManualClock on in small steps until `done` (the waiting thread polls on it).
  void advance_until(const std::atomic<bool>& done) {
    for (int i = 0; i < 5000 && !done; ++i) {
      clock_.advance_us(200'000);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  ManualClock clock_;
  std::string public_url_ = "http://127.0.0.1:1";
  LocalBackend backend_{"video", clock_};  // before what uses it: gone after it
  std::unique_ptr<AgentService> agents_;
  std::unique_ptr<VideoService> video_;
  int wakes_ = 0;
};

TEST_F(VideoServiceTest, AudioInputChargesTheOutputMinutesOnceAndQueuesTheRender) {
  auto acct = account(1000);
  auto code = ready_agent(acct);
  int64_t before = balance(acct);
  auto v = video_->start(acct, audio_request(code, 3));
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(v->status, "processing");
  EXPECT_EQ(v->agent_code, code);
  EXPECT_NEAR(v->duration_s, 3.4, 0.05);  // speech plus the idle tail, whole frames
  EXPECT_EQ(v->credits, 2);               // one started minute at the essence rate
  EXPECT_EQ(balance(acct), before - 2);
  EXPECT_EQ(wakes_, 1);
  auto got = video_->get(acct, v->job_id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->status, "processing");
  EXPECT_EQ(got->credits, 2);
}

TEST_F(VideoServiceTest, InvalidRequestsChargeNothingAndQueueNothing) {
  auto acct = account(1000);
  auto code = ready_agent(acct);
  int64_t before = balance(acct);
  std::vector<VideoRequest> bad;
  bad.push_back(VideoRequest{});  // no agent_code
  VideoRequest r = audio_request(code);
  r.input_type = "music";
  bad.push_back(r);
  r = audio_request(code);
  r.text = "hello";  // text belongs to type text
  bad.push_back(r);
  r = audio_request(code);
  r.audio_url = "data:audio/wav;base64,AAAA";  // not audio
  bad.push_back(r);
  r = VideoRequest{};
  r.agent_code = code;
  r.input_type = "text";
  r.text = std::string(5001, 'a');
  bad.push_back(r);
  r = audio_request(code, 121);  // longer than the limit of output
  bad.push_back(r);
  r = audio_request(code);
  r.idempotency_key = std::string(201, 'k');
  bad.push_back(r);
  for (size_t i = 0; i < bad.size(); ++i) {
    auto v = video_->start(acct, bad[i]);
    ASSERT_FALSE(v.ok()) << i;
    EXPECT_EQ(v.status().code(), Code::kInvalidArgument) << i << ": " << v.status().message();
  }
  EXPECT_EQ(balance(acct), before);
  EXPECT_EQ(video_jobs(acct), 0);
}

TEST_F(VideoServiceTest, UnknownOrForeignAgentIsNotFound) {
  auto owner = account(1000);
  auto other = account(1000);
  auto code = ready_agent(owner);
  auto v = video_->start(other, audio_request(code));
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), Code::kNotFound);
  EXPECT_EQ(video_->start(other, audio_request("nope123")).status().code(), Code::kNotFound);
  EXPECT_EQ(balance(other), 1000);
}

TEST_F(VideoServiceTest, ShortBalanceChargesNothingAndLeavesNoJob) {
  auto acct = account(251);  // the generation costs 250: one credit left, a minute costs two
  auto code = ready_agent(acct);
  auto v = video_->start(acct, audio_request(code));
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), Code::kInsufficientFunds);
  EXPECT_EQ(balance(acct), 1);
  EXPECT_EQ(video_jobs(acct), 0);
}

TEST_F(VideoServiceTest, StorageQuotaReachedRefusesBeforeCharging) {
  auto acct = account(1000);
  auto code = ready_agent(acct);  // its files use more than one byte
  int64_t before = balance(acct);
  auto r = audio_request(code);
  r.storage_quota_bytes = 1;
  auto v = video_->start(acct, r);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().code(), Code::kInternal);
  EXPECT_EQ(balance(acct), before);
  EXPECT_EQ(video_jobs(acct), 0);
}

TEST_F(VideoServiceTest, IdempotencyKeyReplaysTheJobWithoutASecondCharge) {
  auto acct = account(1000);
  auto code = ready_agent(acct);
  auto r = audio_request(code);
  r.idempotency_key = "k-1";
  auto first = video_->start(acct, r);
  ASSERT_TRUE(first.ok()) << first.status().message();
  int64_t after_first = balance(acct);
  auto again = video_->start(acct, r);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->replayed);
  EXPECT_EQ(again->job_id, first->job_id);
  EXPECT_EQ(balance(acct), after_first);
  // The same key in another account is another job.
  auto other = account(1000);
  auto other_code = ready_agent(other);
  auto theirs = video_->start(other, audio_request(other_code));
  ASSERT_TRUE(theirs.ok());
  EXPECT_NE(theirs->job_id, first->job_id);
}

TEST_F(VideoServiceTest, WaitEndsWhenTheRenderFinishes) {
  auto acct = account(1000);
  auto code = ready_agent(acct);
  auto v = video_->start(acct, audio_request(code));
  ASSERT_TRUE(v.ok());
  Result<VideoJob> waited = Status::Internal("not run");
  std::atomic<bool> done{false};
  std::thread waiter([&] {
    waited = video_->wait(acct, v->job_id, kMaxVideoWaitMs);
    done = true;
  });
  auto job = *backend_.stores.jobs->claim(kLaneGenerate, "renderer", 60'000'000);
  ASSERT_TRUE(job);
  ASSERT_EQ(job->id, v->job_id);
  ASSERT_TRUE(*backend_.stores.jobs->complete(job->id, "renderer"));
  advance_until(done);
  waiter.join();
  ASSERT_TRUE(waited.ok()) << waited.status().message();
  EXPECT_EQ(waited->status, "completed");
  ASSERT_TRUE(waited->video_url);
  EXPECT_EQ(waited->video_url->rfind(public_url_, 0), 0u);
}

TEST_F(VideoServiceTest, WaitGivesUpAfterItsTimeAndFewMayWaitAtOnce) {
  auto acct = account(1000);
  auto code = ready_agent(acct);
  auto v = video_->start(acct, audio_request(code));
  ASSERT_TRUE(v.ok());
  Result<VideoJob> waited = Status::Internal("not run");
  std::atomic<bool> done{false};
  std::thread waiter([&] {
    waited = video_->wait(acct, v->job_id, 5000);
    done = true;
  });
  for (int i = 0; i < 5000 && video_->waiting() == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(video_->waiting(), 1);
  // While one request of the account waits, another answers at once with the current state (the
  // clock stands still, so a second waiter would never return).
  auto second = video_->wait(acct, v->job_id, 5000);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->status, "processing");
  advance_until(done);
  waiter.join();
  ASSERT_TRUE(waited.ok());
  EXPECT_EQ(waited->status, "processing");  // 5 s passed without a render
  EXPECT_EQ(video_->waiting(), 0);
}

TEST_F(VideoServiceTest, ShutdownEndsWaits) {
  auto acct = account(1000);
  auto code = ready_agent(acct);
  auto v = video_->start(acct, audio_request(code));
  ASSERT_TRUE(v.ok());
  Result<VideoJob> waited = Status::Internal("not run");
  std::thread waiter([&] { waited = video_->wait(acct, v->job_id, kMaxVideoWaitMs); });
  video_->shutdown();
  waiter.join();
  ASSERT_TRUE(waited.ok());
  EXPECT_EQ(waited->status, "processing");
}

}  // namespace
}  // namespace imago::agents
