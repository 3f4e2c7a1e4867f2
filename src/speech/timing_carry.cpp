#include "speech/timing_carry.h"

#include <algorithm>

namespace imago::speech {

void TimingCarry::add_input(const std::vector<WordTiming>& words, const std::vector<PhonemeTiming>& phones,
                            double duration_s) {
  for (const auto& w : words)
    words_.push_back({w.text, (in_s_ + w.start_s) * scale_, (in_s_ + w.end_s) * scale_});
  for (const auto& p : phones)
    phones_.push_back({p.phoneme, (in_s_ + p.start_s) * scale_, (in_s_ + p.end_s) * scale_});
  in_s_ += duration_s;
}

Audio TimingCarry::emit(std::vector<int16_t> samples, int rate, bool last) {
  Audio a;
  a.sample_rate = rate;
  a.samples = std::move(samples);
  const double start = out_s_, len = a.duration_s(), end = start + len;
  auto rel = [&](double t) { return std::clamp(t - start, 0.0, len); };
  while (!words_.empty() && (last || words_.front().start_s < end)) {
    WordTiming w = std::move(words_.front());
    words_.pop_front();
    w.end_s = last ? rel(w.end_s) : std::max(0.0, w.end_s - start);
    w.start_s = rel(w.start_s);
    a.words.push_back(std::move(w));
  }
  while (!phones_.empty() && (last || phones_.front().start_s < end)) {
    PhonemeTiming& p = phones_.front();
    double s = rel(p.start_s), e = rel(p.end_s);
    if (e > s) a.phonemes.push_back({p.phoneme, s, e});
    if (!last && p.end_s > end) {
      p.start_s = end;  // the rest of this phone lies in the next piece
      break;
    }
    phones_.pop_front();
  }
  out_s_ = end;
  if (last) in_s_ = 0, out_s_ = 0, words_.clear(), phones_.clear();
  return a;
}

}  // namespace imago::speech
