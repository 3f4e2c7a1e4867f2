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
//   live_ws_bench [--media M] fanout N [seconds=30] [core=0] [rounds=2] [viewers=thread|batch]
// One room, N viewers, speaking continuously, imagod pinned to `core`: imagod's CPU with one viewer
// and with N, alternated `rounds` times in the same run (19 viewers join, then leave again).
// `thread` viewers block in a read each, so the kernel wakes one of them for every message, and on
// loopback that wake-up runs inside imagod's send; `batch` viewers are plain sockets that one thread
// drains every 20 ms, as a viewer on another machine costs the server no wake-up (its TCP receive
// still runs in imagod's send on loopback).
// Built with the tests (it uses the black-box harness): build/tests/live_ws_bench
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
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

// A /proc stat file (of a process or one of its threads): its name and utime + stime in seconds.
std::pair<std::string, double> read_stat(const std::string& path) {
  std::ifstream f(path);
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const auto open = all.find('('), close = all.rfind(')');
  if (open == std::string::npos || close == std::string::npos) return {"", 0.0};
  std::istringstream in(all.substr(close + 2));
  std::string field;
  long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && in >> field; ++i) {
    if (i == 14) utime = std::atoll(field.c_str());
    if (i == 15) stime = std::atoll(field.c_str());
  }
  return {all.substr(open + 1, close - open - 1), double(utime + stime) / double(sysconf(_SC_CLK_TCK))};
}

// utime + stime of `pid`, in seconds.
double cpu_seconds(int pid) {
  return read_stat("/proc/" + std::to_string(pid) + "/stat").second;
}

// CPU seconds of each thread of `pid` summed by thread name (imagod names its threads by role:
// imago-io, imago-room-render, imago-synth, ...; the main thread is "imagod" and runs I/O too).
std::map<std::string, double> cpu_by_thread_name(int pid) {
  std::map<std::string, double> out;
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    const auto [name, cpu] = read_stat(dir + "/" + e->d_name + "/stat");
    if (!name.empty()) out[name] += cpu;
  }
  closedir(d);
  return out;
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

