#include "conversation/listener.h"

#include <cstring>

namespace imago::conversation {

Listener::Listener(std::unique_ptr<Recognizer> recognizer, ListenerSink sink, TurnDetectorOptions vad)
    : rec_(std::move(recognizer)), sink_(std::move(sink)), vad_(vad) {}

void Listener::set_domain(std::vector<std::string> sentences) {
  domain_ = std::move(sentences);
  domain_pending_ = true;
  if (!in_turn_) {
    (void)rec_->set_domain(domain_);
    domain_pending_ = false;
  }
}

void Listener::push_bytes(std::string_view bytes) {
  std::string joined;
  if (!odd_byte_.empty()) {
    joined = odd_byte_ + std::string(bytes);
    bytes = joined;
    odd_byte_.clear();
  }
  size_t n = bytes.size() / 2;
  if (bytes.size() % 2) odd_byte_.assign(1, bytes.back());
  scratch_.resize(n);
  // Little-endian on the wire; assembled byte by byte so the host order does not matter.
  for (size_t i = 0; i < n; ++i) {
    auto lo = static_cast<unsigned char>(bytes[2 * i]);
    auto hi = static_cast<unsigned char>(bytes[2 * i + 1]);
    scratch_[i] = static_cast<int16_t>(static_cast<uint16_t>(lo | (hi << 8)));
  }
  std::vector<int16_t> samples;
  samples.swap(scratch_);
  push(samples.data(), samples.size());
  scratch_.swap(samples);
}

void Listener::push(const int16_t* samples, size_t n) {
  // The detector works in 20 ms frames; feeding the recogniser in the same steps keeps the turn's
  // audio and the decoder's audio the same.
  constexpr size_t kStep = 320;
  for (size_t off = 0; off < n; off += kStep) {
    size_t len = std::min(kStep, n - off);
    const int16_t* p = samples + off;
    auto events = vad_.push(p, len);
    bool ended = false;
    for (auto& e : events) {
      if (e.kind == TurnEvent::kSpeechStarted) {
        if (agent_speaking_ && sink_.barge_in) sink_.barge_in();
        if (rec_->start().ok()) {
          in_turn_ = true;
          // The pre-roll: what came just before the detected start (the first syllable).
          const auto& pre = vad_.current_turn_audio();
          (void)rec_->feed(pre.data(), pre.size());
        }
      } else {
        ended = true;
      }
    }
    if (in_turn_ && !ended && events.empty()) (void)rec_->feed(p, len);
    if (ended && in_turn_) {
      (void)rec_->feed(p, len);
      in_turn_ = false;
      auto text = rec_->finish();
      if (!text.ok()) {
        if (sink_.not_understood) sink_.not_understood(text.status().message());
      } else if (text->empty()) {
        if (sink_.not_understood) sink_.not_understood("nothing was understood");
      } else if (sink_.heard) {
        sink_.heard(*text);
      }
      if (domain_pending_) {
        (void)rec_->set_domain(domain_);
        domain_pending_ = false;
      }
    }
  }
}

}  // namespace imago::conversation
