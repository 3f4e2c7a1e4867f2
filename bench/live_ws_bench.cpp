// Live sessions end to end over loopback (docs/live-protocol.md "Performance"): a real imagod,
// a real WebSocket viewer, REST calls.
//   live_ws_bench [rounds=20] [steady_seconds=60]
// 1. REST speak -> first speaking audio frame received by the viewer (p50/p99 over `rounds`).
// 2. REST interrupt -> playback_finished {interrupted: true} received, and speaking audio frames
//    received after it (must be 0).
// 3. Steady state for `steady_seconds` while speaking: video fps, audio frames/s, audio index gaps,
//    arrival skew between the audio and video message of the same frame index.
// Built with the tests (it uses the black-box harness): build/tests/live_ws_bench
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>

#include "fixtures/fixture.h"
#include "support/test_server.h"
#include "support/ws_client.h"

using namespace imago::testing;
using SteadyClock = std::chrono::steady_clock;

namespace {

double ms_between(SteadyClock::time_point a, SteadyClock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

struct Hdr {
  int kind = 0, flags = 0;
  uint32_t index = 0;
};
bool hdr(const WsMessage& m, Hdr* h) {
  if (m.text || m.data.size() < 20) return false;
  h->kind = uint8_t(m.data[0]);
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

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 20;
  const int steady_s = argc > 2 ? std::atoi(argv[2]) : 60;
  TestServer s({"--live-idle-s", "3600"});
  auto acct = s.create_account("enterprise", 100000);
  auto g = s.post("/v1/agent/generate", R"({"prompt":"bench","aspect_ratio":"1:1"})", acct.api_secret);
  std::string code = str(g.json(), "agent_id");
  eventually(
      [&] { return str(s.get("/v1/agent/" + code, acct.api_secret).json().at("data"), "status") == "ready"; },
      120);
  std::string token =
      str(s.post("/v1/runtime-tokens/request", "", acct.api_secret).json().at("data"), "token");
  WsClient::Options o;
  o.bearer = token;
  auto ws = WsClient::connect(s.port(), "/v1/runtime/rooms/bench?agent_code=" + code, o);
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
  for (int k = 0; k < 1 + steady_s / 5; ++k) {
    s.post(
        "/v1/agent/" + code + "/speak",
        R"({"message":"I keep talking so that the benchmark sees a moving mouth and continuous speech for a while longer."})",
        acct.api_secret);
  }
  std::map<uint32_t, SteadyClock::time_point> audio_at, video_at;
  int64_t audio_n = 0, video_n = 0, gaps = 0;
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
    Hdr h;
    if (!hdr(*m, &h)) continue;
    if (h.kind == 2) {
      ++audio_n;
      if (have_last && h.index != last_audio + 1) ++gaps;
      last_audio = h.index;
      have_last = true;
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
  return 0;
}
