// The conversation brain of a live session (docs/conversation.md): plugs a Conversation (the
// answers) and a Listener (the ears) into a Room through the SessionBrain seam.
//
// - Agent sentences go to the room's speech queue as the model writes them.
// - An interrupt, a new viewer turn while the agent talks, and barge-in stop the model request,
//   the synthesis queue and the renderer queue together (Room::interrupt calls on_interrupt first).
// - Microphone audio is queued by the I/O thread and recognised on the brain's own ears thread.
// - stop() owns the brain's threads: it is the only place they are joined, once, whoever calls it
//   (a concurrent caller waits for the first). It is bounded: the ears stop between two chunks of
//   audio (not after the whole backlog) and a model request is cancelled, not waited for.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "conversation/chat_client.h"
#include "conversation/conversation.h"
#include "conversation/recognizer.h"
#include "conversation/recognizer_pool.h"
#include "live/room.h"

namespace imago::live {

struct ConversationBrainOptions {
  std::optional<conversation::ChatClientOptions> llm;  // nullopt: the built-in responder answers
  bool listen = true;                                  // accept microphone audio
  bool vision = false;  // the model accepts images: camera_chat frames go with the viewer's turns
  conversation::RecognizerOptions recognizer;
  // Recognisers loaded ahead of need, shared by every session of the process: a session warms the
  // pool when it starts and takes one on its first microphone audio. nullptr: the session loads
  // its own (with `recognizer`) on its first audio.
  std::shared_ptr<conversation::RecognizerPool> recognizers;
  // Microphone audio waiting for the ears beyond this is dropped (10 s at 16 kHz s16).
  size_t max_audio_backlog_bytes = 320'000;
  // The agent's own knowledge (set per session by the brain factory): every answer knows it.
  std::vector<std::string> agent_knowledge;
};

// Code of the error event when speech recognition cannot run (models missing).
inline constexpr const char* kRecognitionUnavailable = "SPEECH_RECOGNITION_UNAVAILABLE";

class ConversationBrain : public SessionBrain {
 public:
  // `room` must outlive the brain's threads: the room calls stop() before it goes away.
  ConversationBrain(Room& room, const std::string& system_prompt, ConversationBrainOptions options);
  ~ConversationBrain() override;

  void on_user_text(Room& room, const std::string& text) override;
  void on_add_context(Room& room, const std::string& text) override;
  void on_interrupt(Room& room) override;
  void on_agent_said(Room& room, const std::string& text) override;
  bool on_microphone(Room& room, std::string_view pcm) override;
  void on_camera_frame(Room& room, std::string data_url) override;
  void request_stop() override;
  void stop() override;
  // Sentences the recogniser's vocabulary is built from (the prompt and the room's context): for
  // tests and metrics.
  size_t domain_items();

 private:
  void speak_sentence(const std::string& sentence);
  void ears_loop();
  int64_t dropped_audio_ms();

  Room& room_;
  const std::string system_prompt_;
  const ConversationBrainOptions opts_;

  // Sentences of an answer that started before the latest interrupt are dropped: the worker may
  // be between its own cancellation check and the room's speech queue when an interrupt arrives.
  std::mutex speak_mu_;
  uint64_t epoch_ = 0;         // bumped by every interrupt
  uint64_t answer_epoch_ = 0;  // epoch when the running answer started
  // When the answer being spoken said its first sentence (ms since the session started; -1: none
  // yet): the start of its transcript line.
  std::atomic<int64_t> answer_start_ms_{-1};

  std::mutex mu_;
  std::unique_ptr<conversation::Conversation> conversation_;  // reset by stop()

  // The ears: a queue filled by I/O threads, drained by ears_thread_.
  std::mutex ears_mu_;
  std::condition_variable ears_cv_;
  std::deque<std::string> audio_;
  size_t audio_bytes_ = 0;
  size_t dropped_bytes_ = 0;            // microphone audio dropped because the ears were over 10 s behind
  std::atomic<bool> ears_stop_{false};  // set under ears_mu_; read between chunks without it
  std::vector<std::string> domain_;     // system prompt and knowledge, for the recogniser
  bool domain_changed_ = false;
  std::thread ears_thread_;
  std::mutex stop_mu_;  // one stop() joins; a concurrent one waits for it
};

}  // namespace imago::live
