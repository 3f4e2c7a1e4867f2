// Conversation latency end to end over loopback (docs/conversation.md, "Latency"): a real imagod,
// a real WebSocket viewer, and either the built-in responder or the fake streaming language model
// (tests/fixtures, streams at once). Four measurements, p50 / p90 / max over `rounds` each:
//
//   typed    `user_text` sent -> first audio message flagged speaking received
//   spoken   the viewer's end of speech (the 20 ms microphone chunk holding the last audible
//            sample of a TTS-spoken question, sent in real time) -> first speaking audio received;
//            the recognised text is printed
//   barge-in while the agent speaks, the viewer starts talking: the chunk holding the first
//            audible sample sent -> first audio message flagged interrupted (or the interrupted
//            playback_finished event): the agent's audio has stopped (the room sends ~120 ms ahead
//            of real time; a viewer drops what it buffered on the interrupted flag)
//
// Rounds are separated: a round ends when every sentence the agent queued (one `transcript`
// with final false each) has finished playing and no speaking audio arrived for 400 ms.
//   live_conversation_bench [rounds=10] [spoken]   ("spoken": only the spoken-turn rounds)
// Built with the tests (it uses the black-box harness): build/tests/live_conversation_bench
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "fixtures/fake_llm.h"
#include "fixtures/fixture.h"
#include "speech/speech_service.h"
#include "support/test_server.h"
#include "support/ws_client.h"

using namespace imago::testing;
using SteadyClock = std::chrono::steady_clock;
namespace json = boost::json;

