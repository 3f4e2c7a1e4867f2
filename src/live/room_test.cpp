// Room over a fake connection, the real renderer (procedural model) and the real speech engine:
// session.started, speech events around the audio, interrupt flushing, gestures, billing ticks.
#include "live/room.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "avatar/builder.h"
#include "billing/spend_cap.h"
#include "live/media_framing.h"
#include "speech/test_speech.h"
#include "util/json.h"

namespace imago::live {
namespace {

class FakeConnection : public http::WebSocketConnection {
 public:
  bool send_text(std::string m) override {
    std::lock_guard l(mu);
    texts.push_back(std::move(m));
    return true;
  }
  bool send_binary(http::WsBytes b, http::WsMessageClass cls) override {
    std::lock_guard l(mu);
    MediaHeader h;
    if (decode_media_header(*b, &h)) {
      if (h.flags & kFlagConfig) {
        ++configs;
      } else if (h.kind == MediaKind::kAudio) {
        ++audio;
        if (h.flags & kFlagSpeaking) ++speaking_audio;
      } else {
        ++video;
        video_headers.push_back(h);
      }
    }
    (void)cls;
    return true;
  }
  void discard_queued(http::WsMessageClass cls) override {
    std::lock_guard l(mu);
    discarded.push_back(cls);
  }
  size_t queued_bytes() const override { return queued.load(); }
  void close(uint16_t code, std::string) override {
    std::lock_guard l(mu);
    closed = code;
  }
  const std::string& client_ip() const override { return ip; }

  std::vector<json::object> events(std::string_view type) {
    std::lock_guard l(mu);
    std::vector<json::object> out;
    for (auto& t : texts) {
      auto v = json::parse(t).as_object();
      if (v.at("type").as_string() == type) out.push_back(v);
    }
    return out;
  }
  int count_audio() {
    std::lock_guard l(mu);
    return audio;
  }
  int count_video() {
    std::lock_guard l(mu);
    return video;
  }

  std::mutex mu;
  std::vector<std::string> texts;
  int audio = 0, video = 0, speaking_audio = 0, configs = 0;
  std::vector<MediaHeader> video_headers;
  std::atomic<size_t> queued{0};  // what the viewer has not read yet (a throttled viewer)
  std::vector<http::WsMessageClass> discarded;
  int closed = 0;
  std::string ip = "127.0.0.1";
};

std::shared_ptr<const avatar::AvatarModel> model() {
  static std::shared_ptr<const avatar::AvatarModel> m = [] {
    avatar::BuildInput in;
    in.agent_id = "room_test";
    in.aspect_ratio = "1:1";
    auto imx = avatar::build_imx(in, {});
    EXPECT_TRUE(imx.ok());
    auto loaded = avatar::load_model(*imx, 256, 256);
    EXPECT_TRUE(loaded.ok());
    return *loaded;
  }();
  return m;
}

bool eventually(const std::function<bool()>& f, double seconds = 20) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (f()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return f();
}

struct Fixture {
  ManualClock clock;
  std::vector<int64_t> charged;
  std::mutex mu;
  bool refuse = false;
  Status refusal = Status::InsufficientFunds("Insufficient credits");
  bool dynamics_on = false;
  std::shared_ptr<Room> room;

