// Live-session capacity and latency on this machine (docs/live-protocol.md "Performance").
// Not Google Benchmark: it runs real rooms (renderer, JPEG, framing, speech) against viewers that
// count what they receive, for a fixed time, and prints what each room delivered.
//
//   room_benchmark capacity N [seconds]  N rooms at 512x512 speaking continuously; per-room video fps,
//                                        audio continuity, RSS per session
//   room_benchmark latency [rounds]      speak -> first speaking audio frame handed to the viewer,
//                                        interrupt -> last speaking frame, playback_finished
//   room_benchmark flood N [seconds] [messages]
//                                        N rooms with a viewer, each flooded with every client
//                                        message type (WebSocket control messages at the rate
//                                        limit, REST speak / add-context); peak RSS per room over
//                                        idle rooms while the floods are synthesized and played
// Pin to one core for per-core figures: taskset -c 0 build/src/live/room_benchmark capacity 4
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "avatar/builder.h"
#include "live/media_framing.h"
#include "live/room.h"
#include "speech/speech_service.h"
#include "util/json.h"

using namespace imago;
using Clock_ = std::chrono::steady_clock;

namespace {

double now_s() {
  return std::chrono::duration<double>(Clock_::now().time_since_epoch()).count();
}

class CountingViewer : public http::WebSocketConnection {
 public:
  bool send_text(std::string m) override {
    std::lock_guard l(mu);
    if (m.find("\"playback_finished\"") != std::string::npos) finished_at = now_s();
    return true;
  }
  bool send_binary(http::WsBytes b, http::WsMessageClass) override {
    live::MediaHeader h;
    if (!live::decode_media_header(*b, &h)) return true;
    std::lock_guard l(mu);
    bytes += b->size();
    if (h.kind == live::MediaKind::kVideo) {
      ++video;
    } else {
      ++audio;
      if (h.flags & live::kFlagSpeaking) {
        ++speaking;
        if (first_speaking_at == 0) first_speaking_at = now_s();
        last_speaking_at = now_s();
      }
    }
    return true;
  }
  void discard_queued(http::WsMessageClass) override {}
  size_t queued_bytes() const override { return 0; }
  void close(uint16_t, std::string) override {}
  const std::string& client_ip() const override { return ip; }
  void reset() {
    std::lock_guard l(mu);
    video = audio = speaking = 0;
    bytes = 0;
    first_speaking_at = last_speaking_at = finished_at = 0;
  }
  std::mutex mu;
  int64_t video = 0, audio = 0, speaking = 0;
  size_t bytes = 0;
  double first_speaking_at = 0, last_speaking_at = 0, finished_at = 0;
  std::string ip = "127.0.0.1";
};

long rss_kb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return 0;
}

