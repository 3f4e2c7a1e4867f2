// The ears of a live session in one object: microphone audio in (16-bit little-endian mono PCM at
// 16 kHz, any chunking), the viewer's recognised turns and barge-in out. The turn detector finds
// turns; the recogniser is fed while the viewer speaks (so only its final pass is left when the
// turn ends: ~160 ms CPU instead of ~1.3 s for decoding the whole turn afterwards); a viewer who
// starts speaking while the agent talks triggers barge_in at once.
//
// Not thread safe, and decoding costs CPU: call it from one worker thread, never from an I/O
// thread.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "conversation/recognizer.h"
#include "conversation/turn_detector.h"

namespace imago::conversation {

struct ListenerSink {
  // The viewer started speaking while the agent was speaking: stop the agent now.
  std::function<void()> barge_in;
  // A turn was recognised (never called with empty text).
  std::function<void(const std::string& text)> heard;
  // A turn ended but nothing was understood, or recognition failed (for logs and captions).
  std::function<void(const std::string& why)> not_understood;
};

class Listener {
 public:
  Listener(std::unique_ptr<Recognizer> recognizer, ListenerSink sink, TurnDetectorOptions vad = {});

  // Raw microphone bytes (s16le); an odd trailing byte waits for the next call.
  void push_bytes(std::string_view bytes);
  void push(const int16_t* samples, size_t n);
  // Whether the agent is speaking now (barge-in applies only then).
  void set_agent_speaking(bool speaking) { agent_speaking_ = speaking; }
  // The agent's vocabulary (system prompt and knowledge); applied at the next turn boundary.
  void set_domain(std::vector<std::string> sentences);
  bool in_turn() const { return in_turn_; }

 private:
  std::unique_ptr<Recognizer> rec_;
  ListenerSink sink_;
  TurnDetector vad_;
  std::string odd_byte_;
  std::vector<int16_t> scratch_;
  bool agent_speaking_ = false;
  bool in_turn_ = false;
  bool domain_pending_ = false;
  std::vector<std::string> domain_;
};

}  // namespace imago::conversation