  // start: false leaves the render and speech threads off, so nothing drains the speech queue.
  explicit Fixture(bool start = true) {
    RoomSettings s;
    s.account_id = "usr_1";
    s.room_id = "lobby";
    s.agent_code = "A00AAA0000";
    s.session_id = "ses_test";
    RoomCallbacks cb;
    cb.charge_minute = [this](const Room&, int64_t m) -> Status {
      std::lock_guard l(mu);
      if (refuse) return refusal;
      charged.push_back(m);
      return Status::Ok();
    };
    cb.dynamics = [this](const Room&) {
      DynamicsSettings d;
      d.enabled = dynamics_on;
      return std::optional<DynamicsSettings>(d);
    };
    auto r = Room::create(s, model(), &speech::test_service(), clock, cb);
    EXPECT_TRUE(r.ok());
    room = *r;
    if (start) room->start();
  }
  ~Fixture() {
    room->end(EndReason::kTerminated);
    room->tick();
    room->join_threads();
  }
};

TEST(Room, ViewerGetsSessionStartedThenFramesAtTheSameIndexForAudioAndVideo) {
  Fixture fx;
  auto c = std::make_shared<FakeConnection>();
  fx.room->add_viewer(c, ViewerRole::kRuntime);
  auto started = c->events("session.started");
  ASSERT_EQ(started.size(), 1u);
  EXPECT_EQ(started[0].at("room_id").as_string(), "lobby");
  EXPECT_EQ(started[0].at("session_id").as_string(), "ses_test");
  EXPECT_EQ(started[0].at("width").as_int64(), 256);
  EXPECT_EQ(started[0].at("fps").as_int64(), 25);
  EXPECT_EQ(started[0].at("audio_rate").as_int64(), 24000);
  ASSERT_TRUE(eventually([&] { return c->count_video() >= 5; }));
  EXPECT_GE(c->count_audio(), c->count_video());
}

TEST(Room, SpeakSendsSpeechStartedAudioAndPlaybackFinished) {
  Fixture fx;
  auto c = std::make_shared<FakeConnection>();
  fx.room->add_viewer(c, ViewerRole::kRuntime);
  auto id = fx.room->speak("Hello there.");
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(eventually([&] { return !c->events("playback_finished").empty(); }));
  auto s = c->events("speech.started");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].at("utterance_id").as_string(), *id);
  EXPECT_EQ(s[0].at("text").as_string(), "Hello there.");
  auto f = c->events("playback_finished")[0];
  EXPECT_EQ(f.at("utterance_id").as_string(), *id);
  EXPECT_FALSE(f.at("interrupted").as_bool());
  EXPECT_GT(f.at("playback_position").as_double(), 0.3);
  std::lock_guard l(c->mu);
  EXPECT_GT(c->speaking_audio, 5);
}

TEST(Room, InterruptFlushesQueuesAndReportsInterruptedPlayback) {
  Fixture fx;
  auto c = std::make_shared<FakeConnection>();
  fx.room->add_viewer(c, ViewerRole::kRuntime);
  ASSERT_TRUE(
      fx.room->speak("This is a rather long sentence that keeps the agent busy for a few seconds at least.")
          .ok());
  ASSERT_TRUE(eventually([&] { return !c->events("speech.started").empty(); }));
  fx.room->interrupt();
  auto f = c->events("playback_finished");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(f[0].at("interrupted").as_bool());
  {
    std::lock_guard l(c->mu);
    EXPECT_EQ(c->discarded.size(), 2u);
  }
  // After the interrupt the audio is silent: no speaking frames follow.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  int speaking_then;
  {
    std::lock_guard l(c->mu);
    speaking_then = c->speaking_audio;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  std::lock_guard l(c->mu);
  EXPECT_EQ(c->speaking_audio, speaking_then);
}

TEST(Room, ControlMessagesAndTheirErrors) {
  Fixture fx;
  auto c = std::make_shared<FakeConnection>();
  fx.room->add_viewer(c, ViewerRole::kEmbed);
  auto renew = [](const std::string& t) -> std::optional<json::object> {
    if (t == "good") return json::object{{"token", "next"}, {"expires_at", 1}};
    return std::nullopt;
  };
  fx.room->on_control(c, ViewerRole::kEmbed, "not json", renew);
  fx.room->on_control(c, ViewerRole::kEmbed, R"({"type":"dance"})", renew);
  fx.room->on_control(c, ViewerRole::kEmbed, R"({"type":"add_context","text":"x"})", renew);
  fx.room->on_control(c, ViewerRole::kEmbed, R"({"type":"heartbeat","token":"bad"})", renew);
  fx.room->on_control(c, ViewerRole::kEmbed, R"({"type":"heartbeat","token":"good"})", renew);
  fx.room->on_control(c, ViewerRole::kRuntime, R"({"type":"add_context","text":"The sky is green."})", renew);
  fx.room->on_control(c, ViewerRole::kRuntime, R"({"type":"trigger_dynamics","action":"no_such"})", renew);
  fx.room->on_control(c, ViewerRole::kRuntime, R"({"type":"trigger_dynamics","action":"mini_wave_hello"})",
                      renew);
  auto errors = c->events("error");
  ASSERT_EQ(errors.size(), 5u);
  EXPECT_EQ(errors[0].at("code").as_string(), "VALIDATION_ERROR");
  EXPECT_EQ(errors[2].at("code").as_string(), "FORBIDDEN");
  EXPECT_EQ(errors[3].at("code").as_string(), "UNAUTHORIZED");
  auto ok = c->events("heartbeat.ok");
  ASSERT_EQ(ok.size(), 1u);
  EXPECT_EQ(ok[0].at("token").as_string(), "next");
  EXPECT_EQ(fx.room->context(), std::vector<std::string>{"The sky is green."});
  auto d = c->events("dynamics.triggered");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].at("action").as_string(), "mini_wave_hello");
  EXPECT_FALSE(d[0].at("animation_triggered").as_bool());  // dynamics off: the talking model
}