const char* kText =
    "Welcome to the live benchmark. I keep talking so that the renderer draws a moving mouth, the "
    "encoder compresses changing pictures and the audio never stops. ";

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "capacity";
  avatar::BuildInput in;
  in.agent_id = "bench_agent";
  in.aspect_ratio = "1:1";
  auto imx = avatar::build_imx(in, {});
  if (!imx.ok()) return std::fprintf(stderr, "build: %s\n", imx.status().message().c_str()), 1;
  auto model = avatar::load_model(*imx, 512, 512);
  if (!model.ok()) return std::fprintf(stderr, "model: %s\n", model.status().message().c_str()), 1;
  speech::SpeechOptions so;
  so.workers = 1;
  auto speech = speech::make_speech_service(so);
  if (!speech.ok()) return 1;
  ManualClock clock;  // session timeouts are irrelevant here

  auto make_room = [&](int i) {
    live::RoomSettings s;
    s.account_id = "usr_bench";
    s.room_id = "room" + std::to_string(i);
    s.agent_code = "BENCH";
    s.session_id = "ses_" + std::to_string(i);
    auto r = live::Room::create(s, *model, speech->get(), clock, {});
    return std::move(r).value();
  };

  if (mode == "capacity") {
    const int n = argc > 2 ? std::atoi(argv[2]) : 4;
    const double seconds = argc > 3 ? std::atof(argv[3]) : 10;
    const long rss0 = rss_kb();
    std::vector<std::shared_ptr<live::Room>> rooms;
    std::vector<std::shared_ptr<CountingViewer>> viewers;
    for (int i = 0; i < n; ++i) {
      rooms.push_back(make_room(i));
      viewers.push_back(std::make_shared<CountingViewer>());
      rooms.back()->add_viewer(viewers.back(), live::ViewerRole::kRuntime);
      rooms.back()->start();
      for (int k = 0; k < 3; ++k) (void)rooms.back()->speak(kText);
    }
    std::this_thread::sleep_for(std::chrono::seconds(2));  // warm-up: synthesis queued, caches hot
    for (auto& v : viewers) v->reset();
    rusage ru0{}, ru1{};
    getrusage(RUSAGE_SELF, &ru0);
    const double t0 = now_s();
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    const double dt = now_s() - t0;
    getrusage(RUSAGE_SELF, &ru1);
    const long rss1 = rss_kb();
    auto cpu = [](const rusage& r) {
      return r.ru_utime.tv_sec + r.ru_stime.tv_sec + (r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
    };
    double min_fps = 1e9, max_fps = 0, min_afps = 1e9;
    size_t bytes = 0;
    for (auto& v : viewers) {
      std::lock_guard l(v->mu);
      min_fps = std::min(min_fps, v->video / dt);
      max_fps = std::max(max_fps, v->video / dt);
      min_afps = std::min(min_afps, v->audio / dt);
      bytes += v->bytes;
    }
    std::printf(
        "rooms=%d seconds=%.1f video_fps min=%.1f max=%.1f audio_frames_per_s min=%.1f cpu=%.2f cores "
        "mbit_per_room=%.2f rss_per_room_mb=%.1f\n",
        n, dt, min_fps, max_fps, min_afps, (cpu(ru1) - cpu(ru0)) / dt, bytes * 8 / dt / 1e6 / n,
        (rss1 - rss0) / 1024.0 / n);
    for (auto& r : rooms) {
      r->end(live::EndReason::kShutdown);
      r->tick();
      r->join_threads();
    }
    return 0;
  }

  if (mode == "latency") {
    const int rounds = argc > 2 ? std::atoi(argv[2]) : 20;
    auto room = make_room(0);
    auto v = std::make_shared<CountingViewer>();
    room->add_viewer(v, live::ViewerRole::kRuntime);
    room->start();
    std::vector<double> first_audio, silence;
    for (int i = 0; i < rounds; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      v->reset();
      const double t0 = now_s();
      (void)room->speak("Hello, this is round " + std::to_string(i) +
                        " of the latency benchmark, speaking for a while.");
      while (true) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        std::lock_guard l(v->mu);
        if (v->first_speaking_at > 0) break;
      }
      {
        std::lock_guard l(v->mu);
        first_audio.push_back((v->first_speaking_at - t0) * 1000);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      const double ti = now_s();
      room->interrupt();
      std::this_thread::sleep_for(std::chrono::milliseconds(400));
      std::lock_guard l(v->mu);
      // The last speaking frame handed over after the interrupt: 0 when none followed it.
      silence.push_back(std::max(0.0, (v->last_speaking_at - ti) * 1000));
    }
    auto pct = [](std::vector<double> x, double p) {
      std::sort(x.begin(), x.end());
      return x[std::min(x.size() - 1, static_cast<size_t>(p * (x.size() - 1) + 0.5))];
    };
    std::printf("speak->first speaking audio frame (ms): p50=%.1f p99=%.1f max=%.1f\n", pct(first_audio, 0.5),
                pct(first_audio, 0.99), pct(first_audio, 1.0));
    std::printf("interrupt->last speaking frame (ms): p50=%.1f p99=%.1f max=%.1f\n", pct(silence, 0.5),
                pct(silence, 0.99), pct(silence, 1.0));
    room->end(live::EndReason::kShutdown);
    room->tick();
    room->join_threads();
    return 0;
  }
  if (mode == "flood") {
    const int n = argc > 2 ? std::atoi(argv[2]) : 4;
    const double seconds = argc > 3 ? std::atof(argv[3]) : 20;
    const int messages = argc > 4 ? std::atoi(argv[4]) : 9000;
    std::vector<std::shared_ptr<live::Room>> rooms;
    std::vector<std::shared_ptr<CountingViewer>> viewers;
    for (int i = 0; i < n; ++i) {
      rooms.push_back(make_room(i));
      viewers.push_back(std::make_shared<CountingViewer>());
      rooms.back()->add_viewer(viewers.back(), live::ViewerRole::kRuntime);
      rooms.back()->start();
    }
    std::this_thread::sleep_for(std::chrono::seconds(2));  // idle rooms, caches hot
    const long rss_idle = rss_kb();
    std::string speak_text, context_text;
    while (speak_text.size() + std::string_view(kText).size() <= 2000) speak_text += kText;
    while (context_text.size() < 4000) context_text += 'k';
    const std::string huge(20000, 'a');  // the old per-utterance cap: now refused
    auto msg = [](std::string_view type, std::string_view field, const std::string& text) {
      boost::json::object o{{"type", type}};
      if (!field.empty()) o[field] = text;
      return json_to_string(o);
    };
    const std::vector<std::string> kinds = {
        msg("speak", "text", speak_text),
        msg("speak", "text", huge),
        msg("user_text", "text", speak_text),
        msg("add_context", "text", context_text),
        msg("trigger_dynamics", "action", "nope"),
        msg("keep_alive", "", ""),
        msg("heartbeat", "token", "t"),
        msg("camera_frame", "image", "data:x"),
    };
    auto renew = [](const std::string&) { return std::optional<boost::json::object>(); };
    size_t max_accounted = 0;
    long rss_peak = rss_idle;
    for (int m = 0; m < messages; ++m) {
      clock.advance_us(100'000);  // at the connection's rate: every message is admitted
      for (int i = 0; i < n; ++i) {
        rooms[i]->on_control(viewers[i], live::ViewerRole::kRuntime, kinds[m % kinds.size()], renew);
        (void)rooms[i]->say(speak_text);            // REST speak
        (void)rooms[i]->add_context(context_text);  // REST add-context
        max_accounted = std::max(max_accounted, rooms[i]->accounted_bytes());
      }
      if (m % 500 == 0) rss_peak = std::max(rss_peak, rss_kb());
    }
    const double t0 = now_s();
    while (now_s() - t0 < seconds) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      rss_peak = std::max(rss_peak, rss_kb());
      for (auto& r : rooms) max_accounted = std::max(max_accounted, r->accounted_bytes());
    }
    std::printf(
        "rooms=%d messages_per_room=%d (x3: a control message, a REST speak, a REST add-context) "
        "rss_idle_mb=%.1f rss_peak_mb=%.1f flood_rss_per_room_kb=%.0f max_accounted_bytes_per_room=%zu "
        "bound=%zu\n",
        n, messages, rss_idle / 1024.0, rss_peak / 1024.0, double(rss_peak - rss_idle) / n, max_accounted,
        live::max_accounted_bytes(live::RoomLimits{}));
    for (auto& r : rooms) {
      r->end(live::EndReason::kShutdown);
      r->tick();
      r->join_threads();
    }
    return 0;
  }
  std::fprintf(
      stderr,
      "usage: room_benchmark capacity N [seconds] | latency [rounds] | flood N [seconds] [messages]\n");
  return 2;
}
