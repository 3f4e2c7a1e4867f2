#include "live/room.h"

#include <chrono>

#include "agents/dynamics_config.h"
#include "billing/spend_cap.h"
#include "live/camera_frame.h"
#include "live/media_framing.h"
#include "live/thread_priority.h"
#include "live/viewer_media_sink.h"
#include "speech/speech_service.h"
#include "speech/text.h"
#include "util/json.h"
#include "util/log.h"
#include "util/random.h"
#include "util/strings.h"
#include "util/thread_name.h"

namespace imago::live {

namespace {

constexpr int64_t kFrameUs = 1'000'000 / avatar::kFps;
constexpr int64_t kDynamicsRefreshUs = 3'000'000;
constexpr int64_t kIdleGestureAfterUs = 15'000'000;  // silence before an idle gesture
constexpr int64_t kIdleGestureEveryUs = 20'000'000;
// Forced H.264 key frames (joins, viewers that dropped pictures) at most every 200 ms: a key frame
// is several times a picture's size, and every viewer of the room gets it.
constexpr int64_t kMinKeyFrameGapFrames = 5;

std::string event(std::string_view type, json::object fields = {}) {
  json::object o{{"type", type}};
  for (auto& kv : fields) o[kv.key()] = kv.value();
  return json_to_string(o);
}

std::string error_event(std::string_view code, std::string_view message) {
  return event("error", {{"code", code}, {"message", message}});
}

std::string_view speak_error_code(const Status& st) {
  return is_speech_queue_full(st) ? kSpeechQueueFullCode : "VALIDATION_ERROR";
}

}  // namespace

Result<std::shared_ptr<Room>> Room::create(RoomSettings settings,
                                           std::shared_ptr<const avatar::AvatarModel> model,
                                           speech::SpeechService* speech, Clock& clock,
                                           RoomCallbacks callbacks) {
  avatar::RendererOptions ro;
  ro.audio_rate = 24000;
  ro.session_seed = random_u64();
  auto r = avatar::Renderer::create(std::move(model), ro);
  if (!r.ok()) return r.status();
  settings.voice.output_rate = ro.audio_rate;
  return std::shared_ptr<Room>(
      new Room(std::move(settings), std::move(r).value(), speech, clock, std::move(callbacks)));
}

Room::Room(RoomSettings s, std::unique_ptr<avatar::Renderer> r, speech::SpeechService* speech, Clock& clock,
           RoomCallbacks cb)
    : s_(std::move(s)),
      renderer_(std::move(r)),
      speech_(speech),
      clock_(clock),
      cb_(std::move(cb)),
      state_(s_.timeouts, clock.now_us()),
      context_(s_.limits),
      transcript_(state_.created_us()),
      control_rate_(s_.limits) {
  MediaEncoderSettings es;
  es.width = renderer_->width();
  es.height = renderer_->height();
  es.audio_rate = renderer_->audio_rate();
  es.video = s_.video;
  es.jpeg_quality = s_.jpeg_quality;
  es.encoded = s_.encoded;
  encoder_ = std::make_unique<MediaEncoder>(es);
}

Room::~Room() {
  stop_ = true;
  speech_cv_.notify_all();
  join_threads();
}

void Room::start() {
  std::lock_guard lock(mu_);
  if (started_) return;
  started_ = true;
  const int64_t now = clock_.now_us();
  state_.activate(now);
  last_speech_activity_us_ = now;
  render_thread_ = std::thread([this] {
    name_this_thread("room-render");
    render_loop();
  });
  speech_thread_ = std::thread([this] {
    name_this_thread("room-speech");
    speech_loop();
  });
}

void Room::join_threads() {
  std::shared_ptr<SessionBrain> brain;
  {
    std::lock_guard lock(mu_);
    brain = brain_;
  }
  // The brain's threads call into the room: they stop first.
  if (brain) brain->stop();
  std::lock_guard lock(join_mu_);
  if (std::this_thread::get_id() == render_thread_.get_id() ||
      std::this_thread::get_id() == speech_thread_.get_id()) {
    return;
  }
  if (render_thread_.joinable()) render_thread_.join();
  if (speech_thread_.joinable()) speech_thread_.join();
}

int64_t Room::session_ms() const {
  return transcript_.ms_at(clock_.now_us());
}

void Room::request_stop() {
  std::shared_ptr<SessionBrain> brain;
  {
    std::lock_guard lock(mu_);
    brain = brain_;
  }
  if (brain) brain->request_stop();
}

void Room::set_brain(std::shared_ptr<SessionBrain> brain) {
  std::lock_guard lock(mu_);
  brain_ = std::move(brain);
}

int Room::width() const {
  return renderer_->width();
}
int Room::height() const {
  return renderer_->height();
}

std::string Room::session_started_json(MediaFormat media) const {
  const bool encoded = media == MediaFormat::kH264Opus;
  // Width and height of the pictures this viewer gets: H.264 pictures are capped in size; Opus
  // decodes at 48 kHz.
  int w = renderer_->width(), h = renderer_->height();
  if (encoded) {
    const double k = std::min(1.0, double(s_.encoded.max_side) / std::max(w, h));
    w = std::max(2, int(w * k) & ~1);
    h = std::max(2, int(h * k) & ~1);
  }
  return event("session.started", {{"room_id", s_.room_id},
                                   {"session_id", s_.session_id},
                                   {"agent_code", s_.agent_code},
                                   {"width", w},
                                   {"height", h},
                                   {"fps", avatar::kFps},
                                   {"audio_rate", encoded ? 48000 : renderer_->audio_rate()},
                                   {"video_codec", encoded ? "h264" : "jpeg"},
                                   {"audio_codec", encoded ? "opus" : "pcm_s16le"},
                                   {"media", encoded ? "h264+opus" : "jpeg+pcm"},
                                   {"framing_version", kMediaFramingVersion},
                                   {"quality", quality_name(s_.quality)},
                                   {"state", phase_name(state_.phase())}});
}

void Room::add_viewer(std::shared_ptr<http::WebSocketConnection> c, ViewerRole role, MediaFormat media) {
  std::lock_guard lock(mu_);
  if (state_.phase() == SessionPhase::kEnded) {
    c->send_text(event("session.ended", {{"reason", end_reason_name(*state_.end_reason())}}));
    c->close(http::ws_close::kNormal, "session ended");
    return;
  }
  if (expected_viewers_ > 0) --expected_viewers_;
  ever_viewed_ = true;
  state_.viewer_joined(clock_.now_us());
  c->send_text(session_started_json(media));
  if (paused_) c->send_text(event("session.paused"));
  auto sink = std::make_shared<ViewerMediaSink>(c, media, s_.max_viewer_queue_bytes);
  fanout_.add(sink, media);
  viewers_.push_back({std::move(c), role, std::move(sink)});
  viewers_peak_ = std::max(viewers_peak_, static_cast<int>(viewers_.size()));
}

void Room::add_media_sink(std::shared_ptr<MediaSink> sink, MediaFormat format) {
  std::lock_guard lock(mu_);
  if (state_.phase() == SessionPhase::kEnded) {
    sink->on_end();
    return;
  }
  fanout_.add(std::move(sink), format);
}

void Room::remove_media_sink(const MediaSink* sink) {
  std::lock_guard lock(mu_);
  fanout_.remove(sink);
}

void Room::request_key_frame() {
  std::lock_guard lock(mu_);
  key_frame_pending_ = true;
}

void Room::viewer_expected() {
  std::lock_guard lock(mu_);
  ++expected_viewers_;
}

void Room::viewer_upgrade_failed() {
  std::lock_guard lock(mu_);
  if (expected_viewers_ > 0) --expected_viewers_;
  if (ever_viewed_ || expected_viewers_ > 0 || !viewers_.empty()) return;
  if (state_.phase() == SessionPhase::kEnded) return;
  log::info("live_session_handshake_failed", {{"session", s_.session_id}, {"room", s_.room_id}});
  state_.end(EndReason::kAbsent);
}

void Room::remove_viewer(const http::WebSocketConnection* c) {
  std::lock_guard lock(mu_);
  for (auto it = viewers_.begin(); it != viewers_.end(); ++it) {
    if (it->conn.get() == c) {
      fanout_.remove(it->sink.get());
      viewers_.erase(it);
      control_rate_.forget(c);
      state_.viewer_left(clock_.now_us());
      return;
    }
  }
}

void Room::broadcast_text(const std::string& msg) {
  for (auto& v : viewers_) v.conn->send_text(msg);
}

Result<std::string> Room::speak(const std::string& text) {
  return queue_speech(text, false);
}

Result<std::string> Room::queue_speech(const std::string& text, bool spoken_text) {
  if (Status st = speech_->validate(text, s_.voice); !st.ok()) return st;
  if (const size_t chars = speech::utf8_length(text); chars > s_.limits.speak_chars) {
    return Status::Invalid("text is " + std::to_string(chars) + " characters; live speech takes at most " +
                           std::to_string(s_.limits.speak_chars));
  }
  std::lock_guard lock(mu_);
  if (state_.phase() == SessionPhase::kEnded) return Status::NotFound("the session has ended");
  size_t queued_bytes = 0;
  for (const auto& u : utterances_) queued_bytes += u.text.size();
  if (utterances_.size() >= s_.limits.speech_queue_items ||
      queued_bytes + text.size() > s_.limits.speech_queue_bytes) {
    return Status(Code::kRateLimited, "The speech queue is full (" + std::to_string(utterances_.size()) +
                                          " utterances, " + std::to_string(queued_bytes) +
                                          " bytes queued): wait for playback_finished or interrupt");
  }
  std::string id = "utt_" + std::to_string(++utterance_counter_);
  Utterance u{id, text, 0, false, {}};
  u.queued_ms = transcript_.ms_at(clock_.now_us());
  // Text given to speak: its transcript line is written when it has been played (or cut short, or
  // the session ended).
  u.spoken_text = spoken_text;
  if (dynamics_.enabled) u.gesture = agents::gesture_for_text(dynamics_.config, text);
  utterances_.push_back(std::move(u));
  to_synthesize_.emplace_back(id, text);
  state_.activity(clock_.now_us());
  speech_cv_.notify_one();
  return id;
}

Result<std::string> Room::say(const std::string& text) {
  auto id = queue_speech(text, true);
  if (!id.ok()) return id;
  std::shared_ptr<SessionBrain> brain;
  {
    std::lock_guard lock(mu_);
    brain = brain_;
  }
  if (brain) brain->on_agent_said(*this, text);
  return id;
}

Status Room::microphone(std::string_view pcm) {
  std::shared_ptr<SessionBrain> brain;
  {
    std::lock_guard lock(mu_);
    if (state_.phase() == SessionPhase::kEnded) return Status::NotFound("the session has ended");
    brain = brain_;
  }
  if (!brain || !brain->on_microphone(*this, pcm)) {
    return Status(Code::kConflict, "This session does not listen to microphone audio");
  }
  listening_.store(true, std::memory_order_relaxed);
  return Status::Ok();
}

bool Room::agent_speaking() const {
  std::lock_guard lock(mu_);
  return !utterances_.empty() || !to_synthesize_.empty();
}

void Room::broadcast_event(std::string_view type, json::object fields) {
  std::string e = event(type, std::move(fields));
  std::lock_guard lock(mu_);
  broadcast_text(e);
}

Status Room::user_text(const std::string& text, std::string_view source) {
  std::shared_ptr<SessionBrain> brain;
  {
    std::lock_guard lock(mu_);
    brain = brain_;
    state_.activity(clock_.now_us());
  }
  if (text.find_first_not_of(" \t\r\n") != std::string::npos) {
    const int64_t now = session_ms();
    transcript_.add("user", source, text, now, now);
  }
  if (brain) {
    brain->on_user_text(*this, text);
    return Status::Ok();
  }
  return speak(text).status();
}

Status Room::camera_frame(std::string_view data_url) {
  if (!s_.camera) {
    return Status::Invalid(
        "Camera frames are only taken in camera_chat sessions (join with billing_type=camera_chat)");
  }
  auto frame = canonical_camera_frame(data_url);
  if (!frame.ok()) return frame.status();
  std::shared_ptr<SessionBrain> brain;
  {
    std::lock_guard lock(mu_);
    if (state_.phase() == SessionPhase::kEnded) return Status::NotFound("the session has ended");
    brain = brain_;
    state_.activity(clock_.now_us());
  }
  if (brain) brain->on_camera_frame(*this, std::move(*frame));
  return Status::Ok();
}

Status Room::add_context(const std::string& text) {
  if (!is_valid_utf8(text)) return Status::Invalid("context must be valid UTF-8");
  if (const size_t chars = speech::utf8_length(text); chars > s_.limits.context_item_chars) {
    return Status::Invalid("context is " + std::to_string(chars) + " characters; one item takes at most " +
                           std::to_string(s_.limits.context_item_chars));
  }
  std::shared_ptr<SessionBrain> brain;
  {
    std::lock_guard lock(mu_);
    context_.add(text);
    brain = brain_;
  }
  if (brain) brain->on_add_context(*this, text);
  return Status::Ok();
}

std::vector<std::string> Room::context() const {
  std::lock_guard lock(mu_);
  return context_.items();
}

size_t Room::accounted_bytes() const {
  std::lock_guard lock(mu_);
  size_t n = context_.accounted_bytes();
  for (const auto& u : utterances_) n += u.text.size() + kUtteranceOverheadBytes;
  for (const auto& [id, text] : to_synthesize_) n += text.size();
  return n;
}

void Room::finish_utterance_locked(Utterance& u, bool interrupted, std::vector<std::string>& events,
                                   std::vector<std::tuple<std::string, double, bool>>& done) {
  const double position = static_cast<double>(u.frames) / avatar::kFps;
  if (u.spoken_text) {
    // Once, when its playback is over: from when it started playing (or was queued) to now.
    const int64_t now = session_ms();
    auto line =
        transcript_.add("agent", kSourceSpeak, u.text, u.started_ms >= 0 ? u.started_ms : u.queued_ms, now);
    u.spoken_text = false;
    events.push_back(event("transcript", {{"role", "agent"},
                                          {"text", line.text},
                                          {"final", true},
                                          {"source", kSourceSpeak},
                                          {"start_ms", line.start_ms},
                                          {"end_ms", line.end_ms}}));
  }
  events.push_back(
      event("playback_finished",
            {{"utterance_id", u.id}, {"playback_position", position}, {"interrupted", interrupted}}));
  done.emplace_back(u.id, position, interrupted);
}

void Room::interrupt() {
  std::vector<std::string> events;
  std::vector<std::tuple<std::string, double, bool>> done;
  std::shared_ptr<SessionBrain> brain;
  {
    std::lock_guard lock(mu_);
    brain = brain_;
  }
  if (brain) brain->on_interrupt(*this);  // the model request first: no sentence slips in after
  {
    std::lock_guard lock(mu_);
    ++speech_generation_;
    to_synthesize_.clear();
    renderer_->interrupt();
    // Whatever is queued on the way to viewers is stale now: drop it so silence is immediate,
    // and the Opus encoder drops the speech in its look-ahead.
    fanout_.interrupt();
    reset_audio_encoder_ = true;
    for (auto& u : utterances_) finish_utterance_locked(u, true, events, done);
    utterances_.clear();
    for (auto& e : events) broadcast_text(e);
    state_.activity(clock_.now_us());
    brain = brain_;
  }
  if (brain) {
    for (auto& [id, pos, intr] : done) brain->on_playback_finished(*this, id, pos, intr);
  }
}

DynamicsResult Room::trigger_dynamics(const std::string& action) {
  std::lock_guard lock(mu_);
  if (renderer_->gesture_default_s(action) <= 0) {
    return {Status::Invalid("Unknown dynamics action '" + action + "'"), false};
  }
  bool triggered = false;
  if (dynamics_.enabled) triggered = renderer_->trigger_gesture(action).ok();
  broadcast_text(event("dynamics.triggered", {{"action", action}, {"animation_triggered", triggered}}));
  return {Status::Ok(), triggered};
}

void Room::keep_alive() {
  std::lock_guard lock(mu_);
  state_.activity(clock_.now_us());
}

void Room::renewed() {
  std::lock_guard lock(mu_);
  state_.renewed(clock_.now_us());
}

void Room::end(EndReason reason) {
  std::lock_guard lock(mu_);
  state_.end(reason);
}

bool Room::ended() const {
  std::lock_guard lock(mu_);
  return state_.phase() == SessionPhase::kEnded;
}

RoomInfo Room::info() const {
  std::lock_guard lock(mu_);
  RoomInfo i;
  i.room_id = s_.room_id;
  i.session_id = s_.session_id;
  i.agent_code = s_.agent_code;
  i.account_id = s_.account_id;
  i.phase = state_.phase();
  i.end_reason = state_.end_reason();
  i.started_at_s = state_.created_us() / 1'000'000;
  i.started_us = state_.created_us();
  i.viewers = state_.viewers();
  i.viewers_peak = viewers_peak_;
  i.billed_minutes = state_.billed_minutes();
  i.billing_type = s_.billing_type;
  i.context_items = context_.size();
  return i;
}

void Room::on_control(const std::shared_ptr<http::WebSocketConnection>& from, ViewerRole role,
                      std::string_view text,
                      const std::function<std::optional<json::object>(const std::string& token)>& renew) {
  ControlDecision admitted;
  {
    std::lock_guard lock(mu_);
    admitted = control_rate_.admit(from.get(), clock_.monotonic_us());
  }
  if (!admitted.allowed) {
    // Refused before parsing: a flood costs the room a bucket check and this small event.
    from->send_text(event("error", {{"code", "RATE_LIMITED"},
                                    {"message", "Too many control messages: slow down"},
                                    {"retry_after_ms", (admitted.retry_after_us + 999) / 1000}}));
    if (admitted.close) from->close(http::ws_close::kPolicyViolation, "control message rate exceeded");
    return;
  }
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) {
    from->send_text(error_event("VALIDATION_ERROR", "Control messages are JSON objects with a 'type'"));
    return;
  }
  const json::object& o = v.as_object();
  auto type = get_string(o, "type");
  if (!type.ok() || !type->has_value()) {
    from->send_text(error_event("VALIDATION_ERROR", "Field 'type' is required"));
    return;
  }
  const std::string& t = **type;
  auto text_field = [&](const char* name) -> std::optional<std::string> {
    auto f = get_string(o, name);
    if (!f.ok() || !f->has_value() || (*f)->empty()) {
      from->send_text(
          error_event("VALIDATION_ERROR", "Field '" + std::string(name) + "' must be a non-empty string"));
      return std::nullopt;
    }
    return **f;
  };
  if (t == "speak") {
    auto s = text_field("text");
    if (!s) return;
    auto r = say(*s);
    if (!r.ok()) from->send_text(error_event(speak_error_code(r.status()), r.status().message()));
  } else if (t == "user_text") {
    auto s = text_field("text");
    if (!s) return;
    if (Status st = user_text(*s); !st.ok()) from->send_text(error_event(speak_error_code(st), st.message()));
  } else if (t == "camera_frame") {
    auto s = text_field("image");
    if (!s) return;
    if (Status st = camera_frame(*s); !st.ok())
      from->send_text(error_event("VALIDATION_ERROR", st.message()));
  } else if (t == "add_context") {
    if (role == ViewerRole::kEmbed) {
      from->send_text(error_event("FORBIDDEN", "Embed tokens cannot add context"));
      return;
    }
    auto s = text_field("text");
    if (!s) return;
    if (Status st = add_context(*s); !st.ok()) from->send_text(error_event("VALIDATION_ERROR", st.message()));
  } else if (t == "interrupt") {
    interrupt();
  } else if (t == "trigger_dynamics") {
    if (role == ViewerRole::kEmbed) {
      from->send_text(error_event("FORBIDDEN", "Embed tokens cannot trigger dynamics"));
      return;
    }
    auto a = text_field("action");
    if (!a) return;
    auto r = trigger_dynamics(*a);
    if (!r.status.ok()) from->send_text(error_event("VALIDATION_ERROR", r.status.message()));
  } else if (t == "keep_alive") {
    keep_alive();
  } else if (t == "request_key_frame") {
    request_key_frame();
  } else if (t == "heartbeat") {
    auto tok = text_field("token");
    if (!tok) return;
    auto fresh = renew(*tok);
    if (!fresh) {
      from->send_text(
          error_event("UNAUTHORIZED", "The token is invalid or expired, or its api-secret was revoked"));
      return;
    }
    renewed();
    json::object reply = *fresh;
    from->send_text(event("heartbeat.ok", std::move(reply)));
  } else {
    from->send_text(error_event("VALIDATION_ERROR", "Unknown message type '" + t + "'"));
  }
}

