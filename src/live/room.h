// One running session of an agent in a room (docs/live-protocol.md): one renderer, one render
// loop fanned out to every viewer, a speech queue, and the session state machine. Viewers come and
// go; the room outlives them until the state machine ends it.
//
// Threads: a render thread paces frames (25 fps on the audio clock, a little ahead of real time
// so viewers keep a small buffer) and a speech thread synthesizes queued utterances sentence by
// sentence into the renderer. The registry (rooms.h) calls tick() about four times a second to
// advance timeouts, grace and billing. Every public method is thread safe and never blocks on the
// network (WebSocket sends are queued by the connection).
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "avatar/renderer.h"
#include "http/websocket.h"
#include "live/control_rate.h"
#include "live/encoded_media.h"
#include "live/key_frame_gate.h"
#include "live/media_encoder.h"
#include "live/media_fanout.h"
#include "live/media_quality.h"
#include "live/room_context.h"
#include "live/room_limits.h"
#include "live/session_state.h"
#include "live/transcript_log.h"
#include "speech/synthesis.h"
#include "util/clock.h"
#include "util/status.h"

namespace imago::speech {
class SpeechService;
}

namespace imago::live {

class Room;

// The seam for a conversation brain (the conversation subsystem plugs in here). Without one, a
// viewer's typed text is spoken by the agent and context is kept in the room.
class SessionBrain {
 public:
  virtual ~SessionBrain() = default;
  // A viewer said something (typed text, later transcribed speech).
  virtual void on_user_text(Room& room, const std::string& text) = 0;
  // Knowledge injected through add-context (REST) or add_context (WebSocket).
  virtual void on_add_context(Room& room, const std::string& text) = 0;
  // The agent's own utterance finished or was interrupted.
  virtual void on_playback_finished(Room& room, const std::string& utterance_id, double position_s,
                                    bool interrupted) {
    (void)room, (void)utterance_id, (void)position_s, (void)interrupted;
  }
  // The session is being interrupted: called before the room drops its queued speech, so an
  // answer still being written stops before it can queue another sentence.
  virtual void on_interrupt(Room& room) { (void)room; }
  // The agent was made to say `text` verbatim (speak): it joins the conversation as its turn.
  virtual void on_agent_said(Room& room, const std::string& text) { (void)room, (void)text; }
  // Microphone bytes from a viewer (s16le mono 16 kHz). Must return at once (an I/O thread
  // calls it). False: this brain does not listen.
  virtual bool on_microphone(Room& room, std::string_view pcm) {
    (void)room, (void)pcm;
    return false;
  }
  // A viewer's camera frame in a camera_chat session (a checked data: URL, see
  // live/camera_frame.h): kept for the next turn the brain sends to its model. Must return at once.
  virtual void on_camera_frame(Room& room, std::string data_url) { (void)room, (void)data_url; }
  // The room has ended: begin stopping now (cancel work, wake threads) without waiting; stop()
  // joins later. Must return at once (the tick thread and request workers call it).
  virtual void request_stop() {}
  // The room is stopping: finish and join the brain's own threads (no more calls into the room).
  virtual void stop() {}
};

struct RoomSettings {
  std::string account_id;
  std::string room_id;
  std::string agent_code;
  std::string session_id;
  std::string billing_type = "essence_cloud";
  speech::VoiceSettings voice;
  SessionTimeouts timeouts;
  int jpeg_quality = 75;
  // H.264 + Opus for consumers that take encoded media (live/media_quality.h), at the quality
  // the room started with.
  EncoderSettings encoded;
  VideoQuality quality = VideoQuality::kStandard;
  bool video = true;               // false for voice_chat: audio only, no frames are drawn or sent
  bool camera = false;             // camera_chat: viewers' camera frames go to the model
  int64_t lookahead_us = 120'000;  // frames are produced this far ahead of real time
  // A viewer with more than this many bytes queued gets no new video frames (audio continues).
  size_t max_viewer_queue_bytes = kViewerQueueBytes;
  RoomLimits limits;  // what the room keeps for its clients (live/room_limits.h)
};

// What the session's gesture settings are right now (re-read from the agent while running).
struct DynamicsSettings {
  bool enabled = false;
  boost::json::object config;  // effective dynamics configuration (keywords, idle_gesture)
};

struct RoomCallbacks {
  // Pays minute `minute`; kInsufficientFunds ends the session with insufficient_balance.
  std::function<Status(const Room&, int64_t minute)> charge_minute;
  // Current dynamics settings of the agent (called every few seconds from tick()).
  std::function<std::optional<DynamicsSettings>(const Room&)> dynamics;
  // The session ended (`end` is its kEnd action): called once, after viewers were told and the
  // transcript's last lines were added, on the thread that applied the end.
  std::function<void(Room&, const SessionAction& end)> ended;
};

enum class ViewerRole { kRuntime, kEmbed };  // embed viewers may not add context or gesture

struct RoomInfo {
  std::string room_id, session_id, agent_code, account_id;
  SessionPhase phase = SessionPhase::kStarting;
  std::optional<EndReason> end_reason;
  int64_t started_at_s = 0;
  int64_t started_us = 0;
  int viewers = 0;
  int viewers_peak = 0;  // the most viewers at once
  int64_t billed_minutes = 0;
  std::string billing_type;
  size_t context_items = 0;
};

struct DynamicsResult {
  Status status;  // kInvalidArgument for an unknown action
  bool animation_triggered = false;
};

class Room : public std::enable_shared_from_this<Room> {
 public:
  static Result<std::shared_ptr<Room>> create(RoomSettings settings,
                                              std::shared_ptr<const avatar::AvatarModel> model,
                                              speech::SpeechService* speech, Clock& clock,
                                              RoomCallbacks callbacks);
  ~Room();
  Room(const Room&) = delete;
  Room& operator=(const Room&) = delete;

