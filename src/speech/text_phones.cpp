#include "speech/text_phones.h"

#include <algorithm>
#include <cmath>

namespace imago::speech {

bool is_vowel_phone(std::string_view p) {
  size_t i = 0;
  while (i < p.size() && (p[i] == '\'' || p[i] == ',' || p[i] == '%' || p[i] == '=')) ++i;
  if (i >= p.size()) return false;
  static constexpr std::string_view kVowelStarts = "aeiouAEIOUV@03Y";
  return kVowelStarts.find(p[i]) != std::string_view::npos;
}

std::vector<PhonemeTiming> place_phones_in_words(const std::vector<WordTiming>& words,
                                                 const std::vector<std::vector<std::string>>& word_phones,
                                                 double total_s) {
  constexpr double kMinPause = 0.02;
  std::vector<PhonemeTiming> out;
  double cursor = 0;
  auto pause_until = [&](double t) {
    if (t - cursor >= kMinPause) out.push_back({"_", cursor, t});
    cursor = std::max(cursor, t);
  };
  for (size_t i = 0; i < words.size(); ++i) {
    const auto& w = words[i];
    const std::vector<std::string>* ph = i < word_phones.size() ? &word_phones[i] : nullptr;
    double start = std::max(cursor, w.start_s), end = std::min(total_s, w.end_s);
    if (!ph || ph->empty() || end <= start) continue;
    pause_until(start);
    double weight = 0;
    for (const auto& p : *ph) weight += is_vowel_phone(p) ? 2 : 1;
    double t = start;
    for (const auto& p : *ph) {
      double d = (end - start) * (is_vowel_phone(p) ? 2 : 1) / weight;
      out.push_back({p, t, t + d});
      t += d;
    }
    out.back().end_s = end;
    cursor = end;
  }
  pause_until(total_s);
  return out;
}

void refine_word_times(std::vector<WordTiming>& words, const std::vector<int16_t>& samples, int rate,
                       double slack_s) {
  if (words.empty() || samples.empty() || rate <= 0) return;
  // Energy of 10 ms frames every 5 ms.
  const size_t hop = static_cast<size_t>(rate / 200), win = 2 * hop;
  std::vector<double> e;
  for (size_t i = 0; i + win <= samples.size(); i += hop) {
    double sum = 0;
    for (size_t j = i; j < i + win; ++j) sum += static_cast<double>(samples[j]) * samples[j];
    e.push_back(sum / win);
  }
  if (e.empty()) return;
  auto frame_of = [&](double t) {
    return std::clamp<long>(std::lround(t * rate / hop), 0, static_cast<long>(e.size()) - 1);
  };
  auto time_of = [&](long f) { return static_cast<double>(f * hop + hop) / rate; };  // window centre
  const long slack = std::lround(slack_s * rate / hop);
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    // Only where one word ends as the next starts: a pause already has its own bounds.
    if (std::abs(words[i].end_s - words[i + 1].start_s) > 1e-6) continue;
    long c = frame_of(words[i].end_s), best = c;
    long lo = std::max(frame_of(words[i].start_s) + 1, c - slack);
    long hi = std::min(frame_of(words[i + 1].end_s) - 1, c + slack);
    for (long f = lo; f <= hi; ++f)
      if (e[f] < e[best]) best = f;
    words[i].end_s = words[i + 1].start_s = time_of(best);
  }
  // Silence inside a word's span (RHVoice lets a word run on through the pause after it) is a
  // pause: every word is trimmed to its frames louder than -40 dB of the loudest one.
  const double peak = *std::max_element(e.begin(), e.end());
  const double floor = peak * 1e-4;
  for (auto& w : words) {
    long first = frame_of(w.start_s), last = frame_of(w.end_s) - 1;
    while (first < last && e[first] < floor) ++first;
    while (last > first && e[last] < floor) --last;
    if (last <= first) continue;  // nothing audible: leave it
    w.start_s = std::max(w.start_s, static_cast<double>(first * hop) / rate);
    w.end_s = std::min(w.end_s, static_cast<double>(last * hop + win) / rate);
  }
}

std::string utf8_slice(const std::string& text, size_t first, size_t count) {
  auto offset = [&](size_t cp) {
    size_t i = 0, n = 0;
    while (i < text.size() && n < cp) {
      unsigned char c = static_cast<unsigned char>(text[i]);
      i += c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
      ++n;
    }
    return std::min(i, text.size());
  };
  size_t b = offset(first), e = offset(first + count);
  return text.substr(b, e > b ? e - b : 0);
}

}  // namespace imago::speech
