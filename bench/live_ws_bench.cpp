// Live sessions end to end over loopback (docs/live-protocol.md "Performance"): a real imagod,
// real WebSocket viewers, REST calls. `--media h264+opus` (first argument) makes every viewer ask
// for encoded media (docs/live-protocol.md "Encoded media"); without it viewers get JPEG + PCM.
//   live_ws_bench [--media M] [rounds=20] [steady_seconds=60]
// 1. REST speak -> first speaking audio frame received by the viewer (p50/p99 over `rounds`).
// 2. REST interrupt -> playback_finished {interrupted: true} received, and speaking audio frames
//    received after it (must be 0).
// 3. Steady state for `steady_seconds` while speaking: video fps, audio frames/s, audio index gaps,
//    arrival skew between the audio and video message of the same frame index.
//   live_ws_bench capacity N [seconds=60] [core=0]
// Every agent speaks with one built-in voice, F1 (RHVoice slt) unless IMAGO_BENCH_VOICE names another:
// without one the agent's voice would depend on its random code, and the engines' costs differ
// (docs/live-protocol.md "Performance").
// N rooms at 512x512, each with one WebSocket viewer and speaking continuously, imagod pinned to
// one core (every thread: `core`) and the viewers to the other cores: per-room video fps and audio
// frames/s over `seconds` (after a 10 s warm-up), imagod's CPU time (cores used, CPU per session)
// and RSS per session, and the bytes each viewer receives (bandwidth). This is the per-core
// capacity including encoding and sending.
//   live_ws_bench [--media M] fanout N [seconds=30] [core=0]
// One room, N viewers, speaking continuously, imagod pinned to `core`: imagod's CPU with N viewers
// against the same room with one viewer, measured one after the other in the same run.
// Built with the tests (it uses the black-box harness): build/tests/live_ws_bench
#include <dirent.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "fixtures/fixture.h"
#include "support/test_server.h"
#include "support/ws_client.h"

using namespace imago::testing;
using SteadyClock = std::chrono::steady_clock;

namespace {

double ms_between(SteadyClock::time_point a, SteadyClock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// "" (today's JPEG + PCM) or "&media=h264%2Bopus".
std::string g_media;

struct Hdr {
  int kind = 0, codec = 0, flags = 0;
  uint32_t index = 0;
};
// Media messages; codec configurations (flags bit 4) are not counted as media.
bool hdr(const WsMessage& m, Hdr* h) {
  if (m.text || m.data.size() < 20) return false;
  if (uint8_t(m.data[2]) & 16) return false;
  h->kind = uint8_t(m.data[0]);
  h->codec = uint8_t(m.data[1]);
  h->flags = uint8_t(m.data[2]) | (uint8_t(m.data[3]) << 8);
  h->index = uint32_t(uint8_t(m.data[4])) | uint32_t(uint8_t(m.data[5])) << 8 |
             uint32_t(uint8_t(m.data[6])) << 16 | uint32_t(uint8_t(m.data[7])) << 24;
  return true;
}

double pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(p * (v.size() - 1) + 0.5))];
}

// Pins every thread of `pid` to `core` (threads it starts later inherit it).
bool pin_process(int pid, int core) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core, &set);
  DIR* d = opendir(("/proc/" + std::to_string(pid) + "/task").c_str());
  if (!d) return false;
  bool ok = true;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    ok &= sched_setaffinity(std::atoi(e->d_name), sizeof set, &set) == 0;
  }
  closedir(d);
  return ok;
}

// utime + stime of `pid`, in seconds.
double cpu_seconds(int pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto close = all.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream in(all.substr(close + 2));
  std::string field;
  long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && in >> field; ++i) {
    if (i == 14) utime = std::atoll(field.c_str());
    if (i == 15) stime = std::atoll(field.c_str());
  }
  return double(utime + stime) / double(sysconf(_SC_CLK_TCK));
}

double rss_mb(int pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atof(line.c_str() + 6) / 1024.0;
  }
  return 0;
}

std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

