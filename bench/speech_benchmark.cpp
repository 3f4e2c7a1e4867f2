// Speech throughput and latency, in one run:
//  1. the default voice's raw engine (RHVoice bdl for M1): a fixed 200-word paragraph synthesized
//     in a loop, in this process, through the same engine the server uses (the engine's limit:
//     one synthesis at a time per engine);
//  2. the same paragraph through POST /v1/tts of a real `imagod serve` with 1, 2 and 8 concurrent
//     clients: audio-seconds produced per wall-second and the ratio to (1);
//  3. time to first byte and to the first audio frame with "stream": true (loopback, so it bounds
//     the server's own latency from above).
//
// Build: ninja -C <build> speech_benchmark     Run: <build>/src/speech/speech_benchmark [seconds]
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "speech/speech_engines.h"
#include "speech/text.h"
#include "speech/voices.h"
#include "support/test_server.h"

using namespace imago;
using Clock = std::chrono::steady_clock;

namespace {

const char* kParagraph =
    "The lighthouse keeper climbed the narrow stairs every evening, carrying a lamp, a notebook and a "
    "flask of tea. From the gallery he could see the whole bay: the fishing boats returning with their "
    "catch, the ferry crossing toward the island, and the long line of hills that turned purple as the sun "
    "went down. He wrote down the wind, the height of the waves and the names of the ships that passed. "
    "Nobody ever read his notes, but he believed that a careful record was a kind of promise to the sea. "
    "One winter a storm broke the great lens, and for three nights the coast was dark. He worked without "
    "sleep, fitting the pieces together with wire and patience, until the beam swept across the water "
    "again. The sailors never knew his name, yet every one of them came home. When he finally retired, he "
    "left the notebooks on the table for the next keeper, with a short message on the first page: watch the "
    "weather, trust the light, and never forget how much depends on a small flame burning steadily in the "
    "dark. "
    "It was the only thing he ever asked of anyone. Then he walked home.";

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

int count_words(const char* s) {
  int n = 0;
  bool in = false;
  for (; *s; ++s) {
    bool w = !std::isspace(static_cast<unsigned char>(*s));
    if (w && !in) ++n;
    in = w;
  }
  return n;
}

// Audio seconds per wall second of the bare engine: the whole paragraph per synthesis call, or
// sentence by sentence as the service feeds it.
double raw_engine(double budget_s, bool by_sentence) {
  auto engines = speech::open_speech_engines("");
  if (!engines.ok()) {
    std::fprintf(stderr, "engine: %s\n", engines.status().message().c_str());
    std::exit(1);
  }
  speech::EngineChoice choice = speech::choose_engine(*engines, *speech::find_builtin_voice("M1"), "en");
  std::vector<std::string> pieces =
      by_sentence ? speech::split_sentences(kParagraph) : std::vector<std::string>{kParagraph};
  double audio = 0;
  int runs = 0;
  auto t0 = Clock::now();
  while (seconds_since(t0) < budget_s || runs < 2) {
    for (const auto& p : pieces) {
      std::lock_guard lock(choice.engine->mutex());
      auto r = choice.engine->synthesize({p, "en-us", choice.definition, 0, choice.engine_voice});
      if (!r.ok()) std::exit(1);
      audio += r->audio.duration_s();
    }
    ++runs;
  }
  double wall = seconds_since(t0);
  std::printf(
      "raw %s %-9s: %d runs, %.1f s audio in %.2f s wall -> %.1f audio-s/s (%.1f s audio per "
      "paragraph)\n",
      choice.engine->name(), by_sentence ? "sentences" : "paragraph", runs, audio, wall, audio / wall,
      audio / runs);
  return audio / wall;
}

// WAV duration from the header.
double wav_seconds(const std::string& b) {
  if (b.size() < 44) return 0;
  auto u32 = [&](size_t i) {
    return static_cast<uint32_t>(static_cast<unsigned char>(b[i])) |
           static_cast<uint32_t>(static_cast<unsigned char>(b[i + 1])) << 8 |
           static_cast<uint32_t>(static_cast<unsigned char>(b[i + 2])) << 16 |
           static_cast<uint32_t>(static_cast<unsigned char>(b[i + 3])) << 24;
  };
  return u32(40) / 2.0 / u32(24);
}

double http_clients(testing::TestServer& srv, const std::string& secret, int clients, double budget_s,
                    double speed) {
  std::string body = boost::json::serialize(boost::json::object{{"text", kParagraph}, {"speed", speed}});
  std::atomic<double> audio{0};
  std::atomic<int> requests{0}, errors{0};
  auto t0 = Clock::now();
  std::vector<std::thread> th;
  for (int c = 0; c < clients; ++c) {
    th.emplace_back([&] {
      testing::HttpRequestOptions o;
      o.timeout_ms = 120000;
      while (seconds_since(t0) < budget_s) {
        auto r = srv.request("POST", "/v1/tts", body, secret, o);
        if (r.status != 200) {
          ++errors;
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
          continue;
        }
        double a = wav_seconds(r.body);
        double cur = audio.load();
        while (!audio.compare_exchange_weak(cur, cur + a)) {
        }
        ++requests;
      }
    });
  }
  for (auto& t : th) t.join();
  double wall = seconds_since(t0);
  double rate = audio.load() / wall;
  std::printf(
      "POST /v1/tts x%-2d speed %.2f: %3d requests (%d errors), %.1f s audio in %.2f s -> %.1f audio-s/s",
      clients, speed, requests.load(), errors.load(), audio.load(), wall, rate);
  return rate;
}

// Loopback TTFB of a streamed request: first byte and first audio frame.
std::pair<double, double> stream_ttfb(int port, const std::string& secret) {
  std::string body = boost::json::serialize(boost::json::object{{"text", kParagraph}, {"stream", true}});
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) std::exit(1);
  std::string req =
      "POST /v1/tts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\napi-secret: " + secret +
      "\r\nConnection: close\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  auto t0 = Clock::now();
  send(fd, req.data(), req.size(), 0);
  std::string raw;
  double first_byte = -1, first_audio = -1;
  char buf[65536];
  for (;;) {
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    if (first_byte < 0) first_byte = seconds_since(t0);
    raw.append(buf, static_cast<size_t>(n));
    if (first_audio < 0) {
      // De-chunk what has arrived; the header frame is 13 bytes, so byte 17 is the type of the
      // second frame: 'A' once the first sentence's audio is here.
      std::string payload;
      size_t he = raw.find("\r\n\r\n"), i = he == std::string::npos ? raw.size() : he + 4;
      while (i < raw.size()) {
        size_t le = raw.find("\r\n", i);
        if (le == std::string::npos) break;
        size_t len = std::stoul(raw.substr(i, le - i), nullptr, 16);
        payload += raw.substr(le + 2, std::min(len, raw.size() - (le + 2)));
        if (len == 0 || le + 2 + len + 2 > raw.size()) break;
        i = le + 2 + len + 2;
      }
      if (payload.size() >= 18 && payload[17] == 'A') first_audio = seconds_since(t0);
    }
  }
  close(fd);
  return {first_byte, first_audio};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  double budget = argc > 1 ? std::atof(argv[1]) : 8.0;
  std::printf("paragraph: %d words; %.0f s per measurement; %u cores\n\n", count_words(kParagraph), budget,
              std::thread::hardware_concurrency());
  double raw = std::max(raw_engine(budget, false), raw_engine(budget, true));
  std::printf("engine limit (the faster of the two): %.1f audio-s/s\n\n", raw);