  // Starts the render and speech threads and activates the session.
  void start();
  // Stops the threads (after end()); idempotent. Called by the registry, never from a callback.
  void join_threads();
  // Tells the brain to begin stopping (SessionBrain::request_stop); returns at once.
  void request_stop();

  void set_brain(std::shared_ptr<SessionBrain> brain);

  // Viewers. add_viewer sends session.started (and the current pause state) to that viewer; its
  // media then comes in `media` (the media= query parameter of its join).
  void add_viewer(std::shared_ptr<http::WebSocketConnection> c, ViewerRole role,
                  MediaFormat media = MediaFormat::kJpegPcm);
  void remove_viewer(const http::WebSocketConnection* c);
  // Other consumers of the room's media (a recording, a relay): on_config, then every frame's
  // packets in `format` from the render thread, a key frame first; on_end when removed or when the
  // room ends. Encoding runs only while some consumer wants it.
  void add_media_sink(std::shared_ptr<MediaSink> sink, MediaFormat format = MediaFormat::kH264Opus);
  void remove_media_sink(const MediaSink* sink);
  // The next picture is encoded as a key frame (a viewer's decoder lost its state).
  void request_key_frame();
  // A join was accepted and its WebSocket handshake is under way: add_viewer() follows, or
  // viewer_upgrade_failed() when the handshake never completes (the client dropped).
  void viewer_expected();
  // The handshake of an expected viewer failed. A room nobody has ever viewed, with no other
  // handshake under way, ends at once (reason absent) instead of billing a session without
  // viewers until its absent timeout.
  void viewer_upgrade_failed();
  // A JSON control message from a viewer (speak, add_context, interrupt, trigger_dynamics,
  // keep_alive, heartbeat). `renew` validates a heartbeat token and mints its successor (nullopt: refused).
  // A heartbeat answers {type: "heartbeat.ok", token, expires_at} with what `renew` returns.
  void on_control(const std::shared_ptr<http::WebSocketConnection>& from, ViewerRole role,
                  std::string_view text,
                  const std::function<std::optional<boost::json::object>(const std::string& token)>& renew);

  // Agent speech: queued after anything already queued. Returns the utterance id.
  // kInvalidArgument for a text over limits.speak_chars; kRateLimited (SPEECH_QUEUE_FULL) when
  // the room's speech queue holds its limit of utterances or bytes.
  Result<std::string> speak(const std::string& text);
  // speak() for text given by the API (REST/WebSocket speak): also joins the brain's history.
  Result<std::string> say(const std::string& text);
  // Microphone audio from a viewer (binary WebSocket message): handed to the brain's ears.
  // kConflict when this session does not listen.
  Status microphone(std::string_view pcm);
  // Whether the agent has speech queued or playing.
  bool agent_speaking() const;
  // An event {type, ...fields} to every viewer (transcript, agent.thinking, error).
  void broadcast_event(std::string_view type, boost::json::object fields = {});
  // The viewer side said something: the brain answers, or (no brain) the agent speaks it. The
  // turn joins the transcript with `source` (kSourceText typed, kSourceSpeech recognised).
  Status user_text(const std::string& text, std::string_view source = kSourceText);
  // A viewer's camera frame (camera_frame {image}): checked and handed to the brain for its next
  // model turn. kInvalidArgument for a bad frame or outside a camera_chat session.
  Status camera_frame(std::string_view data_url);
  // Keeps `text` as context (the oldest items are evicted past limits.context_items /
  // context_bytes). kInvalidArgument for a text over limits.context_item_chars.
  Status add_context(const std::string& text);
  // Drops all queued and playing speech at once; playback_finished {interrupted: true} for each.
  void interrupt();
  DynamicsResult trigger_dynamics(const std::string& action);
  void keep_alive();
  void renewed();  // a token renewal for this session succeeded
  void end(EndReason reason);

