// CPU cost of phone recognition (speech/phone_recognizer.h): CPU seconds per second of audio,
// measured with the thread's CPU clock (not wall time, so a loaded machine does not inflate it),
// on a paragraph spoken by flite (M2), resampled from 22050 Hz as uploads usually are.
//
// Build: ninja -C <build> phone_recognizer_benchmark   Run: <build>/src/speech/phone_recognizer_benchmark
// [rounds]
#include <time.h>

#include <cstdio>
#include <cstdlib>

#include "speech/phone_recognizer.h"
#include "speech/speech_service.h"

using namespace imago::speech;

namespace {
double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}
}  // namespace

int main(int argc, char** argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
  SpeechOptions o;
  o.workers = 1;
  auto svc = make_speech_service(o);
  if (!svc.ok()) return std::fprintf(stderr, "%s\n", svc.status().message().c_str()), 1;
  VoiceSettings v;
  v.voice = "M2";
  auto a = (*svc)->synthesize(
      "The birch canoe slid on the smooth planks. Glue the sheet to the dark blue background. It is easy "
      "to tell the depth of a well. These days a chicken leg is a rare dish. Rice is often served in round "
      "bowls.",
      v);
  if (!a.ok()) return std::fprintf(stderr, "%s\n", a.status().message().c_str()), 1;
  double t0 = thread_cpu_s();
  auto rec = PhoneRecognizer::create();
  if (!rec.ok()) return std::fprintf(stderr, "%s\n", rec.status().message().c_str()), 1;
  double load = thread_cpu_s() - t0;
  double best = 1e9, sum = 0;
  size_t phones = 0;
  for (int i = 0; i < rounds; ++i) {
    double s = thread_cpu_s();
    auto p = (*rec)->recognize(a->samples, a->sample_rate);
    double c = thread_cpu_s() - s;
    if (!p.ok()) return std::fprintf(stderr, "%s\n", p.status().message().c_str()), 1;
    phones = p->size();
    best = std::min(best, c);
    sum += c;
  }
  std::printf(
      "model load: %.3f s CPU\naudio: %.2f s, %zu phones heard\nrecognition: %.3f s CPU per s of audio "
      "(mean of %d), best %.3f\n",
      load, a->duration_s(), phones, sum / rounds / a->duration_s(), rounds, best / a->duration_s());
  return 0;
}
