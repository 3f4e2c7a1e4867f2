// The `imago` CLI against a real imagod: the device flow end to end (approved through the
// dashboard's HTTP API as a signed-in member), the browser flow (the test plays the browser and
// calls the loopback callback), the 0600 file fallback when no keychain is there, logout revoking
// the key, and each command's happy and error paths.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <regex>
#include <sstream>
#include <thread>

#include "support/test_server.h"
#include "support/ws_client.h"

namespace imago::testing {
namespace {

namespace json = boost::json;
namespace fs = std::filesystem;

struct CliRun {
  int rc = -1;
  std::string out;
  std::string err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

class Cli {
 public:
  explicit Cli(const TestServer& s) : base_(s.url()), home_(make_temp_dir()) {}
  ~Cli() {
    std::error_code ec;
    fs::remove_all(home_, ec);
  }
  const std::string& home() const { return home_; }
  std::string credentials() const { return home_ + "/cfg/imago/credentials"; }

  // Runs imago with a clean environment: no session bus (so no keychain), our config dir.
  CliRun run(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {},
             const std::string& stdin_text = "") const {
    std::string cmd = "env -i PATH=/usr/bin:/bin HOME=" + quote(home_) +
                      " XDG_CONFIG_HOME=" + quote(home_ + "/cfg") + " IMAGO_BASE_URL=" + quote(base_) +
                      " IMAGO_BROWSER=none";
    for (const auto& [k, v] : env) cmd += " " + k + "=" + quote(v);
    cmd += " " + quote(IMAGO_CLI_PATH);
    for (const auto& a : args) cmd += " " + quote(a);
    const std::string id = std::to_string(counter_++);
    const std::string out = home_ + "/out" + id, err = home_ + "/err" + id, in = home_ + "/in" + id;
    std::ofstream(in) << stdin_text;
    cmd += " <" + quote(in) + " >" + quote(out) + " 2>" + quote(err);
    CliRun r;
    int st = std::system(cmd.c_str());
    r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }
  // Starts imago in the background; stderr is readable while it runs.
  std::future<CliRun> start(const std::vector<std::string>& args, std::string* err_path) const {
    *err_path = home_ + "/err" + std::to_string(counter_);
    return std::async(std::launch::async, [this, args] { return run(args); });
  }