// The agent every mode creates (see the voice note above).
std::string bench_agent_body() {
  const char* v = std::getenv("IMAGO_BENCH_VOICE");
  return std::string(R"({"prompt":"bench","aspect_ratio":"1:1","voice":")") + (v && *v ? v : "F1") + "\"}";
}

int capacity(int n, int seconds, int core) {
  const int cores = int(std::thread::hardware_concurrency());
  // The viewers (this process) stay off imagod's core when there is another one.
  if (cores > 1) {
    cpu_set_t others;
    CPU_ZERO(&others);
    for (int c = 0; c < cores; ++c)
      if (c != core) CPU_SET(c, &others);
    sched_setaffinity(0, sizeof others, &others);
  }
  TestServer s({"--live-idle-s", "3600", "--max-live-sessions", std::to_string(n + 1),
                "--live-sessions-per-account", std::to_string(n + 1)});
  if (!pin_process(s.pid(), core)) return std::fprintf(stderr, "could not pin imagod\n"), 1;
  auto acct = s.create_account("enterprise", 10'000'000);
  auto g = s.post("/v1/agent/generate", bench_agent_body(), acct.api_secret);
  std::string code = str(g.json(), "agent_id");
  if (!eventually(
          [&] {
            return str(s.get("/v1/agent/" + code, acct.api_secret).json().at("data"), "status") == "ready";
          },
          300))
    return std::fprintf(stderr, "agent not ready\n"), 1;
  pin_process(s.pid(), core);  // worker threads started since
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const double idle_rss = rss_mb(s.pid());
  const double idle_cpu0 = cpu_seconds(s.pid());
  std::this_thread::sleep_for(std::chrono::seconds(5));
  const double idle_cores = (cpu_seconds(s.pid()) - idle_cpu0) / 5.0;

  std::string token =
      str(s.post("/v1/runtime-tokens/request", "", acct.api_secret).json().at("data"), "token");
  struct Viewer {
    std::unique_ptr<WsClient> ws;
    std::atomic<int64_t> video{0}, audio{0}, bytes{0};
    std::atomic<bool> counting{false};
    std::thread reader;
  };
  std::vector<std::unique_ptr<Viewer>> viewers;
  std::atomic<bool> stop{false};
  const std::string line =
      R"(I keep talking so that the benchmark sees a moving mouth and continuous speech for a while longer.)";
  for (int i = 0; i < n; ++i) {
    auto v = std::make_unique<Viewer>();
    WsClient::Options o;
    o.bearer = token;
    const std::string room = "cap" + std::to_string(i);
    v->ws = WsClient::connect(s.port(), "/v1/runtime/rooms/" + room + "?agent_code=" + code + g_media, o);
    if (!v->ws || !v->ws->read_event("session.started"))
      return std::fprintf(stderr, "join %d failed\n", i), 1;
    // Enough speech queued for the warm-up and the window (each line takes about 6 s).
    for (int k = 0; k < 4 + (seconds + 10) / 5; ++k) {
      auto r = s.post("/v1/agent/" + code + "/speak",
                      R"({"message":")" + line + R"(","room_id":")" + room + R"("})", acct.api_secret);
      if (r.status != 200) return std::fprintf(stderr, "speak: %ld %s\n", r.status, r.body.c_str()), 1;
    }
    Viewer* raw = v.get();
    v->reader = std::thread([raw, &stop] {
      while (!stop) {
        auto m = raw->ws->read(200);
        if (!m || !raw->counting) continue;
        // What the viewer's network carries: the payload and a 2-4 byte WebSocket frame header.
        raw->bytes += int64_t(m->data.size()) + (m->data.size() < 126 ? 2 : 4);
        Hdr h;
        if (!hdr(*m, &h)) continue;
        // One audio message per 40 ms picture (PCM and Opus alike).
        if (h.kind == 2) {
          raw->audio++;
        } else {
          raw->video++;
        }
      }
    });
    viewers.push_back(std::move(v));
  }
  std::this_thread::sleep_for(std::chrono::seconds(10));  // warm-up
  const double rss = rss_mb(s.pid());
  const double cpu0 = cpu_seconds(s.pid());
  for (auto& v : viewers) v->counting = true;
  const auto t0 = SteadyClock::now();
  auto last_heartbeat = t0;
  while (SteadyClock::now() - t0 < std::chrono::seconds(seconds)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    if (SteadyClock::now() - last_heartbeat > std::chrono::seconds(60)) {  // renew like a client
      last_heartbeat = SteadyClock::now();
      s.request("POST", "/v1/runtime/heartbeat", "", "", {.headers = {{"Authorization", "Bearer " + token}}});
    }
  }
  for (auto& v : viewers) v->counting = false;
  const double secs = std::chrono::duration<double>(SteadyClock::now() - t0).count();
  const double used = (cpu_seconds(s.pid()) - cpu0) / secs;
  stop = true;
  for (auto& v : viewers) v->reader.join();
  std::vector<double> fps, aps, kbps;
  for (auto& v : viewers) {
    fps.push_back(double(v->video) / secs);
    aps.push_back(double(v->audio) / secs);
    kbps.push_back(double(v->bytes) * 8 / 1000 / secs);
  }
  int steady = 0;
  for (double f : fps) steady += f >= 24.0;
  const double per_session = (used - idle_cores) / n;
  std::printf("capacity %d rooms on core %d, %.0f s, media %s (load average %s):\n", n, core, secs,
              g_media.empty() ? "jpeg+pcm" : "h264+opus", load_average().c_str());
  std::printf("  video fps per room: min %.2f  p50 %.2f  max %.2f;  rooms at >= 24 fps: %d of %d\n",
              pct(fps, 0), pct(fps, 0.5), pct(fps, 1), steady, n);
  std::printf("  audio frames/s per room (40 ms each): min %.2f  p50 %.2f\n", pct(aps, 0), pct(aps, 0.5));
  std::printf("  received per viewer: p50 %.1f kbit/s  max %.1f kbit/s (video + audio + framing)\n",
              pct(kbps, 0.5), pct(kbps, 1));
  std::printf(
      "  imagod CPU: %.3f cores (idle %.3f); %.4f cores per session -> %.1f sessions per fully available "
      "core\n",
      used, idle_cores, per_session, per_session > 0 ? 1.0 / per_session : 0.0);
  // When the core was not ours alone, rooms drop pictures (never audio): scale the CPU per session
  // to 25 video fps (conservative: audio and speech do not grow with the frame rate).
  const double video_fps = pct(fps, 0.5);
  if (video_fps > 0) {
    const double at25 = per_session * 25.0 / video_fps;
    std::printf(
        "  %.2f ms of imagod CPU per delivered video frame (all costs included); at 25 fps: %.4f cores "
        "per session -> %.1f sessions per core\n",
        1000.0 * (used - idle_cores) / (video_fps * n), at25, at25 > 0 ? 1.0 / at25 : 0.0);
  }
  std::printf("  imagod RSS: %.1f MB idle, %.1f MB with %d rooms -> %.1f MB per session\n", idle_rss, rss, n,
              (rss - idle_rss) / n);
  return 0;
}

}  // namespace

