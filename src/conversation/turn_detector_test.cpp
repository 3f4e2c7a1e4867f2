#include "conversation/turn_detector.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace imago::conversation {
namespace {

constexpr int kRate = 16000;

// Low background noise with a voiced burst (a 180 Hz tone with harmonics, syllable-like
// amplitude modulation) between on_s and off_s.
std::vector<int16_t> signal(double seconds, double on_s, double off_s, double noise_dbfs = -70,
                            double speech_dbfs = -20) {
  std::mt19937 rng(7);
  std::normal_distribution<double> n(0, 1);
  std::vector<int16_t> out(static_cast<size_t>(seconds * kRate));
  double noise = 32768 * std::pow(10, noise_dbfs / 20);
  double speech = 32768 * std::pow(10, speech_dbfs / 20);
  for (size_t i = 0; i < out.size(); ++i) {
    double t = static_cast<double>(i) / kRate;
    double v = noise * n(rng);
    if (t >= on_s && t < off_s) {
      double env = 0.6 + 0.4 * std::sin(2 * M_PI * 4 * (t - on_s));
      v += speech * env * (std::sin(2 * M_PI * 180 * t) + 0.5 * std::sin(2 * M_PI * 360 * t)) / 1.2;
    }
    out[i] = static_cast<int16_t>(std::clamp(v, -32768.0, 32767.0));
  }
  return out;
}

std::vector<TurnEvent> run(TurnDetector& d, const std::vector<int16_t>& pcm, size_t chunk) {
  std::vector<TurnEvent> all;
  for (size_t i = 0; i < pcm.size(); i += chunk) {
    size_t n = std::min(chunk, pcm.size() - i);
    for (auto& e : d.push(pcm.data() + i, n)) all.push_back(std::move(e));
  }
  return all;
}

TEST(TurnDetector, FindsOneTurnWithItsStartEndAndPreroll) {
  auto pcm = signal(4.0, 1.0, 2.5);
  for (size_t chunk : {160u, 320u, 1000u, 4096u}) {
    TurnDetector d;
    auto ev = run(d, pcm, chunk);
    ASSERT_EQ(ev.size(), 2u) << chunk;
    EXPECT_EQ(ev[0].kind, TurnEvent::kSpeechStarted);
    EXPECT_NEAR(ev[0].at_ms, 1000, 40);
    // Decided 3 frames (60 ms) after the onset: well inside the 150 ms barge-in budget.
    EXPECT_LE(ev[0].detected_at_ms - 1000, 100);
    EXPECT_EQ(ev[1].kind, TurnEvent::kTurnEnded);
    EXPECT_NEAR(ev[1].at_ms, 2500 + 600, 60);
    // The turn's audio: pre-roll (300 ms) + speech + the closing silence.
    double turn_s = static_cast<double>(ev[1].audio.size()) / kRate;
    EXPECT_NEAR(turn_s, 0.3 + 0.06 + 1.5 + 0.6, 0.1);
    EXPECT_FALSE(d.in_speech());
  }
}

TEST(TurnDetector, SilenceAndClicksAreNotSpeech) {
  TurnDetector d;
  auto quiet = signal(3.0, 10, 10);
  EXPECT_TRUE(run(d, quiet, 320).empty());
  // A 30 ms click is shorter than the 60 ms needed to start a turn.
  auto click = signal(1.0, 0.5, 0.53);
  EXPECT_TRUE(run(d, click, 320).empty());
}

TEST(TurnDetector, LearnsSteadyBackgroundNoise) {
  TurnDetector d;
  auto noisy = signal(6.0, 100, 100, -38);
  auto ev = run(d, noisy, 320);
  // Noise louder than the initial floor may open one turn at the very start, which ends once the
  // floor is learned (1.5 s, + 600 ms); after that it opens none.
  EXPECT_LE(ev.size(), 2u);
  for (const auto& e : ev) {
    if (e.kind == TurnEvent::kSpeechStarted) {
      EXPECT_LT(e.at_ms, 1600);
    }
    EXPECT_LT(e.at_ms, 2300);
  }
  auto speech_over_noise = signal(3.0, 0.5, 1.5, -38, -12);
  TurnDetector d2;
  run(d2, noisy, 320);
  auto ev2 = run(d2, speech_over_noise, 320);
  ASSERT_GE(ev2.size(), 1u);
  EXPECT_EQ(ev2[0].kind, TurnEvent::kSpeechStarted);
}

TEST(TurnDetector, LongSpeechIsCutAtTheMaximum) {
  TurnDetectorOptions o;
  o.max_turn_ms = 2000;
  TurnDetector d(o);
  auto ev = run(d, signal(5.0, 0.5, 5.0), 320);
  ASSERT_GE(ev.size(), 2u);
  EXPECT_EQ(ev[1].kind, TurnEvent::kTurnEnded);
  EXPECT_NEAR(ev[1].at_ms - ev[0].at_ms, 2000, 60);
}

// A caller that has decided the viewer finished ends the turn at once, with its audio so far;
// the silence so far is what it decides on.
TEST(TurnDetector, ACallerCanEndATurnEarly) {
  TurnDetector d;
  auto pcm = signal(3.0, 0.5, 1.5);
  std::vector<TurnEvent> ev;
  std::optional<TurnEvent> early;
  for (size_t i = 0; i < pcm.size() && !early; i += 320) {
    for (auto& e : d.push(pcm.data() + i, 320)) ev.push_back(std::move(e));
    if (d.in_speech() && d.silence_ms() >= 300) early = d.end_turn();
  }
  ASSERT_EQ(ev.size(), 1u);
  ASSERT_TRUE(early.has_value());
  EXPECT_EQ(early->kind, TurnEvent::kTurnEnded);
  EXPECT_NEAR(early->at_ms, 1500 + 300, 60);
  EXPECT_NEAR(static_cast<double>(early->audio.size()) / kRate, 0.3 + 0.06 + 1.0 + 0.3, 0.1);
  EXPECT_FALSE(d.in_speech());
  EXPECT_EQ(d.silence_ms(), 0);
  EXPECT_FALSE(d.end_turn().has_value());
}

}  // namespace
}  // namespace imago::conversation