// A viewer that is a plain socket: the upgrade written by hand, then the server's frames parsed
// from whatever one drain thread reads every 20 ms. No thread waits on its socket, so delivering a
// message wakes nobody, as with a viewer on another machine.
class RawViewer {
 public:
  static std::unique_ptr<RawViewer> connect(int port, const std::string& target, const std::string& bearer) {
    std::unique_ptr<RawViewer> v(new RawViewer);
    v->fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (v->fd_ < 0) return nullptr;
    timeval tv{10, 0};
    setsockopt(v->fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(uint16_t(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(v->fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return nullptr;
    const std::string req = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                            "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                            "Authorization: Bearer " +
                            bearer + "\r\n\r\n";
    if (::send(v->fd_, req.data(), req.size(), MSG_NOSIGNAL) != ssize_t(req.size())) return nullptr;
    // The 101 answer, then frames until session.started (blocking, with the 10 s timeout above).
    size_t end;
    while ((end = v->buf_.find("\r\n\r\n")) == std::string::npos)
      if (!v->read_some(0)) return nullptr;
    if (v->buf_.rfind("HTTP/1.1 101", 0) != 0) {
      std::fprintf(stderr, "upgrade refused: %s\n", v->buf_.substr(0, v->buf_.find("\r\n")).c_str());
      return nullptr;
    }
    v->buf_.erase(0, end + 4);
    while (!v->started)
      if (!v->parse() || !v->read_some(0)) return nullptr;
    return v;
  }
  ~RawViewer() {
    if (fd_ >= 0) ::close(fd_);
  }
  // Reads and parses what has arrived, without blocking; false once the connection is gone.
  bool drain() {
    for (;;) {
      const size_t before = buf_.size();
      if (!read_some(MSG_DONTWAIT)) return false;
      if (buf_.size() == before) return parse();
      if (!parse()) return false;
    }
  }
  std::atomic<int64_t> video{0}, bytes{0};

 private:
  RawViewer() = default;
  // Appends what one recv returns; false on close or error (EAGAIN is not an error).
  bool read_some(int flags) {
    char tmp[65536];
    const ssize_t n = ::recv(fd_, tmp, sizeof tmp, flags);
    if (n > 0) buf_.append(tmp, size_t(n));
    return n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
  }
  // Consumes every complete frame in buf_ (server frames are unmasked); false on a close frame.
  bool parse() {
    size_t at = 0;
    bool open = true;
    while (open && buf_.size() - at >= 2) {
      const auto* p = reinterpret_cast<const uint8_t*>(buf_.data() + at);
      const int opcode = p[0] & 15;
      uint64_t len = p[1] & 127;
      size_t head = 2;
      if (len == 126) {
        if (buf_.size() - at < 4) break;
        len = uint64_t(p[2]) << 8 | p[3], head = 4;
      } else if (len == 127) {
        if (buf_.size() - at < 10) break;
        len = 0;
        for (int i = 0; i < 8; ++i) len = len << 8 | p[2 + i];
        head = 10;
      }
      if (buf_.size() - at < head + len) break;
      const std::string_view payload(buf_.data() + at + head, size_t(len));
      if (opcode == 1 && payload.find("\"session.started\"") != std::string_view::npos) started = true;
      if (opcode == 2) {
        bytes += int64_t(len);
        // A video message, not a codec configuration (flags bit 4): see hdr().
        if (len >= 20 && payload[0] == 1 && !(uint8_t(payload[2]) & 16)) video++;
      }
      if (opcode == 9) pong(payload);
      if (opcode == 8) open = false;
      at += head + size_t(len);
    }
    buf_.erase(0, at);
    return open;
  }
  // Clients mask what they send (RFC 6455 5.3); a zero key leaves the payload as it is.
  void pong(std::string_view payload) {
    std::string f{char(0x8A), char(0x80 | payload.size()), 0, 0, 0, 0};
    f.append(payload);
    ::send(fd_, f.data(), f.size(), MSG_NOSIGNAL);
  }
  int fd_ = -1;
  std::string buf_;
  bool started = false;
};

// One room with one viewer, then with n, then one again, `rounds` times, speaking throughout:
// imagod's CPU for each window.
int fanout(int n, int seconds, int core, int rounds, bool batch) {
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
  const std::string target = "/v1/runtime/rooms/fan?agent_code=" + code + g_media;
  // `thread` viewers: a WsClient each and a thread blocked in its read.
  struct Viewer {
    std::unique_ptr<WsClient> ws;
    std::unique_ptr<RawViewer> raw;
    std::atomic<int64_t> video{0};
    std::atomic<bool> quit{false};
    std::thread reader;
  };
  std::vector<std::unique_ptr<Viewer>> viewers;
  std::mutex viewers_mu;  // batch: the drain thread walks `viewers`
  std::atomic<bool> stop{false};
  std::thread feeder, drainer;
  auto remove_viewer = [&](Viewer& v) {
    v.quit = true;
    if (v.reader.joinable()) v.reader.join();
    if (v.ws) v.ws->close();
  };
  // Every thread started here is stopped and joined on every way out (an early error return too).
  struct JoinAll {
    std::atomic<bool>& stop;
    std::vector<std::unique_ptr<Viewer>>& viewers;
    std::thread& feeder;
    std::thread& drainer;
    ~JoinAll() {
      stop = true;
      for (auto& v : viewers) {
        v->quit = true;
        if (v->reader.joinable()) v->reader.join();
      }
      if (feeder.joinable()) feeder.join();
      if (drainer.joinable()) drainer.join();
    }
  } join_all{stop, viewers, feeder, drainer};
  auto add_viewer = [&]() -> bool {
    auto v = std::make_unique<Viewer>();
    if (batch) {
      v->raw = RawViewer::connect(s.port(), target, token);
      if (!v->raw) return false;
    } else {
      WsClient::Options o;
      o.bearer = token;
      int status = 0;
      std::string body;
      v->ws = WsClient::connect(s.port(), target, o, &status, &body);
      if (!v->ws) std::fprintf(stderr, "upgrade refused: %d %s\n", status, body.c_str());
      if (!v->ws || !v->ws->read_event("session.started")) return false;
      Viewer* raw = v.get();
      v->reader = std::thread([raw, &stop] {
        while (!stop && !raw->quit) {
          auto m = raw->ws->read(200);
          Hdr h;
          if (m && hdr(*m, &h) && h.kind == 1) raw->video++;
        }
      });
    }
    std::lock_guard lock(viewers_mu);
    viewers.push_back(std::move(v));
    return true;
  };
  if (batch) {
    drainer = std::thread([&] {
      while (!stop) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        std::lock_guard lock(viewers_mu);
        for (auto& v : viewers) v->raw->drain();
      }
    });
  }
  auto video_total = [&] {
    std::lock_guard lock(viewers_mu);
    int64_t sum = 0;
    for (auto& v : viewers) sum += batch ? int64_t(v->raw->video) : int64_t(v->video);
    return sum;
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
  // imagod's CPU in a window, in cores: all of it, and without the synthesis workers (speech is
  // synthesized in bursts ahead of playback, the largest source of spread between windows).
  struct Window {
    double all = 0, unsynthesized = 0;
  };
  auto measure = [&](const char* what, int warm_up_s) {
    // The first warm-up is longer: the speech thread first synthesizes 10 s ahead of playback.
    std::this_thread::sleep_for(std::chrono::seconds(warm_up_s));
    const int64_t v0 = video_total();
    const double cpu0 = cpu_seconds(s.pid());
    const auto threads0 = cpu_by_thread_name(s.pid());
    const auto t0 = SteadyClock::now();
    std::this_thread::sleep_for(std::chrono::seconds(seconds));
    const double secs = std::chrono::duration<double>(SteadyClock::now() - t0).count();
    const double used = (cpu_seconds(s.pid()) - cpu0) / secs;
    auto threads = cpu_by_thread_name(s.pid());
    const int64_t v1 = video_total();
    std::printf("  %-12s %2zu viewers: imagod %.3f cores, %.2f video fps per viewer (load average %s)\n",
                what, viewers.size(), used, double(v1 - v0) / double(viewers.size()) / secs,
                load_average().c_str());
    std::string by;
    double synth = 0;
    for (auto& [name, cpu] : threads) {
      const auto before = threads0.find(name);
      const double c = (cpu - (before == threads0.end() ? 0.0 : before->second)) / secs;
      if (name == "imago-synth") synth = c;
      char buf[96];
      if (c >= 0.0005) std::snprintf(buf, sizeof buf, " %s %.3f", name.c_str(), c), by += buf;
    }
    std::printf("               by thread:%s\n", by.c_str());
    std::fflush(stdout);
    return Window{used, used - synth};
  };
  std::printf("fanout: one room at 512x512, speaking, media %s, %s viewers, imagod on core %d, %d s each\n",
              g_media.empty() ? "jpeg+pcm" : "h264+opus", batch ? "batch" : "thread", core, seconds);
  Window one = measure("one viewer", 15);
  std::vector<double> ratios, unsynthesized;
  for (int r = 0; r < rounds; ++r) {
    for (int i = 1; i < n; ++i)
      if (!add_viewer()) return std::fprintf(stderr, "join %d failed\n", i), 1;
    const Window many = measure("all viewers", 5);
    {
      std::lock_guard lock(viewers_mu);
      while (viewers.size() > 1) {
        remove_viewer(*viewers.back());
        viewers.pop_back();
      }
    }
    const Window after = measure("one viewer", 5);
    // Against the mean of the one-viewer windows on either side: drift of the machine cancels.
    auto ratio = [](double m, double a, double b) { return a + b > 0 ? 2 * m / (a + b) : 0.0; };
    ratios.push_back(ratio(many.all, one.all, after.all));
    // The viewers' added CPU measured without the synthesis workers (a viewer costs nothing there),
    // over one viewer's whole CPU: the same ratio with the bursts of synthesis taken out.
    const double base = (one.all + after.all) / 2, base_rest = (one.unsynthesized + after.unsynthesized) / 2;
    unsynthesized.push_back(base > 0 ? (base + many.unsynthesized - base_rest) / base : 0.0);
    std::printf("  round %d: CPU with %d viewers / with one: %.2fx (added CPU outside synthesis: %.2fx)\n",
                r + 1, n, ratios.back(), unsynthesized.back());
    one = after;
  }
  std::sort(ratios.begin(), ratios.end());
  std::sort(unsynthesized.begin(), unsynthesized.end());
  std::printf("  CPU with %d viewers / with one: median %.2fx over %d rounds (min %.2fx, max %.2fx)\n", n,
              ratios[ratios.size() / 2], rounds, ratios.front(), ratios.back());
  std::printf("  added CPU outside synthesis: median %.2fx (min %.2fx, max %.2fx)\n",
              unsynthesized[unsynthesized.size() / 2], unsynthesized.front(), unsynthesized.back());
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
    const bool batch = argc > 6 && std::string(argv[6]) == "batch";
    if (argc > 6 && !batch && std::string(argv[6]) != "thread")
      return std::fprintf(stderr, "viewers: thread|batch\n"), 2;
    return fanout(std::atoi(argv[2]), argc > 3 ? std::atoi(argv[3]) : 30, argc > 4 ? std::atoi(argv[4]) : 0,
                  argc > 5 ? std::max(1, std::atoi(argv[5])) : 2, batch);
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