void Room::tick() {
  const int64_t now = clock_.now_us();
  if (cb_.dynamics && now - last_dynamics_refresh_us_ >= kDynamicsRefreshUs) {
    last_dynamics_refresh_us_ = now;
    if (auto d = cb_.dynamics(*this)) {
      std::lock_guard lock(mu_);
      dynamics_ = std::move(*d);
    }
  }
  std::vector<SessionAction> actions;
  {
    std::lock_guard lock(mu_);
    // Idle gestures while silent, when the agent's dynamics are on.
    if (dynamics_.enabled && !renderer_->speaking() && utterances_.empty() &&
        now - last_speech_activity_us_ >= kIdleGestureAfterUs &&
        now - last_idle_gesture_us_ >= kIdleGestureEveryUs) {
      if (auto* g = dynamics_.config.if_contains("idle_gesture"); g && g->is_string()) {
        last_idle_gesture_us_ = now;
        (void)renderer_->trigger_gesture(std::string(g->as_string()));
      }
    }
    actions = state_.tick(now);
  }
  apply_actions(actions);
}

void Room::apply_actions(const std::vector<SessionAction>& actions) {
  for (const SessionAction& a : actions) {
    switch (a.kind) {
      case SessionAction::Kind::kChargeMinute: {
        Status st = cb_.charge_minute ? cb_.charge_minute(*this, a.minute) : Status::Ok();
        std::lock_guard lock(mu_);
        if (st.ok()) {
          state_.minute_paid(a.minute);
        } else if (billing::is_spend_cap_refusal(st)) {
          // The monthly live spend cap: the minute is not charged and the session ends like an
          // unpaid minute, with an error saying it was the cap (docs/live-protocol.md).
          broadcast_text(error_event(billing::kSpendCapErrorCode, st.message()));
          state_.minute_refused(a.minute, EndReason::kInsufficientBalance, "spend_cap");
        } else if (st.code() == Code::kInsufficientFunds) {
          state_.minute_refused(a.minute, EndReason::kInsufficientBalance);
        } else {
          log::warn("live_charge_failed", {{"session", s_.session_id}, {"error", st.message()}});
          state_.minute_retry(a.minute);
        }
        break;
      }
      case SessionAction::Kind::kPause: {
        std::lock_guard lock(mu_);
        paused_ = true;
        broadcast_text(event("session.paused", {{"reason", "token_not_renewed"}}));
        break;
      }
      case SessionAction::Kind::kResume: {
        std::lock_guard lock(mu_);
        paused_ = false;
        broadcast_text(event("session.resumed"));
        break;
      }
      case SessionAction::Kind::kEnd: {
        std::vector<Viewer> viewers;
        {
          std::lock_guard lock(mu_);
          json::object ended{{"reason", end_reason_name(a.reason)}};
          if (!a.detail.empty()) ended["detail"] = a.detail;
          // Text given to speak that never finished playing still belongs to the transcript.
          const int64_t now_ms = transcript_.ms_at(clock_.now_us());
          for (auto& u : utterances_) {
            if (!u.spoken_text) continue;
            u.spoken_text = false;
            transcript_.add("agent", kSourceSpeak, u.text, u.started_ms >= 0 ? u.started_ms : u.queued_ms,
                            now_ms);
          }
          broadcast_text(event("session.ended", std::move(ended)));
          viewers.swap(viewers_);
          fanout_.end_all();
          stop_ = true;
        }
        speech_cv_.notify_all();
        const uint16_t code =
            a.reason == EndReason::kShutdown ? http::ws_close::kGoingAway : http::ws_close::kNormal;
        for (auto& v : viewers)
          v.conn->close(code, "session ended: " + std::string(end_reason_name(a.reason)));
        log::info("live_session_ended", {{"session", s_.session_id},
                                         {"room", s_.room_id},
                                         {"reason", end_reason_name(a.reason)},
                                         {"detail", a.detail},
                                         {"billed_minutes", state_.billed_minutes()}});
        if (cb_.ended) cb_.ended(*this, a);
        break;
      }
    }
  }
  // A refused minute ends the session: report it now rather than on the next tick.
  std::vector<SessionAction> more;
  {
    std::lock_guard lock(mu_);
    if (state_.phase() == SessionPhase::kEnded && !stop_) more = state_.tick(clock_.now_us());
  }
  if (!more.empty()) apply_actions(more);
}