 private:
  std::string base_;
  std::string home_;
  mutable int counter_ = 0;
};

std::string wait_for(const std::string& path, const std::regex& re, int ms = 10000) {
  for (int i = 0; i < ms / 50; ++i) {
    std::smatch m;
    std::string text = slurp(path);
    if (std::regex_search(text, m, re)) return m[1];
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return "";
}

struct Member {
  std::string account_id;
  std::string cookie;
  std::string csrf;
};

Member member(TestServer& s) {
  auto acct = s.create_account("pro", 5000, "cli");
  auto m = s.admin("POST", "/admin/v1/accounts/" + acct.account_id + "/members",
                   R"({"email": "cli@example.org", "password": "correct horse battery"})");
  EXPECT_EQ(m.status, 201) << m.body;
  auto r = s.post("/dashboard/api/sign-in",
                  R"({"email": "cli@example.org", "password": "correct horse battery"})");
  EXPECT_EQ(r.status, 200) << r.body;
  std::string c = r.header("set-cookie");
  c = c.substr(0, c.find(';'));
  return {acct.account_id, c, std::string(r.json().at("data").at("csrf_token").as_string())};
}

HttpResponse as(TestServer& s, const Member& m, const std::string& method, const std::string& path,
                const std::string& body) {
  HttpRequestOptions o;
  o.headers["Cookie"] = m.cookie;
  o.headers["X-CSRF-Token"] = m.csrf;
  return s.request(method, path, body, "", o);
}

std::string stored_secret(const Cli& cli, const TestServer& s) {
  auto v = json::parse(slurp(cli.credentials()));
  return std::string(v.at(s.url()).at("api_secret").as_string());
}

TEST(Cli, DeviceLoginEndToEndThenLogoutRevokesTheKey) {
  TestServer s;
  Cli cli(s);
  Member m = member(s);
  std::string err_path;
  auto login = cli.start({"login", "--device"}, &err_path);
  const std::string code = wait_for(err_path, std::regex("([B-DF-HJ-NP-TV-XZ]{4}-[B-DF-HJ-NP-TV-XZ]{4})"));
  ASSERT_FALSE(code.empty()) << slurp(err_path);
  EXPECT_NE(slurp(err_path).find(s.url() + "/device"), std::string::npos);
  auto ok =
      as(s, m, "POST", "/dashboard/api/device/approve", json::serialize(json::object{{"user_code", code}}));
  ASSERT_EQ(ok.status, 200) << ok.body;
  CliRun r = login.get();
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("Logged in: key cli@"), std::string::npos) << r.out;

  // No session bus: the key went to the file, readable only by the user.
  struct stat st {};
  ASSERT_EQ(stat(cli.credentials().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(stat(fs::path(cli.credentials()).parent_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  const std::string secret = stored_secret(cli, s);
  EXPECT_TRUE(s.post("/v1/validate", "", secret).json().at("valid").as_bool());

  CliRun who = cli.run({"whoami", "--json"});
  ASSERT_EQ(who.rc, 0) << who.err;
  auto me = json::parse(who.out).at("data");
  EXPECT_EQ(std::string(me.at("key_alias").as_string()).rfind("cli@", 0), 0u);
  EXPECT_EQ(me.at("user_id").as_string(), m.account_id);
  // The device key is marked as such in the dashboard.
  auto keys = as(s, m, "GET", "/dashboard/api/keys", "").json().at("data").as_array();
  bool device = false;
  for (const auto& k : keys) {
    if (k.at("id") == me.at("key_id")) device = k.at("device").as_bool();
  }
  EXPECT_TRUE(device);

  CliRun out = cli.run({"logout"});
  EXPECT_EQ(out.rc, 0) << out.err;
  EXPECT_NE(out.out.find("Revoked key"), std::string::npos);
  EXPECT_FALSE(s.post("/v1/validate", "", secret).json().at("valid").as_bool()) << "revoked on the server";
  EXPECT_EQ(slurp(cli.credentials()).find(secret), std::string::npos) << "removed locally";
  CliRun after = cli.run({"whoami"});
  EXPECT_EQ(after.rc, 3);
  EXPECT_NE(after.err.find("imago login"), std::string::npos);
  EXPECT_EQ(cli.run({"logout"}).rc, 1);
}

TEST(Cli, DeviceLoginDeniedInTheBrowserFails) {
  TestServer s;
  Cli cli(s);
  Member m = member(s);
  std::string err_path;
  auto login = cli.start({"login", "--device", "--json"}, &err_path);
  const std::string code = wait_for(err_path, std::regex("([B-DF-HJ-NP-TV-XZ]{4}-[B-DF-HJ-NP-TV-XZ]{4})"));
  ASSERT_FALSE(code.empty());
  as(s, m, "POST", "/dashboard/api/device/approve",
     json::serialize(json::object{{"user_code", code}, {"approve", false}}));
  CliRun r = login.get();
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("denied"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(cli.credentials()));
}

TEST(Cli, BrowserLoginThroughTheLoopbackCallback) {
  TestServer s;
  Cli cli(s);
  Member m = member(s);
  std::string err_path;
  auto login = cli.start({"login"}, &err_path);
  const std::string url = wait_for(err_path, std::regex("(http://\\S+/cli-login\\?\\S+)"));
  ASSERT_FALSE(url.empty()) << slurp(err_path);
  // IMAGO_BROWSER=none: the command prints the address and does not claim to open a browser.
  EXPECT_EQ(slurp(err_path).find("Opening your browser"), std::string::npos) << slurp(err_path);
  EXPECT_NE(slurp(err_path).find("Open this address in a browser"), std::string::npos) << slurp(err_path);
  auto q = [&](const std::string& name) {
    std::smatch mm;
    std::regex re("[?&]" + name + "=([^&]+)");
    return std::regex_search(url, mm, re) ? std::string(mm[1]) : std::string();
  };
  EXPECT_EQ(s.get(url.substr(s.url().size())).status, 200) << "the approval page exists";
  // Playing the browser: approve as the signed-in member, then follow the redirect.
  auto approve = as(s, m, "POST", "/dashboard/api/cli-login/approve",
                    json::serialize(json::object{{"challenge", q("challenge")},
                                                 {"hostname", q("hostname")},
                                                 {"port", std::stoi(q("port"))},
                                                 {"state", q("state")}}));
  ASSERT_EQ(approve.status, 200) << approve.body;
  const std::string redirect(approve.json().at("redirect_url").as_string());
  ASSERT_EQ(redirect.rfind("http://127.0.0.1:" + q("port") + "/callback?code=", 0), 0u) << redirect;
  // A callback with the wrong state is refused and the CLI keeps waiting.
  auto forged = http_request("GET", "http://127.0.0.1:" + q("port") + "/callback?code=x&state=wrong");
  EXPECT_EQ(forged.status, 400);
  auto cb = http_request("GET", redirect);
  EXPECT_EQ(cb.status, 200);
  EXPECT_NE(cb.body.find("signed in"), std::string::npos);
  CliRun r = login.get();
  ASSERT_EQ(r.rc, 0) << r.err;
  const std::string secret = stored_secret(cli, s);
  EXPECT_TRUE(s.post("/v1/validate", "", secret).json().at("valid").as_bool());
  // The code in the URL is useless on its own: redeeming it again (or without the verifier) fails.
  const std::string code =
      redirect.substr(redirect.find("code=") + 5, redirect.find("&state") - redirect.find("code=") - 5);
  auto again = s.post("/v1/cli/token",
                      json::serialize(json::object{{"code", code}, {"code_verifier", std::string(64, 'a')}}));
  EXPECT_EQ(again.status, 400);
}

TEST(Cli, EnvironmentSecretOverridesAndBadKeysFailClearly) {
  TestServer s;
  Cli cli(s);
  auto acct = s.create_account("pro", 1000, "env");
  CliRun none = cli.run({"credits"});
  EXPECT_EQ(none.rc, 3);
  CliRun who = cli.run({"whoami"}, {{"IMAGO_API_SECRET", acct.api_secret}});
  EXPECT_EQ(who.rc, 0) << who.err;
  EXPECT_NE(who.out.find("from environment"), std::string::npos) << who.out;
  CliRun bad = cli.run({"validate"}, {{"IMAGO_API_SECRET", "imago_sk_" + std::string(38, 'A')}});
  EXPECT_EQ(bad.rc, 1);
  EXPECT_EQ(bad.out, "invalid\n");
  CliRun unauthorized = cli.run({"credits"}, {{"IMAGO_API_SECRET", "imago_sk_" + std::string(38, 'A')}});
  EXPECT_EQ(unauthorized.rc, 1);
  EXPECT_NE(unauthorized.err.find("UNAUTHORIZED"), std::string::npos) << unauthorized.err;
  CliRun down =
      cli.run({"credits", "--base-url", "http://127.0.0.1:1"}, {{"IMAGO_API_SECRET", acct.api_secret}});
  EXPECT_EQ(down.rc, 1);
  EXPECT_NE(down.err.find("cannot reach the server"), std::string::npos) << down.err;
  EXPECT_EQ(cli.run({"frobnicate"}).rc, 2);
  EXPECT_EQ(cli.run({"credits", "--bogus"}).rc, 2);
  EXPECT_EQ(cli.run({"whoami", "--base-url", "ftp://x"}).rc, 2);
}

TEST(Cli, EveryCommandHasHelp) {
  TestServer s;
  Cli cli(s);
  CliRun top = cli.run({"--help"});
  EXPECT_EQ(top.rc, 0);
  for (const char* cmd : {"login", "logout", "whoami", "validate", "credits", "keys", "agents", "dynamics",
                          "live", "tts", "voices", "render", "video"}) {
    CliRun r = cli.run({cmd, "--help"});
    EXPECT_EQ(r.rc, 0) << cmd;
    EXPECT_NE(r.out.find("Usage: imago " + std::string(cmd)), std::string::npos) << cmd << ": " << r.out;
    EXPECT_NE(top.out.find(cmd), std::string::npos) << cmd << " is listed in imago --help";
  }
  EXPECT_EQ(cli.run({"agents"}).rc, 2);
  EXPECT_EQ(cli.run({"keys", "nope"}, {{"IMAGO_API_SECRET", "x"}}).rc, 2);
}

TEST(Cli, CommandsHappyAndErrorPaths) {
  TestServer s;
  Cli cli(s);
  auto acct = s.create_account("pro", 2000, "cmds");
  const std::map<std::string, std::string> env = {{"IMAGO_API_SECRET", acct.api_secret},
                                                  {"IMAGO_POLL_SECONDS", "1"}};
  auto ok = [&](const std::vector<std::string>& args) {
    CliRun r = cli.run(args, env);
    EXPECT_EQ(r.rc, 0) << args[0] << ": " << r.err;
    return r;
  };
  auto fails = [&](const std::vector<std::string>& args, const std::string& needle, int rc = 1) {
    CliRun r = cli.run(args, env);
    EXPECT_EQ(r.rc, rc) << args[0] << ": " << r.out << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  };

  EXPECT_EQ(ok({"validate"}).out, "valid\n");
  auto credits = json::parse(ok({"credits", "--json"}).out);
  EXPECT_EQ(credits.at("data").at("balance").as_int64(), 2000);
  EXPECT_NE(ok({"voices"}).out.find("M1"), std::string::npos);

  // keys
  auto created = json::parse(ok({"keys", "create", "ci", "--json"}).out).at("data");
  const std::string key_id(created.at("id").as_string());
  EXPECT_NE(ok({"keys", "list"}).out.find(key_id), std::string::npos);
  ok({"keys", "revoke", key_id});
  fails({"keys", "revoke", key_id}, "NOT_FOUND");
  fails({"keys", "create", ""}, "VALIDATION_ERROR");

  // agents: create from a local photo and wait (progress lines on a non-terminal)
  CliRun gen = ok({"agents", "create", "--image", "/usr/share/doc/opencv-doc/opencv4/html/face_swapped.jpg",
                   "--name", "Ada", "--agent-id", "cli-ada", "--wait"});
  EXPECT_NE(gen.err.find("100% ready"), std::string::npos) << gen.err;
  EXPECT_NE(gen.out.find("cli-ada is ready"), std::string::npos) << gen.out;
  fails({"agents", "create", "--image", "/nonexistent.jpg"}, "cannot read", 2);
  fails({"agents", "create", "--model", "turbo"}, "VALIDATION_ERROR");
  auto list = json::parse(ok({"agents", "list", "--json", "--status", "ready"}).out);
  EXPECT_EQ(list.at("pagination").at("total").as_int64(), 1);
  fails({"agents", "list", "--status", "bogus"}, "VALIDATION_ERROR");
  ok({"agents", "update-prompt", "cli-ada", "A calm guide."});
  auto got = json::parse(ok({"agents", "get", "cli-ada", "--json"}).out);
  EXPECT_EQ(got.at("data").at("system_prompt").as_string(), "A calm guide.");
  fails({"agents", "get", "nope"}, "NOT_FOUND");
  fails({"agents", "wait", "nope"}, "NOT_FOUND");

  // dynamics
  auto dyn = json::parse(ok({"dynamics", "get", "cli-ada", "--json"}).out);
  EXPECT_TRUE(dyn.at("data").at("url").is_null());
  ok({"dynamics", "enable", "cli-ada"});
  ok({"dynamics", "disable", "cli-ada"});
  fails({"dynamics", "generate", "nope"}, "NOT_FOUND");
  fails({"dynamics", "generate", "cli-ada", "--duration", "abc"}, "--duration", 2);

  // tts: to a file, and never to a terminal
  const std::string wav = cli.home() + "/hello.wav";
  ok({"tts", "Hello from the command line.", "-o", wav, "--voice", "F2"});
  EXPECT_EQ(slurp(wav).substr(0, 4), "RIFF");
  CliRun piped = cli.run({"tts", "-", "--language", "en"}, env, "Text from stdin.");
  EXPECT_EQ(piped.rc, 0) << piped.err;
  EXPECT_EQ(piped.out.substr(0, 4), "RIFF");
  fails({"tts", "x", "-o", cli.home() + "/bad.wav", "--voice-code", "00000000-0000-4000-8000-000000000000"},
        "VOICE_NOT_FOUND");
  EXPECT_FALSE(fs::exists(cli.home() + "/bad.wav"));

  // render locally from the downloaded model
  const std::string mp4 = cli.home() + "/ada.mp4";
  ok({"render", "cli-ada", "--text", "Hi.", "-o", mp4});
  EXPECT_GT(fs::file_size(mp4), 1000u);
  fails({"render", "nope", "--text", "Hi.", "-o", mp4}, "NOT_FOUND");

  // video: the server renders; create -o waits (plain progress lines) and downloads the MP4
  const std::string video = cli.home() + "/talk.mp4";
  CliRun made = ok({"video", "create", "cli-ada", "--text", "Hello from a video.", "-o", video});
  EXPECT_NE(made.err.find("completed"), std::string::npos) << made.err;
  EXPECT_NE(made.out.find("wrote " + video), std::string::npos) << made.out;
  EXPECT_EQ(slurp(video).substr(4, 4), "ftyp") << "an MP4";
  EXPECT_FALSE(fs::exists(video + ".part"));
  // From the WAV made above, without waiting; then wait, get and download by job id.
  auto job = json::parse(ok({"video", "create", "cli-ada", "--audio", wav, "--json"}).out);
  const std::string job_id(job.at("job_id").as_string());
  EXPECT_EQ(job.at("status").as_string(), "processing");
  auto waited = json::parse(ok({"video", "wait", job_id, "--json"}).out);
  EXPECT_EQ(waited.at("status").as_string(), "completed");
  EXPECT_NE(ok({"video", "get", job_id}).out.find("completed"), std::string::npos);
  const std::string video2 = cli.home() + "/from-audio.mp4";
  auto dl = json::parse(ok({"video", "download", job_id, "-o", video2, "--json"}).out);
  EXPECT_EQ(dl.at("bytes").as_int64(), static_cast<int64_t>(fs::file_size(video2)));
  EXPECT_GT(fs::file_size(video2), 1000u);
  fails({"video", "create", "nope", "--text", "Hi."}, "NOT_FOUND");
  fails({"video", "create", "cli-ada", "--text", std::string(5001, 'a')}, "VALIDATION_ERROR");
  fails({"video", "create", "cli-ada", "--audio", "/nonexistent.wav"}, "cannot read", 2);
  fails({"video", "create", "cli-ada"}, "exactly one of --text and --audio", 2);
  fails({"video", "get", "job_nope"}, "NOT_FOUND");
  fails({"video", "wait", "job_nope"}, "NOT_FOUND");
  fails({"video", "download", job_id}, "Usage: imago video", 2);

  // live: with no session running the server says so
  fails({"live", "speak", "cli-ada", "Hello"}, "NOT_FOUND");
  fails({"live", "speak", "cli-ada", "Hello"},
        "Start one by opening a viewer link:\n  imago live url cli-ada");
  // The viewer link carries a runtime token for the agent in its fragment.
  const std::string link = ok({"live", "url", "cli-ada"}).out;
  EXPECT_EQ(link.rfind(s.url() + "/embed/cli-ada#token=", 0), 0u) << link;
  EXPECT_NE(link.find("charged to your account"), std::string::npos) << link;
  fails({"live", "url", "no-such-agent"}, "NOT_FOUND");
  // ... and with a session running in a room, speak, context, trigger and rooms reach it.
  auto rt = s.post("/v1/runtime-tokens/request", R"({"agent_code": "cli-ada"})", acct.api_secret);
  ASSERT_EQ(rt.status, 200) << rt.body;
  WsClient::Options wo;
  wo.bearer = std::string(rt.json().at("data").at("token").as_string());
  auto ws = WsClient::connect(s.port(), "/v1/runtime/rooms/cli-room?agent_code=cli-ada", wo);
  ASSERT_TRUE(ws);
  ASSERT_TRUE(ws->read_event("session.started"));
  EXPECT_EQ(ok({"live", "speak", "cli-ada", "Hello from the CLI.", "--room", "cli-room"}).out,
            "delivered to 1 room(s)\n");
  EXPECT_TRUE(ws->read_event("speech.started", 30000)) << "the session speaks";
  ok({"live", "context", "cli-ada", "The visitor is called Ada.", "--room", "cli-room"});
  auto trig =
      json::parse(ok({"live", "trigger", "cli-ada", "mini_wave_hello", "--room", "cli-room", "--json"}).out);
  EXPECT_EQ(trig.at("delivered_to_rooms").as_int64(), 1);
  EXPECT_FALSE(trig.at("animation_triggered").as_bool()) << "dynamics are off";
  fails({"live", "trigger", "cli-ada", "moonwalk", "--room", "cli-room"}, "VALIDATION_ERROR");
  fails({"live", "speak", "cli-ada", "Hello", "--room", "other-room"}, "NOT_FOUND");
  const std::string table = ok({"live", "rooms"}).out;
  EXPECT_EQ(table.rfind("ROOM ", 0), 0u) << table;
  EXPECT_NE(table.find("AGENT"), std::string::npos) << table;
  EXPECT_NE(table.find("\ncli-room  "), std::string::npos) << table;
  auto rooms = json::parse(ok({"live", "rooms", "--json"}).out).at("data").as_array();
  ASSERT_EQ(rooms.size(), 1u);
  EXPECT_EQ(rooms[0].at("room_id").as_string(), "cli-room");
  EXPECT_EQ(rooms[0].at("context_items").as_int64(), 1);
  EXPECT_EQ(s.del("/v1/rooms/cli-room", acct.api_secret).status, 200);
  ws.reset();

  ok({"agents", "delete", "cli-ada"});
  fails({"agents", "delete", "cli-ada"}, "NOT_FOUND");
}

}  // namespace
}  // namespace imago::testing
