// The streaming forms of the post-processing steps: audio pushed in pieces of any size, cut
// anywhere, comes out as the one-shot step makes it from the whole.
#include "speech/dsp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "speech/timing_carry.h"
#include "speech/voice_shaping.h"

namespace imago::speech {
namespace {

// A voiced, gliding signal with gaps: something like speech for a pitch-period search.
std::vector<int16_t> test_signal(int rate, double seconds) {
  std::vector<int16_t> s(static_cast<size_t>(rate * seconds));
  double phase = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    double t = static_cast<double>(i) / rate;
    double f0 = 110 + 40 * std::sin(2 * M_PI * 0.7 * t);
    phase += 2 * M_PI * f0 / rate;
    double env = std::fmod(t, 0.5) < 0.4 ? 1.0 : 0.05;
    s[i] = static_cast<int16_t>(6000 * env *
                                (std::sin(phase) + 0.5 * std::sin(2 * phase) + 0.25 * std::sin(3 * phase)));
  }
  return s;
}

// Pieces of random sizes (1 sample to 0.3 s), fixed seed.
std::vector<std::pair<size_t, size_t>> random_pieces(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<size_t> len(1, 6600);
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t at = 0; at < n;) {
    size_t k = std::min(n - at, len(rng));
    out.push_back({at, k});
    at += k;
  }
  return out;
}

// Whole frames only, each the dB of its mean square plus one: silence 0 dB, a constant 100 (mean
// square 10000) 40 dB, a constant 1000 60 dB; the partial last frame is left out.
TEST(FrameLoudness, EachWholeFrameIsTheDbOfItsMeanSquare) {
  std::vector<int16_t> s(160, 0);
  s.insert(s.end(), 160, 100);
  s.insert(s.end(), 160, -1000);
  s.insert(s.end(), 50, 1000);
  const std::vector<double> db = frame_loudness_db(s, 160);
  ASSERT_EQ(db.size(), 3u);
  EXPECT_DOUBLE_EQ(db[0], 0.0);
  EXPECT_NEAR(db[1], 40.0, 1e-3);
  EXPECT_NEAR(db[2], 60.0, 1e-3);
  EXPECT_TRUE(frame_loudness_db(s, 0).empty());
}

TEST(StreamingDsp, ResamplerInPiecesMakesTheOneShotOutput) {
  auto in = test_signal(24000, 2.0);
  Quality q;
  q.soxr_recipe = 4;  // SOXR_HQ
  auto whole = resample(in, 24000, 22050, q);
  ASSERT_TRUE(whole.ok());
  StreamingResampler r(24000, 22050, q);
  std::vector<int16_t> out;
  for (auto [at, k] : random_pieces(in.size(), 7)) ASSERT_TRUE(r.push(in.data() + at, k, out).ok());
  ASSERT_TRUE(r.flush(out).ok());
  EXPECT_EQ(out, *whole);
}

TEST(StreamingDsp, StretchInPiecesMakesTheOneShotOutput) {
  auto in = test_signal(22050, 2.0);
  Quality q;
  q.sonic_high = false;
  auto whole = time_stretch(in, 22050, 1.05, q);
  StreamingStretch s(22050, 1.05, q);
  std::vector<int16_t> out;
  for (auto [at, k] : random_pieces(in.size(), 11)) s.push(in.data() + at, k, out);
  s.flush(out);
  EXPECT_EQ(out, whole);
}

