// Signal processing around the engine: time-stretch without pitch change (libsonic), sample-rate
// conversion (libsoxr), and the acoustic measurements the tests, the benchmark and the voice
// designer rely on (F0 by autocorrelation, spectral centroid).
#pragma once
#include <cstdint>
#include <vector>

#include "util/status.h"

namespace imago::speech {

// How hard the post-processing works; derived from total_steps (see docs/speech.md).
struct Quality {
  bool sonic_high = true;  // libsonic's full-rate pitch-period search (slower, fewer artifacts)
  int soxr_recipe = 0;     // SOXR_QQ .. SOXR_VHQ
};
Quality quality_for_steps(int total_steps);

// Changes duration by 1/speed keeping pitch (libsonic, pitch-synchronous overlap-add).
std::vector<int16_t> time_stretch(const std::vector<int16_t>& in, int rate, double speed, const Quality& q);

// Resamples mono s16 with libsoxr.
Result<std::vector<int16_t>> resample(const std::vector<int16_t>& in, int in_rate, int out_rate,
                                      const Quality& q);

// The streaming forms of the two above, for audio that arrives in pieces: the output of all the
// pushes and the flush is the output of the one-shot function on the whole input, so a piece may
// end anywhere (inside a vowel) without a seam. Each holds back a few milliseconds until more
// input or the flush comes. After flush() the object starts a new, unrelated stream.
class StreamingStretch {
 public:
  StreamingStretch(int rate, double speed, const Quality& q);
  ~StreamingStretch();
  StreamingStretch(const StreamingStretch&) = delete;
  StreamingStretch& operator=(const StreamingStretch&) = delete;
  void push(const int16_t* in, size_t n, std::vector<int16_t>& out);
  void flush(std::vector<int16_t>& out);

 private:
  void drain(std::vector<int16_t>& out);
  void* stream_ = nullptr;  // sonicStream; null when speed is 1 (a copy)
  int rate_;
  double speed_;
  Quality q_;
};

class StreamingResampler {
 public:
  StreamingResampler(int in_rate, int out_rate, const Quality& q);
  ~StreamingResampler();
  StreamingResampler(const StreamingResampler&) = delete;
  StreamingResampler& operator=(const StreamingResampler&) = delete;
  // Fails only on a libsoxr error (out of memory).
  Status push(const int16_t* in, size_t n, std::vector<int16_t>& out);
  Status flush(std::vector<int16_t>& out);

 private:
  Status open();
  void* soxr_ = nullptr;  // soxr_t; null when the rates are equal (a copy)
  int in_rate_, out_rate_;
  Quality q_;
};

// Median fundamental frequency (Hz) over voiced 40 ms frames, by normalized autocorrelation in
// 60..400 Hz; 0 when nothing is voiced.
double median_f0(const std::vector<int16_t>& s, int rate);
// Energy-weighted mean spectral centroid (Hz) of non-silent frames (DFT of Hann-windowed frames).
double spectral_centroid(const std::vector<int16_t>& s, int rate);
// Seconds between the first and last sample louder than -40 dBFS (speech without edge silence).
double active_duration(const std::vector<int16_t>& s, int rate);
// Loudness of each whole `hop`-sample frame of `s` in turn (a partial last frame is left out), in
// dB of its mean square plus one (so digital silence is 0 dB): the phone aligner's and the phone
// recogniser's measure of where sound drops.
std::vector<double> frame_loudness_db(const std::vector<int16_t>& s, size_t hop);

}  // namespace imago::speech