void Room::speech_loop() {
  for (;;) {
    std::string id, text;
    uint64_t gen = 0;
    {
      std::unique_lock lock(mu_);
      speech_cv_.wait(lock, [&] { return stop_.load() || !to_synthesize_.empty(); });
      if (stop_) return;
      std::tie(id, text) = to_synthesize_.front();
      to_synthesize_.pop_front();
      gen = speech_generation_;
    }
    bool pushed = false;
    Status st = speech_->synthesize_stream(
        text, s_.voice, speech::SynthesisRequester{s_.account_id, speech::SynthesisPriority::kLive},
        [&](const speech::Audio& sentence) {
          std::unique_lock lock(mu_);
          // Synthesize only a little ahead of playback: a long queue stays text, not audio.
          while (!stop_ && gen == speech_generation_ &&
                 renderer_->queued_seconds() > s_.limits.synthesis_ahead_s) {
            speech_cv_.wait_for(lock, std::chrono::milliseconds(50));
          }
          if (stop_ || gen != speech_generation_) return false;
          if (!renderer_->push_audio(sentence, false).ok()) return false;
          pushed = true;
          return true;
        });
    std::lock_guard lock(mu_);
    if (stop_) return;
    if (gen != speech_generation_) continue;  // interrupted: already reported
    if (pushed) {
      renderer_->end_turn();
    } else {
      for (auto it = utterances_.begin(); it != utterances_.end(); ++it) {
        if (it->id == id) {
          utterances_.erase(it);
          break;
        }
      }
    }
    if (!st.ok()) {
      broadcast_text(error_event(st.code() == Code::kUnavailable ? "TTS_BUSY" : "SPEECH_FAILED",
                                 "Speech for " + id + " failed: " + st.message()));
    }
  }
}

