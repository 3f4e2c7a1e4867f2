#include "speech/text_phones.h"

#include <algorithm>

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
