// The agent studio's calls over real HTTP (docs/api/agents.md): the free face check, the price
// list, and the agent's own knowledge, which a live session answers from.
#include <gtest/gtest.h>

#include <set>

#include "fixtures/fixture.h"
#include "support/test_server.h"
#include "support/ws_client.h"
#include "util/base64.h"

namespace imago::testing {
namespace {

namespace json = boost::json;

std::string error_code(const HttpResponse& r) {
  auto v = r.json();
  if (!v.is_object() || !v.as_object().contains("error")) return "";
  return std::string(v.at("error").at("code").as_string());
}

std::string image_body(const std::string& bytes) {
  return json::serialize(json::object{{"image", "data:image/jpeg;base64," + base64_encode(bytes)}});
}

HttpResponse upload_document(const TestServer& s, const std::string& secret, const std::string& code,
                             const std::string& filename, const std::string& bytes) {
  std::string b = "----imagoKnowledgeBoundary";
  std::string body = "--" + b + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" + filename +
                     "\"\r\nContent-Type: text/plain\r\n\r\n" + bytes + "\r\n--" + b + "--\r\n";
  HttpRequestOptions o;
  o.content_type = "multipart/form-data; boundary=" + b;
  return s.request("POST", "/v1/agent/" + code + "/knowledge", body, secret, o);
}

TEST(AgentStudio, TheFaceCheckShowsTheFaceOrRefusesAndNeverCharges) {
  TestServer s;
  auto acct = s.create_account("pro", 1000);
  const long long before = balance_of(s, acct.api_secret);

  auto r = s.post("/v1/studio/face-check", image_body(face_jpeg()), acct.api_secret);
  ASSERT_EQ(r.status, 200) << r.body;
  auto d = r.json().at("data").as_object();
  EXPECT_TRUE(d.at("face_found").as_bool());
  EXPECT_TRUE(d.at("reason").is_null());
  const double w = d.at("image").at("width").to_number<double>();
  const double fx = d.at("face").at("x").to_number<double>(),
               fw = d.at("face").at("width").to_number<double>();
  EXPECT_GT(fw, 0.1 * w);
  EXPECT_LE(fx + fw, w + 0.5);

  // The same picture as an upload of the account, by file id.
  auto up = s.post(
      "/v1/files/upload",
      json::serialize(json::object{{"file_data", base64_encode(faceless_png())}, {"file_name", "c.png"}}),
      acct.api_secret);
  ASSERT_EQ(up.status, 200) << up.body;
  r = s.post("/v1/studio/face-check",
             json::serialize(json::object{{"image", str(up.json().at("data"), "id")}}), acct.api_secret);
  ASSERT_EQ(r.status, 200) << r.body;
  d = r.json().at("data").as_object();
  EXPECT_FALSE(d.at("face_found").as_bool());
  EXPECT_EQ(d.at("reason").as_string(), "No face found in the image");
  EXPECT_TRUE(d.at("face").is_null());

  // Bad input: the error envelope, nothing charged.
  for (const char* body : {R"({})", R"({"image": 5})", R"({"image": "https://example.org/a.jpg"})",
                           R"({"image": "bm90IGFuIGltYWdl"})", R"({"image": "x", "extra": 1})"}) {
    r = s.post("/v1/studio/face-check", body, acct.api_secret);
    EXPECT_EQ(r.status, 400) << body << " " << r.body;
    EXPECT_EQ(error_code(r), "VALIDATION_ERROR") << body;
  }
  EXPECT_EQ(s.post("/v1/studio/face-check", image_body(face_jpeg())).status, 401);
  EXPECT_EQ(balance_of(s, acct.api_secret), before);
}

TEST(AgentStudio, PricingListsWhatGenerationVideosAndMinutesCost) {
  TestServer s;
  auto acct = s.create_account("free", 0);
  auto r = s.get("/v1/pricing", acct.api_secret);
  ASSERT_EQ(r.status, 200) << r.body;
  auto d = r.json().at("data");
  EXPECT_EQ(d.at("unit").as_string(), "credits");
  EXPECT_EQ(d.at("agent_generation").at("by_model").at("essence").as_int64(), 250);
  EXPECT_EQ(d.at("agent_generation").at("by_model").at("expression").as_int64(), 250);
  EXPECT_EQ(d.at("dynamics_generation").at("flat").as_int64(), 250);
  EXPECT_EQ(d.at("talking_video").at("rates").at("essence").as_int64(), 2);
  EXPECT_EQ(d.at("live_session").at("rates").at("camera_chat").as_int64(), 30);
  EXPECT_EQ(s.get("/v1/pricing").status, 401);
}

TEST(AgentStudio, KnowledgeIsAddedListedAndDeletedWithTheEnvelopeForBadInput) {
  TestServer s;
  auto acct = s.create_account("pro", 1000);
  auto other = s.create_account("pro", 1000);
  auto g =
      s.post("/v1/agent/generate", R"({"prompt":"You are Nora.","aspect_ratio":"1:1"})", acct.api_secret);
  ASSERT_EQ(g.status, 200) << g.body;
  const std::string code = str(g.json(), "agent_id");
  const long long before = balance_of(s, acct.api_secret);
  const std::string base = "/v1/agent/" + code + "/knowledge";

  auto a = s.post(base, R"({"title":"Hours","text":"The shop opens at nine."})", acct.api_secret);
  ASSERT_EQ(a.status, 201) << a.body;
  auto item = a.json().at("data");
  EXPECT_EQ(item.at("object").as_string(), "knowledge");
  EXPECT_EQ(item.at("title").as_string(), "Hours");
  EXPECT_EQ(item.at("bytes").as_int64(), 23);
  const std::string id(item.at("id").as_string());

  auto doc = upload_document(s, acct.api_secret, code, "menu.html", "<h1>Menu</h1><p>Soup &amp; bread.</p>");
  ASSERT_EQ(doc.status, 201) << doc.body;
  EXPECT_EQ(doc.json().at("data").at("title").as_string(), "menu.html");
  EXPECT_EQ(upload_document(s, acct.api_secret, code, "a.pdf", std::string("%PDF\0\1\2", 7)).status, 415);

  auto list = s.get(base, acct.api_secret);
  ASSERT_EQ(list.status, 200) << list.body;
  ASSERT_EQ(list.json().at("data").as_array().size(), 2u);
  // Oldest first; both were added within the same second, so their order is by id.
  std::set<std::string> ids;
  const json::value listed = list.json();
  for (const auto& k : listed.at("data").as_array()) ids.insert(std::string(k.at("id").as_string()));
  EXPECT_TRUE(ids.count(id));
  EXPECT_EQ(list.json().at("limits").at("bytes").as_int64(), 12000);
  EXPECT_EQ(list.json().at("limits").at("bytes_used").as_int64(), 23 + 18);
  // The text is the agent's file: its owner can read it.
  auto file = s.get("/v1/files/" + id + ".txt", acct.api_secret);
  EXPECT_EQ(file.status, 200);
  EXPECT_EQ(file.body, "The shop opens at nine.");

  for (const char* body : {R"({})", R"({"text": ""})", R"({"text": 5})", R"({"text":"x","txet":"y"})",
                           R"({"text":"x","title":""})"}) {
    auto r = s.post(base, body, acct.api_secret);
    EXPECT_EQ(r.status, 400) << body << " " << r.body;
    EXPECT_EQ(error_code(r), "VALIDATION_ERROR") << body;
  }
  auto too_much =
      s.post(base, json::serialize(json::object{{"text", std::string(12000, 'a')}}), acct.api_secret);
  EXPECT_EQ(too_much.status, 400) << too_much.body;
  // Another account's agent with the same code, or a missing one: 404.
  EXPECT_EQ(s.get(base, other.api_secret).status, 404);
  EXPECT_EQ(s.post(base, R"({"text":"x"})", other.api_secret).status, 404);
  EXPECT_EQ(s.del(base + "/" + id, other.api_secret).status, 404);
  EXPECT_EQ(s.get("/v1/agent/NOPE123/knowledge", acct.api_secret).status, 404);

  auto del = s.del(base + "/" + id, acct.api_secret);
  ASSERT_EQ(del.status, 200) << del.body;
  EXPECT_TRUE(del.json().at("deleted").as_bool());
  EXPECT_EQ(s.del(base + "/" + id, acct.api_secret).status, 404);
  EXPECT_EQ(s.get(base, acct.api_secret).json().at("data").as_array().size(), 1u);
  EXPECT_EQ(balance_of(s, acct.api_secret), before);  // knowledge is free
}

TEST(AgentStudio, ALiveSessionAnswersFromTheAgentsOwnKnowledge) {
  TestServer s;
  auto acct = s.create_account("enterprise", 5000);
  auto g = s.post("/v1/agent/generate",
                  R"({"prompt":"You are Nora, a guide at the city museum.","aspect_ratio":"1:1"})",
                  acct.api_secret);
  ASSERT_EQ(g.status, 200) << g.body;
  const std::string code = str(g.json(), "agent_id");
  ASSERT_TRUE(eventually(
      [&] { return str(s.get("/v1/agent/" + code, acct.api_secret).json().at("data"), "status") == "ready"; },
      120));
  auto k = upload_document(s, acct.api_secret, code, "facts.md",
                           "# Facts\n\nThe dinosaur hall is on the second floor.\n\nThe cafe serves soup.\n");
  ASSERT_EQ(k.status, 201) << k.body;

  std::string token =
      str(s.post("/v1/runtime-tokens/request", "", acct.api_secret).json().at("data"), "token");
  WsClient::Options o;
  o.bearer = token;
  auto ws = WsClient::connect(s.port(), "/v1/runtime/rooms/knows?agent_code=" + code, o);
  ASSERT_TRUE(ws);
  ASSERT_TRUE(ws->read_event("session.started"));
  ASSERT_TRUE(ws->send_text(R"({"type":"user_text","text":"Where is the dinosaur hall?"})"));
  std::string answer;
  for (int i = 0; i < 30 && answer.empty(); ++i) {
    auto m = ws->read(1000);
    if (!m || !m->text) continue;
    auto e = json::parse(m->data).as_object();
    if (e.at("type").as_string() == "transcript" && e.at("role").as_string() == "agent" &&
        e.at("final").as_bool())
      answer = std::string(e.at("text").as_string());
  }
  EXPECT_NE(answer.find("The dinosaur hall is on the second floor."), std::string::npos) << answer;
}

}  // namespace
}  // namespace imago::testing
