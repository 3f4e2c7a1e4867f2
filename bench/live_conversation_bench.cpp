// A viewer's typed turn -> the agent's first audio sample at the viewer, end to end over loopback
// (docs/conversation.md "In a live session"): a real imagod, a real WebSocket viewer, and either
// the built-in responder or the fake streaming language model (tests/fixtures, streams at once).
//   live_conversation_bench [rounds=10]
// Measured: `user_text` sent -> first audio message flagged speaking received (it arrives about
// 120 ms before it is due to play: the room's look-ahead). p50 / max over `rounds`, each mode.
// Built with the tests (it uses the black-box harness): build/tests/live_conversation_bench
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "fixtures/fake_llm.h"
#include "fixtures/fixture.h"
#include "support/test_server.h"
#include "support/ws_client.h"

using namespace imago::testing;
using SteadyClock = std::chrono::steady_clock;
namespace json = boost::json;

namespace {

bool speaking_audio(const WsMessage& m) {
  return !m.text && m.data.size() >= 20 && uint8_t(m.data[0]) == 2 && (uint8_t(m.data[2]) & 1);
}

std::vector<double> measure(const std::vector<std::string>& args, int rounds) {
  TestServer s(args);
  auto acct = s.create_account("enterprise", 100000);
  auto r =
      s.post("/v1/agent/generate", R"({"prompt":"A friendly guide.","aspect_ratio":"1:1"})", acct.api_secret);
  std::string code = str(r.json(), "agent_id");
  eventually(
      [&] { return str(s.get("/v1/agent/" + code, acct.api_secret).json().at("data"), "status") == "ready"; },
      120);
  s.post("/v1/agent/" + code, R"({"system_prompt":"You are Nora, a guide at the city museum."})",
         acct.api_secret);
  WsClient::Options o;
  o.bearer = str(s.post("/v1/runtime-tokens/request", "", acct.api_secret).json().at("data"), "token");
  auto ws = WsClient::connect(s.port(), "/v1/runtime/rooms/bench?agent_code=" + code, o);
  if (!ws || !ws->read_event("session.started")) return {};
  ws->send_text(R"({"type":"add_context","text":"The museum opens at nine in the morning."})");
  std::vector<double> ms;
  for (int i = 0; i < rounds; ++i) {
    auto t0 = SteadyClock::now();
    ws->send_text(R"({"type":"user_text","text":"When does the museum open?"})");
    std::optional<double> first;
    // Until the whole answer (every sentence it queued) has played.
    int started = 0, finished = 0;
    bool answered = false;
    for (;;) {
      auto m = ws->read(10000);
      if (!m) break;
      if (!first && speaking_audio(*m)) first = std::chrono::duration<double, std::milli>(m->at - t0).count();
      if (!m->text) continue;
      json::object e = json::parse(m->data).as_object();
      const auto& type = e.at("type").as_string();
      started += type == "speech.started";
      finished += type == "playback_finished";
      answered = answered ||
                 (type == "transcript" && e.at("role").as_string() == "agent" && e.at("final").as_bool());
      if (answered && started > 0 && finished >= started) break;
    }
    if (first) ms.push_back(*first);
  }
  return ms;
}

void report(const char* name, std::vector<double> ms) {
  if (ms.empty()) {
    std::printf("%-28s no measurements\n", name);
    return;
  }
  std::sort(ms.begin(), ms.end());
  std::printf("%-28s n=%zu p50=%.0f ms max=%.0f ms\n", name, ms.size(), ms[ms.size() / 2], ms.back());
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 10;
  report("built-in responder", measure({}, rounds));
  FakeLlmServer llm;
  report("streaming model (fake)",
         measure({"--llm-base-url", llm.base_url(), "--llm-model", "fake", "--llm-allow-private"}, rounds));
  return 0;
}
