#include "conversation/turn_detector.h"

#include <algorithm>
#include <cmath>

namespace imago::conversation {

namespace {
double to_dbfs(double mean_square) {
  return 10.0 * std::log10(std::max(mean_square, 1e-3) / (32768.0 * 32768.0));
}
}  // namespace

TurnDetector::TurnDetector(TurnDetectorOptions options)
    : o_(options), frame_len_(static_cast<size_t>(options.sample_rate * options.frame_ms / 1000)) {}

double TurnDetector::noise_floor_dbfs() const {
  return noise_energy_ < 0 ? -120 : to_dbfs(noise_energy_);
}

int64_t TurnDetector::stream_ms() const {
  return frames_ * o_.frame_ms;
}

void TurnDetector::reset_turn() {
  in_speech_ = false;
  voiced_run_ = 0;
  silent_frames_ = 0;
  turn_.clear();
}

std::vector<TurnEvent> TurnDetector::push(const int16_t* samples, size_t n) {
  std::vector<TurnEvent> out;
  pending_.insert(pending_.end(), samples, samples + n);
  size_t off = 0;
  while (pending_.size() - off >= frame_len_) {
    frame(pending_.data() + off, out);
    off += frame_len_;
  }
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(off));
  return out;
}

void TurnDetector::frame(const int16_t* f, std::vector<TurnEvent>& out) {
  double energy = 0;
  for (size_t i = 0; i < frame_len_; ++i) energy += static_cast<double>(f[i]) * f[i];
  energy /= static_cast<double>(frame_len_);
  const double level = to_dbfs(energy);
  // Noise floor: the quietest frame of the last 1.5 s (minimum statistics). Pauses between words
  // keep it low during speech; steady background noise raises it within 1.5 s. The window
  // starts filled with -60 dBFS so speech at the very start of a stream is detected.
  const size_t window = static_cast<size_t>(1500 / o_.frame_ms);
  if (recent_energy_.empty()) recent_energy_.assign(window, 32768.0 * 32768.0 * 1e-6);
  recent_energy_.push_back(energy);
  while (recent_energy_.size() > window) recent_energy_.pop_front();
  noise_energy_ = *std::min_element(recent_energy_.begin(), recent_energy_.end());
  const bool voiced = level > o_.min_level_dbfs && level > to_dbfs(noise_energy_) + o_.margin_db;
  ++frames_;

  const size_t preroll = static_cast<size_t>(o_.sample_rate * o_.preroll_ms / 1000);
  if (!in_speech_) {
    history_.insert(history_.end(), f, f + frame_len_);
    if (history_.size() > preroll + frame_len_ * static_cast<size_t>(o_.start_frames)) {
      history_.erase(history_.begin(),
                     history_.end() - static_cast<std::ptrdiff_t>(
                                          preroll + frame_len_ * static_cast<size_t>(o_.start_frames)));
    }
    voiced_run_ = voiced ? voiced_run_ + 1 : 0;
    if (voiced_run_ >= o_.start_frames) {
      in_speech_ = true;
      silent_frames_ = 0;
      turn_start_frame_ = frames_ - voiced_run_;
      turn_ = history_;
      history_.clear();
      TurnEvent e;
      e.kind = TurnEvent::kSpeechStarted;
      e.at_ms = turn_start_frame_ * o_.frame_ms;
      e.detected_at_ms = frames_ * o_.frame_ms;
      out.push_back(std::move(e));
    }
    return;
  }
  turn_.insert(turn_.end(), f, f + frame_len_);
  silent_frames_ = voiced ? 0 : silent_frames_ + 1;
  const bool ended = silent_frames_ * o_.frame_ms >= o_.end_silence_ms;
  const bool too_long = (frames_ - turn_start_frame_) * o_.frame_ms >= o_.max_turn_ms;
  if (ended || too_long) out.push_back(*end_turn());
}

std::optional<TurnEvent> TurnDetector::end_turn() {
  if (!in_speech_) return std::nullopt;
  TurnEvent e;
  e.kind = TurnEvent::kTurnEnded;
  e.at_ms = frames_ * o_.frame_ms;
  e.detected_at_ms = e.at_ms;
  e.audio = std::move(turn_);
  reset_turn();
  return e;
}

}  // namespace imago::conversation