// One room, first with one viewer and then with n, speaking throughout: imagod's CPU for each.
int fanout(int n, int seconds, int core) {
  const int cores = int(std::thread::hardware_concurrency());
  if (cores > 1) {
    cpu_set_t others;
    CPU_ZERO(&others);
    for (int c = 0; c < cores; ++c)
      if (c != core) CPU_SET(c, &others);
    sched_setaffinity(0, sizeof others, &others);
  }
  TestServer s({"--live-idle-s", "3600"});
  if (!pin_process(s.pid(), core)) return std::fprintf(stderr, "could not pin imagod\n"), 1;
  auto acct = s.create_account("enterprise", 10'000'000);
  auto g = s.post("/v1/agent/generate", bench_agent_body(), acct.api_secret);
  std::string code = str(g.json(), "agent_id");
  if (!eventually(
          [&] {
            return str(s.get("/v1/agent/" + code, acct.api_secret).json().at("data"), "status") == "ready";
          },
          300))
    return std::fprintf(stderr, "agent not ready\n"), 1;
  pin_process(s.pid(), core);
  std::string token =
      str(s.post("/v1/runtime-tokens/request", "", acct.api_secret).json().at("data"), "token");
  struct Viewer {
    std::unique_ptr<WsClient> ws;
    std::atomic<int64_t> video{0}, bytes{0};
    std::thread reader;
  };
  std::vector<std::unique_ptr<Viewer>> viewers;
  std::atomic<bool> stop{false};
  std::thread feeder;
  // Every thread started here is stopped and joined on every way out (an early error return too).
  struct JoinAll {
    std::atomic<bool>& stop;
    std::vector<std::unique_ptr<Viewer>>& viewers;
    std::thread& feeder;
    ~JoinAll() {
      stop = true;
      for (auto& v : viewers)
        if (v->reader.joinable()) v->reader.join();
      if (feeder.joinable()) feeder.join();
    }
  } join_all{stop, viewers, feeder};
  auto add_viewer = [&]() -> bool {
    auto v = std::make_unique<Viewer>();
    WsClient::Options o;
    o.bearer = token;
    v->ws = WsClient::connect(s.port(), "/v1/runtime/rooms/fan?agent_code=" + code + g_media, o);
    if (!v->ws || !v->ws->read_event("session.started")) return false;
    Viewer* raw = v.get();
    v->reader = std::thread([raw, &stop] {
      while (!stop) {
        auto m = raw->ws->read(200);
        if (!m) continue;
        raw->bytes += int64_t(m->data.size());
        Hdr h;
        if (hdr(*m, &h) && h.kind == 1) raw->video++;
      }
    });
    viewers.push_back(std::move(v));
    return true;
  };
  if (!add_viewer()) return std::fprintf(stderr, "join failed\n"), 1;
  const std::string line =
      R"(I keep talking so that the benchmark sees a moving mouth and continuous speech for a while longer.)";
  // The room's speech queue holds 16 utterances: fill it, then keep it topped up (a 429 says it is
  // full; the line is about five seconds of speech) for as long as the measurement runs.
  auto speak = [&] {
    return s.post("/v1/agent/" + code + "/speak", R"({"message":")" + line + R"(","room_id":"fan"})",
                  acct.api_secret);
  };
  for (int k = 0; k < 16; ++k) {
    auto r = speak();
    if (r.status == 429) break;
    if (r.status != 200) return std::fprintf(stderr, "speak: %ld %s\n", r.status, r.body.c_str()), 1;
  }
  feeder = std::thread([&] {
    while (!stop) {
      speak();
      for (int i = 0; i < 20 && !stop; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  auto measure = [&](const char* what, int warm_up_s) {
    // The first warm-up is longer: the speech thread first synthesizes 10 s ahead of playback.
    std::this_thread::sleep_for(std::chrono::seconds(warm_up_s));
    int64_t v0 = 0;
    for (auto& v : viewers) v0 += v->video;
    const double cpu0 = cpu_seconds(s.pid());
    const auto t0 = SteadyClock::now();
    std::this_thread::sleep_for(std::chrono::seconds(seconds));
    const double secs = std::chrono::duration<double>(SteadyClock::now() - t0).count();
    const double used = (cpu_seconds(s.pid()) - cpu0) / secs;
    int64_t v1 = 0;
    for (auto& v : viewers) v1 += v->video;
    std::printf("  %-12s %2zu viewers: imagod %.3f cores, %.2f video fps per viewer (load average %s)\n",
                what, viewers.size(), used, double(v1 - v0) / double(viewers.size()) / secs,
                load_average().c_str());
    return used;
  };
  std::printf("fanout: one room at 512x512, speaking, media %s, imagod on core %d, %d s each\n",
              g_media.empty() ? "jpeg+pcm" : "h264+opus", core, seconds);
  const double one = measure("one viewer", 15);
  for (int i = 1; i < n; ++i)
    if (!add_viewer()) return std::fprintf(stderr, "join %d failed\n", i), 1;
  const double many = measure("all viewers", 5);
  std::printf("  CPU with %d viewers / with one: %.2fx\n", n, one > 0 ? many / one : 0.0);
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 2 && std::string(argv[1]) == "--media") {
    const std::string m = argv[2];
    if (m != "h264+opus" && m != "jpeg+pcm") return std::fprintf(stderr, "--media h264+opus|jpeg+pcm\n"), 2;
    if (m == "h264+opus") g_media = "&media=h264%2Bopus";
    argc -= 2;
    argv += 2;
  }
  if (argc > 2 && std::string(argv[1]) == "fanout") {
    return fanout(std::atoi(argv[2]), argc > 3 ? std::atoi(argv[3]) : 30, argc > 4 ? std::atoi(argv[4]) : 0);
  }
  if (argc > 1 && std::string(argv[1]) == "capacity") {
    if (argc < 3) return std::fprintf(stderr, "usage: live_ws_bench capacity N [seconds] [core]\n"), 2;
    return capacity(std::atoi(argv[2]), argc > 3 ? std::atoi(argv[3]) : 60,
                    argc > 4 ? std::atoi(argv[4]) : 0);
  }
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 20;
  const int steady_s = argc > 2 ? std::atoi(argv[2]) : 60;
  TestServer s({"--live-idle-s", "3600"});
  auto acct = s.create_account("enterprise", 100000);
  auto g = s.post("/v1/agent/generate", bench_agent_body(), acct.api_secret);
  std::string code = str(g.json(), "agent_id");
  eventually(
      [&] { return str(s.get("/v1/agent/" + code, acct.api_secret).json().at("data"), "status") == "ready"; },
      120);
  std::string token =
      str(s.post("/v1/runtime-tokens/request", "", acct.api_secret).json().at("data"), "token");
  WsClient::Options o;
  o.bearer = token;
  auto ws = WsClient::connect(s.port(), "/v1/runtime/rooms/bench?agent_code=" + code + g_media, o);
  if (!ws || !ws->read_event("session.started")) return std::fprintf(stderr, "join failed\n"), 1;

  std::vector<double> first_audio, finished_ms;
  int speaking_after_interrupt = 0;
  for (int i = 0; i < rounds; ++i) {
    // Let the previous round settle, and drain.
    auto settle = SteadyClock::now() + std::chrono::milliseconds(400);
    while (SteadyClock::now() < settle) ws->read(50);
    const auto t0 = SteadyClock::now();
    auto r = s.post("/v1/agent/" + code + "/speak",
                    R"({"message":"Round )" + std::to_string(i) +
                        R"(: here is a sentence that takes a few seconds to say."})",
                    acct.api_secret);
    if (r.status != 200) return std::fprintf(stderr, "speak: %ld %s\n", r.status, r.body.c_str()), 1;
    for (;;) {
      auto m = ws->read(5000);
      if (!m) return std::fprintf(stderr, "no audio\n"), 1;
      Hdr h;
      if (hdr(*m, &h) && h.kind == 2 && (h.flags & 1)) {
        first_audio.push_back(ms_between(t0, m->at));
        break;
      }
    }
    // Half a second into the speech, interrupt.
    auto until = SteadyClock::now() + std::chrono::milliseconds(500);
    while (SteadyClock::now() < until) ws->read(20);
    const auto ti = SteadyClock::now();
    s.post("/v1/rooms/bench/interrupt", "", acct.api_secret);
    bool seen = false;
    auto end = SteadyClock::now() + std::chrono::milliseconds(1500);
    while (SteadyClock::now() < end) {
      auto m = ws->read(100);
      if (!m) continue;
      Hdr h;
      if (m->text && m->data.find("\"playback_finished\"") != std::string::npos && !seen) {
        seen = true;
        finished_ms.push_back(ms_between(ti, m->at));
      } else if (seen && hdr(*m, &h) && h.kind == 2 && (h.flags & 1)) {
        ++speaking_after_interrupt;
      }
    }
  }
  std::printf(
      "REST speak -> first speaking audio frame at the viewer (ms): p50 %.1f  p99 %.1f  max %.1f  (n=%d)\n",
      pct(first_audio, 0.5), pct(first_audio, 0.99), pct(first_audio, 1), rounds);
  std::printf(
      "REST interrupt -> playback_finished{interrupted} at the viewer (ms): p50 %.1f  p99 %.1f  max %.1f;"
      " speaking audio frames after it: %d\n",
      pct(finished_ms, 0.5), pct(finished_ms, 0.99), pct(finished_ms, 1), speaking_after_interrupt);

  // Steady state while talking continuously.
  for (int k = 0; k < 3 + steady_s / 5; ++k) {
    s.post(
        "/v1/agent/" + code + "/speak",
        R"({"message":"I keep talking so that the benchmark sees a moving mouth and continuous speech for a while longer."})",
        acct.api_secret);
  }
  // A viewer joining the speaking room: join -> its first picture (for H.264 the key frame it
  // needs, which the join asks for).
  std::vector<double> join_ms;
  for (int i = 0; i < 10; ++i) {
    const auto t0 = SteadyClock::now();
    auto late = WsClient::connect(s.port(), "/v1/runtime/rooms/bench?agent_code=" + code + g_media, o);
    if (!late) return std::fprintf(stderr, "late join failed\n"), 1;
    for (;;) {
      auto m = late->read(3000);
      if (!m) return std::fprintf(stderr, "no picture after joining\n"), 1;
      Hdr h;
      if (hdr(*m, &h) && h.kind == 1) {
        join_ms.push_back(ms_between(t0, m->at));
        break;
      }
    }
    late.reset();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    while (ws->read(10)) {
    }
  }
  std::printf("join -> first picture received (ms): p50 %.1f  p99 %.1f  max %.1f  (n=10)\n",
              pct(join_ms, 0.5), pct(join_ms, 0.99), pct(join_ms, 1));

  std::map<uint32_t, SteadyClock::time_point> audio_at, video_at;
  int64_t audio_n = 0, video_n = 0, gaps = 0, bytes = 0;
  uint32_t last_audio = 0;
  bool have_last = false;
  const auto t_start = SteadyClock::now();
  auto last_heartbeat = t_start;
  while (SteadyClock::now() - t_start < std::chrono::seconds(steady_s)) {
    // Renew like a client does (every 60 s), or the session pauses after the grace window.
    if (SteadyClock::now() - last_heartbeat > std::chrono::seconds(60)) {
      last_heartbeat = SteadyClock::now();
      std::string fresh =
          str(s.post("/v1/runtime-tokens/request", "", acct.api_secret).json().at("data"), "token");
      ws->send_text(R"({"type":"heartbeat","token":")" + fresh + R"("})");
    }
    auto m = ws->read(1000);
    if (!m) continue;
    bytes += int64_t(m->data.size()) + (m->data.size() < 126 ? 2 : 4);
    Hdr h;
    if (!hdr(*m, &h)) continue;
    if (h.kind == 2) {
      ++audio_n;
      if (have_last && h.index != last_audio + 1) ++gaps;
      last_audio = h.index;
      have_last = true;
      // One audio message per picture, with the picture's index (PCM and Opus).
      audio_at[h.index] = m->at;
    } else {
      ++video_n;
      video_at[h.index] = m->at;
    }
  }
  const double secs = std::chrono::duration<double>(SteadyClock::now() - t_start).count();
  std::vector<double> skew;
  for (auto& [idx, tv] : video_at) {
    auto it = audio_at.find(idx);
    if (it != audio_at.end()) skew.push_back(std::abs(ms_between(it->second, tv)));
  }
  std::printf(
      "steady %.0f s: video %.2f fps, audio %.2f frames/s, audio index gaps %lld, |video - audio| arrival "
      "skew for the same frame: p50 %.2f ms p99 %.2f ms max %.2f ms (pts are equal by construction)\n",
      secs, video_n / secs, audio_n / secs, static_cast<long long>(gaps), pct(skew, 0.5), pct(skew, 0.99),
      pct(skew, 1));
  std::printf("received by the viewer: %.1f kbit/s (video + audio + framing), media %s\n",
              bytes * 8 / 1000.0 / secs, g_media.empty() ? "jpeg+pcm" : "h264+opus");
  return 0;
}
