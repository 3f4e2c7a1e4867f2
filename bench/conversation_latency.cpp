// Conversation latency at the domain level (no WebSocket, no renderer):
//   typed:   user_text -> first agent audio sample (sentence 1 synthesized), with the fake
//            OpenAI-compatible server streaming at once, and with the built-in responder;
//   spoken:  end of the viewer's speech -> first agent audio sample, on TTS-spoken questions:
//            the turn detector's end-of-turn silence (a fixed wait, configured) + recognition of
//            the turn + the answer + synthesis of its first sentence (measured).
// Run: ninja -C build conversation_latency && build/src/conversation/conversation_latency [runs]
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <mutex>

#include "conversation/conversation.h"
#include "conversation/recognizer.h"
#include "conversation/test_knowledge.h"
#include "conversation/turn_detector.h"
#include "fixtures/fake_llm.h"
#include "speech/speech_service.h"

using namespace imago;
using namespace imago::conversation;
using Clock = std::chrono::steady_clock;

namespace {

double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

struct Stats {
  std::vector<double> v;
  void print(const char* name) {
    std::sort(v.begin(), v.end());
    auto q = [&](double p) { return v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))]; };
    std::printf("%-58s n=%2zu  p50 %7.1f ms  p90 %7.1f ms  max %7.1f ms\n", name, v.size(), q(0.5), q(0.9),
                v.back());
  }
};

// A sink that synthesizes the first sentence of each answer and reports when its first audio
// chunk exists (what a live session would start sending).
struct FirstAudio {
  speech::SpeechService* speech;
  std::mutex mu;
  std::condition_variable cv;
  bool got = false;
  bool first_sentence = true;
  Clock::time_point at;
  ConversationSink sink() {
    ConversationSink s;
    s.speak = [this](const std::string& sentence) {
      if (!first_sentence) return;
      first_sentence = false;
      speech::VoiceSettings v;
      auto stream = speech->start(sentence, v);
      if (!stream.ok()) return;
      auto first = stream.value()->next();
      std::lock_guard l(mu);
      if (first.ok() && first->has_value()) {
        got = true;
        at = Clock::now();
      }
      cv.notify_all();
    };
    return s;
  }
  Clock::time_point wait() {
    std::unique_lock l(mu);
    cv.wait_for(l, std::chrono::seconds(20), [&] { return got; });
    return at;
  }
  // After the answer is complete: the next answer's first sentence is measured.
  void reset() {
    std::lock_guard l(mu);
    got = false;
    first_sentence = true;
  }
};

}  // namespace

