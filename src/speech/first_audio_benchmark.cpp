// First-audio latency of the speech service, measured in process on the real engines (not Google
// Benchmark: it reports a latency distribution). For a one-sentence text in the default voice (M1,
// RHVoice; default speed 1.05, so post-processing included) it times, from start() to
//   first audio    the first piece SpeechStream::next() returns (what a streamed /v1/tts frame or a
//                  live room's renderer gets first);
//   whole          the last piece;
// with the first sentence handed on in chunks (chunk_first_sentence, the default) and as whole
// sentences (the old behaviour), alternating run by run so both see the same machine load. Then
// the synthesis speed of the chunked service: audio seconds per wall second for one reader, and per
// CPU second of the process (the per-core figure).
// Everything stops by itself after the runs (default 40 per mode).
//
// Build: ninja -C <build> first_audio_benchmark
// Run:   <build>/src/speech/first_audio_benchmark [runs] [voice, default M1] [sentence...]
// Without sentences it times two: one with an early pause ("Sure, ...", where a chunk can be cut
// in silence) and one without (nothing to cut at before its first word ends).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "speech/speech_service.h"

using namespace imago::speech;
using SteadyClock = std::chrono::steady_clock;

namespace {

constexpr const char* kSentence = "Sure, I can help you with that order right away.";
constexpr const char* kNoPause = "Hello there how can I help you with your order today?";

double process_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

double ms_since(SteadyClock::time_point t0) {
  return std::chrono::duration<double, std::milli>(SteadyClock::now() - t0).count();
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * (v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

struct Figures {
  std::vector<double> first, whole;
  std::vector<double> pieces;
  double audio_s = 0;
};

VoiceSettings g_voice;

bool run_once(SpeechService& svc, const std::string& sentence, Figures& f) {
  auto t0 = SteadyClock::now();
  auto s = svc.start(sentence, g_voice, {"acct_bench", SynthesisPriority::kInteractive});
  if (!s.ok()) return false;
  int pieces = 0;
  double audio = 0;
  for (;;) {
    auto n = (*s)->next();
    if (!n.ok()) return false;
    if (!n->has_value()) break;
    if (pieces++ == 0) f.first.push_back(ms_since(t0));
    audio += (*n)->duration_s();
  }
  f.whole.push_back(ms_since(t0));
  f.pieces.push_back(pieces);
  f.audio_s = audio;
  return true;
}

void report(const char* label, const Figures& f) {
  if (f.first.empty()) {
    std::printf("%-22s no successful run\n", label);
    return;
  }
  std::printf(
      "%-22s runs %3zu  first audio p50 %6.1f ms  p99 %6.1f ms   whole p50 %6.1f ms  p99 %6.1f ms  "
      "pieces %.0f  audio %.2f s\n",
      label, f.first.size(), percentile(f.first, 0.5), percentile(f.first, 0.99), percentile(f.whole, 0.5),
      percentile(f.whole, 0.99), percentile(f.pieces, 0.5), f.audio_s);
}

}  // namespace

int main(int argc, char** argv) {
  int runs = argc > 1 ? std::max(2, std::atoi(argv[1])) : 40;
  if (argc > 2) g_voice.voice = argv[2];
  SpeechOptions chunked, whole;
  chunked.workers = whole.workers = 1;
  whole.chunk_first_sentence = false;
  auto a = make_speech_service(chunked);
  auto b = make_speech_service(whole);
  if (!a.ok() || !b.ok()) {
    std::fprintf(stderr, "speech: %s\n", (a.ok() ? b.status() : a.status()).message().c_str());
    return 1;
  }
  std::vector<std::string> sentences;
  for (int i = 3; i < argc; ++i) sentences.push_back(argv[i]);
  if (sentences.empty()) sentences = {kSentence, kNoPause};
  for (const auto& sentence : sentences) {
    Figures fa, fb;
    for (int i = 0; i < 3; ++i) run_once(**a, sentence, fa), run_once(**b, sentence, fb);  // warm up
    fa = {}, fb = {};
    for (int i = 0; i < runs; ++i) {
      run_once(**a, sentence, fa);
      run_once(**b, sentence, fb);
    }
    std::printf("one sentence, %s, speed 1.05: \"%s\"\n", g_voice.voice.c_str(), sentence.c_str());
    report("chunked first sentence", fa);
    report("whole sentences", fb);
  }

  // Synthesis speed, chunked service: a paragraph of 8 sentences, one reader.
  std::string para;
  for (int i = 0; i < 8; ++i) para += std::string(kSentence) + " ";
  auto t0 = SteadyClock::now();
  const double cpu0 = process_cpu_s();
  double audio = 0;
  int done = 0;
  while (ms_since(t0) < 3000 || done < 2) {
    auto r = (*a)->synthesize(para, g_voice);
    if (!r.ok()) return 1;
    audio += r->duration_s();
    ++done;
  }
  const double cpu = process_cpu_s() - cpu0;
  std::printf("synthesis speed (chunked service, one reader): %.1f x real time (%.1f s audio in %.2f s)\n",
              audio / (ms_since(t0) / 1000), audio, ms_since(t0) / 1000);
  // Per core: audio seconds per CPU second of the whole process (every synthesis thread), which
  // other processes on the machine do not change.
  std::printf("synthesis speed per core: %.1f x real time (%.1f s audio for %.2f CPU s)\n", audio / cpu,
              audio, cpu);
  return 0;
}
