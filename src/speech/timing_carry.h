// The words and phones of an audio stream that is processed in pieces by steps which hold back a
// little audio (a resampler, a time-stretch): each piece of output gets the timings that fall in
// it, so a chunk of speech can be cut anywhere without losing or doubling a word or a phone.
#pragma once
#include <cstdint>
#include <deque>
#include <vector>

#include "speech/synthesis.h"

namespace imago::speech {

class TimingCarry {
 public:
  // `scale`: seconds of output per second of input (1/speed for a time-stretch, 1 for a resampler).
  explicit TimingCarry(double scale = 1) : scale_(scale) {}

  // The next piece of input: `duration_s` long, its words and phones timed from its first sample.
  void add_input(const std::vector<WordTiming>& words, const std::vector<PhonemeTiming>& phones,
                 double duration_s);

  // Output samples that follow those emitted before, as Audio timed from their first sample:
  //  - a word belongs to the piece it starts in (never split, never repeated; its end may lie past
  //    the piece's end, in the next piece);
  //  - a phone is clipped to each piece it overlaps, so every piece's phones lie inside it.
  // With `last`, everything still held is placed in this piece (clipped to it) and the carry
  // starts a new stream.
  Audio emit(std::vector<int16_t> samples, int rate, bool last);

 private:
  double scale_;
  double in_s_ = 0;                   // input seconds added so far
  double out_s_ = 0;                  // output seconds emitted so far
  std::deque<WordTiming> words_;      // pending, in output seconds from the stream's start
  std::deque<PhonemeTiming> phones_;  // pending, in output seconds from the stream's start
};

}  // namespace imago::speech
