#include "support/audio_measure.h"

#include <algorithm>
#include <cmath>

namespace imago::testing {

std::vector<int16_t> samples_of(const std::string& bytes) {
  std::vector<int16_t> s(bytes.size() / 2);
  for (size_t i = 0; i < s.size(); ++i) {
    s[i] = static_cast<int16_t>(static_cast<uint16_t>(static_cast<unsigned char>(bytes[2 * i])) |
                                static_cast<uint16_t>(static_cast<unsigned char>(bytes[2 * i + 1])) << 8);
  }
  return s;
}

double median_f0(const Pcm& p) {
  const int frame = p.rate * 40 / 1000, hop = p.rate / 100, lo = p.rate / 400, hi = p.rate / 60;
  std::vector<double> f0s;
  for (size_t st = 0; st + frame + hi + 1 < p.s.size(); st += hop) {
    double e = 0;
    for (int i = 0; i < frame; ++i) e += double(p.s[st + i]) * p.s[st + i];
    if (std::sqrt(e / frame) < 1000) continue;
    std::vector<double> r(hi + 2, 0);
    for (int lag = lo; lag <= hi + 1; ++lag) {
      double num = 0, e2 = 0;
      for (int i = 0; i < frame; ++i) {
        num += double(p.s[st + i]) * p.s[st + i + lag];
        e2 += double(p.s[st + i + lag]) * p.s[st + i + lag];
      }
      r[lag] = num / std::sqrt(e * e2 + 1e-9);
    }
    double g = *std::max_element(r.begin() + lo, r.begin() + hi + 1);
    for (int lag = lo + 1; lag <= hi; ++lag) {
      if (r[lag] > 0.85 * g && r[lag] >= r[lag - 1] && r[lag] >= r[lag + 1]) {
        if (r[lag] >= 0.6) f0s.push_back(double(p.rate) / lag);
        break;
      }
    }
  }
  if (f0s.empty()) return 0;
  std::nth_element(f0s.begin(), f0s.begin() + f0s.size() / 2, f0s.end());
  return f0s[f0s.size() / 2];
}

}  // namespace imago::testing
