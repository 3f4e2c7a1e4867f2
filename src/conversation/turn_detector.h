// Voice activity detection that finds a viewer's turns in microphone audio (16 kHz 16-bit mono).
// Energy based, with an adaptive noise floor: audio is cut into 20 ms frames; a frame is voiced
// when its RMS level is above both an absolute floor (-50 dBFS) and the noise floor (the
// quietest frame of the last 1.5 s) by a margin (10 dB). Speech starts after 3 voiced frames in a row (60 ms,
// so clicks do not count); the turn ends after 600 ms without voiced frames, or at 15 s. The audio of a turn
// starts 300 ms before the detected start (pre-roll) so the first syllable reaches the recogniser.
// A caller that knows more (the Listener looks at what has been recognised so far) may end a turn
// earlier with end_turn(): 600 ms is the longest wait, not the usual one.
//
// kSpeechStarted is also the barge-in signal: a viewer who starts speaking while the agent talks
// interrupts it (the live session stops the agent's audio on this event). The browser's echo
// cancellation (getUserMedia's default) keeps the agent's own voice out of the microphone.
#pragma once
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

namespace imago::conversation {

struct TurnDetectorOptions {
  int sample_rate = 16000;
  int frame_ms = 20;
  double min_level_dbfs = -50;  // quieter frames are never speech
  double margin_db = 10;        // above the noise floor
  int start_frames = 3;         // voiced frames in a row that start speech
  int end_silence_ms = 600;     // unvoiced time that ends a turn
  int preroll_ms = 300;
  int max_turn_ms = 15000;
};

struct TurnEvent {
  enum Kind { kSpeechStarted, kTurnEnded };
  Kind kind = kSpeechStarted;
  int64_t at_ms = 0;           // stream time: start of speech (detected onset) or end of the turn
  int64_t detected_at_ms = 0;  // stream time when the detector decided (start: after start_frames)
  std::vector<int16_t> audio;  // kTurnEnded: the turn's audio, pre-roll included
};

class TurnDetector {
 public:
  explicit TurnDetector(TurnDetectorOptions options = {});
  // Adds audio (any length); returns the events it caused, in order.
  std::vector<TurnEvent> push(const int16_t* samples, size_t n);
  bool in_speech() const { return in_speech_; }
  double noise_floor_dbfs() const;
  int64_t stream_ms() const;
  // The audio of the turn so far (pre-roll included); right after kSpeechStarted it is the
  // pre-roll and the frames that started it.
  const std::vector<int16_t>& current_turn_audio() const { return turn_; }
  // Forgets the current turn (e.g. after an interrupt the caller decides to drop it).
  void reset_turn();
  // Unvoiced time at the end of the current turn so far (0 outside a turn or while voiced).
  int64_t silence_ms() const { return in_speech_ ? static_cast<int64_t>(silent_frames_) * o_.frame_ms : 0; }
  // Ends the current turn now (the caller decided the viewer has finished): the kTurnEnded event
  // with the turn's audio; nullopt outside a turn.
  std::optional<TurnEvent> end_turn();

 private:
  void frame(const int16_t* f, std::vector<TurnEvent>& out);
  TurnDetectorOptions o_;
  size_t frame_len_;
  std::vector<int16_t> pending_;      // samples not yet forming a whole frame
  std::vector<int16_t> history_;      // recent audio for the pre-roll
  std::vector<int16_t> turn_;         // audio of the current turn
  double noise_energy_ = -1;          // mean square of background frames (-1: not yet known)
  std::deque<double> recent_energy_;  // frame energies of the last 1.5 s
  int voiced_run_ = 0;
  int silent_frames_ = 0;
  bool in_speech_ = false;
  int64_t frames_ = 0;
  int64_t turn_start_frame_ = 0;
};

}  // namespace imago::conversation
