// Speech over real HTTP (SPEC 4.13-4.16, 2.3-2.5): every voice, every axis direction, speed,
// languages, formats, streaming frames, voice codes across accounts, queue-full 503, size caps
// and the rate-limit tier. Audio properties are measured on the returned audio.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <optional>
#include <thread>

#include "support/audio_measure.h"
#include "support/test_server.h"

namespace imago::testing {
namespace {

namespace json = boost::json;

// ---------- audio measurements (independent of the server's own code) ----------

uint32_t u32(const std::string& b, size_t i) {
  return static_cast<uint32_t>(static_cast<unsigned char>(b[i])) |
         static_cast<uint32_t>(static_cast<unsigned char>(b[i + 1])) << 8 |
         static_cast<uint32_t>(static_cast<unsigned char>(b[i + 2])) << 16 |
         static_cast<uint32_t>(static_cast<unsigned char>(b[i + 3])) << 24;
}

// Parses a RIFF/WAVE body, checking that the header carries the real sizes.
Pcm parse_wav(const std::string& b) {
  Pcm p;
  EXPECT_GE(b.size(), 44u);
  if (b.size() < 44) return p;
  EXPECT_EQ(b.substr(0, 4), "RIFF");
  EXPECT_EQ(b.substr(8, 4), "WAVE");
  EXPECT_EQ(u32(b, 4), b.size() - 8) << "RIFF size";
  EXPECT_EQ(u32(b, 40), b.size() - 44) << "data size";
  p.rate = static_cast<int>(u32(b, 24));
  p.s = samples_of(b.substr(44));
  return p;
}

// Magnitude-weighted spectral centroid over non-silent 512-sample frames (plain DFT).
double centroid(const Pcm& p) {
  const int n = 512;
  std::vector<double> cosv(n * n / 2), sinv(n * n / 2);
  double wsum = 0, total = 0;
  std::vector<double> x(n);
  for (size_t st = 0; st + n <= p.s.size(); st += n) {
    double e = 0;
    for (int i = 0; i < n; ++i) e += double(p.s[st + i]) * p.s[st + i];
    if (std::sqrt(e / n) < 330) continue;
    for (int i = 0; i < n; ++i) x[i] = p.s[st + i] * (0.5 - 0.5 * std::cos(2 * M_PI * i / (n - 1)));
    for (int k = 1; k < n / 2; ++k) {
      double re = 0, im = 0;
      for (int i = 0; i < n; ++i) {
        double a = 2 * M_PI * k * i / n;
        re += x[i] * std::cos(a);
        im -= x[i] * std::sin(a);
      }
      double mag = std::hypot(re, im);
      wsum += mag * k * double(p.rate) / n;
      total += mag;
    }
  }
  return total > 0 ? wsum / total : 0;
}

// Seconds between the first and last sample above -40 dBFS.
double active_duration(const Pcm& p) {
  auto loud = [](int16_t v) { return std::abs(int(v)) > 330; };
  auto a = std::find_if(p.s.begin(), p.s.end(), loud);
  if (a == p.s.end()) return 0;
  auto b = std::find_if(p.s.rbegin(), p.s.rend(), loud);
  return double(std::distance(a, b.base())) / p.rate;
}

// Decodes any container with ffmpeg to 24 kHz mono s16 and returns its duration.
double decoded_duration(const std::string& bytes, const std::string& ext, const std::string& in_opts = "") {
  auto path =
      std::filesystem::temp_directory_path() / ("imago-speech-api-" + std::to_string(getpid()) + "." + ext);
  {
    std::ofstream f(path, std::ios::binary);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  std::string cmd =
      "ffmpeg -v error " + in_opts + " -i " + path.string() + " -f s16le -ac 1 -ar 24000 - | wc -c";
  FILE* p = popen(cmd.c_str(), "r");
  long n = -1;
  if (p) {
    if (std::fscanf(p, "%ld", &n) != 1) n = -1;
    pclose(p);
  }
  std::filesystem::remove(path);
  return n < 0 ? -1 : n / 2.0 / 24000.0;
}

// ---------- helpers ----------

class Speech : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new TestServer();
    account_ = new TestAccount(server_->create_account("enterprise", 0, "speech"));
  }
  static void TearDownTestSuite() {
    delete account_;
    delete server_;
  }
  static TestServer& s() { return *server_; }
  static const std::string& secret() { return account_->api_secret; }

  static HttpResponse tts(const json::object& body, const std::string& key = "") {
    return s().post("/v1/tts", json::serialize(body), key.empty() ? secret() : key);
  }
  static Pcm tts_wav(const json::object& body) {
    auto r = tts(body);
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.header("content-type"), "audio/wav");
    return parse_wav(r.body);
  }
  static std::string error_code(const HttpResponse& r) {
    auto j = r.json();
    if (!j.is_object() || !j.as_object().contains("error")) return "";
    return std::string(j.at("error").at("code").as_string());
  }

