// Lip sync measured from pixels, on speech from each engine (with its phone timing) and on the
// same audio without text (phones recognised from the audio).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <opencv2/imgproc.hpp>

#include "avatar/internal.h"
#include "avatar/renderer.h"
#include "avatar/test_support.h"
#include "avatar/voice_table.h"
#include "speech/dsp.h"
#include "speech/espeak_engine.h"
#include "speech/phone_recognizer.h"
#include "speech/speech_service.h"

namespace imago::avatar {
namespace {
using namespace testing;

speech::SpeechService& service() {
  static std::unique_ptr<speech::SpeechService> svc = [] {
    speech::SpeechOptions o;
    o.workers = 2;
    o.queue = 16;
    auto s = speech::make_speech_service(o);
    if (!s.ok()) throw std::runtime_error(s.status().message());
    return std::move(s.value());
  }();
  return *svc;
}

const char* kSentence = "Bob bought a big map, but Pam may bring more maps. Please be prompt!";

// Openness of the mouth from pixels: dark (cavity-coloured) pixels in the mouth region.
struct MouthMeter {
  cv::Rect box;
  int count(const Frame& f) const {
    cv::Mat img(f.height, f.width, CV_8UC3, const_cast<uint8_t*>(f.rgb.data()));
    cv::Mat gray;
    cv::cvtColor(img(box), gray, cv::COLOR_RGB2GRAY);
    return cv::countNonZero(gray < 48);
  }
};

MouthMeter meter_for(const Manifest& m) {
  double w = m.mouth_width;
  return {cv::Rect(int(m.mouth.x - 0.7 * w), int(m.mouth.y - 0.35 * w), int(1.4 * w), int(1.0 * w)) &
          cv::Rect(0, 0, m.width, m.height)};
}

double pearson(const std::vector<double>& a, const std::vector<double>& b) {
  double ma = 0, mb = 0;
  for (size_t i = 0; i < a.size(); ++i) ma += a[i], mb += b[i];
  ma /= a.size(), mb /= b.size();
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  return sab / std::sqrt(saa * sbb);
}

struct Measured {
  std::vector<double> open, env;  // per frame
  int rest = 0;                   // dark pixels with the mouth at rest
  int64_t speech_frames = 0, lead = 0;
};

// Renders 0.4 s of silence, the audio, then 1 s of silence; measures every frame.
Measured render(const std::string& imx, const speech::Audio& audio, bool with_timing) {
  auto model = load_model(imx, 512, 512);
  EXPECT_TRUE(model.ok());
  RendererOptions o;
  o.idle_motion = false;  // keep the mouth box still; blinks stay on (outside the box)
  auto r = Renderer::create(*model, o);
  const Manifest& m = (*r)->manifest();
  MouthMeter meter = meter_for(m);
  Measured run;
  run.lead = 10;
  Frame f;
  for (int i = 0; i < run.lead; ++i) {
    (*r)->next_frame(f);
    run.rest = meter.count(f);
    run.open.push_back(0);
    run.env.push_back(0);
  }
  if (with_timing)
    EXPECT_TRUE((*r)->push_audio(audio).ok());
  else
    EXPECT_TRUE((*r)->push_pcm(audio.samples.data(), audio.samples.size(), audio.sample_rate).ok());
  run.speech_frames = static_cast<int64_t>(std::ceil(audio.duration_s() * kFps));
  for (int64_t i = 0; i < run.speech_frames + 25; ++i) {
    (*r)->next_frame(f);
    double e = 0;
    for (int16_t s : f.audio) e += double(s) * s;
    run.env.push_back(std::sqrt(e / f.audio.size()));
    run.open.push_back(std::max(0, meter.count(f) - run.rest));
  }
  return run;
}

TEST(LipSync, MouthOpennessFollowsTheAudioEnvelope) {
  auto audio = service().synthesize(kSentence, speech::VoiceSettings{});
  ASSERT_TRUE(audio.ok()) << audio.status().message();
  for (bool timed : {true, false}) {
    Measured run = render(portrait_model(), *audio, timed);
    double r = pearson(run.open, run.env);
    std::printf("lip sync (%s): r = %.3f over %zu frames\n", timed ? "phoneme timing" : "envelope only", r,
                run.open.size());
    EXPECT_GE(r, 0.6) << (timed ? "phoneme-timed" : "envelope-only");
  }
}

TEST(LipSync, LipsCloseForEveryBilabialAndRestInSilence) {
  auto audio = service().synthesize(kSentence, speech::VoiceSettings{});
  ASSERT_TRUE(audio.ok());
  Measured run = render(portrait_model(), *audio, true);
  double peak = *std::max_element(run.open.begin(), run.open.end());
  ASSERT_GT(peak, 50) << "the mouth never visibly opens";
  double closed = 0.05 * peak;
  int bilabials = 0;
  for (const auto& p : audio->phonemes) {
    if (viseme_for_phoneme(p.phoneme) != Viseme::kMBP) continue;
    ++bilabials;
    int64_t first = run.lead + static_cast<int64_t>(std::floor(p.start_s * kFps));
    int64_t last = run.lead + static_cast<int64_t>(std::floor(std::max(p.start_s, p.end_s - 1e-6) * kFps));
    bool ok = false;
    for (int64_t i = std::max<int64_t>(0, first - 1); i <= std::min<int64_t>(run.open.size() - 1, last + 1);
         ++i)
      ok |= run.open[i] <= closed;
    EXPECT_TRUE(ok) << "lips not closed within one frame of '" << p.phoneme << "' at " << p.start_s << " s";
  }
  EXPECT_GE(bilabials, 12) << "the sentence should exercise p/b/m";
  // Silence before and after: mouth at rest.
  for (int64_t i = 0; i < run.lead; ++i) EXPECT_EQ(run.open[i], 0) << "frame " << i;
  for (size_t i = run.lead + run.speech_frames + 2; i < run.open.size(); ++i)
    EXPECT_LE(run.open[i], 0.02 * peak) << "mouth not at rest in silence, frame " << i;
}

// The sentence as each English engine speaks it: RHVoice (M1), flite (M2), espeak-ng (direct).
speech::Audio speak(const std::string& engine) {
  if (engine == "espeak-ng") {
    auto e = speech::EspeakEngine::shared();
    if (!e.ok()) throw std::runtime_error(e.status().message());
    std::lock_guard lock((*e)->mutex());
    speech::EngineRequest req;
    req.text = kSentence;
    req.espeak_voice = "en-us";
    auto r = (*e)->synthesize(req);
    if (!r.ok()) throw std::runtime_error(r.status().message());
    return r->audio;
  }
  speech::VoiceSettings v;
  v.voice = engine == "rhvoice" ? "M1" : "M2";
  auto a = service().synthesize(kSentence, v);
  if (!a.ok()) throw std::runtime_error(a.status().message());
  return *a;
}

// Centred moving average over `n` frames (3 frames: 120 ms, the syllable rate).
std::vector<double> smooth(const std::vector<double>& x, int n) {
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    double s = 0;
    int c = 0;
    for (int k = -(n / 2); k <= n / 2; ++k) {
      int64_t j = static_cast<int64_t>(i) + k;
      if (j >= 0 && j < static_cast<int64_t>(x.size())) s += x[j], ++c;
    }
    y[i] = s / c;
  }
  return y;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The three lip-sync figures, against the phones the engine reported (`ref`).
struct LipFigures {
  double r120 = 0;                    // opening vs audio envelope, both smoothed over 120 ms
  double open_vowel = 0, closed = 0;  // median opening on open-vowel / p-b-m frames (dark pixels)
  double closures = 0;                // p/b/m with the lips closed within one frame
  int bilabials = 0;
};

LipFigures lip_figures(const Measured& run, const std::vector<speech::PhonemeTiming>& ref) {
  LipFigures f;
  f.r120 = pearson(smooth(run.open, 3), smooth(run.env, 3));
  std::vector<double> vowels, closed;
  for (int64_t i = 0; i < run.speech_frames; ++i) {
    double t = (i + 0.5) / kFps;
    for (const auto& p : ref) {
      if (t < p.start_s || t >= p.end_s) continue;
      Viseme v = viseme_for_phoneme(p.phoneme);
      if (v == Viseme::kAA || v == Viseme::kOH) vowels.push_back(run.open[run.lead + i]);
      if (v == Viseme::kMBP) closed.push_back(run.open[run.lead + i]);
    }
  }
  f.open_vowel = median(vowels);
  f.closed = median(closed);
  double peak = *std::max_element(run.open.begin(), run.open.end());
  int ok_count = 0;
  for (const auto& p : ref) {
    if (viseme_for_phoneme(p.phoneme) != Viseme::kMBP) continue;
    ++f.bilabials;
    int64_t first = run.lead + static_cast<int64_t>(std::floor(p.start_s * kFps));
    int64_t last = run.lead + static_cast<int64_t>(std::floor(std::max(p.start_s, p.end_s - 1e-6) * kFps));
    bool ok = false;
    for (int64_t i = std::max<int64_t>(0, first - 1); i <= std::min<int64_t>(run.open.size() - 1, last + 1);
         ++i)
      ok |= run.open[i] <= 0.05 * peak;
    ok_count += ok;
  }
  f.closures = f.bilabials ? double(ok_count) / f.bilabials : 0;
  return f;
}

void expect_lip_sync(const LipFigures& f, const std::string& what) {
  EXPECT_GE(f.r120, 0.6) << what;
  EXPECT_GE(f.open_vowel, 2 * f.closed) << what;
  EXPECT_GT(f.open_vowel, 0) << what;
  EXPECT_GE(f.closures, 0.9) << what;
  EXPECT_GE(f.bilabials, 12) << what;
}

void print_figures(const LipFigures& f, const std::string& what) {
  std::printf("%-34s r(120 ms) = %.3f  median open vowel %.0f px / p-b-m %.0f px  closures %.2f of %d\n",
              what.c_str(), f.r120, f.open_vowel, f.closed, f.closures, f.bilabials);
}

TEST(LipSync, EachEnginesSpeechMeetsTheLipSyncFigures) {
  for (const std::string engine : {"rhvoice", "flite", "espeak-ng"}) {
    speech::Audio a = speak(engine);
    ASSERT_FALSE(a.phonemes.empty()) << engine;
    LipFigures f = lip_figures(render(portrait_model(), a, true), a.phonemes);
    print_figures(f, engine + " (engine phones)");
    expect_lip_sync(f, engine);
  }
}

TEST(LipSync, RawAudioWithoutTextMeetsTheLipSyncFiguresThroughRecognisedPhones) {
  for (const std::string engine : {"rhvoice", "flite", "espeak-ng"}) {
    speech::Audio spoken = speak(engine);
    // The audio alone, as an upload or a client's push would bring it.
    speech::Audio raw;
    raw.sample_rate = spoken.sample_rate;
    raw.samples = spoken.samples;
    LipFigures loud = lip_figures(render(portrait_model(), raw, false), spoken.phonemes);
    print_figures(loud, engine + " (loudness only)");
    ASSERT_TRUE(speech::add_recognized_phones(raw)) << engine << ": no phones recognised";
    LipFigures f = lip_figures(render(portrait_model(), raw, true), spoken.phonemes);
    print_figures(f, engine + " (recognised phones)");
    expect_lip_sync(f, engine + " raw audio");
  }
}

TEST(VoiceMatch, ReferenceTableMatchesTheSpeechEngine) {
  // Re-measures every built-in voice on the reference sentence; the table must stay within 10%.
  for (const auto& v : voice_reference_table()) {
    speech::VoiceSettings s;
    s.voice = v.id;
    s.speed = 1.0;
    auto a = service().synthesize(kReferenceSentence, s);
    ASSERT_TRUE(a.ok()) << v.id;
    internal::Pcm pcm{a->sample_rate, a->samples};
    auto m = internal::match_voice(pcm);
    ASSERT_TRUE(m.ok()) << m.status().message();
    std::printf("{\"%s\", %.0f, %.0f, %.2f},\n", v.id, m->match.median_f0_hz, m->match.spectral_centroid_hz,
                m->match.speaking_rate_syl_s);
    EXPECT_NEAR(m->match.median_f0_hz / v.median_f0_hz, 1.0, 0.1) << v.id;
    EXPECT_NEAR(m->match.spectral_centroid_hz / v.centroid_hz, 1.0, 0.1) << v.id;
    EXPECT_NEAR(m->match.speaking_rate_syl_s / v.syllables_per_s, 1.0, 0.15) << v.id;
  }
}

TEST(VoiceMatch, FindsTheVoiceThatSpokeAnotherSentenceAndMovesAxesTowardIt) {
  int exact = 0, same_gender = 0;
  for (const auto& v : voice_reference_table()) {
    speech::VoiceSettings s;
    s.voice = v.id;
    s.speed = 1.0;
    auto a = service().synthesize(
        "The weather today is mild, with a light breeze from the west and clear skies.", s);
    ASSERT_TRUE(a.ok());
    auto m = internal::match_voice({a->sample_rate, a->samples});
    ASSERT_TRUE(m.ok());
    std::printf("%s -> %s\n", v.id, m->voice.c_str());
    same_gender += m->voice[0] == v.id[0];
    exact += m->voice == v.id;
  }
  EXPECT_GE(exact, 7) << "nearest-voice matching should usually recover the speaker";
  EXPECT_GE(same_gender, 9);  // M5 (high male) and F2 (low female) overlap in pitch
  // A higher-pitched sample than F1 moves the pitch axis up.
  speech::VoiceSettings s;
  s.voice = "F1";
  s.axes.pitch = 0.25;
  auto a = service().synthesize("The weather today is mild, with a light breeze from the west.", s);
  ASSERT_TRUE(a.ok());
  auto m = internal::match_voice({a->sample_rate, a->samples});
  ASSERT_TRUE(m.ok());
  EXPECT_GT(m->match.median_f0_hz, find_voice_reference("F1")->median_f0_hz * 1.1);
  if (m->voice == "F1") {
    EXPECT_GT(m->axes.pitch, 0.1);
  }
  // Not speech at all.
  internal::Pcm noise{22050, std::vector<int16_t>(22050 * 2, 0)};
  EXPECT_FALSE(internal::match_voice(noise).ok());
}

TEST(VoiceMatch, BuilderMatchesAnAudioSampleAndRecordsIt) {
  speech::VoiceSettings s;
  s.voice = "F3";
  s.speed = 1.0;
  auto a = service().synthesize("Thank you for calling. How can I help you with your order today?", s);
  ASSERT_TRUE(a.ok());
  BuildInput in;
  in.agent_id = "agent_voice";
  in.image_bytes = slurp(kOpenCvHtml + "face_swapped.jpg");
  in.audio_bytes = internal::encode_wav({a->sample_rate, a->samples});
  auto r = build_imx(in, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  auto f = read_imx(*r);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->manifest.voice, "F3");
  ASSERT_TRUE(f->manifest.voice_match.has_value());
  EXPECT_NEAR(f->manifest.voice_match->median_f0_hz, find_voice_reference("F3")->median_f0_hz, 30);
  EXPECT_NE(f->find(kChunkVoiceSample), nullptr);
  // A preset wins over the match; the measurements stay.
  in.voice = "M2";
  auto p = build_imx(in, {});
  ASSERT_TRUE(p.ok());
  auto fp = read_imx(*p);
  EXPECT_EQ(fp->manifest.voice, "M2");
  EXPECT_TRUE(fp->manifest.voice_match.has_value());
  // An explicit sample that is not audio, or holds no voice, is a clear failure.
  in.voice.clear();
  in.audio_bytes = "definitely not audio";
  auto bad = build_imx(in, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument);
  in.audio_bytes = internal::encode_wav({22050, std::vector<int16_t>(22050 * 3, 0)});
  auto silent = build_imx(in, {});
  ASSERT_FALSE(silent.ok());
  EXPECT_EQ(silent.status().message(), "No voiced speech found in the voice sample");
}

}  // namespace
}  // namespace imago::avatar