TEST(Room, GesturesPlayWhenDynamicsAreOn) {
  Fixture fx;
  fx.dynamics_on = true;
  fx.room->tick();  // picks up the setting
  auto r = fx.room->trigger_dynamics("laugh_react");
  EXPECT_TRUE(r.status.ok());
  EXPECT_TRUE(r.animation_triggered);
}

TEST(Room, BillingTicksChargeEachMinuteAndARefusalEndsTheSession) {
  Fixture fx;
  auto c = std::make_shared<FakeConnection>();
  fx.room->add_viewer(c, ViewerRole::kRuntime);
  fx.room->tick();
  {
    std::lock_guard l(fx.mu);
    EXPECT_EQ(fx.charged, std::vector<int64_t>{0});
  }
  fx.clock.advance_seconds(30);
  fx.room->keep_alive();
  fx.room->renewed();
  fx.room->tick();
  fx.clock.advance_seconds(30);
  fx.room->keep_alive();
  fx.room->tick();
  {
    std::lock_guard l(fx.mu);
    EXPECT_EQ(fx.charged, (std::vector<int64_t>{0, 1}));
    fx.refuse = true;
  }
  fx.clock.advance_seconds(60);
  fx.room->keep_alive();
  fx.room->tick();
  EXPECT_TRUE(fx.room->ended());
  auto e = c->events("session.ended");
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].at("reason").as_string(), "insufficient_balance");
  EXPECT_FALSE(e[0].contains("detail"));
  EXPECT_TRUE(c->events("error").empty());
  std::lock_guard l(c->mu);
  EXPECT_EQ(c->closed, 1000);
}

TEST(Room, SpendCapRefusalEndsTheSessionAndSaysItWasTheCap) {
  Fixture fx;
  auto c = std::make_shared<FakeConnection>();
  fx.room->add_viewer(c, ViewerRole::kRuntime);
  fx.room->tick();
  {
    std::lock_guard l(fx.mu);
    EXPECT_EQ(fx.charged, std::vector<int64_t>{0});
    fx.refuse = true;
    fx.refusal = billing::check_live_spend_cap({2, std::nullopt}, 2, 2);
  }
  fx.clock.advance_seconds(60);
  fx.room->keep_alive();
  fx.room->renewed();
  fx.room->tick();
  EXPECT_TRUE(fx.room->ended());
  EXPECT_EQ(fx.room->info().billed_minutes, 1);
  auto err = c->events("error");
  ASSERT_EQ(err.size(), 1u);
  EXPECT_EQ(err[0].at("code").as_string(), "SPEND_CAP_REACHED");
  EXPECT_NE(std::string(err[0].at("message").as_string()).find("Monthly live spend cap reached"),
            std::string::npos);
  auto e = c->events("session.ended");
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].at("reason").as_string(), "insufficient_balance");
  EXPECT_EQ(e[0].at("detail").as_string(), "spend_cap");
  std::lock_guard l(c->mu);
  EXPECT_EQ(c->closed, 1000);
}

std::string repeat(std::string_view unit, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += unit;
  return s;
}

int count_code(FakeConnection& c, std::string_view code) {
  int n = 0;
  for (auto& e : c.events("error")) n += e.at("code").as_string() == code;
  return n;
}

