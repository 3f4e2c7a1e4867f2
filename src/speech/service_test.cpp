// SpeechService behaviour on real synthesis: speed, languages, timing, streaming, queue, limits.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <future>
#include <thread>
#include <vector>

#include "speech/test_speech.h"

namespace imago::speech {
namespace {

const char* kText = "Speech synthesis turns text into sound. It should be quick and clear.";

VoiceSettings settings(double speed = 1.0) {
  VoiceSettings s;
  s.speed = speed;
  return s;
}

TEST(Service, SpeedScalesDurationKeepingPitch) {
  auto base = test_service().synthesize(kText, settings(1.0));
  ASSERT_TRUE(base.ok()) << base.status().message();
  double f0 = measure(*base).f0;
  for (double speed : {0.7, 1.05, 1.5, 2.0}) {
    auto a = test_service().synthesize(kText, settings(speed));
    ASSERT_TRUE(a.ok());
    double ratio = a->duration_s() / base->duration_s();
    EXPECT_NEAR(ratio * speed, 1.0, 0.05) << "speed " << speed;
    EXPECT_NEAR(measure(*a).f0 / f0, 1.0, 0.05) << "speed " << speed << " changed the pitch";
    // Timings follow the stretched audio.
    ASSERT_FALSE(a->phonemes.empty());
    EXPECT_NEAR(a->phonemes.back().end_s, a->duration_s(), 0.05);
  }
}

TEST(Service, AtLeastThirtyLanguagesVerifiedAndSpoken) {
  auto langs = test_service().languages();
  EXPECT_GE(langs.size(), 30u);
  std::map<std::string, std::string> m;
  for (const auto& l : langs) m[l.code] = l.espeak_voice;
  EXPECT_EQ(m["en"], "en-us");
  EXPECT_EQ(m.count("zh"), 0u) << "espeak-ng reads hanzi as English words; Chinese must not be offered";
  EXPECT_EQ(m["no"], "nb");
  for (auto [code, text] :
       std::vector<std::pair<std::string, std::string>>{{"de", "Guten Morgen, wie geht es dir?"},
                                                        {"ru", "Доброе утро, как дела?"},
                                                        {"es", "Buenos días, ¿cómo estás?"},
                                                        {"hi", "नमस्ते, आप कैसे हैं?"}}) {
    VoiceSettings s = settings();
    s.language = code;
    auto a = test_service().synthesize(text, s);
    ASSERT_TRUE(a.ok()) << code << ": " << a.status().message();
    EXPECT_GT(active_duration(a->samples, a->sample_rate), 0.5) << code;
  }
  VoiceSettings s = settings();
  s.language = "xx";
  EXPECT_EQ(test_service().synthesize("hello", s).status().code(), Code::kInvalidArgument);
}

// Languages are offered only when espeak-ng reads a native sentence correctly: Chinese (hanzi read
// as English "Chinese letter"), Burmese and Thai (letters mangled) are refused; Japanese is offered
// for kana only, and Japanese text with kanji is refused with the reason.
TEST(Service, OnlyLanguagesReadCorrectlyAreOffered) {
  std::map<std::string, std::string> notes;
  for (const auto& l : test_service().languages()) notes[l.code] = l.note;
  for (const char* refused : {"zh", "my", "th"}) {
    EXPECT_EQ(notes.count(refused), 0u) << refused;
    VoiceSettings s = settings();
    s.language = refused;
    Status st = test_service().validate("hello", s);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << refused;
  }
  for (const char* ok : {"en", "de", "fr", "es", "ru", "hi", "ar", "he", "ko", "el", "no"}) {
    EXPECT_EQ(notes.count(ok), 1u) << ok;
  }
  ASSERT_EQ(notes.count("ja"), 1u);
  EXPECT_NE(notes["ja"].find("kana only"), std::string::npos) << notes["ja"];
  EXPECT_TRUE(notes["en"].empty());
  VoiceSettings ja = settings();
  ja.language = "ja";
  EXPECT_TRUE(test_service().validate("こんにちは、げんきですか", ja).ok());
  Status kanji = test_service().validate("私は日本語を話します", ja);
  EXPECT_EQ(kanji.code(), Code::kInvalidArgument);
  EXPECT_NE(kanji.message().find("kanji"), std::string::npos) << kanji.message();
  auto kana = test_service().synthesize("こんにちは", ja);
  ASSERT_TRUE(kana.ok()) << kana.status().message();
  EXPECT_GT(active_duration(kana->samples, kana->sample_rate), 0.4);
}

TEST(Service, WordAndPhonemeTimingIsReal) {
  auto a = test_service().synthesize("Hello brave new world. Goodbye!", settings());
  ASSERT_TRUE(a.ok());
  std::vector<std::string> words;
  for (const auto& w : a->words) words.push_back(w.text);
  EXPECT_EQ(words, (std::vector<std::string>{"Hello", "brave", "new", "world", "Goodbye"}));
  double prev = -1;
  for (const auto& w : a->words) {
    EXPECT_GE(w.start_s, prev);
    EXPECT_GT(w.end_s, w.start_s);
    EXPECT_LE(w.end_s, a->duration_s() + 1e-6);
    prev = w.start_s;
  }
  // The second sentence starts after the first one's audio.
  EXPECT_GT(a->words[4].start_s, a->words[3].end_s - 1e-6);
  ASSERT_GT(a->phonemes.size(), 15u);
  bool has_h = false;
  for (const auto& p : a->phonemes) has_h |= p.phoneme == "h";
  EXPECT_TRUE(has_h);
  // Non-ASCII words are cut at character (not byte) positions.
  VoiceSettings de = settings();
  de.language = "de";
  auto b = test_service().synthesize("Grüße aus München.", de);
  ASSERT_TRUE(b.ok());
  ASSERT_GE(b->words.size(), 3u);
  EXPECT_EQ(b->words[0].text, "Grüße");
  EXPECT_EQ(b->words[2].text, "München");
}

TEST(Service, StreamingDeliversSentencesInOrderAndCancels) {
  std::string text = "One. Two two. Three three three. Four.";
  std::vector<double> durations;
  Status st = test_service().synthesize_stream(text, settings(), [&](const Audio& a) {
    durations.push_back(a.duration_s());
    EXPECT_FALSE(a.words.empty());
    EXPECT_GE(a.words.front().start_s, 0);
    return true;
  });
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(durations.size(), 4u);
  int calls = 0;
  st = test_service().synthesize_stream(text, settings(), [&](const Audio&) { return ++calls < 2; });
  EXPECT_TRUE(st.ok());
  EXPECT_EQ(calls, 2);
}

// The first sentence reaches the reader in chunks (its first words before the rest), each with
// its own words and phones; later sentences come whole. The old service handed on whole
// sentences only: two pieces here.
TEST(Service, TheFirstSentenceArrivesInChunks) {
  std::string text = "Sure, I can help you with that order right away, and then we can talk. Goodbye now.";
  std::vector<Audio> pieces;
  Status st = test_service().synthesize_stream(text, settings(1.05), [&](const Audio& a) {
    pieces.push_back(a);
    return true;
  });
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_GE(pieces.size(), 3u);
  for (const auto& p : pieces) {
    EXPECT_FALSE(p.words.empty());
    for (const auto& ph : p.phonemes) EXPECT_LE(ph.end_s, p.duration_s() + 1e-6);
  }
  EXPECT_EQ(pieces.back().words.front().text, "Goodbye");
  // Cancelling after the first chunk stops the request (the worker is released, nothing hangs).
  int calls = 0;
  st = test_service().synthesize_stream(text, settings(), [&](const Audio&) { return ++calls < 1; });
  EXPECT_TRUE(st.ok());
  EXPECT_EQ(calls, 1);
}

// The reader's speed change and resampling stream across the chunks of a sentence: the chunks,
// joined, are the signal a service that makes whole sentences gives (no seam where a chunk was
// cut inside a word's sound), with the same words.
TEST(Service, ChunksJoinIntoTheWholeSentencesSignal) {
  SpeechOptions o;
  o.workers = 1;
  o.chunk_first_sentence = false;
  auto whole_service = make_speech_service(o);
  ASSERT_TRUE(whole_service.ok());
  VoiceSettings s = settings(1.05);
  s.output_rate = 24000;
  const std::string text = "Hello there how can I help you with your order today";
  std::vector<Audio> pieces;
  ASSERT_TRUE(test_service()
                  .synthesize_stream(text, s,
                                     [&](const Audio& a) {
                                       pieces.push_back(a);
                                       return true;
                                     })
                  .ok());
  auto whole = (*whole_service)->synthesize(text, s);
  ASSERT_TRUE(whole.ok());
  ASSERT_GE(pieces.size(), 2u);
  std::vector<int16_t> joined;
  std::vector<std::string> words, whole_words;
  for (const auto& p : pieces) {
    EXPECT_EQ(p.sample_rate, 24000);
    joined.insert(joined.end(), p.samples.begin(), p.samples.end());
    for (const auto& w : p.words) words.push_back(w.text);
  }
  for (const auto& w : whole->words) whole_words.push_back(w.text);
  EXPECT_EQ(words, whole_words);
  EXPECT_NEAR(static_cast<double>(joined.size()), static_cast<double>(whole->samples.size()), 24000 * 0.005);
  const size_t n = std::min(joined.size(), whole->samples.size());
  double xy = 0, xx = 0, yy = 0;
  for (size_t i = 0; i < n; ++i) {
    double x = joined[i], y = whole->samples[i];
    xy += x * y, xx += x * x, yy += y * y;
  }
  EXPECT_GT(xy / std::sqrt(xx * yy + 1e-9), 0.98);
}

TEST(Service, RepeatedRequestsAgree) {
  // espeak-ng carries some wave-generator state between utterances, so repeats are not bit-exact;
  // they must still agree closely in length and pitch whatever ran in between.
  auto a = test_service().synthesize(kText, settings(1.05));
  VoiceSettings other = settings(1.3);
  other.voice = "F3";
  other.axes.pitch = 0.2;
  ASSERT_TRUE(test_service().synthesize("Something else in between.", other).ok());
  auto b = test_service().synthesize(kText, settings(1.05));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NEAR(a->duration_s(), b->duration_s(), 0.02);
  EXPECT_NEAR(measure(*a).f0 / measure(*b).f0, 1.0, 0.02);
  ASSERT_EQ(a->phonemes.size(), b->phonemes.size());
  for (size_t i = 0; i < a->phonemes.size(); ++i) EXPECT_EQ(a->phonemes[i].phoneme, b->phonemes[i].phoneme);
}

TEST(Service, OutputRateResamples) {
  VoiceSettings s = settings();
  s.output_rate = 24000;
  auto a = test_service().synthesize(kText, s);
  auto b = test_service().synthesize(kText, settings());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->sample_rate, 24000);
  EXPECT_NEAR(a->duration_s(), b->duration_s(), 0.01);
  EXPECT_NEAR(measure(*a).f0 / measure(*b).f0, 1.0, 0.03);
}

// soxr dithers integer output with a clock-seeded generator unless told not to: the same request
// then came out different on every run. Synthesis must be repeatable (speech recognition tests
// rely on it; espeak-ng's own wave-generator state still differs between utterances of one
// process, see RepeatedRequestsAgree, but a fresh process repeats itself exactly).
TEST(Service, ResamplingIsRepeatable) {
  std::vector<int16_t> tone(22050);
  for (size_t i = 0; i < tone.size(); ++i)
    tone[i] = static_cast<int16_t>(8000 * std::sin(0.05 * i) + (i % 7));
  auto a = resample(tone, 22050, 16000, Quality{});
  auto b = resample(tone, 22050, 16000, Quality{});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(*a == *b);
}

TEST(Service, ValidationErrors) {
  auto& svc = test_service();
  auto code = [&](const std::string& text, VoiceSettings s) { return svc.validate(text, s).code(); };
  EXPECT_EQ(code("", settings()), Code::kInvalidArgument);
  EXPECT_EQ(code(" \n\t\u3000", settings()), Code::kInvalidArgument);
  EXPECT_EQ(code("\xff\xfe", settings()), Code::kInvalidArgument);
  VoiceSettings s = settings();
  s.voice = "M6";
  EXPECT_EQ(code("hi", s), Code::kInvalidArgument);
  s = settings(5.0);
  EXPECT_EQ(code("hi", s), Code::kInvalidArgument);
  s = settings();
  s.total_steps = 0;
  EXPECT_EQ(code("hi", s), Code::kInvalidArgument);
  s.total_steps = 101;
  EXPECT_EQ(code("hi", s), Code::kInvalidArgument);
  s = settings();
  s.axes.pitch = 0.8;
  EXPECT_EQ(code("hi", s), Code::kInvalidArgument);
  EXPECT_EQ(code("hi", settings()), Code::kOk);
}

// total_steps sets how hard the post-processing works (dsp.h, Quality): libsonic's pitch-period
// search at the full rate or on a decimated signal, and soxr's recipe (its filter length). The
// work is checked here by those settings and by their effect on the output, which is deterministic;
// what the steps cost in CPU time is measured by steps_benchmark.cpp, not asserted.
TEST(Service, FewerStepsDoLessPostProcessing) {
  const Quality q5 = quality_for_steps(5), q12 = quality_for_steps(12);
  EXPECT_FALSE(q5.sonic_high);
  EXPECT_TRUE(q12.sonic_high);
  EXPECT_LT(q5.soxr_recipe, q12.soxr_recipe);
  // Never less work for more steps.
  for (int steps = 1; steps < 100; ++steps) {
    const Quality a = quality_for_steps(steps), b = quality_for_steps(steps + 1);
    EXPECT_LE(a.sonic_high, b.sonic_high) << steps;
    EXPECT_LE(a.soxr_recipe, b.soxr_recipe) << steps;
  }
  // And the service applies them: the same request gives the same samples, other steps other ones
  // (stretched at 1.05 and resampled to 24 kHz, so both settings act).
  auto speak = [](int steps) {
    VoiceSettings s = settings(1.05);
    s.language = "es";
    s.total_steps = steps;
    s.output_rate = 24000;
    auto a = test_service().synthesize("Esta frase mide el posprocesado en cada calidad.", s);
    EXPECT_TRUE(a.ok()) << a.status().message();
    return a.ok() ? a->samples : std::vector<int16_t>{};
  };
  const auto five = speak(5);
  ASSERT_FALSE(five.empty());
  EXPECT_EQ(five, speak(5));
  EXPECT_NE(five, speak(12));
}

TEST(Service, AudioCapRefusesLongOutput) {
  SpeechOptions o;
  o.workers = 1;
  o.max_audio_s = 3;
  auto svc = make_speech_service(o);
  ASSERT_TRUE(svc.ok());
  EXPECT_TRUE((*svc)->synthesize("Short.", settings()).ok());
  // Emoji are spelled out: a few characters make many seconds of speech.
  auto r = (*svc)->synthesize("😀😀😀😀😀😀😀😀😀😀😀😀", settings());
  ASSERT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("3 seconds"), std::string::npos) << r.status().message();
  o.max_chars = 10;
  auto svc2 = make_speech_service(o);
  EXPECT_EQ((*svc2)->synthesize("eleven char", settings()).status().code(), Code::kInvalidArgument);
}

