// Domain rules over real HTTP: unknown fields are refused before anything is charged, the
// OpenAI-compatible endpoint takes every field OpenAI documents, a retried generate with a custom
// agent_id replays, and deleting an agent whose generation has not started refunds it.
#include <gtest/gtest.h>

#include "fixtures/fixture.h"
#include "support/test_server.h"
#include "util/base64.h"

namespace imago::testing {
namespace {

namespace json = boost::json;

std::string error_code_of(const HttpResponse& r) {
  auto v = r.json();
  if (!v.is_object() || !v.as_object().contains("error")) return "";
  return str(v.at("error"), "code");
}
std::string error_message_of(const HttpResponse& r) {
  auto v = r.json();
  if (!v.is_object() || !v.as_object().contains("error")) return "";
  return str(v.at("error"), "message");
}

TEST(DomainRules, UnknownFieldsAreRefusedByNameAndNothingIsCharged) {
  TestServer s({"--job-workers", "1"});
  auto acct = s.create_account("enterprise", 1000);
  struct Case {
    const char* method;
    const char* path;
    const char* body;
    const char* field;
  } cases[] = {
      {"POST", "/v1/agent/generate", R"({"imgae": "https://example.invalid/a.png"})", "imgae"},
      {"POST", "/v1/agent/generate", R"({"prompt": "hi", "modle": "expression"})", "modle"},
      {"POST", "/v1/dynamics/generate", R"({"agent_id": "nope", "duraton": 3})", "duraton"},
      {"POST", "/v1/tts", R"({"text": "hello", "voise": "F1"})", "voise"},
      {"POST", "/v1/audio/speech", R"({"model": "tts-1", "input": "hi", "voice": "alloy", "sped": 1})",
       "sped"},
      {"POST", "/v1/keys", R"({"alias": "x", "scope": "all"})", "scope"},
      {"POST", "/v1/webhooks", R"({"url": "http://127.0.0.1:9/", "event": ["agent.ready"]})", "event"},
      {"POST", "/v1/studio/voices", R"({"name": "n", "base_voice": "F1", "pitchh": 1})", "pitchh"},
  };
  for (const auto& c : cases) {
    auto r = s.request(c.method, c.path, c.body, acct.api_secret);
    EXPECT_EQ(r.status, 400) << c.path << " " << r.body;
    EXPECT_EQ(error_code_of(r), "VALIDATION_ERROR") << c.path << " " << r.body;
    EXPECT_NE(error_message_of(r).find(std::string("'") + c.field + "'"), std::string::npos) << r.body;
  }
  EXPECT_EQ(balance_of(s, acct.api_secret), 1000);
  EXPECT_EQ(s.get("/v1/agents", acct.api_secret).json().at("pagination").at("total").to_number<int64_t>(), 0);
  // The admin API is held to the same rule.
  auto admin =
      s.admin("POST", "/admin/v1/accounts/" + acct.account_id + "/credits", R"({"amount": 5, "reasn": "x"})");
  EXPECT_EQ(admin.status, 400) << admin.body;
  EXPECT_EQ(balance_of(s, acct.api_secret), 1000);
}

TEST(DomainRules, OpenAiSpeechTakesEveryDocumentedFieldAndTheNewVoices) {
  TestServer s;
  auto acct = s.create_account("enterprise", 0);
  for (const char* voice : {"marin", "cedar", "alloy", "verse"}) {
    json::object body{{"model", "gpt-4o-mini-tts"},      {"input", "Hello there."},  {"voice", voice},
                      {"instructions", "Speak warmly."}, {"response_format", "wav"}, {"speed", 1.0},
                      {"stream_format", "audio"}};
    auto r = s.post("/v1/audio/speech", json::serialize(body), acct.api_secret);
    EXPECT_EQ(r.status, 200) << voice << " " << r.body.substr(0, 300);
    EXPECT_EQ(r.body.substr(0, 4), "RIFF") << voice;
  }
  // A voice given as an object names a voice code; an unknown one is the usual 404.
  auto obj =
      s.post("/v1/audio/speech",
             R"({"model": "tts-1", "input": "hi", "voice": {"id": "0b5c0b5c-0000-4000-8000-000000000009"}})",
             acct.api_secret);
  EXPECT_EQ(obj.status, 404) << obj.body;
}

TEST(DomainRules, RetriedGenerateWithCustomAgentIdReplaysAndDeletingUnstartedWorkRefunds) {
  // No job workers: the generation stays queued, so deleting it refunds the charge.
  TestServer s({"--no-workers"});
  auto acct = s.create_account("enterprise", 1000);
  const std::string body = R"({"agent_id": "my-retried-agent", "prompt": "Be kind."})";
  HttpRequestOptions keyed;
  keyed.headers["Idempotency-Key"] = "req-7";
  auto first = s.request("POST", "/v1/agent/generate", body, acct.api_secret, keyed);
  ASSERT_EQ(first.status, 200) << first.body;
  auto again = s.request("POST", "/v1/agent/generate", body, acct.api_secret, keyed);
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(str(again.json(), "agent_id"), "my-retried-agent");
  EXPECT_EQ(balance_of(s, acct.api_secret), 750);
  // Without the key the id is taken.
  EXPECT_EQ(s.post("/v1/agent/generate", body, acct.api_secret).status, 409);

  auto del = s.del("/v1/agent/my-retried-agent", acct.api_secret);
  ASSERT_EQ(del.status, 200) << del.body;
  EXPECT_EQ(balance_of(s, acct.api_secret), 1000);
}

HttpResponse upload_wav(const TestServer& s, const std::string& secret, size_t bytes) {
  std::string b = "----imagoQuotaBoundary";
  std::string wav = std::string("RIFF\0\0\0\0WAVEfmt ", 16) + std::string(bytes, '\0');
  std::string body = "--" + b + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\n" +
                     "Content-Type: application/octet-stream\r\n\r\n" + wav + "\r\n--" + b + "--\r\n";
  HttpRequestOptions o;
  o.content_type = "multipart/form-data; boundary=" + b;
  return s.request("POST", "/v1/files/upload", body, secret, o);
}

TEST(DomainRules, StorageQuotaRefusesUploadsAndGenerationsBeyondIt) {
  // Free plan lowered to 1 MB by the operator; enterprise keeps its default.
  TestServer s({"--storage-quota", "free=1", "--no-workers"});
  auto acct = s.create_account("free", 1000);
  auto first = upload_wav(s, acct.api_secret, 600'000);
  ASSERT_EQ(first.status, 200) << first.body;
  auto second = upload_wav(s, acct.api_secret, 600'000);
  EXPECT_EQ(second.status, 403) << second.body;
  EXPECT_EQ(error_code_of(second), "STORAGE_QUOTA_EXCEEDED") << second.body;
  // A generation whose inline input would pass the quota is refused before it is charged.
  std::string audio = std::string("RIFF\0\0\0\0WAVEfmt ", 16) + std::string(500'000, '\0');
  std::string b64 = base64_encode(audio);
  auto gen = s.post("/v1/agent/generate", json::serialize(json::object{{"audio", b64}}), acct.api_secret);
  EXPECT_EQ(gen.status, 403) << gen.body.substr(0, 300);
  EXPECT_EQ(error_code_of(gen), "STORAGE_QUOTA_EXCEEDED");
  EXPECT_EQ(balance_of(s, acct.api_secret), 1000);
  // Deleting the upload frees the space again.
  std::string id = str(first.json().at("data"), "id");
  ASSERT_FALSE(id.empty()) << first.body;
  EXPECT_EQ(s.del("/v1/files/" + id, acct.api_secret).status, 200);
  EXPECT_EQ(upload_wav(s, acct.api_secret, 600'000).status, 200);
  // Another plan is not affected by the free plan's quota.
  auto big = s.create_account("enterprise", 0);
  EXPECT_EQ(upload_wav(s, big.api_secret, 600'000).status, 200);
  EXPECT_EQ(upload_wav(s, big.api_secret, 600'000).status, 200);
  // An operator's bad quota flag stops the server with a clear message (checked by the unit tests
  // of limits/storage_quota.h); an enterprise account may carry its own quota.
  auto set = s.admin("PUT", "/admin/v1/accounts/" + big.account_id + "/plan",
                     R"({"plan": "enterprise", "limits": {"storage_mb": 1}})");
  ASSERT_EQ(set.status, 200) << set.body;
  auto over = upload_wav(s, big.api_secret, 10);
  EXPECT_EQ(over.status, 403) << over.body;
}

}  // namespace
}  // namespace imago::testing