  static TestServer* server_;
  static TestAccount* account_;
};
TestServer* Speech::server_ = nullptr;
TestAccount* Speech::account_ = nullptr;

const char* kSentence = "The quick brown fox jumps over the lazy dog, and then it rests in the shade.";

// ---------- /v1/tts ----------

TEST_F(Speech, DefaultIsACompleteWav) {
  auto r = tts({{"text", "Hello world. This is Imago speaking."}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.header("content-type"), "audio/wav");
  Pcm p = parse_wav(r.body);
  EXPECT_EQ(p.rate, 22050);
  EXPECT_GT(active_duration(p), 1.0);
  EXPECT_GT(median_f0(p), 60);
}

TEST_F(Speech, PcmFormatCarriesTheRateInAHeader) {
  auto r = tts({{"text", "Raw samples please."}, {"format", "pcm_s16le"}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.header("x-sample-rate"), "22050");
  EXPECT_NE(r.body.substr(0, 4), "RIFF");
  EXPECT_EQ(r.body.size() % 2, 0u);
  Pcm p{22050, samples_of(r.body)};
  EXPECT_GT(active_duration(p), 0.5);
}

TEST_F(Speech, EveryBuiltinVoiceIsDistinct) {
  std::vector<std::string> ids = {"M1", "M2", "M3", "M4", "M5", "F1", "F2", "F3", "F4", "F5"};
  std::vector<std::pair<double, double>> m;
  for (const auto& id : ids) {
    Pcm p = tts_wav({{"text", kSentence}, {"voice", id}, {"speed", 1.0}});
    m.emplace_back(median_f0(p), centroid(p));
    EXPECT_GT(m.back().first, 60) << id;
  }
  for (size_t i = 0; i < m.size(); ++i) {
    for (size_t j = i + 1; j < m.size(); ++j) {
      double df = std::abs(m[i].first - m[j].first) / std::min(m[i].first, m[j].first);
      double dc = std::abs(m[i].second - m[j].second) / std::min(m[i].second, m[j].second);
      EXPECT_TRUE(df > 0.05 || dc > 0.05) << ids[i] << "/" << ids[j] << " F0 " << df << " centroid " << dc;
    }
  }
}

TEST_F(Speech, EveryAxisMovesItsFigureMonotonically) {
  auto at = [&](const char* axis, double v) {
    return tts_wav({{"text", kSentence}, {"voice", "M1"}, {"speed", 1.0}, {"axes", {{axis, v}}}});
  };
  std::vector<Pcm> pitch, gender, rate, bright;
  for (double v : {-0.3, 0.0, 0.3}) {
    pitch.push_back(at("pitch", v));
    gender.push_back(at("gender", v));
    rate.push_back(at("rate", v));
    bright.push_back(at("brightness", v));
  }
  for (int i = 0; i < 2; ++i) {
    EXPECT_GT(median_f0(pitch[i + 1]), median_f0(pitch[i]) * 1.05) << "pitch " << i;
    EXPECT_GT(median_f0(gender[i + 1]), median_f0(gender[i]) * 1.05) << "gender F0 " << i;
    EXPECT_GT(centroid(gender[i + 1]), centroid(gender[i]) * 1.02) << "gender formants " << i;
    EXPECT_LT(active_duration(rate[i + 1]), active_duration(rate[i]) * 0.95) << "rate " << i;
    EXPECT_GT(centroid(bright[i + 1]), centroid(bright[i]) * 1.05) << "brightness " << i;
  }
}

TEST_F(Speech, SpeedScalesDurationWithoutChangingPitch) {
  Pcm base = tts_wav({{"text", kSentence}, {"speed", 1.0}});
  double f0 = median_f0(base);
  for (double speed : {0.7, 1.05, 2.0}) {
    Pcm p = tts_wav({{"text", kSentence}, {"speed", speed}});
    EXPECT_NEAR(p.duration() * speed / base.duration(), 1.0, 0.05) << speed;
    EXPECT_NEAR(median_f0(p) / f0, 1.0, 0.05) << speed;
  }
  // Default speed is 1.05.
  Pcm d = tts_wav({{"text", kSentence}});
  EXPECT_NEAR(d.duration() * 1.05 / base.duration(), 1.0, 0.05);
  for (double bad : {0.69, 2.01, -1.0}) {
    auto r = tts({{"text", "x"}, {"speed", bad}});
    EXPECT_EQ(r.status, 400) << bad;
    EXPECT_EQ(error_code(r), "VALIDATION_ERROR");
  }
}

TEST_F(Speech, LanguagesListedAndSpoken) {
  auto v = s().get("/v1/voices", secret());
  ASSERT_EQ(v.status, 200);
  const json::value vj = v.json();
  const auto& langs = vj.at("languages").as_array();
  EXPECT_GE(langs.size(), 30u);
  std::set<std::string> codes;
  for (const auto& l : langs) codes.insert(std::string(l.at("code").as_string()));
  for (const char* c : {"en", "de", "fr", "es", "ru", "ja", "hi", "ar", "no"})
    EXPECT_TRUE(codes.count(c)) << c;
  // Not read correctly by espeak-ng here: not listed, and refused.
  EXPECT_FALSE(codes.count("zh"));
  for (const auto& l : langs) {
    if (l.at("code") == "ja") {
      EXPECT_NE(std::string(l.at("note").as_string()).find("kana"), std::string::npos);
    }
  }
  auto zh = tts({{"text", "你好，很高兴认识你。"}, {"language", "zh"}});
  EXPECT_EQ(zh.status, 400);
  EXPECT_EQ(error_code(zh), "VALIDATION_ERROR");
  auto kanji = tts({{"text", "私は日本語を話します"}, {"language", "ja"}});
  EXPECT_EQ(kanji.status, 400);
  EXPECT_EQ(error_code(kanji), "VALIDATION_ERROR");
  std::vector<std::pair<std::string, std::string>> samples = {{"de", "Guten Tag, wie geht es Ihnen?"},
                                                              {"fr", "Bonjour, comment allez-vous ?"},
                                                              {"ja", "こんにちは、げんきですか。"},
                                                              {"ru", "Здравствуйте, как дела?"},
                                                              {"ar", "مرحبا، كيف حالك؟"}};
  for (const auto& [code, text] : samples) {
    Pcm p = tts_wav({{"text", text}, {"language", code}});
    EXPECT_GT(active_duration(p), 0.5) << code;
  }
  auto bad = tts({{"text", "hello"}, {"language", "xx"}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(error_code(bad), "VALIDATION_ERROR");
}

TEST_F(Speech, TotalStepsAccepted1To100) {
  for (int steps : {1, 5, 12, 100})
    EXPECT_EQ(tts({{"text", "Steps."}, {"total_steps", steps}}).status, 200) << steps;
  for (int steps : {0, 101})
    EXPECT_EQ(tts({{"text", "Steps."}, {"total_steps", steps}}).status, 400) << steps;
}

TEST_F(Speech, ValidationErrors) {
  auto post_raw = [&](const std::string& body) { return s().post("/v1/tts", body, secret()); };
  for (const std::string& body :
       {std::string("{not json"), std::string("[]"), std::string("{}"), std::string(R"({"text": 5})"),
        std::string(R"({"text": ""})"), std::string(R"({"text": "  \n\t "})"),
        std::string(R"({"text": "hi", "voice": "Z9"})"),
        std::string(R"({"text": "hi", "axes": {"loudness": 0.1}})"),
        std::string(R"({"text": "hi", "axes": {"pitch": 0.9}})"),
        std::string(R"({"text": "hi", "axes": {"pitch": "high"}})"),
        std::string(R"({"text": "hi", "axes": [1]})"), std::string(R"({"text": "hi", "format": "ogg"})")}) {
    auto r = post_raw(body);
    EXPECT_EQ(r.status, 400) << body;
    EXPECT_EQ(error_code(r), "VALIDATION_ERROR") << body;
    auto j = r.json();
    EXPECT_EQ(j.at("status").as_string(), "error") << body;
    EXPECT_EQ(j.at("status_code").as_int64(), 400) << body;
  }
  EXPECT_EQ(s().post("/v1/tts", R"({"text":"hi"})", "").status, 401);
}

// Reads a chunked response incrementally and records when each byte arrived.
struct StreamCapture {
  int status = 0;
  std::string headers;
  std::string body;             // de-chunked
  std::vector<double> arrival;  // seconds since the request was sent, per body byte
};

StreamCapture post_streaming(int port, const std::string& path, const std::string& body,
                             const std::string& secret) {
  StreamCapture c;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return c;
  }
  std::string req =
      "POST " + path +
      " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\napi-secret: " + secret +
      "\r\nConnection: close\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  auto t0 = std::chrono::steady_clock::now();
  send(fd, req.data(), req.size(), 0);
  std::string raw;
  std::vector<double> when;
  char buf[65536];
  for (;;) {
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    raw.append(buf, static_cast<size_t>(n));
    when.insert(when.end(), static_cast<size_t>(n), t);
  }
  close(fd);
  size_t he = raw.find("\r\n\r\n");
  if (he == std::string::npos) return c;
  c.headers = raw.substr(0, he);
  c.status = std::atoi(raw.substr(9, 3).c_str());
  size_t i = he + 4;
  bool chunked = c.headers.find("chunked") != std::string::npos;
  if (!chunked) {
    c.body = raw.substr(i);
    c.arrival.assign(when.begin() + static_cast<long>(i), when.end());
    return c;
  }
  while (i < raw.size()) {
    size_t le = raw.find("\r\n", i);
    if (le == std::string::npos) break;
    size_t len = std::stoul(raw.substr(i, le - i), nullptr, 16);
    if (len == 0) break;
    c.body += raw.substr(le + 2, len);
    c.arrival.insert(c.arrival.end(), when.begin() + static_cast<long>(le + 2),
                     when.begin() + static_cast<long>(le + 2 + len));
    i = le + 2 + len + 2;
  }
  return c;
}

struct Frame {
  char type;
  std::string payload;
  size_t offset;  // of the frame in the body
};
std::vector<Frame> frames_of(const std::string& b) {
  std::vector<Frame> f;
  size_t i = 0;
  while (i + 5 <= b.size()) {
    uint32_t len = u32(b, i);
    if (i + 5 + len > b.size()) {
      ADD_FAILURE() << "truncated frame";
      break;
    }
    f.push_back({b[i + 4], b.substr(i + 5, len), i});
    i += 5 + len;
  }
  EXPECT_EQ(i, b.size()) << "trailing bytes";
  return f;
}

TEST_F(Speech, StreamSendsLengthPrefixedFramesSentenceBySentence) {
  std::string text;
  for (int i = 0; i < 6; ++i) {
    text += "This is sentence number " + std::to_string(i + 1) +
            ", and it is long enough to take the engine a little while to say. ";
  }
  json::object body{{"text", text}, {"stream", true}};
  auto c = post_streaming(s().port(), "/v1/tts", json::serialize(body), secret());
  ASSERT_EQ(c.status, 200) << c.headers << c.body;
  auto f = frames_of(c.body);
  ASSERT_GE(f.size(), 3u);
  EXPECT_EQ(f.front().type, 'H');
  ASSERT_EQ(f.front().payload.size(), 8u);
  EXPECT_EQ(u32(f.front().payload, 0), 22050u);
  EXPECT_EQ(f.front().payload[4], 1);   // channels
  EXPECT_EQ(f.front().payload[6], 16);  // bits
  EXPECT_EQ(f.back().type, 'E');
  size_t audio_frames = 0, samples = 0;
  for (const auto& fr : f) {
    if (fr.type != 'A') continue;
    ++audio_frames;
    samples += fr.payload.size() / 2;
  }
  // One per sentence, and the first sentence in chunks when it has a pause to cut at
  // (docs/speech.md, "Architecture").
  EXPECT_GE(audio_frames, 6u);
  EXPECT_EQ(u32(f.back().payload, 0), samples);
  // That the first sentence leaves before the last is made is a latency property: measured by
  // bench/speech_benchmark.cpp (time to first streamed audio), not asserted here, since a loaded
  // machine can deliver every frame in one read.
  // Streamed audio matches the non-streamed audio in length (the same synthesis; espeak-ng
  // carries a little state between utterances, so not bit for bit).
  Pcm whole = tts_wav({{"text", text}});
  EXPECT_NEAR(double(samples), double(whole.s.size()), whole.s.size() * 0.01);
}

// ---------- voices, studio, voice codes ----------

TEST_F(Speech, VoicesListsBuiltinsAndCustomVoices) {
  auto r = s().get("/v1/voices", secret());
  ASSERT_EQ(r.status, 200);
  std::vector<std::string> builtin;
  const json::value rj = r.json();
  for (const auto& v : rj.at("voices").as_array()) {
    if (v.at("kind").as_string() == "builtin") builtin.push_back(std::string(v.at("id").as_string()));
  }
  EXPECT_EQ(builtin, (std::vector<std::string>{"M1", "M2", "M3", "M4", "M5", "F1", "F2", "F3", "F4", "F5"}));
}

TEST_F(Speech, AxesReportsRangesAndComputedAnchors) {
  auto r = s().get("/v1/studio/axes", secret());
  ASSERT_EQ(r.status, 200);
  const json::value rj = r.json();
  const auto& axes = rj.at("axes").as_array();
  ASSERT_EQ(axes.size(), 4u);
  std::vector<std::string> names;
  for (const auto& a : axes) {
    names.push_back(std::string(a.at("name").as_string()));
    EXPECT_LT(a.at("suggested_min").as_double(), 0);
    EXPECT_GT(a.at("suggested_max").as_double(), 0);
    EXPECT_EQ(a.at("anchor_projections").as_object().size(), 10u);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"gender", "pitch", "rate", "brightness"}));
  // Gender anchors: every female voice sits above every male voice.
  const auto& g = axes[0].at("anchor_projections").as_object();
  double max_m = -9, min_f = 9;
  for (const auto& kv : g) {
    double x = kv.value().as_double();
    if (kv.key()[0] == 'M')
      max_m = std::max(max_m, x);
    else
      min_f = std::min(min_f, x);
  }
  EXPECT_LT(max_m, min_f);
}

TEST_F(Speech, VoiceCodeLifecycle) {
  auto created = s().post(
      "/v1/studio/voices",
      R"({"name":"Narrator","base_voice":"M1","axes":{"pitch":0.25},"description":"warm"})", secret());
  ASSERT_EQ(created.status, 201) << created.body;
  std::string code(created.json().at("voice_code").as_string());
  EXPECT_EQ(code.size(), 36u);
  EXPECT_EQ(created.json().at("axes").at("pitch").as_double(), 0.25);

  // Listed in /v1/voices as custom, and in the studio list.
  auto voices = s().get("/v1/voices", secret());
  bool listed = false;
  const json::value vj = voices.json();
  for (const auto& v : vj.at("voices").as_array()) {
    if (v.at("id").as_string() == code) listed = v.at("kind").as_string() == "custom";
  }
  EXPECT_TRUE(listed);
  EXPECT_EQ(s().get("/v1/studio/voices", secret()).json().at("voices").as_array().size() >= 1, true);
  EXPECT_EQ(s().get("/v1/studio/voices/" + code, secret()).status, 200);

  // The code speaks with its tuning; inline axes are ignored; voice_code beats voice.
  Pcm plain = tts_wav({{"text", kSentence}, {"voice", "M1"}, {"speed", 1.0}});
  Pcm coded = tts_wav({{"text", kSentence},
                       {"voice_code", code},
                       {"voice", "F3"},
                       {"speed", 1.0},
                       {"axes", {{"pitch", -0.3}}}});
  double f_plain = median_f0(plain), f_coded = median_f0(coded);
  EXPECT_NEAR(f_coded / f_plain, std::pow(2.0, 0.25), 0.06);

  // Re-tune: same code, new sound.
  auto put = s().put("/v1/studio/voices/" + code, R"({"axes":{"pitch":-0.25}})", secret());
  ASSERT_EQ(put.status, 200) << put.body;
  EXPECT_EQ(put.json().at("voice_code").as_string(), code);
  EXPECT_EQ(put.json().at("name").as_string(), "Narrator");
  Pcm retuned = tts_wav({{"text", kSentence}, {"voice_code", code}, {"speed", 1.0}});
  EXPECT_NEAR(median_f0(retuned) / f_plain, std::pow(2.0, -0.25), 0.06);

  // Bad updates are 400 and change nothing.
  EXPECT_EQ(s().put("/v1/studio/voices/" + code, R"({"base_voice":"X1"})", secret()).status, 400);
  EXPECT_EQ(s().put("/v1/studio/voices/" + code, R"({"axes":{"tone":0.1}})", secret()).status, 400);

  // Revoke: never resolves again, no fallback voice.
  auto del = s().del("/v1/studio/voices/" + code, secret());
  ASSERT_EQ(del.status, 200);
  auto gone = tts({{"text", "hi"}, {"voice_code", code}});
  EXPECT_EQ(gone.status, 404);
  EXPECT_EQ(error_code(gone), "VOICE_NOT_FOUND");
  EXPECT_EQ(error_code(s().get("/v1/studio/voices/" + code, secret())), "VOICE_NOT_FOUND");
  EXPECT_EQ(s().del("/v1/studio/voices/" + code, secret()).status, 404);
}

TEST_F(Speech, VoiceCodesAreAccountScoped) {
  auto created = s().post("/v1/studio/voices", R"({"name":"Mine","base_voice":"F2"})", secret());
  ASSERT_EQ(created.status, 201);
  std::string code(created.json().at("voice_code").as_string());
  TestAccount other = s().create_account("enterprise", 0, "other");
  auto r = tts({{"text", "hi"}, {"voice_code", code}}, other.api_secret);
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(error_code(r), "VOICE_NOT_FOUND");
  EXPECT_EQ(error_code(s().get("/v1/studio/voices/" + code, other.api_secret)), "VOICE_NOT_FOUND");
  EXPECT_EQ(s().put("/v1/studio/voices/" + code, R"({"name":"x"})", other.api_secret).status, 404);
  EXPECT_EQ(s().del("/v1/studio/voices/" + code, other.api_secret).status, 404);
  const json::value oj = s().get("/v1/voices", other.api_secret).json();
  for (const auto& v : oj.at("voices").as_array()) {
    EXPECT_NE(v.at("id").as_string(), code);
  }
  // Still the owner's.
  EXPECT_EQ(tts({{"text", "hi"}, {"voice_code", code}}).status, 200);
  // Unknown and malformed codes.
  EXPECT_EQ(error_code(tts({{"text", "hi"}, {"voice_code", "00000000-0000-4000-8000-000000000000"}})),
            "VOICE_NOT_FOUND");
  EXPECT_EQ(error_code(tts({{"text", "hi"}, {"voice_code", "not-a-uuid"}})), "VOICE_NOT_FOUND");
}

TEST_F(Speech, StudioValidatesAndPreviews) {
  EXPECT_EQ(s().post("/v1/studio/voices", R"({"base_voice":"M1"})", secret()).status, 400);
  EXPECT_EQ(s().post("/v1/studio/voices", R"({"name":"x"})", secret()).status, 400);
  EXPECT_EQ(s().post("/v1/studio/voices", R"({"name":"x","base_voice":"M9"})", secret()).status, 400);
  EXPECT_EQ(
      s().post("/v1/studio/voices", R"({"name":"x","base_voice":"M1","axes":{"rate":0.7}})", secret()).status,
      400);
  auto p = s().post("/v1/studio/preview", R"({"base_voice":"F4","axes":{"brightness":0.2}})", secret());
  ASSERT_EQ(p.status, 200) << p.body;
  EXPECT_EQ(p.header("content-type"), "audio/wav");
  EXPECT_GT(active_duration(parse_wav(p.body)), 1.0);
  EXPECT_EQ(s().post("/v1/studio/preview", R"({"base_voice":"F4","axes":{"bright":0.2}})", secret()).status,
            400);
}

TEST_F(Speech, RateLimitTierIsWriteForTtsAndReadForVoices) {
  TestAccount free = s().create_account("free", 0, "free");
  auto r = s().post("/v1/tts", R"({"text":"Hi."})", free.api_secret);
  ASSERT_EQ(r.status, 200);
  if (!r.header("x-ratelimit-limit").empty()) {
    EXPECT_EQ(r.header("x-ratelimit-limit"), "30");
  }
  EXPECT_EQ(s().get("/v1/voices", free.api_secret).header("x-ratelimit-limit"), "120");
  int ok = 1, limited_at = -1;
  for (int i = 0; i < 40 && limited_at < 0; ++i) {
    auto x = s().post("/v1/tts", R"({"text":"Hi."})", free.api_secret);
    if (x.status == 200)
      ++ok;
    else if (x.status == 429)
      limited_at = i;
  }
  EXPECT_GE(ok, 30);
  EXPECT_LE(ok, 32);  // a token or two may refill while the loop runs (30/min)
  EXPECT_GE(limited_at, 0);
}

// ---------- OpenAI-compatible /v1/audio/speech ----------

HttpResponse openai(TestServer& srv, const json::object& body, const std::string& secret) {
  HttpRequestOptions o;
  o.headers["Authorization"] = "Bearer " + secret;
  return srv.request("POST", "/v1/audio/speech", json::serialize(body), "", o);
}

TEST_F(Speech, OpenAIFormatsDecodeToTheExpectedDuration) {
  const std::string input = "Testing every output format of the compatible endpoint.";
  Pcm ref = tts_wav({{"text", input}, {"voice", "F1"}, {"speed", 1.0}});
  const double expected = ref.duration();
  struct F {
    const char* fmt;
    const char* type;
    const char* ext;
    const char* in_opts;
    double tol;
  };
  for (const F& f : {F{"mp3", "audio/mpeg", "mp3", "", 0.1}, F{"opus", "audio/ogg", "ogg", "", 0.03},
                     F{"aac", "audio/aac", "aac", "", 0.1}, F{"flac", "audio/flac", "flac", "", 0.03},
                     F{"wav", "audio/wav", "wav", "", 0.03},
                     F{"pcm", "audio/pcm", "raw", "-f s16le -ar 24000 -ac 1", 0.03}}) {
    auto r =
        openai(s(), {{"model", "tts-1"}, {"input", input}, {"voice", "alloy"}, {"response_format", f.fmt}},
               secret());
    ASSERT_EQ(r.status, 200) << f.fmt << " " << r.body;
    EXPECT_EQ(r.header("content-type"), f.type);
    double d = decoded_duration(r.body, f.ext, f.in_opts);
    EXPECT_NEAR(d, expected, f.tol + 0.03) << f.fmt;
  }
  // Default format is mp3, default speed 1.0; the api-secret header works too.
  auto def =
      s().post("/v1/audio/speech",
               json::serialize(json::object{{"model", "x"}, {"input", "hi"}, {"voice", "M2"}}), secret());
  ASSERT_EQ(def.status, 200) << def.body;
  EXPECT_EQ(def.header("content-type"), "audio/mpeg");
  // speed 2.0 halves the duration.
  auto fast = openai(
      s(),
      {{"model", "tts-1"}, {"input", input}, {"voice", "alloy"}, {"response_format", "wav"}, {"speed", 2.0}},
      secret());
  ASSERT_EQ(fast.status, 200);
  EXPECT_NEAR(decoded_duration(fast.body, "wav") * 2 / expected, 1.0, 0.06);
}

TEST_F(Speech, OpenAISseStreamsDeltasAndDone) {
  auto r = openai(s(),
                  {{"model", "gpt-4o-mini-tts"},
                   {"input", "First sentence here. Second sentence there."},
                   {"voice", "nova"},
                   {"response_format", "mp3"},
                   {"stream_format", "sse"},
                   {"instructions", "Speak cheerfully."}},
                  secret());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.header("content-type").rfind("text/event-stream", 0), 0u);
  std::string mp3;
  int deltas = 0, done = 0;
  size_t i = 0;
  while ((i = r.body.find("data: ", i)) != std::string::npos) {
    size_t e = r.body.find("\n\n", i);
    auto ev = json::parse(r.body.substr(i + 6, e - i - 6));
    std::string type(ev.at("type").as_string());
    if (type == "speech.audio.delta") {
      ++deltas;
      EXPECT_EQ(done, 0);
      // Decode base64 with ffmpeg-independent code: small helper below.
      static const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
      std::string b64(ev.at("audio").as_string());
      int val = 0, bits = -8;
      for (char c : b64) {
        if (c == '=') break;
        val = (val << 6) + static_cast<int>(alphabet.find(c));
        bits += 6;
        if (bits >= 0) {
          mp3.push_back(static_cast<char>((val >> bits) & 0xFF));
          bits -= 8;
        }
      }
    } else if (type == "speech.audio.done") {
      ++done;
      EXPECT_TRUE(ev.as_object().contains("usage"));
    }
    i = e;
  }
  EXPECT_GE(deltas, 2);
  EXPECT_EQ(done, 1);
  EXPECT_GT(decoded_duration(mp3, "mp3"), 1.5);
}

