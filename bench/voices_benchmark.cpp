// The built-in voices, measured (figures for docs/speech.md):
//  1. intelligibility: every voice reads the twenty Harvard sentences (lists 1-2); the offline
//     recogniser (PocketSphinx, general US English model) transcribes them; word error rate per
//     voice, their mean, and raw espeak-ng (the M1 formant voice) for comparison;
//  2. speed: CPU seconds of synthesis per second of audio, one thread, per voice (the engine
//     call alone, then the whole service path at the default speed 1.05);
//  3. streaming: request to first audio of a one-sentence text through SpeechService::start(),
//     p50 and p90 over 30 runs, M1;
//  4. one paragraph per voice: median F0, speaking rate, and what the recogniser heard.
//
// Build: ninja -C <build> voices_benchmark     Run: <build>/src/conversation/voices_benchmark [wav-dir]
// With a directory, the paragraph of every voice is written there as <id>.wav to listen to.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "conversation/harvard_sentences.h"
#include "conversation/recognizer.h"
#include "speech/dsp.h"
#include "speech/encoders.h"
#include "speech/speech_engines.h"
#include "speech/speech_service.h"
#include "speech/text.h"
#include "speech/voices.h"

using namespace imago;
using Clock = std::chrono::steady_clock;

namespace {

const char* kParagraph =
    "The lighthouse keeper climbed the narrow stairs every evening, carrying a lamp and a notebook. "
    "From the gallery he could see the whole bay and the ferry crossing toward the island. "
    "He wrote down the wind, the height of the waves and the names of the ships that passed.";

double thread_cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

std::vector<int16_t> to16k(const speech::Audio& a) {
  auto r = speech::resample(a.samples, a.sample_rate, conversation::kRecognizerSampleRate, speech::Quality{});
  return r.ok() ? *r : std::vector<int16_t>{};
}

struct Wer {
  double errors = 0, words = 0;
  void add(const std::string& ref, const std::string& hyp) {
    double n = static_cast<double>(conversation::wer_words(ref).size());
    errors += conversation::word_error_rate(ref, hyp) * n;
    words += n;
  }
  double rate() const { return words ? errors / words : 0; }
};

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5))];
}

}  // namespace

int main(int argc, char** argv) {
  std::string wav_dir = argc > 1 ? argv[1] : "";
  speech::SpeechOptions o;
  o.workers = 1;
  auto svc = speech::make_speech_service(o);
  auto rec = conversation::Recognizer::create();
  auto engines = speech::open_speech_engines("");
  if (!svc.ok() || !rec.ok() || !engines.ok()) {
    std::fprintf(stderr, "setup failed\n");
    return 1;
  }
  auto& service = **svc;
  auto& r = **rec;

  std::printf("== 1. word error rate, 20 Harvard sentences, PocketSphinx en-us (general model)\n");
  double sum = 0;
  for (const auto& v : service.builtin_voices()) {
    Wer w;
    for (const char* text : conversation::testdata::kHarvardSentences) {
      speech::VoiceSettings s;
      s.voice = v.id;
      s.output_rate = conversation::kRecognizerSampleRate;
      auto a = service.synthesize(text, s);
      auto heard = a.ok() ? r.recognize(a->samples) : Result<std::string>(Status::Internal("synthesis"));
      w.add(text, heard.ok() ? *heard : "");
    }
    const auto* b = speech::find_builtin_voice(v.id);
    std::printf("%s  %-8s %-6s WER %5.1f%%\n", v.id.c_str(), v.engine.c_str(), b->english.voice,
                w.rate() * 100);
    sum += w.rate();
  }
  std::printf("mean over the ten voices: %.1f%%\n", sum / 10 * 100);
  {
    Wer w;
    const auto& def = speech::find_builtin_voice("M1")->espeak;
    for (const char* text : conversation::testdata::kHarvardSentences) {
      std::lock_guard lock(engines->espeak->mutex());
      auto a = engines->espeak->synthesize({text, "en-us", def, 0});
      auto heard = a.ok() ? r.recognize(to16k(a->audio)) : Result<std::string>(Status::Internal("synthesis"));
      w.add(text, heard.ok() ? *heard : "");
    }
    std::printf("raw espeak-ng (M1's formant voice, before this change): WER %.1f%%\n", w.rate() * 100);
  }

  std::printf("\n== 2. synthesis speed, one thread (audio seconds per CPU second)\n");
  for (const auto& bv : speech::builtin_voice_table()) {
    speech::EngineChoice c = speech::choose_engine(*engines, bv, "en");
    double cpu = 0, audio = 0;
    for (int rep = 0; rep < 2; ++rep) {
      for (const auto& sentence : speech::split_sentences(kParagraph)) {
        std::lock_guard lock(c.engine->mutex());
        double t0 = thread_cpu_s();
        auto a = c.engine->synthesize({sentence, "en-us", c.definition, 0, c.engine_voice});
        cpu += thread_cpu_s() - t0;
        if (a.ok()) audio += a->audio.duration_s();
      }
    }
    // The service path adds the speed 1.05 time-stretch on the reading thread.
    speech::VoiceSettings s;
    s.voice = bv.id;
    double t0 = thread_cpu_s();
    auto whole = service.synthesize(kParagraph, s);  // the worker's engine CPU is not in this thread
    double reader_cpu = thread_cpu_s() - t0;
    std::printf(
        "%s %-8s engine: %.1fx real time per core; post-processing on the reader: %.1f ms for %.1f s\n",
        bv.id, c.engine->name(), audio / cpu, reader_cpu * 1e3, whole.ok() ? whole->duration_s() : 0);
  }

  std::printf("\n== 3. streaming: request to first audio, one sentence, M1 (30 runs)\n");
  {
    std::vector<double> ms;
    for (int i = 0; i < 30; ++i) {
      speech::VoiceSettings s;
      auto t0 = Clock::now();
      auto st = service.start("Hello, and welcome to the demonstration.", s, speech::SynthesisRequester{});
      if (!st.ok()) continue;
      auto first = (*st)->next();
      ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      while (first.ok() && first->has_value()) first = (*st)->next();
    }
    std::printf("first audio: p50 %.1f ms, p90 %.1f ms\n", percentile(ms, 0.5), percentile(ms, 0.9));
  }

  std::printf("\n== 4. one paragraph per voice\n");
  for (const auto& v : service.builtin_voices()) {
    speech::VoiceSettings s;
    s.voice = v.id;
    auto a = service.synthesize(kParagraph, s);
    if (!a.ok()) continue;
    double f0 = speech::median_f0(a->samples, a->sample_rate);
    double dur = speech::active_duration(a->samples, a->sample_rate);
    double wpm = conversation::wer_words(kParagraph).size() / dur * 60;
    auto heard = r.recognize(to16k(*a));
    std::string h = heard.ok() ? *heard : "";
    std::printf("%s %-8s F0 %5.1f Hz  %3.0f wpm  centroid %4.0f Hz  WER %4.1f%%\n    heard: %s\n",
                v.id.c_str(), v.engine.c_str(), f0, wpm,
                speech::spectral_centroid(a->samples, a->sample_rate),
                conversation::word_error_rate(kParagraph, h) * 100, h.c_str());
    if (!wav_dir.empty()) {
      std::ofstream f(wav_dir + "/" + v.id + ".wav", std::ios::binary);
      f << speech::wav_header(a->sample_rate, static_cast<uint32_t>(a->samples.size() * 2));
      f.write(reinterpret_cast<const char*>(a->samples.data()),
              static_cast<std::streamsize>(a->samples.size() * 2));
    }
  }
  return 0;
}