// Every client message type, flooded, over the WebSocket (on_control) and the REST paths (say,
// add_context, as Rooms::deliver calls them): the bytes the room keeps never pass the bound
// derived from its limits, and what is refused is refused with a clear error.
TEST(RoomBounds, FloodOfEveryMessageTypeStaysUnderTheRoomsBound) {
  Fixture fx(/*start=*/false);  // nothing plays: the speech queue only fills
  const RoomLimits& l = fx.room->settings().limits;
  const size_t bound = max_accounted_bytes(l);
  auto c = std::make_shared<FakeConnection>();
  fx.room->add_viewer(c, ViewerRole::kRuntime);
  auto renew = [](const std::string&) { return std::optional<json::object>(json::object{{"token", "t"}}); };
  const std::string speak_ascii = repeat("a", l.speak_chars);      // 2000 bytes: the item cap binds
  const std::string speak_wide = repeat("\u00e9", l.speak_chars);  // 4000 bytes: the byte cap binds
  const std::string context = repeat("k", l.context_item_chars);
  auto msg = [](std::string_view type, std::string_view field, const std::string& text) {
    json::object o{{"type", type}};
    if (!field.empty()) o[field] = text;
    return json_to_string(o);
  };
  const std::vector<std::string> messages = {
      msg("speak", "text", speak_ascii),
      msg("speak", "text", speak_wide),
      msg("speak", "text", speak_ascii + "a"),  // over the cap
      msg("user_text", "text", speak_ascii),    // no brain here: spoken, through the same queue
      msg("add_context", "text", context),
      msg("add_context", "text", context + "k"),  // over the cap
      msg("camera_frame", "image", "data:image/jpeg;base64,AAAA"),
      msg("trigger_dynamics", "action", "laugh_react"),
      msg("keep_alive", "", ""),
      msg("heartbeat", "token", "t"),
      msg("no_such_type", "text", "x"),
      std::string(60 * 1024, '{'),  // not JSON
      msg("interrupt", "", ""),
  };
  size_t peak = 0;
  for (const auto& m : messages) {
    for (int i = 0; i < 1000; ++i) {
      fx.clock.advance_us(100'000);  // 10 messages a second: within the rate limits
      fx.room->on_control(c, ViewerRole::kRuntime, m, renew);
      peak = std::max(peak, fx.room->accounted_bytes());
      ASSERT_LE(fx.room->accounted_bytes(), bound) << m.substr(0, 40) << " #" << i;
    }
  }
  // The REST paths (POST /v1/agent/{code}/speak and add-context reach rooms through these).
  for (int i = 0; i < 5000; ++i) {
    auto id = fx.room->say(i % 2 ? speak_wide : speak_ascii);
    EXPECT_TRUE(id.ok() || is_speech_queue_full(id.status())) << id.status().message();
    EXPECT_TRUE(fx.room->add_context(context).ok());
    peak = std::max(peak, fx.room->accounted_bytes());
    ASSERT_LE(fx.room->accounted_bytes(), bound);
  }
  EXPECT_GT(peak, bound / 2);  // the flood did fill the room up to its bounds
  // 4000-byte items: the byte budget binds before the item count.
  EXPECT_EQ(fx.room->info().context_items,
            std::min(l.context_items, l.context_bytes / (l.context_item_chars + kContextItemOverheadBytes)));
  EXPECT_EQ(count_code(*c, "RATE_LIMITED"), 0);
  EXPECT_GT(count_code(*c, "SPEECH_QUEUE_FULL"), 900);
  EXPECT_GE(count_code(*c, "VALIDATION_ERROR"), 5000);
  fx.room->end(EndReason::kTerminated);
}

TEST(RoomBounds, TheSpeechQueueHoldsItsItemsAndBytes) {
  Fixture fx(/*start=*/false);
  const RoomLimits& l = fx.room->settings().limits;
  int accepted = 0;
  for (int i = 0; i < 100; ++i) accepted += fx.room->speak("Hello number " + std::to_string(i) + ".").ok();
  EXPECT_EQ(accepted, static_cast<int>(l.speech_queue_items));
  auto full = fx.room->speak("One more.");
  ASSERT_FALSE(full.ok());
  EXPECT_TRUE(is_speech_queue_full(full.status()));
  fx.room->interrupt();  // empties the queue: speech is taken again
  EXPECT_TRUE(fx.room->speak("After the interrupt.").ok());
  fx.room->interrupt();
  // Bytes: texts of 4000 bytes (2000 two-byte characters) fill the 32 KiB budget at 8.
  accepted = 0;
  for (int i = 0; i < 100; ++i) accepted += fx.room->speak(repeat("\u00e9", l.speak_chars)).ok();
  EXPECT_EQ(accepted, static_cast<int>(l.speech_queue_bytes / (2 * l.speak_chars)));
  auto too_long = fx.room->speak(repeat("a", l.speak_chars + 1));
  EXPECT_EQ(too_long.status().code(), Code::kInvalidArgument);
}

TEST(RoomBounds, ControlMessagesAreRateLimitedAndSustainedAbuseClosesTheConnection) {
  Fixture fx(/*start=*/false);
  const RoomLimits& l = fx.room->settings().limits;
  auto c = std::make_shared<FakeConnection>();
  fx.room->add_viewer(c, ViewerRole::kEmbed);
  auto renew = [](const std::string&) { return std::optional<json::object>(); };
  // The clock stands still: the connection gets its burst, then RATE_LIMITED for each message.
  for (int i = 0; i < l.control_burst_connection + l.refusals_before_close; ++i)
    fx.room->on_control(c, ViewerRole::kEmbed, R"({"type":"keep_alive"})", renew);
  auto errors = c->events("error");
  ASSERT_EQ(errors.size(), static_cast<size_t>(l.refusals_before_close));
  EXPECT_EQ(errors[0].at("code").as_string(), "RATE_LIMITED");
  EXPECT_GT(errors[0].at("retry_after_ms").as_int64(), 0);
  std::lock_guard lock(c->mu);
  EXPECT_EQ(c->closed, http::ws_close::kPolicyViolation);
}

// The transcript (docs/sessions.md): text given to speak becomes one line when it has been played,
// with its playback times and a final transcript event; a typed turn is a line at once.
TEST(RoomTranscript, SpokenTextIsOneLineWhenPlayedAndATypedTurnOneAtOnce) {
  Fixture fx;
  auto c = std::make_shared<FakeConnection>();
  fx.room->add_viewer(c, ViewerRole::kRuntime);
  ASSERT_TRUE(fx.room->say("Hello there.").ok());
  ASSERT_TRUE(eventually([&] { return !c->events("transcript").empty(); }));
  auto e = c->events("transcript");
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].at("source").as_string(), "speak");
  EXPECT_EQ(e[0].at("text").as_string(), "Hello there.");
  EXPECT_TRUE(e[0].at("final").as_bool());
  auto lines = fx.room->transcript().take();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].role, "agent");
  EXPECT_EQ(lines[0].source, "speak");
  EXPECT_EQ(lines[0].start_ms, e[0].at("start_ms").as_int64());
  EXPECT_EQ(lines[0].end_ms, e[0].at("end_ms").as_int64());
  EXPECT_LE(lines[0].start_ms, lines[0].end_ms);

  ASSERT_TRUE(fx.room->user_text("A question?", kSourceText).ok());
  (void)fx.room->user_text("   ", kSourceText);  // blank: no line (and nothing for speech to say)
  lines = fx.room->transcript().take();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].role, "user");
  EXPECT_EQ(lines[0].source, "text");
  EXPECT_EQ(lines[0].text, "A question?");
  EXPECT_EQ(lines[0].seq, 2);
}