TEST_F(Speech, OpenAIErrorsUseTheEnvelope) {
  std::string long_input(4097, 'a');
  struct C {
    json::object body;
    int status;
    const char* code;
  };
  for (const C& c :
       {C{{{"model", "m"}, {"input", long_input}, {"voice", "alloy"}}, 400, "VALIDATION_ERROR"},
        C{{{"model", "m"}, {"voice", "alloy"}}, 400, "VALIDATION_ERROR"},
        C{{{"model", "m"}, {"input", "hi"}, {"voice", "nobody"}}, 400, "VALIDATION_ERROR"},
        C{{{"model", "m"}, {"input", "hi"}, {"voice", "alloy"}, {"response_format", "ogg"}},
          400,
          "VALIDATION_ERROR"},
        C{{{"model", "m"}, {"input", "hi"}, {"voice", "alloy"}, {"speed", 4.5}}, 400, "VALIDATION_ERROR"},
        C{{{"model", "m"}, {"input", "hi"}, {"voice", "alloy"}, {"stream_format", "ws"}},
          400,
          "VALIDATION_ERROR"},
        C{{{"model", "m"}, {"input", "hi"}, {"voice", "00000000-0000-4000-8000-000000000000"}},
          404,
          "VOICE_NOT_FOUND"}}) {
    auto r = openai(s(), c.body, secret());
    EXPECT_EQ(r.status, c.status) << json::serialize(c.body).substr(0, 100);
    EXPECT_EQ(error_code(r), c.code);
    EXPECT_FALSE(std::string(r.json().at("error").at("message").as_string()).empty());
  }
  auto unauth = openai(s(), {{"model", "m"}, {"input", "hi"}, {"voice", "alloy"}}, "wrong");
  EXPECT_EQ(unauth.status, 401);
}

