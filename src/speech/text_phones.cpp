#include "speech/text_phones.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "speech/dsp.h"

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

namespace {
double phone_weight(const std::vector<std::string>& phones) {
  double w = 0;
  for (const auto& p : phones) w += is_vowel_phone(p) ? 2 : 1;
  return w;
}
}  // namespace

void spread_crowded_words(std::vector<WordTiming>& words,
                          const std::vector<std::vector<std::string>>& word_phones) {
  constexpr double kPerWeight = 0.03;  // seconds per consonant; a vowel counts twice
  auto need = [&](size_t i) {
    return i < word_phones.size() ? phone_weight(word_phones[i]) * kPerWeight : 0;
  };
  for (size_t i = 0; i < words.size(); ++i) {
    double dur = words[i].end_s - words[i].start_s;
    if (dur >= 0.5 * need(i)) continue;
    // Share with the longer touching neighbour, in proportion to the phones.
    bool prev_ok = i > 0 && std::abs(words[i - 1].end_s - words[i].start_s) < 1e-6;
    bool next_ok = i + 1 < words.size() && std::abs(words[i].end_s - words[i + 1].start_s) < 1e-6;
    size_t j;
    if (prev_ok &&
        (!next_ok || words[i - 1].end_s - words[i - 1].start_s >= words[i + 1].end_s - words[i + 1].start_s))
      j = i - 1;
    else if (next_ok)
      j = i + 1;
    else
      continue;
    size_t a = std::min(i, j), b = std::max(i, j);
    double wa = std::max(need(a), 0.01), wb = std::max(need(b), 0.01);
    double mid = words[a].start_s + (words[b].end_s - words[a].start_s) * wa / (wa + wb);
    words[a].end_s = words[b].start_s = mid;
  }
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
    // A boundary moves by at most a third of either word, so no word collapses.
    long c = frame_of(words[i].end_s), best = c;
    long lo = std::max(c - (c - frame_of(words[i].start_s)) / 3, c - slack);
    long hi = std::min(c + (frame_of(words[i + 1].end_s) - c) / 3, c + slack);
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

namespace {

// How a phone's loudness is expected to look: +1 loud (vowel), -1 quiet (lip closure), 0 either.
int loudness_class(const std::string& p) {
  if (is_vowel_phone(p)) return 1;
  size_t i = 0;
  while (i < p.size() && (p[i] == '\'' || p[i] == ',' || p[i] == '%' || p[i] == '=')) ++i;
  if (i < p.size() && std::string_view("pbmfv").find(p[i]) != std::string_view::npos) return -1;
  return 0;
}

}  // namespace

std::vector<PhonemeTiming> align_phones_in_words(const std::vector<WordTiming>& words,
                                                 const std::vector<std::vector<std::string>>& word_phones,
                                                 const std::vector<int16_t>& samples, int rate) {
  const double total_s = rate > 0 ? static_cast<double>(samples.size()) / rate : 0;
  std::vector<PhonemeTiming> out = place_phones_in_words(words, word_phones, total_s);
  if (samples.empty() || rate <= 0) return out;
  // Loudness of 5 ms frames, in 0..1 between -50 dB of the loudest frame and the loudest.
  const size_t hop = static_cast<size_t>(rate / 200);
  std::vector<double> z = frame_loudness_db(samples, hop);
  if (z.empty()) return out;
  const double top = *std::max_element(z.begin(), z.end());
  for (double& v : z) v = std::clamp((v - (top - 50)) / 50, 0.0, 1.0);
  const double frame_s = static_cast<double>(hop) / rate;

  // Re-time the phones of each word, found in `out` by their position.
  size_t k = 0;  // index into out
  for (size_t w = 0; w < words.size() && k < out.size(); ++w) {
    if (w >= word_phones.size() || word_phones[w].empty()) continue;
    while (k < out.size() && out[k].phoneme == "_") ++k;
    const size_t n = word_phones[w].size();
    if (k + n > out.size()) break;
    const long f0 = std::lround(out[k].start_s / frame_s), f1 = std::lround(out[k + n - 1].end_s / frame_s);
    const long m = std::min<long>(f1, static_cast<long>(z.size())) - f0;
    std::vector<int> cls(n), min_len(n);
    long need = 0;
    for (size_t i = 0; i < n; ++i) {
      cls[i] = loudness_class(out[k + i].phoneme);
      // A lip closure (p b m) lasts 50-100 ms in speech: at least 50 ms here, so that a 25 fps
      // picture always shows it closed.
      const std::string& ph = out[k + i].phoneme;
      bool bilabial = cls[i] == -1 && ph.find_first_of("pbm") != std::string::npos;
      min_len[i] = bilabial ? 5 : cls[i] == 1 ? 4 : 2;
      need += min_len[i];
    }
    if (m < need || f0 < 0) {
      k += n;
      continue;
    }
    // score(i, frame): how well frame suits phone i; prefix sums per class.
    std::vector<double> pre[3];
    for (int c = 0; c < 3; ++c) {
      pre[c].assign(m + 1, 0);
      for (long f = 0; f < m; ++f) {
        double v = z[f0 + f];
        double sc = c == 2 ? v : c == 0 ? 1 - v : 0.5 - 0.25 * (v - 0.5);
        pre[c][f + 1] = pre[c][f] + sc;
      }
    }
    constexpr long kMaxLen = 60;  // 300 ms
    const double kNone = -1e18;
    std::vector<std::vector<double>> dp(n + 1, std::vector<double>(m + 1, kNone));
    std::vector<std::vector<long>> from(n + 1, std::vector<long>(m + 1, -1));
    dp[0][0] = 0;
    for (size_t i = 0; i < n; ++i) {
      const auto& P = pre[cls[i] + 1];
      for (long a = 0; a <= m; ++a) {
        if (dp[i][a] == kNone) continue;
        for (long b = a + min_len[i]; b <= std::min(m, a + kMaxLen); ++b) {
          double v = dp[i][a] + P[b] - P[a];
          if (v > dp[i + 1][b]) dp[i + 1][b] = v, from[i + 1][b] = a;
        }
      }
    }
    if (dp[n][m] == kNone) {
      k += n;
      continue;
    }
    long b = m;
    for (size_t i = n; i-- > 0;) {
      long a = from[i + 1][b];
      out[k + i].start_s = (f0 + a) * frame_s;
      out[k + i].end_s = (f0 + b) * frame_s;
      b = a;
    }
    k += n;
  }
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