  testing::TestServer srv;
  auto acct = srv.create_account("enterprise", 0, "bench");
  // Warm up (first requests load dictionaries, caches).
  srv.post("/v1/tts", R"({"text":"warm up"})", acct.api_secret);
  // The machine is shared, so the engine limit drifts with other load: each HTTP measurement is
  // paired with a fresh raw measurement taken just before it, and the ratio uses that one.
  std::printf("\n");
  for (double speed : {1.0, 1.05}) {
    for (int clients : {1, 2, 8}) {
      double paired = std::max(raw_engine(budget / 2, false), raw_engine(budget / 2, true));
      double r = http_clients(srv, acct.api_secret, clients, budget, speed);
      std::printf("  ratio %.2f to the paired raw limit, %.2f to the first\n\n", r / paired, r / raw);
    }
  }
  std::vector<double> fb, fa;
  for (int i = 0; i < 20; ++i) {
    auto [b, a] = stream_ttfb(srv.port(), acct.api_secret);
    fb.push_back(b);
    fa.push_back(a);
  }
  std::printf(
      "\nstream:true over loopback, 20 runs: first byte median %.1f ms (max %.1f), first audio frame median "
      "%.1f ms (max %.1f)\n",
      median(fb) * 1e3, *std::max_element(fb.begin(), fb.end()) * 1e3, median(fa) * 1e3,
      *std::max_element(fa.begin(), fa.end()) * 1e3);
  return 0;
}