// ---------- limits that need their own server ----------

TEST(SpeechLimits, FullQueueIs503WithRetryAfter) {
  // A high audio cap so that the busy request below is allowed to run for a while.
  TestServer srv({"--tts-workers", "1", "--tts-queue", "0", "--tts-max-audio", "3600"});
  auto acct = srv.create_account("enterprise", 0);
  std::string text;
  // About 4000 characters, 4 minutes of audio: seconds of work for the only worker, well inside
  // the client's timeout on a loaded machine.
  for (int i = 0; i < 60; ++i) text += "This long request keeps the only synthesis worker busy for a while. ";
  auto long_request = [&] {
    return std::async(std::launch::async, [&] {
      return srv.post("/v1/tts", json::serialize(json::object{{"text", text}}), acct.api_secret);
    });
  };
  auto busy = long_request();
  // Whichever request is admitted first holds the only slot: a short one that gets in before the
  // long one makes the long one the refused one, and then the long one is sent again. No sleep
  // decides the order, so a loaded machine cannot fail this; bounded by the attempts.
  std::optional<HttpResponse> refused;
  for (int i = 0; i < 200 && !refused; ++i) {
    auto r = srv.post("/v1/tts", R"({"text":"Let me in."})", acct.api_secret);
    if (r.status == 503) refused = r;
    if (!refused && busy.wait_for(std::chrono::milliseconds(20)) == std::future_status::ready) {
      auto done = busy.get();
      if (done.status == 503) refused = done;
      busy = long_request();
    }
  }
  ASSERT_TRUE(refused) << "no request was ever refused with one worker and no queue";
  auto& r = *refused;
  auto j = r.json();
  EXPECT_EQ(j.at("error").at("code").as_string(), "TTS_BUSY");
  EXPECT_EQ(j.at("status_code").as_int64(), 503);
  EXPECT_EQ(r.header("retry-after"), "1");
  EXPECT_EQ(busy.get().status, 200);
  EXPECT_EQ(srv.post("/v1/tts", R"({"text":"Now it works."})", acct.api_secret).status, 200);
}