TEST(Service, FullQueueIsUnavailable) {
  SpeechOptions o;
  o.workers = 1;
  o.queue = 0;
  auto made = make_speech_service(o);
  ASSERT_TRUE(made.ok());
  auto& svc = **made;
  std::string longtext;
  for (int i = 0; i < 40; ++i) longtext += "This is one of many sentences that keep the only worker busy. ";
  std::promise<void> first;
  std::promise<void> release;
  auto fut = std::async(std::launch::async, [&] {
    bool once = false;
    return svc.synthesize_stream(longtext, settings(), [&](const Audio&) {
      if (!once) {
        once = true;
        first.set_value();
        release.get_future().wait();
      }
      return true;
    });
  });
  first.get_future().wait();
  auto r = svc.synthesize("Am I queued?", settings());
  EXPECT_EQ(r.status().code(), Code::kUnavailable);
  EXPECT_EQ(svc.stats().rejected_busy, 1);
  release.set_value();
  EXPECT_TRUE(fut.get().ok());
  EXPECT_TRUE(svc.synthesize("Now there is room.", settings()).ok());
}

// Another account's one-sentence request is synthesized between the sentences of a flood's long
// requests, not after them: when its sentence arrives, the flood's requests are still waiting
// for their next sentences. With one FIFO of whole jobs (the old service) it ran only after every
// flood job had finished, so nothing was queued or running then.
TEST(Service, AnotherAccountIsServedBetweenTheSentencesOfAFlood) {
  SpeechOptions o;
  o.workers = 1;
  auto made = make_speech_service(o);
  ASSERT_TRUE(made.ok());
  auto& svc = **made;
  std::string longtext;
  for (int i = 0; i < 60; ++i) longtext += "One more sentence from the flood. ";
  std::vector<std::unique_ptr<SpeechStream>> flood;
  for (int i = 0; i < 4; ++i) {
    auto st = svc.start(longtext, settings(), {"acct_flood", SynthesisPriority::kInteractive});
    ASSERT_TRUE(st.ok()) << st.status().message();
    flood.push_back(std::move(st.value()));
  }
  SpeechStats at_delivery;
  Status st = svc.synthesize_stream("Hello there.", settings(),
                                    {"acct_other", SynthesisPriority::kInteractive}, [&](const Audio&) {
                                      at_delivery = svc.stats();
                                      return true;
                                    });
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_GE(at_delivery.queued + at_delivery.running, 3);  // the flood's 4 requests, 1 maybe in a slice
  flood.clear();                                           // cancels the rest
}

