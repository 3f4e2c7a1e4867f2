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

// Median fundamental frequency (Hz) over voiced 40 ms frames, by normalized autocorrelation in
// 60..400 Hz; 0 when nothing is voiced.
double median_f0(const std::vector<int16_t>& s, int rate);
// Energy-weighted mean spectral centroid (Hz) of non-silent frames (DFT of Hann-windowed frames).
double spectral_centroid(const std::vector<int16_t>& s, int rate);
// Seconds between the first and last sample louder than -40 dBFS (speech without edge silence).
double active_duration(const std::vector<int16_t>& s, int rate);

}  // namespace imago::speech