// One account holding its share of the synthesizer (--tts-account-queue) gets 429 with
// Retry-After; another account is still served meanwhile.
TEST(SpeechLimits, AnAccountBeyondItsShareIs429AndOthersAreServed) {
  TestServer srv({"--tts-workers", "1", "--tts-account-queue", "1", "--tts-max-audio", "3600"});
  auto flood = srv.create_account("enterprise", 0);
  auto other = srv.create_account("enterprise", 0);
  std::string text;
  for (int i = 0; i < 60; ++i) text += "This long request holds the account's only synthesis slot. ";
  auto long_request = [&] {
    return std::async(std::launch::async, [&] {
      return srv.post("/v1/tts", json::serialize(json::object{{"text", text}}), flood.api_secret);
    });
  };
  auto busy = long_request();
  // A short request that gets in before the long one is admitted passes and may make the long one
  // the refused one: then the long one is sent again. Bounded by the attempts.
  std::optional<HttpResponse> refused;
  for (int i = 0; i < 200 && !refused; ++i) {
    auto r = srv.post("/v1/tts", R"({"text":"Me again."})", flood.api_secret);
    if (r.status == 429) refused = r;
    if (!refused && busy.wait_for(std::chrono::milliseconds(20)) == std::future_status::ready) {
      auto done = busy.get();
      if (done.status == 429) refused = done;
      busy = long_request();
    }
  }
  ASSERT_TRUE(refused) << "the account's second request was never refused";
  EXPECT_EQ(refused->json().at("error").at("code").as_string(), "RATE_LIMITED");
  EXPECT_EQ(refused->json().at("status_code").as_int64(), 429);
  EXPECT_EQ(refused->header("retry-after"), "1");
  // Its share, not the route's rate limit.
  EXPECT_NE(std::string(refused->json().at("error").at("message").as_string()).find("share"),
            std::string::npos);
  EXPECT_EQ(srv.post("/v1/tts", R"({"text":"Another account."})", other.api_secret).status, 200);
  EXPECT_EQ(busy.get().status, 200);
}