// Beyond its share an account is refused with kRateLimited (429), counted apart from 503s.
TEST(Service, AnAccountBeyondItsShareIsRateLimited) {
  SpeechOptions o;
  o.workers = 1;
  o.account_queue = 2;
  auto made = make_speech_service(o);
  ASSERT_TRUE(made.ok());
  auto& svc = **made;
  std::string longtext;
  for (int i = 0; i < 40; ++i) longtext += "This sentence keeps the account busy. ";
  SynthesisRequester a{"acct_a", SynthesisPriority::kInteractive};
  auto s1 = svc.start(longtext, settings(), a);
  auto s2 = svc.start(longtext, settings(), a);
  ASSERT_TRUE(s1.ok() && s2.ok());
  auto third = svc.start("One more.", settings(), a);
  EXPECT_EQ(third.status().code(), Code::kRateLimited);
  EXPECT_EQ(svc.stats().rejected_account, 1);
  EXPECT_TRUE(
      svc.synthesize("Another account.", settings(), {"acct_b", SynthesisPriority::kInteractive}).ok());
}

}  // namespace
}  // namespace imago::speech

namespace imago::speech {
namespace {

// Text the engines may find nothing to say in never fails a request (RHVoice, flite and
// espeak-ng each get it through some built-in voice).
TEST(Service, EveryEngineTakesOddText) {
  for (const char* text : {"...", "?!", "123", "\xF0\x9F\x99\x82", "a", "M1 - F5 & 50%"}) {
    for (const char* voice : {"M1", "M2", "F3"}) {
      VoiceSettings s;
      s.voice = voice;
      auto a = test_service().synthesize(text, s);
      EXPECT_TRUE(a.ok()) << voice << " '" << text << "': " << a.status().message();
    }
  }
}

}  // namespace
}  // namespace imago::speech
