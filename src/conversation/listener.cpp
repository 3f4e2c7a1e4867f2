#include "conversation/listener.h"

#include <algorithm>
#include <cstring>

namespace imago::conversation {

bool looks_finished(std::string_view hypothesis) {
  // Words a spoken sentence (almost) never ends with: after them the viewer is pausing
  // mid-sentence. Prepositions can end an English question ("what is it for"); holding those
  // costs only the longer wait, ending early wrongly costs a stopped answer.
  static const char* const kHold[] = {
      "a",    "an",    "the",   "and",  "or",   "but", "nor", "of",   "to",      "for", "from",    "with",
      "by",   "about", "into",  "onto", "at",   "in",  "on",  "than", "because", "if",  "whether", "my",
      "your", "our",   "their", "its",  "very", "uh",  "um",  "er",   "erm",     "hmm"};
  auto end = hypothesis.find_last_not_of(' ');
  if (end == std::string_view::npos) return false;
  auto space = hypothesis.find_last_of(' ', end);
  std::string_view last = hypothesis.substr(space == std::string_view::npos ? 0 : space + 1,
                                            end + 1 - (space == std::string_view::npos ? 0 : space + 1));
  return std::none_of(std::begin(kHold), std::end(kHold), [&](const char* w) { return last == w; });
}

Listener::Listener(std::unique_ptr<Recognizer> recognizer, ListenerSink sink, TurnDetectorOptions vad,
                   EndpointOptions endpoint)
    : rec_(std::move(recognizer)), sink_(std::move(sink)), vad_(vad), ep_(endpoint) {}

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

bool Listener::should_end_early() {
  const int64_t silence = vad_.silence_ms();
  if (ep_.quick_silence_ms <= 0 || silence == 0) {
    mark_silence_ms_ = -1;  // voiced again: the next silence starts over
    return false;
  }
  if (silence < ep_.quick_silence_ms - ep_.stable_ms) return false;
  std::string hyp = rec_->partial();
  if (mark_silence_ms_ < 0 || hyp != mark_hyp_) {
    // First look, or the decoder is still revising the end: look again stable_ms from now.
    mark_hyp_ = std::move(hyp);
    mark_silence_ms_ = silence;
    return false;
  }
  return silence >= ep_.quick_silence_ms && silence - mark_silence_ms_ >= ep_.stable_ms &&
         looks_finished(hyp);
}

void Listener::push(const int16_t* samples, size_t n) {
  // The detector works in 20 ms frames; feeding the recogniser in the same steps keeps the turn's
  // audio and the decoder's audio the same.
  constexpr size_t kStep = 320;
  for (size_t off = 0; off < n; off += kStep) {
    size_t len = std::min(kStep, n - off);
    const int16_t* p = samples + off;
    auto events = vad_.push(p, len);
    bool started = false, ended = false;
    for (auto& e : events) {
      if (e.kind == TurnEvent::kSpeechStarted) {
        started = true;
        // Speech soon after a turn that ended early: the viewer had only paused.
        const bool continues =
            !early_text_.empty() && e.at_ms - early_end_ms_ <= static_cast<int64_t>(ep_.continuation_ms);
        continuing_ = continues ? early_text_ : "";
        early_text_.clear();
        if ((agent_speaking_ || continues) && sink_.barge_in) sink_.barge_in();
        if (rec_->start().ok()) {
          in_turn_ = true;
          mark_silence_ms_ = -1;
          // The pre-roll: what came just before the detected start (the first syllable).
          const auto& pre = vad_.current_turn_audio();
          (void)rec_->feed(pre.data(), pre.size());
        }
      } else {
        ended = true;
      }
    }
    // The pre-roll fed at the start already holds this step.
    if (in_turn_ && !started) (void)rec_->feed(p, len);
    if (in_turn_ && !ended && vad_.in_speech() && should_end_early()) {
      (void)vad_.end_turn();
      ++early_ends_;
      end_of_turn(true);
    } else if (ended && in_turn_) {
      end_of_turn(false);
    }
  }
}

void Listener::end_of_turn(bool early) {
  in_turn_ = false;
  auto text = rec_->finish();
  std::string heard = text.ok() ? *text : "";
  // A continuation answers the whole sentence; one that was not understood still gets the
  // early part answered again (its answer was stopped when the viewer went on).
  if (!continuing_.empty()) heard = heard.empty() ? continuing_ : continuing_ + " " + heard;
  continuing_.clear();
  if (early && !heard.empty()) {
    early_text_ = heard;
    early_end_ms_ = vad_.stream_ms();
  }
  if (heard.empty() && !text.ok()) {
    if (sink_.not_understood) sink_.not_understood(text.status().message());
  } else if (heard.empty()) {
    if (sink_.not_understood) sink_.not_understood("nothing was understood");
  } else if (sink_.heard) {
    sink_.heard(heard);
  }
  if (domain_pending_) {
    (void)rec_->set_domain(domain_);
    domain_pending_ = false;
  }
}

}  // namespace imago::conversation
