// The ears of a live session in one object: microphone audio in (16-bit little-endian mono PCM at
// 16 kHz, any chunking), the viewer's recognised turns and barge-in out. The turn detector finds
// turns; the recogniser is fed while the viewer speaks (so only its final pass is left when the
// turn ends: ~25 ms CPU instead of ~1 s for decoding the whole turn afterwards); a viewer who
// starts speaking while the agent talks triggers barge_in at once.
//
// When a turn ends (docs/conversation.md, "Finding turns"): the turn detector's 600 ms of silence
// is the longest wait. The listener ends a turn after 300 ms of silence when what has been
// recognised so far looks finished: a partial hypothesis that is not empty, has not changed over
// the last 100 ms, and does not end in a word a sentence rarely ends with ("a", "the", "and",
// "to", "of", ...: the viewer is probably pausing mid-sentence). The trade-off: a viewer who
// pauses longer than 300 ms after a complete-looking phrase is answered too early; when they go
// on within a second, that continuation stops the early answer (barge-in) and is joined to the
// early turn, so the whole sentence is answered.
//
// Not thread safe, and decoding costs CPU: call it from one worker thread, never from an I/O
// thread. Everything is decided on the audio's own time (20 ms frames), never the wall clock,
// so a listener that falls behind real time decides exactly as one that keeps up.
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
  // The viewer started speaking while the agent was speaking, or went on with a turn that had
  // ended early: stop the agent now.
  std::function<void()> barge_in;
  // A turn was recognised (never called with empty text).
  std::function<void(const std::string& text)> heard;
  // A turn ended but nothing was understood, or recognition failed (for logs and captions).
  std::function<void(const std::string& why)> not_understood;
};

struct EndpointOptions {
  int quick_silence_ms = 300;  // 0: always wait for the turn detector's end_silence_ms
  int stable_ms = 100;         // the partial hypothesis is unchanged for this long
  int continuation_ms = 1000;  // speech this soon after an early end continues that turn
};

// Whether a turn whose recognised text so far is `hypothesis` may end early: not empty, and not
// ending in a word that rarely ends a sentence (articles, prepositions, conjunctions, auxiliaries).
bool looks_finished(std::string_view hypothesis);

class Listener {
 public:
  Listener(std::unique_ptr<Recognizer> recognizer, ListenerSink sink, TurnDetectorOptions vad = {},
           EndpointOptions endpoint = {});

  // Raw microphone bytes (s16le); an odd trailing byte waits for the next call.
  void push_bytes(std::string_view bytes);
  void push(const int16_t* samples, size_t n);
  // Whether the agent is speaking now (barge-in applies only then).
  void set_agent_speaking(bool speaking) { agent_speaking_ = speaking; }
  // The agent's vocabulary (system prompt and knowledge); applied at the next turn boundary.
  void set_domain(std::vector<std::string> sentences);
  bool in_turn() const { return in_turn_; }
  // Audio time processed so far (ms), and how many turns ended early (tests, logs).
  int64_t stream_ms() const { return vad_.stream_ms(); }
  int64_t early_ends() const { return early_ends_; }

 private:
  bool should_end_early();
  void end_of_turn(bool early);

  std::unique_ptr<Recognizer> rec_;
  ListenerSink sink_;
  TurnDetector vad_;
  EndpointOptions ep_;
  std::string odd_byte_;
  std::vector<int16_t> scratch_;
  bool agent_speaking_ = false;
  bool in_turn_ = false;
  bool domain_pending_ = false;
  std::vector<std::string> domain_;
  // The partial hypothesis seen at `mark_silence_ms_` of the current silence (-1: none yet).
  std::string mark_hyp_;
  int64_t mark_silence_ms_ = -1;
  // The last turn, when it ended early: a turn starting soon after continues it.
  std::string early_text_;
  int64_t early_end_ms_ = 0;
  std::string continuing_;  // the text the current turn continues
  int64_t early_ends_ = 0;
};

}  // namespace imago::conversation