int main(int argc, char** argv) {
  int runs = argc > 1 ? std::atoi(argv[1]) : 20;
  auto speech = speech::make_speech_service({});
  if (!speech.ok()) {
    std::fprintf(stderr, "speech: %s\n", speech.status().message().c_str());
    return 1;
  }
  testing::FakeLlmServer llm;
  ChatClientOptions llm_opts;
  llm_opts.base_url = llm.base_url();
  llm_opts.model = "fake";
  llm_opts.allow_private = true;

  for (int builtin = 0; builtin < 2; ++builtin) {
    FirstAudio fa{speech->get()};
    ConversationOptions o{testdata::kSystemPrompt, std::nullopt, {}};
    if (!builtin) o.llm = llm_opts;
    Conversation c(o, fa.sink());
    for (const auto& k : testdata::kContext) c.add_context(k);
    Stats st;
    for (int i = 0; i < runs + 2; ++i) {
      const auto& q = testdata::kQuestions[i % testdata::kQuestions.size()];
      auto t0 = Clock::now();
      c.user_text(q.text);
      auto t1 = fa.wait();
      c.wait_idle();
      fa.reset();
      if (i >= 2) st.v.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());  // 2 warm-up
    }
    st.print(builtin ? "typed -> first audio, built-in responder"
                     : "typed -> first audio, fake streaming model");
  }

  // Spoken: the questions as the TTS says them, recognised from the detected turn.
  auto rec = Recognizer::create();
  if (!rec.ok()) {
    std::fprintf(stderr, "recognizer: %s\n", rec.status().message().c_str());
    return 1;
  }
  std::vector<std::string> domain = {testdata::kSystemPrompt};
  for (const auto& k : testdata::kContext) domain.push_back(k);
  (void)rec.value()->set_domain(domain);
  FirstAudio fa{speech->get()};
  ConversationOptions o{testdata::kSystemPrompt, llm_opts, {}};
  Conversation c(o, fa.sink());
  Stats recog, recog_cpu, stream_finish, stream_finish_cpu, feed_rtf, after, total;
  const TurnDetectorOptions vad;
  for (int i = 0; i < runs; ++i) {
    const auto& q = testdata::kQuestions[i % testdata::kQuestions.size()];
    speech::VoiceSettings v;
    v.output_rate = kRecognizerSampleRate;
    auto a = speech->get()->synthesize(q.text, v);
    std::vector<int16_t> mic(kRecognizerSampleRate / 2, 0);
    mic.insert(mic.end(), a->samples.begin(), a->samples.end());
    mic.insert(mic.end(), kRecognizerSampleRate, 0);
    // Streaming: the decoder is fed while the viewer speaks; only finish() is left at the end.
    TurnDetector sd(vad);
    bool in_turn = false;
    double feed_cpu = 0, fed_ms = 0;
    for (size_t off = 0; off < mic.size(); off += 320) {
      size_t n = std::min<size_t>(320, mic.size() - off);
      bool ended = false;
      for (auto& e : sd.push(mic.data() + off, n)) {
        if (e.kind == TurnEvent::kSpeechStarted) {
          (void)rec.value()->start();
          in_turn = true;
        } else {
          ended = true;
        }
      }
      if (in_turn) {
        double fc = thread_cpu_ms();
        (void)rec.value()->feed(mic.data() + off, n);
        feed_cpu += thread_cpu_ms() - fc;
        fed_ms += n * 1000.0 / kRecognizerSampleRate;
      }
      if (ended) {
        feed_rtf.v.push_back(fed_ms > 0 ? feed_cpu / fed_ms : 0);
        auto f0 = Clock::now();
        double c0 = thread_cpu_ms();
        (void)rec.value()->finish();
        stream_finish_cpu.v.push_back(thread_cpu_ms() - c0);
        stream_finish.v.push_back(ms_since(f0));
        break;
      }
    }
    // Batch: the whole turn decoded after it ended (what the answer below uses).
    TurnDetector d(vad);
    std::vector<int16_t> turn;
    for (size_t off = 0; off < mic.size() && turn.empty(); off += 320) {
      for (auto& e : d.push(mic.data() + off, std::min<size_t>(320, mic.size() - off))) {
        if (e.kind == TurnEvent::kTurnEnded) turn = std::move(e.audio);
      }
    }
    auto t0 = Clock::now();  // the detector has just decided the turn is over
    double c0 = thread_cpu_ms();
    auto heard = rec.value()->recognize(turn);
    recog_cpu.v.push_back(thread_cpu_ms() - c0);
    double r_ms = ms_since(t0);
    c.user_text(heard.ok() ? *heard : "");
    auto t1 = fa.wait();
    c.wait_idle();
    fa.reset();
    double after_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    recog.v.push_back(r_ms);
    after.v.push_back(after_ms);
    total.v.push_back(after_ms + vad.end_silence_ms);
  }
  recog.print("spoken: batch recognition of the turn (wall)");
  recog_cpu.print("spoken: batch recognition of the turn (CPU)");
  stream_finish.print("spoken: streaming recognition, finish at turn end (wall)");
  stream_finish_cpu.print("spoken: streaming recognition, finish at turn end (CPU)");
  std::printf("spoken: streaming recognition CPU per second of audio (real-time factor): p50 %.2f\n", [&] {
    auto v = feed_rtf.v;
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  }());
  after.print("spoken: turn detected -> first audio (recognition + answer)");
  char name[96];
  std::snprintf(name, sizeof name, "spoken: end of speech -> first audio (+%d ms end-of-turn)",
                vad.end_silence_ms);
  total.print(name);
  return 0;
}
