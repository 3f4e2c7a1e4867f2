// Built-in voices and axes measured on real espeak-ng output.
#include "speech/voices.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "speech/test_speech.h"

namespace imago::speech {
namespace {

const char* kSentence = "The quick brown fox jumps over the lazy dog, and then it rests in the shade.";

// Synthesizes through the service at speed 1 so only the voice definition shapes the sound.
Measure measure_voice(const std::string& voice, const Axes& axes = {}, const std::string& text = kSentence) {
  VoiceSettings s;
  s.voice = voice;
  s.axes = axes;
  s.speed = 1.0;
  auto a = test_service().synthesize(text, s);
  EXPECT_TRUE(a.ok()) << a.status().message();
  return a.ok() ? measure(*a) : Measure{};
}

TEST(Voices, EveryPairIsDistinctInF0OrCentroid) {
  std::vector<Measure> m;
  for (const auto& v : builtin_voice_table()) {
    m.push_back(measure_voice(v.id));
    std::printf("%s f0=%.1f centroid=%.0f dur=%.2f\n", v.id, m.back().f0, m.back().centroid,
                m.back().duration);
    EXPECT_GT(m.back().f0, 50);
  }
  const auto& t = builtin_voice_table();
  for (size_t i = 0; i < m.size(); ++i) {
    for (size_t j = i + 1; j < m.size(); ++j) {
      double df0 = std::abs(m[i].f0 - m[j].f0) / std::min(m[i].f0, m[j].f0);
      double dc = std::abs(m[i].centroid - m[j].centroid) / std::min(m[i].centroid, m[j].centroid);
      EXPECT_TRUE(df0 > 0.05 || dc > 0.05) << t[i].id << " vs " << t[j].id << ": F0 differs " << df0 * 100
                                           << "%, centroid " << dc * 100 << "%";
    }
  }
}

TEST(Voices, MaleVoicesAreLowerThanFemaleVoices) {
  double max_m = 0, min_f = 1e9;
  for (const auto& v : builtin_voice_table()) {
    double f0 = measure_voice(v.id, {}, "Hello there, how are you today?").f0;
    if (v.id[0] == 'M')
      max_m = std::max(max_m, f0);
    else
      min_f = std::min(min_f, f0);
  }
  EXPECT_LT(max_m, min_f);
}

// Each axis moves its acoustic figure monotonically across -0.3, 0, +0.3.
void expect_monotonic(const char* axis, double Axes::*field, double Measure::*figure, bool increasing) {
  std::vector<double> vals;
  for (double x : {-0.3, 0.0, 0.3}) {
    Axes a;
    a.*field = x;
    vals.push_back(measure_voice("M1", a).*figure);
  }
  std::printf("%s: %.2f %.2f %.2f\n", axis, vals[0], vals[1], vals[2]);
  if (increasing) {
    EXPECT_LT(vals[0] * 1.03, vals[1]) << axis;
    EXPECT_LT(vals[1] * 1.03, vals[2]) << axis;
  } else {
    EXPECT_GT(vals[0], vals[1] * 1.03) << axis;
    EXPECT_GT(vals[1], vals[2] * 1.03) << axis;
  }
}

TEST(Axes, PitchRaisesF0) {
  expect_monotonic("pitch", &Axes::pitch, &Measure::f0, true);
}
TEST(Axes, GenderRaisesF0) {
  expect_monotonic("gender/f0", &Axes::gender, &Measure::f0, true);
}
TEST(Axes, GenderRaisesCentroid) {
  expect_monotonic("gender/centroid", &Axes::gender, &Measure::centroid, true);
}
TEST(Axes, RateShortensDuration) {
  expect_monotonic("rate", &Axes::rate, &Measure::duration, false);
}
TEST(Axes, BrightnessRaisesCentroid) {
  expect_monotonic("brightness", &Axes::brightness, &Measure::centroid, true);
}
TEST(Axes, BrightnessKeepsF0) {
  Axes lo, hi;
  lo.brightness = -0.3;
  hi.brightness = 0.3;
  double a = measure_voice("M1", lo).f0, b = measure_voice("M1", hi).f0;
  EXPECT_NEAR(a / b, 1.0, 0.05);
}

TEST(Axes, ProjectionsInvertApplyAxes) {
  const auto& base = find_builtin_voice("F2")->english.definition;
  Axes a{0.1, -0.2, 0.15, 0.05};
  Axes p0 = project_onto_axes(base), p1 = project_onto_axes(apply_axes(base, a));
  EXPECT_NEAR(p1.gender - p0.gender, 0.1, 1e-6);
  EXPECT_NEAR(p1.pitch - p0.pitch, -0.2, 1e-6);
  EXPECT_NEAR(p1.rate - p0.rate, 0.15, 0.01);  // rate is rounded to whole words per minute
  EXPECT_NEAR(p1.brightness - p0.brightness, 0.05, 1e-6);
  auto table = axis_table();
  ASSERT_EQ(table.size(), 4u);
  EXPECT_EQ(table[0].anchor_projections.size(), 10u);
}

TEST(Axes, ParseRejectsUnknownAndOutOfRange) {
  Axes a;
  EXPECT_TRUE(parse_axes({{"pitch", 0.2}}, &a).ok());
  EXPECT_DOUBLE_EQ(a.pitch, 0.2);
  EXPECT_FALSE(parse_axes({{"loudness", 0.1}}, &a).ok());
  EXPECT_FALSE(parse_axes({{"gender", 0.9}}, &a).ok());
  EXPECT_FALSE(parse_axes({{"rate", -0.51}}, &a).ok());
}

}  // namespace
}  // namespace imago::speech