namespace {

constexpr int kMicRate = 16000;
constexpr size_t kChunk = kMicRate / 50;  // 20 ms

bool is_audio(const WsMessage& m) {
  return !m.text && m.data.size() >= 20 && uint8_t(m.data[0]) == 2;
}
bool speaking_audio(const WsMessage& m) {
  return is_audio(m) && (uint8_t(m.data[2]) & 1);
}
double ms_between(SteadyClock::time_point a, SteadyClock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// The viewer's microphone: low deterministic noise (a quiet room) with questions spliced in, sent
// as 20 ms binary messages in real time.
class Mic {
 public:
  explicit Mic(WsClient& ws) : ws_(ws), next_(SteadyClock::now()) {}
  // Queues audio to be sent after what is queued.
  void say(const std::vector<int16_t>& pcm) { pending_.insert(pending_.end(), pcm.begin(), pcm.end()); }
  bool idle() const { return sent_ >= pending_.size(); }
  // Sends every chunk that is due; returns when the next one is due (for read timeouts).
  SteadyClock::time_point pump() {
    auto now = SteadyClock::now();
    while (next_ <= now) {
      std::string bytes;
      for (size_t i = 0; i < kChunk; ++i) {
        int s = sent_ < pending_.size() ? pending_[sent_++] : 0;
        noise_ = noise_ * 1103515245u + 12345u;
        s = std::clamp(s + static_cast<int>((noise_ >> 16) & 15) - 8, -32768, 32767);
        bytes.push_back(static_cast<char>(s & 0xFF));
        bytes.push_back(static_cast<char>((s >> 8) & 0xFF));
      }
      ws_.send_binary(bytes);
      chunk_sent_at_.push_back(SteadyClock::now());
      chunk_end_sample_.push_back(sent_);
      next_ += std::chrono::milliseconds(20);
    }
    return next_;
  }
  // When the chunk holding queued sample `index` was sent (nullopt: not yet).
  std::optional<SteadyClock::time_point> sent_at(size_t index) const {
    for (size_t k = 0; k < chunk_end_sample_.size(); ++k)
      if (chunk_end_sample_[k] > index) return chunk_sent_at_[k];
    return std::nullopt;
  }
  size_t queued() const { return pending_.size(); }

 private:
  WsClient& ws_;
  SteadyClock::time_point next_;
  std::vector<int16_t> pending_;
  size_t sent_ = 0;
  uint32_t noise_ = 12345;
  std::vector<SteadyClock::time_point> chunk_sent_at_;
  std::vector<size_t> chunk_end_sample_;
};

// What a viewer has seen of one answer: its sentences (agent transcripts, final false), the
// utterances finished playing, and whether the whole answer (final transcript) has arrived.
struct Round {
  int sentences = 0;
  int finished = 0;
  bool answered = false;
  void track(const WsMessage& m) {
    if (!m.text) return;
    json::object e = json::parse(m.data).as_object();
    const auto& type = e.at("type").as_string();
    finished += type == "playback_finished";
    if (type == "transcript" && e.at("role").as_string() == "agent") {
      if (e.at("final").as_bool()) {
        answered = true;
      } else {
        ++sentences;
      }
    }
  }
};

struct Live {
  std::unique_ptr<TestServer> server;
  std::unique_ptr<WsClient> ws;
  std::unique_ptr<Mic> mic;

  explicit Live(const std::vector<std::string>& args) : server(std::make_unique<TestServer>(args)) {
    auto& s = *server;
    auto acct = s.create_account("enterprise", 100000);
    auto r = s.post("/v1/agent/generate", R"({"prompt":"A friendly guide.","aspect_ratio":"1:1"})",
                    acct.api_secret);
    std::string code = str(r.json(), "agent_id");
    eventually(
        [&] {
          return str(s.get("/v1/agent/" + code, acct.api_secret).json().at("data"), "status") == "ready";
        },
        120);
    s.post("/v1/agent/" + code, R"({"system_prompt":"You are Nora, a guide at the city museum."})",
           acct.api_secret);
    WsClient::Options o;
    o.bearer = str(s.post("/v1/runtime-tokens/request", "", acct.api_secret).json().at("data"), "token");
    ws = WsClient::connect(s.port(), "/v1/runtime/rooms/bench?agent_code=" + code, o);
    if (!ws || !ws->read_event("session.started")) {
      ws.reset();
      return;
    }
    ws->send_text(R"({"type":"add_context","text":"The museum opens at nine in the morning."})");
    ws->send_text(R"({"type":"add_context","text":"Members get a discount of twenty percent."})");
    mic = std::make_unique<Mic>(*ws);
  }

  // Reads (pumping the microphone) until `done` or `timeout_ms`.
  void run(const std::function<bool(const WsMessage&)>& on_message, int timeout_ms) {
    auto end = SteadyClock::now() + std::chrono::milliseconds(timeout_ms);
    while (SteadyClock::now() < end) {
      auto due = mic->pump();
      int wait = std::max<int>(
          1,
          static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(due - SteadyClock::now()).count()));
      auto m = ws->read(wait);
      if (m && on_message(*m)) return;
    }
  }

  // Until every sentence of the answer has played and the agent has been quiet for 400 ms. `round`
  // holds what the caller already saw of this answer: the whole-answer transcript can arrive
  // before the first audio (the answer is written faster than it is spoken).
  void until_quiet(Round round = {}) {
    auto last_speaking = SteadyClock::now();
    run(
        [&](const WsMessage& m) {
          if (speaking_audio(m)) last_speaking = m.at;
          round.track(m);
          return round.answered && round.finished >= round.sentences &&
                 ms_between(last_speaking, SteadyClock::now()) > 400;
        },
        20000);
  }
};

std::vector<int16_t> tts16k(imago::speech::SpeechService& tts, const std::string& text) {
  imago::speech::VoiceSettings v;
  v.voice = "M1";
  v.speed = 1.0;
  v.output_rate = kMicRate;
  auto a = tts.synthesize(text, v);
  if (!a.ok()) {
    std::fprintf(stderr, "tts: %s\n", a.status().message().c_str());
    std::exit(1);
  }
  return a->samples;
}

size_t first_audible(const std::vector<int16_t>& pcm) {
  size_t i = 0;
  while (i < pcm.size() && std::abs(pcm[i]) < 300) ++i;
  return i;
}
size_t last_audible(const std::vector<int16_t>& pcm) {
  size_t i = pcm.size();
  while (i > 0 && std::abs(pcm[i - 1]) < 300) --i;
  return i == 0 ? 0 : i - 1;
}

// Typed turn -> first speaking audio.
std::vector<double> typed(Live& live, int rounds) {
  std::vector<double> ms;
  live.until_quiet(Round{0, 0, true});
  for (int i = 0; i < rounds; ++i) {
    auto t0 = SteadyClock::now();
    live.ws->send_text(R"({"type":"user_text","text":"When does the museum open?"})");
    std::optional<double> first;
    Round round;
    live.run(
        [&](const WsMessage& m) {
          round.track(m);
          if (speaking_audio(m)) first = ms_between(t0, m.at);
          return first.has_value();
        },
        10000);
    if (first) ms.push_back(*first);
    live.until_quiet(round);
  }
  return ms;
}

// Spoken turn: end of speech -> first speaking audio.
// `heard_after`: end of speech -> the viewer's transcript event (the turn ended and was recognised).
std::vector<double> spoken(Live& live, const std::vector<int16_t>& question, int rounds,
                           std::vector<double>* heard_after) {
  std::vector<double> ms;
  live.until_quiet(Round{0, 0, true});
  // No warm-up: round 1 is the session's first audio, which takes the recogniser the server
  // loaded ahead (live_ears_ready in the server lines below says how long it waited).
  for (int i = 0; i < rounds; ++i) {
    size_t base = live.mic->queued();
    live.mic->say(std::vector<int16_t>(kMicRate / 2, 0));  // half a second of the quiet room
    base += kMicRate / 2;
    live.mic->say(question);
    const size_t end_index = base + last_audible(question);
    std::optional<double> first, heard_ms;
    std::string heard;
    Round round;
    live.run(
        [&](const WsMessage& m) {
          round.track(m);
          if (m.text) {
            json::object e = json::parse(m.data).as_object();
            const auto& type = e.at("type").as_string();
            if (type == "transcript" && e.at("role").as_string() == "user") {
              heard = e.at("text").as_string().c_str();
              if (auto end = live.mic->sent_at(end_index)) heard_ms = ms_between(*end, m.at);
            }
          }
          if (speaking_audio(m)) {
            auto end = live.mic->sent_at(end_index);
            if (end) first = ms_between(*end, m.at);
          }
          return first.has_value();
        },
        15000);
    std::printf("  spoken round %d: %s, heard after %s: \"%s\"\n", i + 1,
                first ? (std::to_string(static_cast<int>(*first)) + " ms").c_str() : "no answer",
                heard_ms ? (std::to_string(static_cast<int>(*heard_ms)) + " ms").c_str() : "-",
                heard.c_str());
    if (first) ms.push_back(*first);
    if (heard_ms) heard_after->push_back(*heard_ms);
    live.until_quiet(round);
  }
  return ms;
}

// Barge-in: the viewer speaks over the agent -> the agent's audio stops.
std::vector<double> barge_in(Live& live, const std::vector<int16_t>& question, int rounds) {
  std::vector<double> ms;
  live.until_quiet(Round{0, 0, true});
  const std::string long_text =
      "Welcome to the city museum. Our collection spans four floors, from fossils and minerals to "
      "modern design, and every hall has something new this season. Take your time and ask me anything.";
  for (int i = 0; i < rounds; ++i) {
    live.ws->send_text(json::serialize(json::object{{"type", "speak"}, {"text", long_text}}));
    // Let the agent talk for a second, then speak over it.
    std::optional<SteadyClock::time_point> speaking_since;
    live.run(
        [&](const WsMessage& m) {
          if (speaking_audio(m) && !speaking_since) speaking_since = m.at;
          return speaking_since && ms_between(*speaking_since, SteadyClock::now()) > 1000;
        },
        10000);
    size_t onset_index = live.mic->queued() + first_audible(question);
    live.mic->say(question);
    std::optional<double> stopped;
    live.run(
        [&](const WsMessage& m) {
          auto onset = live.mic->sent_at(onset_index);
          if (!onset || m.at < *onset) return false;
          // The first audio frame flagged interrupted, or the interrupted playback_finished event.
          bool interrupted = is_audio(m) && (uint8_t(m.data[2]) & 4);
          if (m.text) {
            json::object e = json::parse(m.data).as_object();
            interrupted = e.at("type").as_string() == "playback_finished" && e.contains("interrupted") &&
                          e.at("interrupted").as_bool();
          }
          if (interrupted) stopped = ms_between(*onset, m.at);
          return stopped.has_value();
        },
        10000);
    std::printf("  barge-in round %d: %s\n", i + 1,
                stopped ? (std::to_string(static_cast<int>(*stopped)) + " ms").c_str() : "did not stop");
    if (stopped) ms.push_back(*stopped);
    // The interrupting question is answered; let that finish too.
    live.until_quiet();
  }
  return ms;
}

void report(const char* name, std::vector<double> ms) {
  if (ms.empty()) {
    std::printf("%-44s no measurements\n", name);
    return;
  }
  std::sort(ms.begin(), ms.end());
  std::printf("%-44s n=%zu p50=%.0f ms p90=%.0f ms max=%.0f ms\n", name, ms.size(), ms[ms.size() / 2],
              ms[std::min(ms.size() - 1, ms.size() * 9 / 10)], ms.back());
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 10;
  imago::speech::SpeechOptions so;
  so.workers = 1;
  auto tts = imago::speech::make_speech_service(so);
  if (!tts.ok()) {
    std::fprintf(stderr, "tts: %s\n", tts.status().message().c_str());
    return 1;
  }
  const bool spoken_only = argc > 2 && std::string(argv[2]) == "spoken";
  const auto question = tts16k(**tts, "Do members get a discount?");
  if (!spoken_only) {
    Live live({});
    if (!live.ws) return 1;
    report("typed, built-in responder", typed(live, rounds));
  }
  FakeLlmServer llm;
  Live live({"--llm-base-url", llm.base_url(), "--llm-model", "fake", "--llm-allow-private"});
  if (!live.ws) return 1;
  std::vector<double> t, b, heard;
  if (!spoken_only) t = typed(live, rounds);
  auto s = spoken(live, question, rounds, &heard);
  if (!spoken_only) b = barge_in(live, question, rounds);
  // The server's own account of each spoken turn: how far behind real time its ears were.
  {
    std::ifstream log(live.server->data_dir() + "/imagod.log");
    for (std::string line; std::getline(log, line);)
      if (line.find("live_turn_") != std::string::npos || line.find("live_ears") != std::string::npos)
        std::printf("  server: %s\n", line.c_str());
  }
  if (!spoken_only) report("typed, streaming model (fake)", t);
  report("spoken end of speech, streaming model (fake)", s);
  report("  of which: end of speech -> transcript", heard);
  if (!spoken_only) report("barge-in: speech onset -> agent audio stops", b);
  return 0;
}