  // Advances the state machine: billing, timeouts, grace, dynamics refresh.
  void tick();

  bool ended() const;
  RoomInfo info() const;
  const RoomSettings& settings() const { return s_; }
  int width() const;
  int height() const;
  std::vector<std::string> context() const;
  // The session's transcript (transcript_log.h): final lines with their times.
  TranscriptLog& transcript() { return transcript_; }
  // Milliseconds since the session started, on the room's clock.
  int64_t session_ms() const;
  // Bytes the room keeps for its clients (queued speech texts, context), in RoomLimits' units:
  // never above max_accounted_bytes(settings().limits).
  size_t accounted_bytes() const;

 private:
  struct Utterance {
    std::string id;
    std::string text;
    int64_t frames = 0;  // speaking frames sent
    bool started = false;
    std::string gesture;       // keyword-mapped gesture played when the utterance starts
    bool spoken_text = false;  // given to speak (say()): a transcript line of its own when done
    int64_t queued_ms = 0, started_ms = -1;
  };
  Room(RoomSettings s, std::unique_ptr<avatar::Renderer> r, speech::SpeechService* speech, Clock& clock,
       RoomCallbacks cb);
  Result<std::string> queue_speech(const std::string& text, bool spoken_text);
  void render_loop();
  void speech_loop();
  void broadcast_text(const std::string& msg);
  void finish_utterance_locked(Utterance& u, bool interrupted, std::vector<std::string>& events,
                               std::vector<std::tuple<std::string, double, bool>>& done);
  void apply_actions(const std::vector<SessionAction>& actions);
  std::string session_started_json(MediaFormat media) const;

  RoomSettings s_;
  std::unique_ptr<avatar::Renderer> renderer_;
  speech::SpeechService* speech_;
  Clock& clock_;
  RoomCallbacks cb_;
  std::shared_ptr<SessionBrain> brain_;

  mutable std::mutex mu_;
  std::condition_variable speech_cv_;
  SessionState state_;
  struct Viewer {
    std::shared_ptr<http::WebSocketConnection> conn;
    ViewerRole role;
    std::shared_ptr<MediaSink> sink;  // the viewer's media, in the fan-out
  };
  std::vector<Viewer> viewers_;
  // Encoding (render thread) and fan-out (under mu_): live/media_encoder.h, live/media_fanout.h.
  std::unique_ptr<MediaEncoder> encoder_;
  MediaFanout fanout_;
  bool key_frame_pending_ = false;                // a consumer asked for a key frame
  int64_t last_key_frame_ = -1'000'000;           // frame index of the last H.264 key frame
  std::atomic<bool> reset_audio_encoder_{false};  // interrupt(): Opus forgets its look-ahead
  int expected_viewers_ = 0;                      // joins whose handshake is under way
  int viewers_peak_ = 0;
  bool ever_viewed_ = false;
  std::deque<Utterance> utterances_;                               // queued or playing, in order
  std::deque<std::pair<std::string, std::string>> to_synthesize_;  // id, text
  uint64_t speech_generation_ = 0;                                 // bumped by interrupt()
  RoomContext context_;
  TranscriptLog transcript_;
  ControlRate control_rate_;
  DynamicsSettings dynamics_;
  int64_t last_dynamics_refresh_us_ = 0;
  int64_t last_idle_gesture_us_ = 0;
  int64_t last_speech_activity_us_ = 0;
  int64_t utterance_counter_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<bool> paused_{false};
  std::atomic<bool> listening_{false};  // microphone audio has arrived (render_loop yields to the ears)
  std::thread render_thread_, speech_thread_;
  std::mutex join_mu_;  // DELETE and the registry's reaper may both join
  bool started_ = false;
};

}  // namespace imago::live
