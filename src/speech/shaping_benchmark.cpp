// What a second of each built-in English voice costs, step by step: CPU milliseconds per second of
// delivered audio for the engine (RHVoice or flite, with its word and phone timing), each step of
// the voice finisher (resample to 22050 Hz with the formant shift, time-stretch back, spectral
// tilt; voice_shaping.h), and the reader's steps of a live room (speed 1.05 at the default 8
// steps, then 22050 -> 24000 Hz; speech_service.cpp), on a few fixed sentences, the first of each
// handed on in chunks as the service does. Thread CPU time, one thread. Also the median F0 and
// spectral centroid of each voice's output, so a cheaper step can be checked not to move them.
//
// Build: cmake -DIMAGO_BUILD_BENCH=ON, ninja -C <build> shaping_benchmark
// Run:   taskset -c 1 <build>/src/speech/shaping_benchmark [--reps N] [--voice ID] [--write DIR]
//        [--compare DIR]
// --write keeps each voice's output (before the reader's steps, converted to 22050 Hz when the
// finisher delivers another rate) as DIR/<id>.raw (s16);
// --compare reports how far this build's output is from one written before (signal-to-difference
// ratio in dB after the best alignment within 2 ms, and the length change).
#include <soxr.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "speech/dsp.h"
#include "speech/flite_engine.h"
#include "speech/rhvoice_engine.h"
#include "speech/speech_engines.h"
#include "speech/voice_shaping.h"
#include "speech/voices.h"

using namespace imago::speech;