TEST(SpeechLimits, AudioAndTextCapsAre400) {
  TestServer srv({"--tts-max-audio", "4", "--tts-max-chars", "500"});
  auto acct = srv.create_account("enterprise", 0);
  EXPECT_EQ(srv.post("/v1/tts", R"({"text":"Short and fine."})", acct.api_secret).status, 200);
  // A few emoji are spelled out as long names: far more than 4 s of audio from 30 characters.
  std::string emoji;
  for (int i = 0; i < 30; ++i) emoji += "\xF0\x9F\x98\x80";
  auto r = srv.post("/v1/tts", json::serialize(json::object{{"text", emoji}}), acct.api_secret);
  EXPECT_EQ(r.status, 400) << r.body.substr(0, 200);
  EXPECT_EQ(r.json().at("error").at("code").as_string(), "VALIDATION_ERROR");
  EXPECT_NE(std::string(r.json().at("error").at("message").as_string()).find("seconds"), std::string::npos);
  auto longtext =
      srv.post("/v1/tts", json::serialize(json::object{{"text", std::string(501, 'a')}}), acct.api_secret);
  EXPECT_EQ(longtext.status, 400);
  // Streaming reports the cap in an error frame after the audio already sent.
  auto c = post_streaming(srv.port(), "/v1/tts",
                          json::serialize(json::object{{"text", emoji}, {"stream", true}}), acct.api_secret);
  ASSERT_EQ(c.status, 200);
  auto f = frames_of(c.body);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f.back().type, 'X');
  EXPECT_NE(f.back().payload.find("VALIDATION_ERROR"), std::string::npos);
}

}  // namespace
}  // namespace imago::testing