void Room::render_loop() {
  using clock = std::chrono::steady_clock;
  auto base = clock::now();
  int64_t produced = 0;  // frames since `base`
  bool was_paused = false;
  bool lowered = false;
  avatar::Frame f;
  while (!stop_) {
    if (!lowered && listening_.load(std::memory_order_relaxed)) {
      // A viewer talks to this session: recognition must keep up with real time, and pictures
      // are what this loop can skip when it falls behind (audio stays whole), so rendering
      // yields to the ears (live/thread_priority.h).
      lowered = true;
      (void)adjust_this_thread_nice(kRenderNiceOffset);
    }
    if (paused_) {
      // Frames stop while paused; the audio clock resumes where it stopped.
      was_paused = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(40));
      continue;
    }
    if (was_paused) {
      was_paused = false;
      base = clock::now();
      produced = 0;
    }
    const int64_t elapsed =
        std::chrono::duration_cast<std::chrono::microseconds>(clock::now() - base).count();
    const int64_t due = (elapsed + s_.lookahead_us) / kFrameUs + 1;  // frames that should exist by now
    if (produced >= due) {
      const int64_t next_at = produced * kFrameUs - s_.lookahead_us;
      std::this_thread::sleep_until(base + std::chrono::microseconds(next_at));
      continue;
    }
    int64_t behind = due - produced;
    bool have_consumers, want_jpeg, want_encoded;
    {
      std::lock_guard lock(mu_);
      have_consumers = !fanout_.empty();
      want_jpeg = fanout_.wants(MediaFormat::kJpegPcm);
      want_encoded = fanout_.wants(MediaFormat::kH264Opus);
    }
    for (int64_t i = 0; i < behind && !stop_; ++i) {
      // Pacing above, then: render, encode (once per format some consumer wants), fan out.
      // Catching up: only the newest picture is drawn; audio stays continuous.
      const bool draw = have_consumers && s_.video && i == behind - 1;
      uint64_t generation;
      bool key_frame = false;
      {
        std::lock_guard lock(mu_);
        generation = speech_generation_;
        if (draw && want_encoded) {
          key_frame_pending_ = fanout_.wants_key_frame() || key_frame_pending_;
          key_frame =
              key_frame_pending_ && renderer_->frame_index() - last_key_frame_ >= kMinKeyFrameGapFrames;
        }
      }
      // The encoders are done with the picture before the next frame: no copy of it.
      renderer_->next_frame(f, draw, /*copy_image=*/false);
      ++produced;
      const auto flags =
          static_cast<uint16_t>((f.speaking ? kFlagSpeaking : 0) | (f.end_of_speech ? kFlagEndOfSpeech : 0) |
                                (f.interrupted ? kFlagInterrupted : 0));
      FramePackets packets;
      if (want_jpeg) encoder_->encode_jpeg(f, flags, &packets);
      if (want_encoded) {
        if (reset_audio_encoder_.exchange(false)) encoder_->reset_audio();
        encoder_->encode_h264_opus(f, flags, key_frame, &packets);
      }
      std::vector<std::tuple<std::string, double, bool>> done;
      std::shared_ptr<SessionBrain> brain;
      {
        std::lock_guard lock(mu_);
        if (generation != speech_generation_ && f.speaking) {
          // interrupt() ran while this frame was being drawn: its speech must not reach anyone
          // (its Opus packets are left out; the encoder forgets them before the next frame).
          std::fill(f.audio.begin(), f.audio.end(), int16_t{0});
          f.speaking = false;
          packets.opus.clear();
        }
        if (want_jpeg) encoder_->encode_pcm(f, f.speaking ? flags : flags & ~kFlagSpeaking, &packets);
        if (packets.h264 && (packets.h264->flags & kFlagKeyFrame)) {
          last_key_frame_ = f.index;
          key_frame_pending_ = false;
        }
        std::vector<std::string> events;
        const int64_t now = clock_.now_us();
        if (f.speaking) {
          state_.activity(now);
          last_speech_activity_us_ = now;
          if (!utterances_.empty()) {
            Utterance& u = utterances_.front();
            if (!u.started) {
              u.started = true;
              u.started_ms = transcript_.ms_at(now);
              events.push_back(event("speech.started", {{"utterance_id", u.id}, {"text", u.text}}));
              if (!u.gesture.empty() && dynamics_.enabled) (void)renderer_->trigger_gesture(u.gesture);
            }
            ++u.frames;
          }
        }
        if (f.end_of_speech && !f.interrupted && !utterances_.empty() && utterances_.front().started) {
          finish_utterance_locked(utterances_.front(), false, events, done);
          utterances_.pop_front();
        }
        // Events describing this frame go before its media; playback_finished after its audio.
        for (auto& v : viewers_) {
          for (const auto& e : events) {
            if (e.find("speech.started") != std::string::npos) v.conn->send_text(e);
          }
        }
        fanout_.deliver(packets, [this](MediaFormat m) { return encoder_->config(m); });
        for (auto& v : viewers_) {
          for (const auto& e : events) {
            if (e.find("speech.started") == std::string::npos) v.conn->send_text(e);
          }
        }
        brain = brain_;
      }
      if (brain) {
        for (auto& [id, pos, intr] : done) brain->on_playback_finished(*this, id, pos, intr);
      }
    }
  }
}

}  // namespace imago::live
