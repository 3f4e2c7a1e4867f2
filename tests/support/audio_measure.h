// Audio measurements for black-box tests, independent of the server's own DSP code: what the
// tests hear in a TTS response, a live session's audio messages or a video's decoded sound track.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace imago::testing {

struct Pcm {
  int rate = 0;
  std::vector<int16_t> s;
  double duration() const { return rate ? static_cast<double>(s.size()) / rate : 0; }
};

// Signed 16-bit little-endian bytes as samples (an odd trailing byte is ignored).
std::vector<int16_t> samples_of(const std::string& bytes);

// Median F0 in Hz by normalized autocorrelation over voiced 40 ms frames (60-400 Hz); 0 when no
// frame is voiced.
double median_f0(const Pcm& p);

}  // namespace imago::testing
