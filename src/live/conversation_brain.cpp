#include "live/conversation_brain.h"

#include <chrono>

#include "conversation/listener.h"
#include "live/thread_priority.h"
#include "util/log.h"

namespace imago::live {

namespace json = boost::json;

ConversationBrain::ConversationBrain(Room& room, const std::string& system_prompt,
                                     ConversationBrainOptions options)
    : room_(room), system_prompt_(system_prompt), opts_(std::move(options)) {
  conversation::ConversationOptions co;
  co.system_prompt = system_prompt_;
  co.llm = opts_.llm;
  co.attach_images = opts_.llm && opts_.vision && room.settings().camera;
  co.agent_knowledge = opts_.agent_knowledge;
  conversation::ConversationSink sink;
  sink.speak = [this](const std::string& s) { speak_sentence(s); };
  // Captions with times (ms since the session started). The viewer's turn is the room's line
  // (Room::user_text); an answer becomes one line when it is final, from its first sentence on.
  sink.transcript = [this](const std::string& role, const std::string& text, bool final) {
    const int64_t now = room_.session_ms();
    int64_t start = now;
    if (role == "agent") {
      int64_t first = answer_start_ms_.load();
      if (first < 0) answer_start_ms_ = first = now;
      start = first;
      if (final) {
        answer_start_ms_ = -1;
        room_.transcript().add("agent", opts_.llm ? kSourceLlm : kSourceResponder, text, start, now);
      } else {
        start = now;  // a sentence as it goes to speech
      }
    }
    json::object e{{"role", role}, {"text", text}, {"final", final}, {"start_ms", start}, {"end_ms", now}};
    if (role == "agent") e["source"] = opts_.llm ? kSourceLlm : kSourceResponder;
    room_.broadcast_event("transcript", std::move(e));
  };
  sink.thinking = [this] {
    {
      std::lock_guard lock(speak_mu_);
      answer_epoch_ = epoch_;
    }
    room_.broadcast_event("agent.thinking");
  };
  sink.error = [this](const std::string& code, const std::string& message) {
    room_.broadcast_event("error", {{"code", code}, {"message", message}});
  };
  conversation_ = std::make_unique<conversation::Conversation>(std::move(co), std::move(sink));
  if (!system_prompt_.empty()) domain_.push_back(system_prompt_);
  for (const auto& item : opts_.agent_knowledge) domain_.push_back(item);
  domain_changed_ = !domain_.empty();
  // Before the viewer can speak: the first words then wait for no model loading.
  if (opts_.listen && opts_.recognizers) opts_.recognizers->warm();
}

ConversationBrain::~ConversationBrain() {
  stop();
}

void ConversationBrain::request_stop() {
  {
    std::lock_guard lock(ears_mu_);
    ears_stop_ = true;
    audio_.clear();
    audio_bytes_ = 0;
  }
  ears_cv_.notify_all();
  // The running answer's model request ends now, while the ears finish their chunk.
  std::lock_guard lock(mu_);
  if (conversation_) conversation_->interrupt();
}

void ConversationBrain::stop() {
  // The room's closer, a room's destructor and the brain's own destructor may all get here, on
  // different threads: std::thread::join from two threads at once is undefined (glibc refuses
  // the second with EINVAL, or waits on a reused thread forever).
  std::lock_guard stop_lock(stop_mu_);
  request_stop();
  std::unique_ptr<conversation::Conversation> c;
  {
    std::lock_guard lock(mu_);
    c = std::move(conversation_);
  }
  if (ears_thread_.joinable()) {
    if (ears_thread_.get_id() == std::this_thread::get_id()) {
      ears_thread_.detach();  // the ears ended the room themselves: they return right after
    } else {
      ears_thread_.join();
    }
  }
  c.reset();  // joins the conversation's worker
}

void ConversationBrain::speak_sentence(const std::string& sentence) {
  std::lock_guard lock(speak_mu_);
  if (answer_epoch_ != epoch_) return;  // interrupted after this answer started
  auto id = room_.speak(sentence);
  if (!id.ok())
    log::warn("live_brain_speak_failed",
              {{"session", room_.settings().session_id}, {"error", id.status().message()}});
}

void ConversationBrain::on_user_text(Room& room, const std::string& text) {
  bool busy;
  {
    std::lock_guard lock(mu_);
    if (!conversation_) return;
    busy = conversation_->busy();
  }
  // The viewer spoke over the agent: its answer, queued speech and frames stop together.
  if (busy || room.agent_speaking()) room.interrupt();
  std::lock_guard lock(mu_);
  if (conversation_) conversation_->user_text(text);
}

void ConversationBrain::on_add_context(Room& room, const std::string& text) {
  {
    std::lock_guard lock(mu_);
    if (conversation_) conversation_->add_context(text);
  }
  // The recogniser's vocabulary is the prompt plus what the room keeps (bounded, oldest evicted
  // first: docs/live-protocol.md, "Bounds"), not every item ever sent.
  std::vector<std::string> domain;
  if (!system_prompt_.empty()) domain.push_back(system_prompt_);
  for (const auto& item : opts_.agent_knowledge) domain.push_back(item);
  for (auto& item : room.context()) domain.push_back(std::move(item));
  std::lock_guard lock(ears_mu_);
  domain_ = std::move(domain);
  domain_changed_ = true;
}

size_t ConversationBrain::domain_items() {
  std::lock_guard lock(ears_mu_);
  return domain_.size();
}

void ConversationBrain::on_interrupt(Room&) {
  {
    std::lock_guard lock(speak_mu_);
    ++epoch_;
  }
  std::lock_guard lock(mu_);
  if (conversation_) conversation_->interrupt();
}

void ConversationBrain::on_agent_said(Room&, const std::string& text) {
  std::lock_guard lock(mu_);
  if (conversation_) conversation_->agent_said(text);
}

void ConversationBrain::on_camera_frame(Room&, std::string data_url) {
  std::lock_guard lock(mu_);
  if (conversation_) conversation_->camera_frame(std::move(data_url));
}

bool ConversationBrain::on_microphone(Room&, std::string_view pcm) {
  if (!opts_.listen) return false;
  {
    std::lock_guard lock(ears_mu_);
    if (ears_stop_) return true;
    if (audio_bytes_ + pcm.size() > opts_.max_audio_backlog_bytes) {
      // The ears are behind by seconds: drop the oldest audio rather than grow without bound.
      size_t dropped = 0;
      while (!audio_.empty() && audio_bytes_ + pcm.size() > opts_.max_audio_backlog_bytes) {
        dropped += audio_.front().size();
        audio_bytes_ -= audio_.front().size();
        audio_.pop_front();
      }
      if (dropped_bytes_ == 0)
        log::warn("live_ears_behind", {{"session", room_.settings().session_id},
                                       {"detail", "microphone audio over 10 s behind is dropped"}});
      dropped_bytes_ += dropped;
    }
    audio_.emplace_back(pcm);
    audio_bytes_ += pcm.size();
    if (!ears_thread_.joinable()) ears_thread_ = std::thread([this] { ears_loop(); });
  }
  ears_cv_.notify_one();
  return true;
}

int64_t ConversationBrain::dropped_audio_ms() {
  std::lock_guard lock(ears_mu_);
  return static_cast<int64_t>(dropped_bytes_ / 32);
}

void ConversationBrain::ears_loop() {
  // Recognition needs ~0.45 s of CPU per second of audio and must keep up with the viewer:
  // above the room's rendering (which lowers itself), and above the rest of the machine when the
  // process may raise a thread's priority (live/thread_priority.h).
  const bool raised = adjust_this_thread_nice(kEarsNiceOffset);
  log::info("live_ears_started", {{"session", room_.settings().session_id}, {"priority_raised", raised}});
  std::unique_ptr<conversation::Listener> listener;
  bool unavailable = false;
  size_t backlog_bytes = 0;  // audio still queued when the current batch was taken
  for (;;) {
    std::deque<std::string> chunks;
    std::vector<std::string> domain;
    bool domain_changed = false;
    {
      std::unique_lock lock(ears_mu_);
      ears_cv_.wait(lock, [&] { return ears_stop_ || !audio_.empty(); });
      if (ears_stop_) return;
      chunks.swap(audio_);
      backlog_bytes = audio_bytes_;
      audio_bytes_ = 0;
      if (domain_changed_) {
        domain = domain_;
        domain_changed = true;
        domain_changed_ = false;
      }
    }
    if (unavailable) continue;
    if (!listener) {
      // A decoder holds about 91 MB of models: only sessions that send audio take one.
      const auto asked = std::chrono::steady_clock::now();
      if (ears_stop_.load()) return;
      // A stop must not wait for a recogniser being loaded for this session (seconds when busy).
      auto rec = opts_.recognizers ? opts_.recognizers->take([this] { return ears_stop_.load(); })
                                   : conversation::Recognizer::create(opts_.recognizer);
      if (ears_stop_.load()) return;
      // How long the viewer's first audio waited for a recogniser (near 0 with a warm pool).
      log::info("live_ears_ready", {{"session", room_.settings().session_id},
                                    {"ok", rec.ok()},
                                    {"waited_ms", std::chrono::duration_cast<std::chrono::milliseconds>(
                                                      std::chrono::steady_clock::now() - asked)
                                                      .count()}});
      if (!rec.ok()) {
        unavailable = true;
        room_.broadcast_event("error",
                              {{"code", kRecognitionUnavailable}, {"message", rec.status().message()}});
        continue;
      }
      conversation::ListenerSink sink;
      sink.barge_in = [this] { room_.interrupt(); };
      // How far behind real time the ears were when the batch holding the turn's end was taken
      // (32 bytes per ms at 16 kHz s16): the first thing to look at when turns come late.
      sink.heard = [this, &backlog_bytes](const std::string& text) {
        log::info("live_turn_heard", {{"session", room_.settings().session_id},
                                      {"chars", text.size()},
                                      {"ears_behind_ms", backlog_bytes / 32},
                                      {"dropped_audio_ms", dropped_audio_ms()}});
        (void)room_.user_text(text, kSourceSpeech);
      };
      sink.not_understood = [this, &backlog_bytes](const std::string& why) {
        log::info("live_turn_not_understood", {{"session", room_.settings().session_id},
                                               {"why", why},
                                               {"ears_behind_ms", backlog_bytes / 32},
                                               {"dropped_audio_ms", dropped_audio_ms()}});
      };
      listener = std::make_unique<conversation::Listener>(std::move(rec).value(), std::move(sink));
    }
    if (domain_changed) listener->set_domain(domain);
    listener->set_agent_speaking(room_.agent_speaking());
    for (const auto& c : chunks) {
      if (ears_stop_.load()) return;  // stop() waits for this thread: one chunk, not the backlog
      listener->push_bytes(c);
    }
  }
}

}  // namespace imago::live