class CountingSink : public MediaSink {
 public:
  void on_config(const CodecConfig&) override {}
  void on_packet(const std::shared_ptr<const EncodedPacket>&) override {}
  void on_end() override { ++ended; }
  std::atomic<int> ended{0};
};

TEST(RoomTranscript, SpeechStillQueuedAtTheEndJoinsTheTranscriptAndTheEndIsReportedOnce) {
  ManualClock clock;
  RoomSettings s;
  s.account_id = "usr_1";
  s.room_id = "lobby";
  s.agent_code = "A00AAA0000";
  s.session_id = "ses_end";
  RoomCallbacks cb;
  int ended = 0;
  size_t lines_at_end = 0;
  cb.ended = [&](Room& r, const SessionAction& a) {
    ++ended;
    EXPECT_EQ(a.reason, EndReason::kTerminated);
    lines_at_end = r.transcript().take().size();
  };
  auto room = Room::create(s, model(), &speech::test_service(), clock, cb);
  ASSERT_TRUE(room.ok());
  auto sink = std::make_shared<CountingSink>();
  (*room)->add_media_sink(sink);
  // Not started: nothing plays, both stay queued.
  ASSERT_TRUE((*room)->say("First.").ok());
  ASSERT_TRUE((*room)->say("Second.").ok());
  clock.advance_us(2'000'000);
  (*room)->end(EndReason::kTerminated);
  (*room)->tick();
  (*room)->tick();
  EXPECT_EQ(ended, 1);
  EXPECT_EQ(lines_at_end, 2u);
  (*room)->join_threads();
  EXPECT_EQ(sink->ended.load(), 1);
  (*room)->join_threads();
  EXPECT_EQ(sink->ended.load(), 1);
}

