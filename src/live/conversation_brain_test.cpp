// ConversationBrain's stop(): the one owner of the brain's threads. A real Room (procedural model,
// test speech), the real recogniser (pocketsphinx models) and the fake language model server.
#include "live/conversation_brain.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <future>
#include <thread>

#include "avatar/builder.h"
#include "fixtures/fake_llm.h"
#include "live/room_closer.h"
#include "speech/test_speech.h"

namespace imago::live {
namespace {

std::shared_ptr<const avatar::AvatarModel> model() {
  static std::shared_ptr<const avatar::AvatarModel> m = [] {
    avatar::BuildInput in;
    in.agent_id = "brain_test";
    in.aspect_ratio = "1:1";
    auto imx = avatar::build_imx(in, {});
    EXPECT_TRUE(imx.ok());
    auto loaded = avatar::load_model(*imx, 128, 128);
    EXPECT_TRUE(loaded.ok());
    return *loaded;
  }();
  return m;
}

struct RoomFixture {
  ManualClock clock;
  std::shared_ptr<Room> room;
  RoomFixture() {
    RoomSettings s;
    s.account_id = "usr_1";
    s.room_id = "lobby";
    s.agent_code = "A00AAA0000";
    s.session_id = "ses_brain";
    RoomCallbacks cb;
    cb.charge_minute = [](const Room&, int64_t) { return Status::Ok(); };
    auto r = Room::create(s, model(), &speech::test_service(), clock, cb);
    EXPECT_TRUE(r.ok());
    room = *r;
    room->start();
  }
  ~RoomFixture() {
    room->end(EndReason::kTerminated);
    room->tick();
    room->join_threads();
  }
};

// 20 ms of a voiced, syllable-like sound at 16 kHz s16le: the turn detector hears speech, so the
// recogniser has real work for every frame.
std::string voiced_frame(int index) {
  std::string out(640, '\0');
  for (int i = 0; i < 320; ++i) {
    const double t = (index * 320 + i) / 16000.0;
    const double envelope = 0.5 + 0.5 * std::sin(2 * M_PI * 4 * t);  // four syllables a second
    const double v = envelope * (0.5 * std::sin(2 * M_PI * 180 * t) + 0.3 * std::sin(2 * M_PI * 720 * t) +
                                 0.2 * std::sin(2 * M_PI * 2400 * t));
    const auto s = static_cast<int16_t>(v * 12000);
    out[2 * i] = static_cast<char>(s & 0xff);
    out[2 * i + 1] = static_cast<char>((s >> 8) & 0xff);
  }
  return out;
}

// Waits for `f` without ever hanging the suite: false when it did not finish in `seconds`.
bool finishes(std::future<void>& f, int seconds = 60) {
  return f.wait_for(std::chrono::seconds(seconds)) == std::future_status::ready;
}

// Finding: DELETE and the registry's reaper both stopped a room whose ears were busy, and both
// joined the ears thread: glibc refuses the second pthread_join (EINVAL, an exception out of the
// tick thread) or waits on a reused thread for good. stop() now has one owner.
TEST(ConversationBrain, ConcurrentStopsWhileTheEarsAreBusyReturnAndJoinOnce) {
  RoomFixture fx;
  ConversationBrainOptions o;
  auto brain = std::make_shared<ConversationBrain>(*fx.room, "You are a guide.", o);
  fx.room->set_brain(brain);
  for (int i = 0; i < 600; ++i) ASSERT_TRUE(fx.room->microphone(voiced_frame(i)).ok());
  fx.room->end(EndReason::kTerminated);  // as DELETE does; the reaper then joins too
  fx.room->tick();
  std::atomic<int> threw{0};
  auto stop = [&] {
    try {
      fx.room->join_threads();
    } catch (const std::exception&) {
      ++threw;
    }
  };
  auto a = std::async(std::launch::async, stop);
  auto b = std::async(std::launch::async, stop);
  ASSERT_TRUE(finishes(a)) << "stop() hung";
  ASSERT_TRUE(finishes(b)) << "stop() hung";
  EXPECT_EQ(threw.load(), 0);
  // Audio after the stop is not queued and starts no thread.
  EXPECT_TRUE(brain->on_microphone(*fx.room, voiced_frame(0)));
  brain->stop();  // idempotent
}

// The ears stop between two chunks, not after the backlog (up to 10 s of audio, several seconds
// of CPU): stop() while 600 frames wait returns with most of them never recognised.
TEST(ConversationBrain, StopDropsTheQueuedAudio) {
  RoomFixture fx;
  ConversationBrainOptions o;
  auto brain = std::make_shared<ConversationBrain>(*fx.room, "", o);
  fx.room->set_brain(brain);
  for (int i = 0; i < 600; ++i) ASSERT_TRUE(fx.room->microphone(voiced_frame(i)).ok());
  auto a = std::async(std::launch::async, [&] { brain->stop(); });
  ASSERT_TRUE(finishes(a)) << "stop() hung";
}

// A chat endpoint that accepts the request and never answers: stop() cancels it.
TEST(ConversationBrain, StopReturnsWhileTheModelNeverAnswers) {
  testing::FakeLlmServer llm;
  llm.control({{"mode", "hang"}});
  RoomFixture fx;
  ConversationBrainOptions o;
  conversation::ChatClientOptions co;
  co.base_url = llm.base_url();
  co.model = "fake";
  co.allow_private = true;  // the fake server is on loopback
  o.llm = co;
  auto brain = std::make_shared<ConversationBrain>(*fx.room, "You are a guide.", o);
  fx.room->set_brain(brain);
  (void)fx.room->user_text("Hello there, what can you do?");
  bool asked = false;  // the request is at the model (bounded: only a real hang fails)
  for (int i = 0; i < 600 && !asked; ++i) {
    asked = !llm.requests().empty();
    if (!asked) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(asked);
  fx.room->end(EndReason::kTerminated);
  fx.room->tick();
  auto a = std::async(std::launch::async, [&] { fx.room->join_threads(); });
  ASSERT_TRUE(finishes(a)) << "stop() hung on the model request";
}

// A brain whose stop() blocks until the test lets it go: the closer holds it, nobody else waits.
class BlockingBrain : public SessionBrain {
 public:
  void on_user_text(Room&, const std::string&) override {}
  void on_add_context(Room&, const std::string&) override {}
  void stop() override {
    std::unique_lock lock(mu);
    ++stops;
    cv.notify_all();
    cv.wait_for(lock, std::chrono::seconds(60), [&] { return released; });
  }
  void release() {
    std::lock_guard lock(mu);
    released = true;
    cv.notify_all();
  }
  bool wait_stopping() {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(60), [&] { return stops > 0; });
  }
  std::mutex mu;
  std::condition_variable cv;
  int stops = 0;
  bool released = false;
};

TEST(RoomCloser, ClosingReturnsAtOnceAndFinishWaitsForEveryRoom) {
  RoomFixture fx;
  auto brain = std::make_shared<BlockingBrain>();
  fx.room->set_brain(brain);
  fx.room->end(EndReason::kTerminated);
  fx.room->tick();
  RoomCloser closer;
  std::atomic<int> after{0};
  closer.close(fx.room, [&] { ++after; });  // returns although the brain's stop() blocks
  ASSERT_TRUE(brain->wait_stopping());
  EXPECT_EQ(closer.pending(), 1u);
  EXPECT_EQ(after.load(), 0);
  auto f = std::async(std::launch::async, [&] { closer.finish(); });
  brain->release();
  ASSERT_TRUE(finishes(f));
  EXPECT_EQ(after.load(), 1);
  EXPECT_EQ(closer.pending(), 0u);
  fx.room->set_brain(nullptr);
}

TEST(RoomCloser, ReleasesFreeMemoryOnceTheRoomsItClosedAreDestroyed) {
  // The free pages of an ended room's threads go back to the OS (util/memory_release.h): the
  // release runs on the closer's thread after the room is destroyed, once per emptied queue.
  std::weak_ptr<Room> room_seen;
  std::atomic<int> releases{0};
  std::atomic<bool> room_destroyed_before{false};
  RoomCloser closer([&] {
    room_destroyed_before = room_seen.expired();
    ++releases;
  });
  {
    ManualClock clock;
    RoomSettings s;
    s.account_id = "usr_1";
    s.room_id = "lobby";
    s.agent_code = "A00AAA0000";
    s.session_id = "ses_closed";
    RoomCallbacks cb;
    cb.charge_minute = [](const Room&, int64_t) { return Status::Ok(); };
    auto r = Room::create(s, model(), &speech::test_service(), clock, cb);
    ASSERT_TRUE(r.ok());
    std::shared_ptr<Room> room = std::move(*r);  // the closer holds the last reference
    room->start();
    room->end(EndReason::kTerminated);
    room->tick();
    room_seen = room;
    closer.close(std::move(room));
    closer.finish();  // the clock outlives the room's threads
  }
  EXPECT_EQ(releases.load(), 1);
  EXPECT_TRUE(room_destroyed_before.load());
  EXPECT_TRUE(room_seen.expired());
}

// Finding: every add_context item was also kept by the brain for the recogniser's vocabulary,
// beyond the room's bound (50 items / 64 KiB): a flood grew the brain, and each rebuild of the
// vocabulary copied all of it. The vocabulary is now the prompt plus what the room keeps.
TEST(ConversationBrain, TheRecognisersVocabularyKeepsOnlyWhatTheRoomKeeps) {
  RoomFixture fx;
  ConversationBrainOptions o;
  o.listen = false;
  auto brain = std::make_shared<ConversationBrain>(*fx.room, "You are a test.", o);
  fx.room->set_brain(brain);
  for (int i = 0; i < 500; ++i)
    ASSERT_TRUE(fx.room->add_context("Fact number " + std::to_string(i) + ".").ok());
  const size_t kept = fx.room->context().size();
  EXPECT_EQ(kept, RoomLimits{}.context_items);
  EXPECT_EQ(brain->domain_items(), kept + 1);  // and the prompt
  brain->stop();
}

}  // namespace
}  // namespace imago::live