TEST(StreamingDsp, VoiceFinisherJoinsPiecesWithoutASeam) {
  auto in = test_signal(24000, 2.0);
  Shaping shaping;
  shaping.shift = 1.12;  // a formant shift: resample, then stretch back
  shaping.tilt = 0;      // (the tilt's level is set per stream; covered below)
  Audio whole = finish_voice(in, 24000, shaping, {}, {{"a", 0.1, 0.3}, {"b", 0.3, 1.9}});
  VoiceFinisher f(24000, shaping);
  std::vector<int16_t> joined;
  std::vector<PhonemeTiming> phones;
  double at_s = 0;
  auto pieces = random_pieces(in.size(), 3);
  for (size_t i = 0; i < pieces.size(); ++i) {
    auto [at, k] = pieces[i];
    std::vector<int16_t> piece(in.begin() + static_cast<ptrdiff_t>(at),
                               in.begin() + static_cast<ptrdiff_t>(at + k));
    // The phones of this piece, clipped to it and timed from its start, as the engines give them.
    std::vector<PhonemeTiming> mine;
    const double a = at / 24000.0, b = (at + k) / 24000.0;
    for (const auto& p : std::vector<PhonemeTiming>{{"a", 0.1, 0.3}, {"b", 0.3, 1.9}})
      if (p.end_s > a && p.start_s < b)
        mine.push_back({p.phoneme, std::max(p.start_s, a) - a, std::min(p.end_s, b) - a});
    Audio out = f.push(piece, {}, mine, i + 1 == pieces.size());
    for (const auto& p : out.phonemes) {
      EXPECT_GE(p.start_s, 0);
      EXPECT_LE(p.end_s, out.duration_s() + 1e-9);  // every piece's phones lie inside it
      phones.push_back({p.phoneme, p.start_s + at_s, p.end_s + at_s});
    }
    at_s += out.duration_s();
    joined.insert(joined.end(), out.samples.begin(), out.samples.end());
  }
  EXPECT_EQ(joined, whole.samples);
  // The phones, put back together, cover what the whole one says (to a sample or two).
  double a_len = 0, b_len = 0;
  for (const auto& p : phones) (p.phoneme == "a" ? a_len : b_len) += p.end_s - p.start_s;
  ASSERT_EQ(whole.phonemes.size(), 2u);
  EXPECT_NEAR(a_len, whole.phonemes[0].end_s - whole.phonemes[0].start_s, 2e-3);
  EXPECT_NEAR(b_len, whole.phonemes[1].end_s - whole.phonemes[1].start_s, 2e-3);
}

TEST(StreamingDsp, TiltKeepsTheLevelOfItsFirstPieceForTheRest) {
  auto in = test_signal(22050, 1.0);
  StreamingTilt t(22050, 0.8);
  auto first = t.push(std::vector<int16_t>(in.begin(), in.begin() + 11025));
  auto second = t.push(std::vector<int16_t>(in.begin() + 11025, in.end()));
  auto rms = [](const std::vector<int16_t>& s) {
    double e = 0;
    for (auto v : s) e += static_cast<double>(v) * v;
    return std::sqrt(e / s.size());
  };
  auto in_rms = [&](size_t a, size_t b) { return rms(std::vector<int16_t>(in.begin() + a, in.begin() + b)); };
  EXPECT_NEAR(rms(first) / in_rms(0, 11025), 1.0, 0.01);
  // Same signal character in the second half: the held level keeps it near the input's.
  EXPECT_NEAR(rms(second) / in_rms(11025, in.size()), 1.0, 0.1);
  // No step at the join: the filter's state carries over.
  EXPECT_LT(std::abs(first.back() - second.front()), 3000);
}

TEST(TimingCarry, AWordBelongsToThePieceItStartsInAndAPhoneIsClippedToEach) {
  TimingCarry c;
  c.add_input({{"hello", 0.0, 0.4}, {"there", 0.45, 0.8}},
              {{"h", 0.0, 0.1}, {"@", 0.1, 0.4}, {"D", 0.45, 0.8}}, 1.0);
  // 0.3 s out first (a step holds the rest), then the rest.
  Audio a = c.emit(std::vector<int16_t>(6615), 22050, false);
  ASSERT_EQ(a.words.size(), 1u);
  EXPECT_EQ(a.words[0].text, "hello");
  EXPECT_NEAR(a.words[0].end_s, 0.4, 1e-9);  // its end lies in the next piece
  ASSERT_EQ(a.phonemes.size(), 2u);
  EXPECT_NEAR(a.phonemes[1].end_s, 0.3, 1e-9);  // clipped
  Audio b = c.emit(std::vector<int16_t>(15435), 22050, true);
  ASSERT_EQ(b.words.size(), 1u);
  EXPECT_EQ(b.words[0].text, "there");
  EXPECT_NEAR(b.words[0].start_s, 0.15, 1e-9);
  ASSERT_EQ(b.phonemes.size(), 2u);
  EXPECT_EQ(b.phonemes[0].phoneme, "@");
  EXPECT_NEAR(b.phonemes[0].start_s, 0.0, 1e-9);
  EXPECT_NEAR(b.phonemes[0].end_s, 0.1, 1e-9);
}

}  // namespace
}  // namespace imago::speech
