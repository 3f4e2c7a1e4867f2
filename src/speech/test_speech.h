// Test helpers shared by the speech unit tests (*_test.cpp only): one SpeechService per test
// binary and acoustic measurements of its output.
#pragma once
#include <memory>
#include <stdexcept>

#include "speech/dsp.h"
#include "speech/speech_service.h"

namespace imago::speech {

inline SpeechService& test_service() {
  static std::unique_ptr<SpeechService> svc = [] {
    SpeechOptions o;
    o.workers = 2;
    o.queue = 16;
    auto s = make_speech_service(o);
    if (!s.ok()) throw std::runtime_error(s.status().message());
    return std::move(s.value());
  }();
  return *svc;
}

struct Measure {
  double f0 = 0, centroid = 0, duration = 0;
};

inline Measure measure(const Audio& a) {
  return {median_f0(a.samples, a.sample_rate), spectral_centroid(a.samples, a.sample_rate),
          active_duration(a.samples, a.sample_rate)};
}

}  // namespace imago::speech
