#include "avatar/renderer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <thread>

#include "avatar/clip.h"
#include "avatar/test_support.h"

namespace imago::avatar {
namespace {
using namespace testing;

cv::Mat as_mat(const Frame& f) {
  return cv::Mat(f.height, f.width, CV_8UC3, const_cast<uint8_t*>(f.rgb.data())).clone();
}

// Optional: IMAGO_AVATAR_DUMP=/some/dir writes frames for eyeballing (never needed to pass).
void dump(const Frame& f, const std::string& name) {
  const char* dir = std::getenv("IMAGO_AVATAR_DUMP");
  if (!dir || !*dir) return;
  cv::Mat bgr;
  cv::cvtColor(as_mat(f), bgr, cv::COLOR_RGB2BGR);
  cv::imwrite(std::string(dir) + "/" + name + ".png", bgr);
}

std::unique_ptr<Renderer> make(const std::string& imx, int w = 0, int h = 0, bool idle = true,
                               uint64_t seed = 1) {
  auto m = load_model(imx, w, h);
  EXPECT_TRUE(m.ok()) << m.status().message();
  RendererOptions o;
  o.idle_motion = idle;
  o.session_seed = seed;
  auto r = Renderer::create(*m, o);
  EXPECT_TRUE(r.ok());
  return std::move(*r);
}

// Synthetic speech with phoneme timing: a voiced buzz whose loudness follows the phonemes.
speech::Audio synthetic_speech(const std::vector<std::pair<std::string, double>>& phonemes,
                               int rate = 22050) {
  speech::Audio a;
  a.sample_rate = rate;
  double t = 0;
  for (const auto& [ph, dur] : phonemes) {
    a.phonemes.push_back({ph, t, t + dur});
    double amp = ph[0] == '_' ? 0 : (ph == "p" || ph == "b" || ph == "m") ? 800 : 9000;
    size_t n = static_cast<size_t>(dur * rate);
    for (size_t i = 0; i < n; ++i) {
      double x = std::sin(2 * M_PI * 140 * (a.samples.size() / double(rate)));
      a.samples.push_back(static_cast<int16_t>(amp * x));
    }
    t += n / double(rate);
    a.phonemes.back().end_s = t;
  }
  return a;
}

double region_diff(const cv::Mat& a, const cv::Mat& b, cv::Rect r) {
  r &= cv::Rect(0, 0, a.cols, a.rows);
  return cv::norm(a(r), b(r), cv::NORM_L1) / (r.area() * 3.0);
}

// A room's renderer lends its picture instead of copying it (next_frame's copy_image=false):
// the same pixels, speaking and swaying, and JPEG encodes from the view.
TEST(Renderer, ViewedPicturesEqualCopiedOnes) {
  auto copied = make(portrait_model(), 256, 256), viewed = make(portrait_model(), 256, 256);
  const auto speech = synthetic_speech({{"h", 0.1}, {"@", 0.15}, {"l", 0.1}, {"oU", 0.3}, {"_", 0.2}});
  ASSERT_TRUE(copied->push_audio(speech).ok());
  ASSERT_TRUE(viewed->push_audio(speech).ok());
  Frame a, b;
  for (int i = 0; i < 30; ++i) {
    copied->next_frame(a);
    viewed->next_frame(b, true, /*copy_image=*/false);
    ASSERT_EQ(a.view, nullptr);
    ASSERT_NE(b.view, nullptr);
    EXPECT_TRUE(b.rgb.empty());
    EXPECT_EQ(b.pixels(), b.view);
    ASSERT_EQ(a.rgb.size(), size_t(b.width) * b.height * 3);
    ASSERT_EQ(std::memcmp(a.rgb.data(), b.view, a.rgb.size()), 0) << "frame " << i;
  }
  auto ja = encode_jpeg(a), jb = encode_jpeg(b);
  ASSERT_TRUE(ja.ok() && jb.ok());
  EXPECT_EQ(*ja, *jb);
  // A skipped picture has no view, and a copied one drops the last view.
  viewed->next_frame(b, false, false);
  EXPECT_EQ(b.view, nullptr);
  EXPECT_EQ(b.pixels(), nullptr);
  viewed->next_frame(b);
  EXPECT_EQ(b.view, nullptr);
  EXPECT_EQ(b.pixels(), b.rgb.data());
}

TEST(Renderer, ProducesFramesOfTheModelSizeAndScales) {
  auto r = make(procedural_model("1:1"));
  Frame f = r->next_frame();
  EXPECT_EQ(f.width, 720);
  EXPECT_EQ(f.height, 720);
  EXPECT_EQ(f.rgb.size(), 720u * 720 * 3);
  EXPECT_TRUE(f.has_image);
  EXPECT_EQ(f.audio.size(), 960u);
  auto small = make(procedural_model("1:1"), 512, 512);
  Frame g = small->next_frame();
  EXPECT_EQ(g.width, 512);
  EXPECT_EQ(g.rgb.size(), 512u * 512 * 3);
  EXPECT_FALSE(load_model(procedural_model("1:1"), 640, 360).ok());  // aspect must match
  Frame skip;
  small->next_frame(skip, false);
  EXPECT_FALSE(skip.has_image);
  EXPECT_TRUE(skip.rgb.empty());
  EXPECT_EQ(skip.index, 1);
  EXPECT_EQ(skip.audio.size(), 960u);
  dump(f, "procedural_1x1");

  auto jpeg = encode_jpeg(f, 85);
  ASSERT_TRUE(jpeg.ok());
  cv::Mat back = cv::imdecode(cv::Mat(1, int(jpeg->size()), CV_8UC1, jpeg->data()), cv::IMREAD_COLOR);
  ASSERT_EQ(back.cols, 720);
  cv::cvtColor(back, back, cv::COLOR_BGR2RGB);
  EXPECT_LT(region_diff(back, as_mat(f), cv::Rect(0, 0, 720, 720)), 4.0) << "colour order or quality wrong";
  EXPECT_FALSE(encode_jpeg(skip).ok());
}

TEST(Renderer, ExactlyTwentyFiveFpsWithAlignedAudioOverAMixedMinute) {
  auto r = make(procedural_model("16:9"), 640, 360);
  const int rate = r->audio_rate(), spf = r->samples_per_frame();
  ASSERT_EQ(spf * kFps, rate);
  // Expected audio on the session timeline, built alongside the pushes.
  std::vector<int16_t> expected(static_cast<size_t>(60 * rate), 0);
  std::vector<int64_t> turn_end_frames;
  int64_t frames = 60 * kFps, n = 0;
  std::vector<int16_t> got;
  int eos_count = 0;
  Frame f;
  auto pull = [&](int64_t count) {
    for (int64_t i = 0; i < count && n < frames; ++i, ++n) {
      r->next_frame(f);
      ASSERT_EQ(f.index, n);
      ASSERT_DOUBLE_EQ(f.pts_s, n / 25.0);
      ASSERT_EQ(static_cast<int>(f.audio.size()), spf);
      ASSERT_TRUE(f.has_image);
      ASSERT_EQ(f.rgb.size(), size_t(640) * 360 * 3);
      got.insert(got.end(), f.audio.begin(), f.audio.end());
      if (f.end_of_speech) {
        ++eos_count;
        EXPECT_TRUE(std::find(turn_end_frames.begin(), turn_end_frames.end(), n) != turn_end_frames.end())
            << "unexpected end_of_speech at frame " << n;
      }
    }
  };
  int turn = 0;
  const char* gestures[] = {"mini_wave_hello", "laugh_react", "talk_head_nod_subtle", "blow_kiss_heart",
                            "idle_subtle"};
  while (n < frames - 250) {
    // A turn at 24 kHz (no resampling, so expected samples are exact).
    std::vector<std::pair<std::string, double>> ph;
    for (int k = 0; k < 12 + turn; ++k) ph.push_back({k % 3 == 0 ? "m" : k % 3 == 1 ? "a" : "i", 0.09});
    speech::Audio a = synthetic_speech(ph, rate);
    int64_t start = n * spf;
    std::copy(a.samples.begin(), a.samples.end(), expected.begin() + start);
    int64_t end = start + static_cast<int64_t>(a.samples.size());
    turn_end_frames.push_back((end - 1) / spf);
    ASSERT_TRUE(r->push_audio(a).ok());
    ASSERT_TRUE(r->trigger_gesture(gestures[turn % 5]).ok());
    pull(static_cast<int64_t>(a.duration_s() * kFps) + 40 + 13 * turn % 30);  // speech, then silence
    ++turn;
  }
  pull(frames - n);
  EXPECT_EQ(n, frames);
  ASSERT_EQ(got.size(), expected.size());
  EXPECT_TRUE(got == expected) << "audio is not sample-aligned to the frame clock";
  EXPECT_EQ(eos_count, turn);
  EXPECT_EQ(r->frame_index(), frames);
}

TEST(Renderer, EndOfSpeechForStreamedTurnsAndInterrupt) {
  auto r = make(procedural_model("1:1"), 512, 512);
  speech::Audio a = synthetic_speech({{"a", 0.5}, {"o", 0.5}}, 24000);
  ASSERT_TRUE(r->push_audio(a, false).ok());
  ASSERT_TRUE(r->push_audio(a, false).ok());
  EXPECT_NEAR(r->queued_seconds(), 2.0, 0.01);
  r->end_turn();
  int eos_at = -1;
  for (int i = 0; i < 60; ++i) {
    Frame f = r->next_frame();
    if (f.end_of_speech) {
      EXPECT_EQ(eos_at, -1);
      eos_at = i;
    }
  }
  EXPECT_EQ(eos_at, 49);  // 2.0 s of audio = frames 0..49

  // Interrupt: the very next frame is silent, idle and flagged.
  speech::Audio longer = synthetic_speech({{"a", 3.0}}, 24000);
  ASSERT_TRUE(r->push_audio(longer).ok());
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(r->next_frame().speaking);
  Frame before = r->next_frame();
  EXPECT_GT(before.mouth_open, 0.3);
  r->interrupt();
  Frame f = r->next_frame();
  EXPECT_FALSE(f.speaking);
  EXPECT_TRUE(f.interrupted);
  EXPECT_TRUE(f.end_of_speech);
  EXPECT_EQ(f.mouth_open, 0.0);
  EXPECT_TRUE(std::all_of(f.audio.begin(), f.audio.end(), [](int16_t s) { return s == 0; }));
  EXPECT_FALSE(r->speaking());
  Frame g = r->next_frame();
  EXPECT_FALSE(g.end_of_speech);

  // The queue is bounded.
  std::vector<int16_t> long_silence(size_t(24000) * (kMaxQueuedSeconds + 1), 0);
  EXPECT_EQ(r->push_pcm(long_silence.data(), long_silence.size(), 24000).code(), Code::kTooLarge);
  EXPECT_TRUE(r->push_pcm(long_silence.data(), size_t(24000) * 300, 24000).ok());
  EXPECT_EQ(r->push_pcm(long_silence.data(), size_t(24000) * 301, 24000).code(), Code::kTooLarge);
  EXPECT_NEAR(r->queued_seconds(), 300, 0.01);
}

TEST(Renderer, PcmStreamedInSmallChunksLipSyncsLikeOnePush) {
  // 20 ms chunks (a live microphone or network stream) against the same audio in one push.
  speech::Audio a = synthetic_speech({{"a", 0.3}, {"_", 0.2}, {"o", 0.3}, {"_", 0.2}, {"i", 0.3}}, 24000);
  std::vector<int16_t> quiet = a.samples;
  for (auto& v : quiet) v = static_cast<int16_t>(v / 6);  // a quieter middle part
  std::vector<int16_t> pcm = a.samples;
  pcm.insert(pcm.end(), quiet.begin(), quiet.end());
  auto whole = make(procedural_model("1:1"), 256, 256, false);
  auto chunked = make(procedural_model("1:1"), 256, 256, false);
  ASSERT_TRUE(whole->push_pcm(pcm.data(), pcm.size(), 24000).ok());
  for (size_t i = 0; i < pcm.size(); i += 480)
    ASSERT_TRUE(chunked->push_pcm(pcm.data() + i, std::min<size_t>(480, pcm.size() - i), 24000, false).ok());
  chunked->end_turn();
  double diff = 0;
  int eos = 0;
  int frames = static_cast<int>(pcm.size() / 960);
  for (int n = 0; n < frames + 5; ++n) {
    Frame f = whole->next_frame(), g = chunked->next_frame();
    EXPECT_EQ(f.audio, g.audio);
    diff += std::abs(f.mouth_open - g.mouth_open);
    eos += g.end_of_speech;
  }
  EXPECT_EQ(eos, 1);
  EXPECT_LT(diff / frames, 0.05) << "chunked pushes should open the mouth like one push";
}

TEST(Renderer, PushesGesturesAndInterruptsFromAnotherThread) {
  auto r = make(procedural_model("1:1"), 256, 256);
  std::atomic<bool> done{false};
  std::thread producer([&] {
    speech::Audio a = synthetic_speech({{"a", 0.2}, {"m", 0.1}, {"o", 0.2}}, 16000);
    for (int i = 0; !done; ++i) {
      Status s = r->push_audio(a, i % 3 == 0);
      EXPECT_TRUE(s.ok() || s.code() == Code::kTooLarge) << s.message();
      if (i % 4 == 0) {
        EXPECT_TRUE(r->trigger_gesture(gesture_names()[i % 5]).ok());
      }
      if (i % 7 == 0) r->interrupt();
      if (i % 5 == 0) r->end_turn();
      std::this_thread::sleep_for(std::chrono::microseconds(300));
    }
  });
  Frame f;
  for (int64_t n = 0; n < 300; ++n) {
    r->next_frame(f);
    ASSERT_EQ(f.index, n);
    ASSERT_EQ(f.audio.size(), size_t(r->samples_per_frame()));
  }
  done = true;
  producer.join();
}

TEST(Renderer, IdleMotionAndVariedBlinks) {
  const std::string& imx = procedural_model("1:1");
  // Idle motion: the frames move.
  auto moving = make(imx, 512, 512);
  cv::Mat first;
  double max_motion = 0;
  for (int i = 0; i < 25 * 4; ++i) {
    cv::Mat img = as_mat(moving->next_frame());
    if (i == 0) first = img;
    max_motion = std::max(max_motion, region_diff(img, first, cv::Rect(0, 0, img.cols, img.rows)));
    if (i == 60) dump(moving->next_frame(), "idle_60");
  }
  EXPECT_GT(max_motion, 0.3) << "idle frames never change (no sway or breathing)";

  // Blinks (head still, so only lids change the eye band): dips of the band against the rest.
  auto r = make(imx, 512, 512, false);
  const Manifest& m = r->manifest();
  cv::Rect eyes(int(m.left_eye.x - 0.2 * m.face.w), int(m.left_eye.y - 0.08 * m.face.w),
                int(m.right_eye.x - m.left_eye.x + 0.4 * m.face.w), int(0.16 * m.face.w));
  std::vector<double> eye_change;
  for (int i = 0; i < 25 * 20; ++i) {
    cv::Mat img = as_mat(r->next_frame());
    if (i == 0) first = img;
    eye_change.push_back(region_diff(img, first, eyes));
  }
  double peak = *std::max_element(eye_change.begin(), eye_change.end());
  ASSERT_GT(peak, 3.0) << "the lids never visibly close";
  std::vector<int> blinks;
  for (size_t i = 0; i < eye_change.size(); ++i)
    if (eye_change[i] > 0.5 * peak && (blinks.empty() || int(i) - blinks.back() > 4))
      blinks.push_back(int(i));
  ASSERT_GE(blinks.size(), 3u) << "too few blinks in 20 s";
  for (int b : blinks)
    if (b + 9 < int(eye_change.size()))
      EXPECT_LT(*std::min_element(eye_change.begin() + b + 3, eye_change.begin() + b + 9), 0.1 * peak)
          << "the eyes do not reopen after the blink at frame " << b;
  EXPECT_LE(blinks.size(), 14u) << "blinking too often";
  std::set<int> intervals;
  for (size_t i = 1; i < blinks.size(); ++i) intervals.insert(blinks[i] - blinks[i - 1]);
  EXPECT_GE(intervals.size(), 2u) << "blink intervals should vary";
}

TEST(Renderer, AtRestOnlyTheLidsMove) {
  // Head still and silent: every pixel that ever changes lies in the upper face (blinks pull the
  // skin between brows and lids); the rest of the frame is the photo, bit for bit.
  for (const std::string* imx : {&portrait_model("1:1"), &procedural_model("1:1")}) {
    auto r = make(*imx, 512, 512, false, 3);
    const Manifest& m = r->manifest();
    double ed = std::hypot(m.right_eye.x - m.left_eye.x, m.right_eye.y - m.left_eye.y);
    cv::Mat allowed(512, 512, CV_8UC1, cv::Scalar(0));
    double top = std::min(m.left_eye.y, m.right_eye.y) - 1.2 * ed,
           bottom = std::max(m.left_eye.y, m.right_eye.y) + 0.8 * ed;
    cv::rectangle(allowed, cv::Rect(int(m.left_eye.x - 1.0 * ed), int(top), int(3 * ed), int(bottom - top)),
                  cv::Scalar(255), cv::FILLED);
    cv::Mat first, changed(512, 512, CV_8UC1, cv::Scalar(0));
    for (int i = 0; i < 25 * 10; ++i) {
      cv::Mat img = as_mat(r->next_frame());
      if (i == 0) first = img;
      cv::Mat d, g;
      cv::absdiff(img, first, d);
      cv::cvtColor(d, g, cv::COLOR_RGB2GRAY);
      changed |= g > 0;
    }
    EXPECT_GT(cv::countNonZero(changed), 20) << "no blink in 10 s";
    EXPECT_EQ(cv::countNonZero(changed & ~allowed), 0) << "pixels away from the eyes changed at rest";
  }
}

TEST(Renderer, EachGestureChangesFramesMeasurablyAndDifferently) {
  const std::string& imx = portrait_model("1:1");
  ASSERT_FALSE(imx.empty());
  auto baseline = make(imx, 512, 512, false, 7);
  std::vector<cv::Mat> idle;
  for (int i = 0; i < 60; ++i) idle.push_back(as_mat(baseline->next_frame()));
  const Manifest& m = baseline->manifest();
  const Box& fb = m.face;
  std::vector<cv::Rect> regions = {
      cv::Rect(int(m.mouth.x - m.mouth_width), int(m.mouth.y - 0.3 * m.mouth_width), int(2 * m.mouth_width),
               int(1.2 * m.mouth_width)),                                        // mouth
      cv::Rect(int(fb.x), int(fb.y + 0.15 * fb.h), int(fb.w), int(0.4 * fb.h)),  // eyes/brows
      cv::Rect(int(fb.x + fb.w), int(fb.y), int(0.8 * fb.w), int(1.6 * fb.h)),   // beside face
      cv::Rect(int(fb.x - 0.3 * fb.w), int(fb.y - 0.3 * fb.h), int(1.6 * fb.w), int(1.6 * fb.h)),  // head
      cv::Rect(int(fb.x + 0.5 * fb.w), int(fb.y - 0.9 * fb.h), int(1.3 * fb.w),
               int(1.2 * fb.h))};  // above right
  std::map<std::string, std::vector<cv::Mat>> clips;
  std::map<std::string, double> change;  // mean difference from the idle render
  for (const auto& g : gesture_names()) {
    auto r = make(imx, 512, 512, false, 7);
    ASSERT_TRUE(r->trigger_gesture(g, 2.4).ok());
    double prev_jump = 0, total = 0;
    cv::Mat prev = idle[0];
    for (int i = 0; i < 60; ++i) {
      Frame f = r->next_frame();
      cv::Mat img = as_mat(f);
      if (i == 30) dump(f, "gesture_" + g);
      EXPECT_EQ(f.gesture, g);
      total += region_diff(img, idle[i], cv::Rect(0, 0, img.cols, img.rows));
      double jump = region_diff(img, prev, cv::Rect(0, 0, img.cols, img.rows));
      if (i < 3) prev_jump = std::max(prev_jump, jump);
      prev = img;
      clips[g].push_back(img);
    }
    EXPECT_LT(prev_jump, 1.0) << g << " jumps in instead of blending (" << prev_jump << ")";
    change[g] = total / 60;
    EXPECT_GT(change[g], 1.0) << g << " barely changes the frames";
    // Blended out: back to idle at the end.
    EXPECT_LT(region_diff(clips[g].back(), idle.back(), cv::Rect(0, 0, 512, 512)), 0.3) << g;
  }
  for (auto a = clips.begin(); a != clips.end(); ++a)
    for (auto b = std::next(a); b != clips.end(); ++b) {
      double d = 0;
      for (size_t i = 0; i < a->second.size(); ++i)
        d += region_diff(a->second[i], b->second[i], cv::Rect(0, 0, 512, 512));
      d /= a->second.size();
      // Two gestures differ from each other about as much as each differs from idle.
      EXPECT_GT(d, 0.5 * std::min(change[a->first], change[b->first]))
          << a->first << " and " << b->first << " look alike";
    }
  auto r = make(imx);
  EXPECT_FALSE(r->trigger_gesture("moonwalk").ok());
}

TEST(Renderer, VisemeMapCoversEspeakMnemonics) {
  EXPECT_EQ(viseme_for_phoneme("p"), Viseme::kMBP);
  EXPECT_EQ(viseme_for_phoneme("b"), Viseme::kMBP);
  EXPECT_EQ(viseme_for_phoneme("m"), Viseme::kMBP);
  EXPECT_EQ(viseme_for_phoneme("'a"), Viseme::kAA);
  EXPECT_EQ(viseme_for_phoneme("aI"), Viseme::kAA);
  EXPECT_EQ(viseme_for_phoneme("u:"), Viseme::kOO);
  EXPECT_EQ(viseme_for_phoneme("w"), Viseme::kOO);
  EXPECT_EQ(viseme_for_phoneme("oU"), Viseme::kOH);
  EXPECT_EQ(viseme_for_phoneme("O:"), Viseme::kOH);
  EXPECT_EQ(viseme_for_phoneme("f"), Viseme::kFV);
  EXPECT_EQ(viseme_for_phoneme("v"), Viseme::kFV);
  EXPECT_EQ(viseme_for_phoneme("i:"), Viseme::kEE);
  EXPECT_EQ(viseme_for_phoneme("tS"), Viseme::kSH);
  EXPECT_EQ(viseme_for_phoneme("S"), Viseme::kSH);
  EXPECT_EQ(viseme_for_phoneme("@"), Viseme::kEH);
  EXPECT_EQ(viseme_for_phoneme("t"), Viseme::kTD);
  EXPECT_EQ(viseme_for_phoneme("_:"), Viseme::kRest);
  EXPECT_EQ(viseme_for_phoneme(""), Viseme::kRest);
  EXPECT_EQ(viseme_for_phoneme("(en)"), Viseme::kRest);  // language switch marker
  EXPECT_EQ(viseme_for_phoneme("y"), Viseme::kOO);       // French "u"
  EXPECT_EQ(viseme_for_phoneme("dZ"), Viseme::kSH);
}

TEST(Renderer, ExpressionAddsMouthShapesAndProsodyThatEssenceLacks) {
  // The same timed speech on both model types: expression distinguishes more mouth shapes and
  // moves brows/head with emphasis.
  std::vector<std::pair<std::string, double>> ph;
  const char* seq[] = {"t", "@", "S", "O:", "d", "E", "a", "_"};
  for (int k = 0; k < 32; ++k) ph.push_back({seq[k % 8], 0.12});
  speech::Audio a = synthetic_speech(ph, 24000);
  auto run = [&](const std::string& type, std::vector<cv::Mat>& frames) {
    auto r = make(portrait_model("1:1", type), 512, 512, false, 3);
    EXPECT_TRUE(r->push_audio(a).ok());
    for (int i = 0; i < 75; ++i) {
      Frame f = r->next_frame();
      if (i % 6 == 0 && i < 40) dump(f, type + "_speech_" + std::to_string(i));
      frames.push_back(as_mat(f));
    }
    return r->manifest();
  };
  std::vector<cv::Mat> ess, expr;
  Manifest me = run("essence", ess);
  run("expression", expr);
  const Box& fb = me.face;
  cv::Rect brows(int(fb.x), int(fb.y), int(fb.w), int(0.35 * fb.h));
  double brow_ess = 0, brow_expr = 0;
  for (size_t i = 1; i < ess.size(); ++i) {
    brow_ess += region_diff(ess[i], ess[0], brows);
    brow_expr += region_diff(expr[i], expr[0], brows);
  }
  EXPECT_GT(brow_expr, 2 * brow_ess + 1.0) << "expression should move brows/head with prosody";
  auto m = load_model(portrait_model("1:1", "expression"));
  EXPECT_EQ((*m)->manifest().visemes, 10);
  EXPECT_EQ(me.visemes, 6);
}

// Beats on expression models: the brows lift and the head nods a little on stressed syllables
// (espeak-ng's primary stress mark), not on the unstressed ones between them, at equal loudness.
TEST(Renderer, BeatsFallOnStressedSyllables) {
  std::vector<std::pair<std::string, double>> ph = {{"_", 0.4}};
  std::vector<double> stressed;  // seconds
  double t = 0.4;
  for (int k = 0; k < 12; ++k) {
    const bool st = k % 4 == 0;
    if (st) stressed.push_back(t + 0.06);
    ph.push_back({"t", 0.06});
    ph.push_back({st ? "'a" : "@", 0.24});
    t += 0.3;
  }
  ph.push_back({"_", 0.6});
  speech::Audio a = synthetic_speech(ph, 24000);
  auto r = make(portrait_model("1:1", "expression"), 512, 512, false, 3);
  ASSERT_TRUE(r->push_audio(a).ok());
  // The brows and the forehead above the lids only: the mouth moves on every syllable, and a
  // blink may fall anywhere.
  const Manifest& mf = r->manifest();
  const double ed = mf.right_eye.x - mf.left_eye.x, ey = (mf.left_eye.y + mf.right_eye.y) / 2;
  const cv::Rect brows(int(mf.left_eye.x - 0.5 * ed), int(ey - 0.8 * ed), int(2 * ed), int(0.48 * ed));
  std::vector<double> move;
  cv::Mat rest;
  for (int i = 0; i < int(t * kFps) + 10; ++i) {
    cv::Mat f = as_mat(r->next_frame());
    if (i == 0) rest = f.clone();
    move.push_back(region_diff(f, rest, brows));
  }
  // Frames 0.75-1.05 s after a stressed vowel's start (unstressed syllables, still speaking): a
  // beat has faded by then and the next one (which leads its syllable a little) has not begun.
  std::vector<double> calm;
  for (int i = 0; i < int(t * kFps); ++i) {
    double since = 1e9;
    for (double s : stressed)
      if (i / double(kFps) >= s) since = i / double(kFps) - s;
    if (since >= 0.75 && since <= 1.05) calm.push_back(move[size_t(i)]);
  }
  ASSERT_GT(calm.size(), 10u);
  const double calm_max = *std::max_element(calm.begin(), calm.end());
  for (double s : stressed) {
    const int f0 = int(s * kFps);
    const double peak = *std::max_element(move.begin() + f0, move.begin() + f0 + 6);
    std::printf("beat at %.2f s: brow movement %.2f (unstressed stretches at most %.2f)\n", s, peak,
                calm_max);
    EXPECT_GT(peak, 2 * calm_max + 0.3) << "no beat on the stressed syllable at " << s << " s";
  }
}

}  // namespace
}  // namespace imago::avatar