namespace {

const char* kSentences[] = {
    "The lighthouse keeper climbed the narrow stairs every evening, carrying a lamp and a notebook.",
    "From the gallery he could see the whole bay and the ferry crossing toward the island.",
    "He wrote down the wind, the height of the waves and the names of the ships that passed.",
    "Would you like to hear the forecast for tomorrow morning, or shall we talk about something else?",
};

double thread_cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

struct Row {
  double engine = 0, resample = 0, stretch = 0, tilt = 0, speed = 0, out_rate = 0, audio_s = 0;
};

std::vector<int16_t> read_raw(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<int16_t> s(b.size() / 2);
  if (!s.empty()) std::memcpy(s.data(), b.data(), s.size() * 2);
  return s;
}

// Signal-to-difference ratio (dB) of `b` against `a` at the best lag within +-max_lag samples.
double sdr_db(const std::vector<int16_t>& a, const std::vector<int16_t>& b, int max_lag) {
  double best = -1e9;
  for (int lag = -max_lag; lag <= max_lag; ++lag) {
    double sig = 0, diff = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      long j = static_cast<long>(i) + lag;
      double y = j >= 0 && j < static_cast<long>(b.size()) ? b[static_cast<size_t>(j)] : 0;
      sig += static_cast<double>(a[i]) * a[i];
      diff += (a[i] - y) * (a[i] - y);
    }
    best = std::max(best, 10 * std::log10(sig / std::max(diff, 1e-9)));
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 3;
  std::string write_dir, compare_dir, only;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--reps")) reps = std::max(1, std::atoi(argv[i + 1]));
    if (!std::strcmp(argv[i], "--write")) write_dir = argv[i + 1];
    if (!std::strcmp(argv[i], "--compare")) compare_dir = argv[i + 1];
    if (!std::strcmp(argv[i], "--voice")) only = argv[i + 1];
  }
  auto engines = open_speech_engines("");
  if (!engines.ok()) {
    std::fprintf(stderr, "engines: %s\n", engines.status().message().c_str());
    return 1;
  }
  const Quality reader_q = quality_for_steps(8);
  std::printf("CPU ms per second of delivered audio (24 kHz, speed 1.05), %d x %zu sentences\n", reps,
              std::size(kSentences));
  std::printf(
      "voice engine/voice  shift  tilt | engine resample stretch  tilt | speed  ->24k | total  ms/40ms"
      " |  F0 Hz centroid%s\n",
      compare_dir.empty() ? "" : " | vs before: dB  length");
  Row sum;
  int voices = 0;
  for (const auto& bv : builtin_voice_table()) {
    if (!only.empty() && only != bv.id) continue;
    ++voices;
    EngineChoice c = choose_engine(*engines, bv, "en");
    {
      // Untimed: the first synthesis of a voice loads its data.
      std::lock_guard lock(c.engine->mutex());
      (void)c.engine->synthesize({kSentences[0], "en-us", bv.english.definition, 0, c.engine_voice});
    }
    Row row;
    int rate = kEngineSampleRate;    // of the voice finisher's output
    std::vector<int16_t> voice_out;  // the last rep's output, before the reader's steps
    for (int rep = 0; rep < reps; ++rep) {
      if (rep == reps - 1) voice_out.clear();
      for (size_t si = 0; si < std::size(kSentences); ++si) {
        std::vector<Audio> pieces;
        EngineRequest req{kSentences[si], "en-us", bv.english.definition, 0, c.engine_voice};
        if (si == 0) {
          req.on_chunk = [&](Audio a) {
            pieces.push_back(std::move(a));
            return true;
          };
        }
        FinisherCosts costs;
        costs.cpu_s = thread_cpu_s;
        double t0, t1;
        imago::Result<EngineResult> r = imago::Status::Internal("not run");
        {
          std::lock_guard lock(c.engine->mutex());
          FinisherCostScope scope(&costs);
          t0 = thread_cpu_s();
          r = c.engine->synthesize(req);
          t1 = thread_cpu_s();
        }
        if (!r.ok()) {
          std::fprintf(stderr, "%s: %s\n", bv.id, r.status().message().c_str());
          return 1;
        }
        pieces.push_back(std::move(r->audio));
        rate = pieces.front().sample_rate;
        row.engine += (t1 - t0) - costs.resample_s - costs.stretch_s - costs.tilt_s;
        row.resample += costs.resample_s;
        row.stretch += costs.stretch_s;
        row.tilt += costs.tilt_s;
        // The reader's steps, as ReaderFinish runs them on the same pieces.
        // ReaderFinish raises the quality of a conversion from an engine's own rate to HQ.
        Quality out_q = reader_q;
        if (rate != kEngineSampleRate)
          out_q.soxr_recipe = std::max(out_q.soxr_recipe, static_cast<int>(SOXR_HQ));
        StreamingStretch speed(rate, 1.05, reader_q);
        StreamingResampler to24k(rate, 24000, out_q);
        size_t delivered = 0;
        std::vector<int16_t> sentence_out;
        for (size_t k = 0; k < pieces.size(); ++k) {
          const bool last = k + 1 == pieces.size();
          const auto& s = pieces[k].samples;
          if (rep == reps - 1) sentence_out.insert(sentence_out.end(), s.begin(), s.end());
          std::vector<int16_t> stretched, out;
          double a = thread_cpu_s();
          speed.push(s.data(), s.size(), stretched);
          if (last) speed.flush(stretched);
          double b = thread_cpu_s();
          (void)to24k.push(stretched.data(), stretched.size(), out);
          if (last) (void)to24k.flush(out);
          double e = thread_cpu_s();
          row.speed += b - a;
          row.out_rate += e - b;
          delivered += out.size();
        }
        row.audio_s += static_cast<double>(delivered) / 24000;
        // Compared and kept at 22050 Hz, whatever rate the finisher delivered, converted per
        // sentence as the finisher did (one conversion of the joined sentences drifts by a
        // fraction of a sample at each join).
        if (rate != kEngineSampleRate && !sentence_out.empty()) {
          Quality hq;
          hq.soxr_recipe = SOXR_HQ;
          sentence_out = resample(sentence_out, rate, kEngineSampleRate, hq).value();
        }
        voice_out.insert(voice_out.end(), sentence_out.begin(), sentence_out.end());
      }
    }
    Shaping sh = shaping_for(bv.english.definition, [&] {
      for (const auto& v :
           c.engine->name() == std::string("rhvoice") ? RhvoiceEngine::voices() : FliteEngine::voices())
        if (c.engine_voice == v.name) return v;
      return NativeVoice{};
    }());
    auto ms = [&](double s) { return s * 1e3 / row.audio_s; };
    double total = row.engine + row.resample + row.stretch + row.tilt + row.speed + row.out_rate;
    std::printf(
        "%-5s %-7s %-5s %5.3f %5.2f | %6.2f %8.2f %7.2f %5.2f | %5.2f %5.2f | %5.1f  %6.3f | %6.1f %8.0f",
        bv.id, c.engine->name(), c.engine_voice.c_str(), sh.shift, sh.tilt, ms(row.engine), ms(row.resample),
        ms(row.stretch), ms(row.tilt), ms(row.speed), ms(row.out_rate), ms(total), ms(total) * 0.04,
        median_f0(voice_out, kEngineSampleRate), spectral_centroid(voice_out, kEngineSampleRate));
    if (!compare_dir.empty()) {
      auto before = read_raw(compare_dir + "/" + bv.id + ".raw");
      std::printf(" | %5.1f %+6.2f%%", sdr_db(before, voice_out, 44),
                  before.empty() ? 0.0 : (static_cast<double>(voice_out.size()) / before.size() - 1) * 100);
    }
    std::printf("\n");
    if (!write_dir.empty()) {
      std::ofstream f(write_dir + "/" + bv.id + ".raw", std::ios::binary);
      f.write(reinterpret_cast<const char*>(voice_out.data()),
              static_cast<std::streamsize>(voice_out.size() * 2));
    }
    sum.engine += ms(row.engine), sum.resample += ms(row.resample), sum.stretch += ms(row.stretch);
    sum.tilt += ms(row.tilt), sum.speed += ms(row.speed), sum.out_rate += ms(row.out_rate);
  }
  const double n = std::max(1, voices);
  std::printf("mean                             | %6.2f %8.2f %7.2f %5.2f | %5.2f %5.2f | %5.1f  %6.3f\n",
              sum.engine / n, sum.resample / n, sum.stretch / n, sum.tilt / n, sum.speed / n,
              sum.out_rate / n,
              (sum.engine + sum.resample + sum.stretch + sum.tilt + sum.speed + sum.out_rate) / n,
              (sum.engine + sum.resample + sum.stretch + sum.tilt + sum.speed + sum.out_rate) / n * 0.04);
  return 0;
}