TEST(TranscriptLog, TimesAreSinceTheStartAndAFailedWriteIsPutBackInOrder) {
  TranscriptLog log(1'000'000);
  EXPECT_EQ(log.ms_at(1'250'000), 250);
  EXPECT_EQ(log.ms_at(0), 0);
  log.add("user", kSourceText, "a", 10, 10);
  log.add("agent", kSourceLlm, "b", 20, 15);  // an end before the start is the start
  auto first = log.take();
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[1].end_ms, 20);
  log.add("user", kSourceSpeech, "c", 30, 30);
  log.put_back(first);
  auto all = log.take();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].seq, 1);
  EXPECT_EQ(all[1].seq, 2);
  EXPECT_EQ(all[2].seq, 3);
  EXPECT_TRUE(log.take().empty());
}

}  // namespace
}  // namespace imago::live

namespace imago::live {
namespace {

// Back-pressure with encoded media: a viewer that stops reading gets no pictures (audio goes on),
// the other viewer of the room keeps getting every picture, and once the slow one has drained it
// gets a key frame first. The room never waits for it.
TEST(Room, AThrottledH264ViewerDropsPicturesToAKeyFrameWhileTheOtherKeepsEveryOne) {
  Fixture fx;
  auto fast = std::make_shared<FakeConnection>();
  auto slow = std::make_shared<FakeConnection>();
  fx.room->add_viewer(fast, ViewerRole::kRuntime, MediaFormat::kH264Opus);
  fx.room->add_viewer(slow, ViewerRole::kRuntime, MediaFormat::kH264Opus);
  ASSERT_TRUE(eventually([&] { return fast->count_video() >= 5 && slow->count_video() >= 5; }));
  {
    std::lock_guard l(slow->mu);
    EXPECT_EQ(slow->configs, 2);  // avcC and OpusHead
    EXPECT_TRUE(slow->video_headers.front().flags & kFlagKeyFrame);
  }
  slow->queued = 4 * 1024 * 1024;  // far over the room's 512 KiB per viewer
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const int slow_video = slow->count_video(), slow_audio = slow->count_audio();
  const int fast_video = fast->count_video();
  ASSERT_TRUE(eventually([&] { return fast->count_video() >= fast_video + 25; }));
  EXPECT_LE(slow->count_video(), slow_video + 1);  // at most a picture already on its way
  // One audio packet per picture: 25 pictures went to the other viewer meanwhile.
  EXPECT_GE(slow->count_audio(), slow_audio + 20) << "audio is never dropped";
  size_t keys_while_congested = 0, first_after = 0;
  {
    std::lock_guard l(fast->mu);
    for (size_t i = size_t(fast_video); i < fast->video_headers.size(); ++i)
      keys_while_congested += (fast->video_headers[i].flags & kFlagKeyFrame) != 0;
  }
  // A congested viewer does not ask for key frames it could not take (2 s periodic ones aside).
  EXPECT_LE(keys_while_congested, 1u);
  slow->queued = 0;
  const int resumed_from = slow->count_video();
  ASSERT_TRUE(eventually([&] { return slow->count_video() >= resumed_from + 5; }));
  {
    std::lock_guard l(slow->mu);
    first_after = size_t(resumed_from);
    EXPECT_TRUE(slow->video_headers[first_after].flags & kFlagKeyFrame)
        << "after dropped pictures the first one sent is a key frame";
  }
}

}  // namespace
}  // namespace imago::live
