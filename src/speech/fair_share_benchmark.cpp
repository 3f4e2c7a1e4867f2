// Fair share of the synthesizer, measured in process on real espeak-ng (not Google Benchmark: it
// reports a latency distribution under load). A probe account asks for one sentence, one request
// at a time; its latency (request to whole audio) is reported as p50/p99 in three settings:
//   idle                      nothing else runs;
//   flood                     one account keeps its whole share (account_queue) of long requests
//                             (40 sentences each) in flight, re-sending each as soon as it ends;
//   flood + 16 live rooms     the same, plus 16 live-priority rooms of 16 accounts, each
//                             speaking a two-sentence reply and then listening for as long as the
//                             reply lasts (real-time playback), over and over.
// Everything stops by itself after the probes (default 40 per setting).
//
// Build: ninja -C <build> fair_share_benchmark   Run: <build>/src/speech/fair_share_benchmark [probes]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "speech/speech_service.h"

using namespace imago::speech;
using SteadyClock = std::chrono::steady_clock;

namespace {

double ms_since(SteadyClock::time_point t0) {
  return std::chrono::duration<double, std::milli>(SteadyClock::now() - t0).count();
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * (v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

struct Load {
  std::atomic<bool> stop{false};
  std::atomic<int64_t> flood_sentences{0}, flood_refused{0}, live_replies{0};
  std::vector<std::thread> threads;
  void end() {
    stop = true;
    for (auto& t : threads) t.join();
    threads.clear();
  }
};

void start_flood(SpeechService& svc, Load& load, int share) {
  std::string text;
  for (int i = 0; i < 40; ++i) text += "The flood keeps the synthesizer busy with one more long sentence. ";
  for (int i = 0; i < share; ++i) {
    load.threads.emplace_back([&svc, &load, text] {
      while (!load.stop) {
        auto s = svc.start(text, VoiceSettings{}, {"acct_flood", SynthesisPriority::kInteractive});
        if (!s.ok()) {
          ++load.flood_refused;
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
          continue;
        }
        while (!load.stop) {
          auto n = (*s)->next();
          if (!n.ok() || !n->has_value()) break;
          ++load.flood_sentences;
        }
      }
    });
  }
}

void start_live(SpeechService& svc, Load& load, int rooms) {
  for (int i = 0; i < rooms; ++i) {
    load.threads.emplace_back([&svc, &load, i] {
      const std::string reply = "Sure, I can help with that. Let me check the details for you.";
      while (!load.stop) {
        auto a = svc.synthesize(reply, VoiceSettings{},
                                {"acct_live_" + std::to_string(i), SynthesisPriority::kLive});
        if (!a.ok()) continue;
        ++load.live_replies;
        // The room plays the reply in real time, then the user talks: speech resumes after that.
        auto until = SteadyClock::now() + std::chrono::duration<double>(a->duration_s());
        while (!load.stop && SteadyClock::now() < until)
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    });
  }
}

void probe(SpeechService& svc, const char* label, int n) {
  std::vector<double> ms;
  int failed = 0;
  for (int i = 0; i < n; ++i) {
    auto t0 = SteadyClock::now();
    auto a = svc.synthesize("Hello, how are you today?", VoiceSettings{},
                            {"acct_probe", SynthesisPriority::kInteractive});
    if (a.ok()) {
      ms.push_back(ms_since(t0));
    } else {
      ++failed;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (ms.empty()) {
    std::printf("%-24s all %d probes failed\n", label, failed);
    return;
  }
  std::printf("%-24s probes %3zu  p50 %8.1f ms  p99 %8.1f ms  max %8.1f ms  failed %d\n", label, ms.size(),
              percentile(ms, 0.5), percentile(ms, 0.99), *std::max_element(ms.begin(), ms.end()), failed);
}

}  // namespace

int main(int argc, char** argv) {
  int probes = argc > 1 ? std::max(2, std::atoi(argv[1])) : 40;
  SpeechOptions o;
  o.workers = 2;
  auto made = make_speech_service(o);
  if (!made.ok()) {
    std::fprintf(stderr, "speech: %s\n", made.status().message().c_str());
    return 1;
  }
  SpeechService& svc = **made;
  std::printf("workers %d, queue %d, account_queue %d\n", o.workers, o.queue, o.account_queue);

  probe(svc, "idle", probes);
  {
    Load load;
    start_flood(svc, load, o.account_queue);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the flood holds its share
    probe(svc, "flood", probes);
    load.end();
    std::printf("  flood sentences %lld, flood requests refused (429) %lld\n",
                static_cast<long long>(load.flood_sentences), static_cast<long long>(load.flood_refused));
  }
  {
    Load load;
    start_flood(svc, load, o.account_queue);
    start_live(svc, load, 16);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    probe(svc, "flood + 16 live rooms", probes);
    load.end();
    std::printf("  flood sentences %lld, live replies %lld\n", static_cast<long long>(load.flood_sentences),
                static_cast<long long>(load.live_replies));
  }
  return 0;
}
