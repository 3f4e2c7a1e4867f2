#include "cli/commands.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "cli/client.h"
#include "cli/credentials.h"
#include "cli/login.h"
#include "util/base64.h"

namespace imago::cli {

namespace json = boost::json;

namespace {

const std::map<std::string, std::string>& helps() {
  static const std::map<std::string, std::string> h = {
      {"", R"(imago: the Imago command-line tool

Usage: imago [--base-url URL] [--json] COMMAND [ARGS]

Sign-in
  login [--device]     get a key for this device (browser, or a code typed in any browser)
  logout               revoke this device's key on the server and forget it
  whoami               who the stored key belongs to
  validate             check the key (POST /v1/validate)

Account
  credits              balance and minute estimates
  keys list|create|revoke

Agents
  agents list|get|create|wait|delete|update-prompt
  dynamics generate|get|enable|disable
  live speak|context|trigger|rooms|url

Speech and video
  tts TEXT             speech to a file or stdout (WAV; --stream for raw frames)
  voices               built-in and designed voices, languages
  video create|get|wait|download   talking videos rendered by the server (the video API)
  render CODE          download an agent's .imx model and render an MP4 locally

Global options
  --base-url URL       server (default $IMAGO_BASE_URL or http://127.0.0.1:8080)
  --json               print JSON instead of text
  --help               help for any command: imago agents --help

The key comes from $IMAGO_API_SECRET, else the OS keychain, else ~/.config/imago/credentials.
)"},
      {"login", R"(Usage: imago login [--device]

Creates a key for this device, aliased cli@<hostname>, and stores it in the OS keychain (or
~/.config/imago/credentials, mode 0600, when no keychain is available).

  (default)   opens the browser at the server's approval page and waits on 127.0.0.1 for the
              answer; the browser carries only a one-time code, redeemed with a verifier that
              never leaves this machine (PKCE)
  --device    for machines without a browser: shows a short code to type at <server>/device in
              any browser where you are signed in (RFC 8628), and polls until it is approved
  $IMAGO_BROWSER   the command that opens the page (default xdg-open; "none" only prints it)
)"},
      {"logout",
       "Usage: imago logout\n\nRevokes this device's key on the server and removes it from the "
       "keychain/file.\n"},
      {"whoami",
       "Usage: imago whoami\n\nShows the account, plan and key of the stored credential (GET /v1/me).\n"},
      {"validate",
       "Usage: imago validate\n\nPOST /v1/validate. Exit status 0 when the key is valid, 1 when not.\n"},
      {"credits",
       "Usage: imago credits\n\nCredit balance and how many minutes it buys (GET /v2/credit-summaries).\n"},
      {"keys", R"(Usage: imago keys list
       imago keys create ALIAS        prints the new secret once
       imago keys revoke KEY_ID
)"},
      {"agents", R"(Usage: imago agents list [--limit N] [--offset N] [--status STATUS]
       imago agents get CODE
       imago agents create [--prompt TEXT] [--image FILE|URL] [--video FILE|URL] [--audio FILE|URL]
                           [--name NAME] [--model essence|expression] [--aspect-ratio 16:9|9:16|1:1]
                           [--agent-id CODE] [--wait]          costs 250 credits
       imago agents wait CODE          polls every 5 seconds until ready or failed
       imago agents delete CODE
       imago agents update-prompt CODE PROMPT
)"},
      {"dynamics",
       R"(Usage: imago dynamics generate AGENT [--duration S] [--image-url URL]   costs 250 credits
       imago dynamics get AGENT
       imago dynamics enable AGENT
       imago dynamics disable AGENT
)"},
      {"live", R"(Usage: imago live speak CODE MESSAGE [--room ROOM]
       imago live context CODE TEXT [--speak] [--room ROOM]
       imago live trigger CODE ACTION [--room ROOM]      e.g. mini_wave_hello
       imago live rooms                                  the account's live rooms, as a table
       imago live url CODE                               a viewer link for the agent (starts a
                                                         session when opened; minutes are charged)
)"},
      {"tts", R"(Usage: imago tts TEXT [-o FILE] [--voice M1] [--voice-code UUID] [--language en]
                [--speed 1.05] [--steps 8] [--stream]

Writes WAV to FILE or to stdout (not to a terminal). "-" as TEXT reads the text from stdin.
The audio is written as it arrives.
)"},
      {"voices",
       "Usage: imago voices\n\nBuilt-in and designed voices, and the languages this server speaks.\n"},
      {"video",
       R"(Usage: imago video create CODE (--text TEXT | --audio FILE|URL) [--voice F2] [-o OUT.mp4] [--wait]
       imago video get JOB_ID
       imago video wait JOB_ID [-o OUT.mp4]
       imago video download JOB_ID -o OUT.mp4

The agent CODE speaks TEXT (in its own voice, or a built-in --voice) or an audio file (WAV, MP3,
AAC, M4A, Ogg/Opus, FLAC; a local file is uploaded first), rendered by the server to an MP4
(POST /v1/video/generate). Costs the agent model's rate per started minute of output.
With -o, create waits for the video and downloads it; --wait waits without downloading. Waiting
polls GET /v1/video/{job_id} every 5 seconds. "-" as TEXT reads the text from stdin.
)"},
      {"render", R"(Usage: imago render CODE --text TEXT -o OUT.mp4 [--voice M1] [--language en]

Downloads the agent's .imx model and renders it locally with `imagod render` (found beside this
binary or on PATH). Nothing is charged.
)"},
  };
  return h;
}

int usage(const Context& ctx, const std::string& group) {
  std::cerr << help_for(group);
  (void)ctx;
  return 2;
}

std::optional<Client> authed(Context& ctx, int* rc) {
  auto s = load_secret(ctx.base_url);
  if (!s) {
    *rc =
        ctx.out.fail("not logged in to " + ctx.base_url + ": run `imago login` (or set IMAGO_API_SECRET)", 3);
    return std::nullopt;
  }
  return Client(ctx.base_url, s->secret);
}

// Prints the result: JSON as is with --json, else a caller-made human text.
int answer(Context& ctx, const HttpResult& r, const std::function<std::string(const json::value&)>& human,
           long ok_status = 200) {
  if (r.status != ok_status && !(ok_status == 200 && r.status == 201)) return ctx.out.fail(r.error_text());
  auto v = r.json();
  if (ctx.out.json)
    ctx.out.data(v);
  else
    std::cout << human(v);
  return 0;
}

std::string str(const json::value& v, const char* key) {
  if (!v.is_object()) return "";
  auto* f = v.as_object().if_contains(key);
  if (!f || f->is_null()) return "";
  if (f->is_string()) return std::string(f->as_string());
  return json::serialize(*f);
}

// Rows as left-aligned columns separated by two spaces (the first row is the header).
std::string table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& r : rows) {
    if (width.size() < r.size()) width.resize(r.size(), 0);
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  std::string o;
  for (const auto& r : rows) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line += std::string(width[i] - r[i].size() + 2, ' ');
    }
    o += line + "\n";
  }
  return o;
}

std::string path_arg(const std::string& s) {
  std::string out;
  static const char* hex = "0123456789ABCDEF";
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~')
      out += static_cast<char>(c);
    else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

// A local file becomes base64 in the body; anything with a scheme is passed through as a URL.
std::optional<std::string> media_arg(const std::string& v, std::string* error) {
  if (v.find("://") != std::string::npos || v.rfind("file_", 0) == 0) return v;
  std::ifstream in(v, std::ios::binary);
  if (!in) {
    *error = "cannot read " + v;
    return std::nullopt;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return base64_encode(ss.str());
}

void progress_line(const Output& out, double p, const std::string& status, const std::string& msg) {
  const int pct = static_cast<int>(std::lround(std::clamp(p, 0.0, 1.0) * 100));
  if (out.tty) {
    const int filled = pct * 30 / 100;
    std::cerr << "\r[" << std::string(filled, '#') << std::string(30 - filled, '.') << "] " << pct << "% "
              << status << " " << msg.substr(0, 40) << "\033[K" << std::flush;
  } else {
    std::cerr << pct << "% " << status << (msg.empty() ? "" : " " + msg) << "\n";
  }
}

// SPEC 3.1: stop on success, ready or failed; poll every 5 seconds ($IMAGO_POLL_SECONDS in tests).
int wait_agent(Context& ctx, Client& c, const std::string& code) {
  int every = 5;
  if (const char* e = std::getenv("IMAGO_POLL_SECONDS"); e && std::atoi(e) > 0) every = std::atoi(e);
  for (;;) {
    auto r = c.call("GET", "/v1/agent/status/" + path_arg(code));
    if (r.status == 429 || r.status == 503) {
      std::this_thread::sleep_for(std::chrono::seconds(every));
      continue;
    }
    if (r.status != 200) return ctx.out.fail(r.error_text());
    auto d = r.json().at("data");
    const std::string status = str(d, "status");
    const double p = d.at("progress").to_number<double>();
    progress_line(ctx.out, p, status, str(d, "progress_msg"));
    if (status == "success" || status == "ready" || status == "failed") {
      if (ctx.out.tty) std::cerr << "\n";
      if (ctx.out.json)
        ctx.out.data(d);
      else if (status != "failed")
        std::cout << code << " is " << status << "; model: " << str(d, "model_url") << "\n";
      if (status == "failed") return ctx.out.fail("generation failed: " + str(d, "error_message"));
      return 0;
    }
    std::this_thread::sleep_for(std::chrono::seconds(every));
  }
}

int cmd_agents(const Args& a, Context& ctx) {
  if (a.words.size() < 2) return usage(ctx, "agents");
  const std::string& sub = a.words[1];
  int rc = 0;
  auto c = authed(ctx, &rc);
  if (!c) return rc;
  if (sub == "list") {
    std::string q =
        "?limit=" + path_arg(a.value("limit", "20")) + "&offset=" + path_arg(a.value("offset", "0"));
    if (a.has("status")) q += "&status=" + path_arg(a.value("status"));
    return answer(ctx, c->call("GET", "/v1/agents" + q), [](const json::value& v) {
      std::ostringstream o;
      for (const auto& it : v.at("data").as_array()) {
        o << str(it, "code") << "\t" << str(it, "status") << "\t" << str(it, "name") << "\n";
      }
      const auto& p = v.at("pagination");
      o << "(" << v.at("data").as_array().size() << " of " << str(p, "total")
        << (p.at("has_more").as_bool() ? ", more with --offset" : "") << ")\n";
      return o.str();
    });
  }
  if (sub == "get" && a.words.size() == 3) {
    return answer(ctx, c->call("GET", "/v1/agent/" + path_arg(a.words[2])), [](const json::value& v) {
      const auto& d = v.at("data");
      return str(d, "agent_id") + "\t" + str(d, "status") + "\t" + str(d, "name") +
             "\nmodel: " + str(d, "model_url") + "\nprompt: " + str(d, "system_prompt") + "\n";
    });
  }
  if (sub == "create") {
    json::object body;
    for (const char* f : {"prompt", "name", "model"}) {
      if (a.has(f)) body[f] = a.value(f);
    }
    if (a.has("aspect-ratio")) body["aspect_ratio"] = a.value("aspect-ratio");
    if (a.has("agent-id")) body["agent_id"] = a.value("agent-id");
    for (const char* f : {"image", "video", "audio"}) {
      if (!a.has(f)) continue;
      std::string error;
      auto m = media_arg(a.value(f), &error);
      if (!m) return ctx.out.fail(error, 2);
      body[f] = *m;
    }
    auto r = c->call("POST", "/v1/agent/generate", json::serialize(body));
    if (r.status != 200) return ctx.out.fail(r.error_text());
    const std::string code = str(r.json(), "agent_id");
    if (!a.switches.count("wait")) {
      if (ctx.out.json)
        ctx.out.data(r.json());
      else
        std::cout << code << "\tprocessing\n(wait with: imago agents wait " << code << ")\n";
      return 0;
    }
    // A photo takes a few seconds (measured: docs/avatar.md, "The model builder"); a video longer.
    ctx.out.note("Generating " + code +
                 (a.has("video") ? " (a video takes up to a minute)" : " (usually under ten seconds)"));
    return wait_agent(ctx, *c, code);
  }
  if (sub == "wait" && a.words.size() == 3) return wait_agent(ctx, *c, a.words[2]);
  if (sub == "delete" && a.words.size() == 3) {
    return answer(ctx, c->call("DELETE", "/v1/agent/" + path_arg(a.words[2])),
                  [&](const json::value&) { return "deleted " + a.words[2] + "\n"; });
  }
  if (sub == "update-prompt" && a.words.size() == 4) {
    return answer(ctx,
                  c->call("POST", "/v1/agent/" + path_arg(a.words[2]),
                          json::serialize(json::object{{"system_prompt", a.words[3]}})),
                  [&](const json::value&) { return "updated the prompt of " + a.words[2] + "\n"; });
  }
  return usage(ctx, "agents");
}

int cmd_dynamics(const Args& a, Context& ctx) {
  if (a.words.size() != 3) return usage(ctx, "dynamics");
  const std::string& sub = a.words[1];
  const std::string agent = a.words[2];
  int rc = 0;
  auto c = authed(ctx, &rc);
  if (!c) return rc;
  if (sub == "generate") {
    json::object body{{"agent_id", agent}};
    if (a.has("duration")) {
      try {
        body["duration"] = std::stod(a.value("duration"));
      } catch (...) {
        return ctx.out.fail("--duration expects a number of seconds", 2);
      }
    }
    if (a.has("image-url")) body["image_url"] = a.value("image-url");
    return answer(ctx, c->call("POST", "/v1/dynamics/generate", json::serialize(body)),
                  [&](const json::value&) {
                    return "dynamics generation started for " + agent + " (check with: imago dynamics get " +
                           agent + ")\n";
                  });
  }
  if (sub == "get") {
    return answer(ctx, c->call("GET", "/v1/dynamics/" + path_arg(agent)), [](const json::value& v) {
      const auto& d = v.at("data");
      std::string o = "status: " + str(d, "status") +
                      "\nurl: " + (str(d, "url").empty() ? "(none)" : str(d, "url")) + "\n";
      for (const auto& g : d.at("gestures").as_object()) {
        o += "  " + std::string(g.key()) + "\t" +
             (g.value().is_string() ? std::string(g.value().as_string()) : "") + "\n";
      }
      return o;
    });
  }
  if (sub == "enable" || sub == "disable") {
    const bool on = sub == "enable";
    json::object body{{"dynamics", {{"enabled", on}}}, {"toggle_enabled", on}};
    return answer(ctx, c->call("PUT", "/v1/dynamics/" + path_arg(agent), json::serialize(body)),
                  [&](const json::value& v) {
                    return std::string(on ? "enabled" : "disabled") + " dynamics for " + agent +
                           " (regeneration " + str(v, "regeneration_status") + ")\n";
                  });
  }
  return usage(ctx, "dynamics");
}

int cmd_live(const Args& a, Context& ctx) {
  if (a.words.size() < 2) return usage(ctx, "live");
  const std::string& sub = a.words[1];
  int rc = 0;
  auto c = authed(ctx, &rc);
  if (!c) return rc;
  auto with_room = [&](json::object o) {
    if (a.has("room")) o["room_id"] = a.value("room");
    return json::serialize(o);
  };
  auto delivered = [](const json::value& v) {
    return "delivered to " + str(v, "delivered_to_rooms") + " room(s)\n";
  };
  // The API's 404 when the agent has no live session; a person also wants to know how to start one.
  auto to_rooms = [&](const HttpResult& r, const std::function<std::string(const json::value&)>& human) {
    if (r.status == 404 && !a.has("room") && !ctx.out.json) {
      ctx.out.note("No live session of " + a.words[2] +
                   " is running. Start one by opening a viewer link:\n  imago live url " + a.words[2]);
    }
    return answer(ctx, r, human);
  };
  if (sub == "speak" && a.words.size() == 4) {
    return to_rooms(
        c->call("POST", "/v1/agent/" + path_arg(a.words[2]) + "/speak", with_room({{"message", a.words[3]}})),
        delivered);
  }
  if (sub == "context" && a.words.size() == 4) {
    json::object body{{"context", a.words[3]}, {"type", a.switches.count("speak") ? "speak" : "add_context"}};
    return to_rooms(c->call("POST", "/v1/agent/" + path_arg(a.words[2]) + "/add-context", with_room(body)),
                    delivered);
  }
  if (sub == "trigger" && a.words.size() == 4) {
    return to_rooms(c->call("POST", "/v1/agent/" + path_arg(a.words[2]) + "/trigger-dynamics",
                            with_room({{"action", a.words[3]}})),
                    delivered);
  }
  if (sub == "rooms" && a.words.size() == 2) {
    return answer(ctx, c->call("GET", "/v1/rooms"), [](const json::value& v) {
      const auto& rooms = v.at("data").as_array();
      if (rooms.empty()) return std::string("no active rooms\n");
      std::vector<std::vector<std::string>> rows{
          {"ROOM", "AGENT", "STATE", "VIEWERS", "MINUTES", "TYPE", "STARTED"}};
      for (const auto& r : rooms) {
        rows.push_back({str(r, "room_id"), str(r, "agent_code"), str(r, "state"), str(r, "viewers"),
                        str(r, "billed_minutes"), str(r, "billing_type"),
                        str(r, "started_at") + (r.as_object().contains("remote") ? " (other node)" : "")});
      }
      return table(rows);
    });
  }
  if (sub == "url" && a.words.size() == 3) {
    const std::string& code = a.words[2];
    auto r =
        c->call("POST", "/v1/runtime-tokens/request", json::serialize(json::object{{"agent_code", code}}));
    return answer(ctx, r, [&](const json::value& v) {
      const auto& d = v.at("data");
      return c->base_url() + "/embed/" + path_arg(code) + "#token=" + str(d, "token") + "\n(valid until " +
             str(d, "expires_at") +
             "; whoever opens it starts a session of this agent, charged to your account)\n";
    });
  }
  return usage(ctx, "live");
}

int cmd_keys(const Args& a, Context& ctx) {
  if (a.words.size() < 2) return usage(ctx, "keys");
  const std::string& sub = a.words[1];
  int rc = 0;
  auto c = authed(ctx, &rc);
  if (!c) return rc;
  if (sub == "list" && a.words.size() == 2) {
    return answer(ctx, c->call("GET", "/v1/keys"), [](const json::value& v) {
      std::string o;
      for (const auto& k : v.at("data").as_array()) {
        o += str(k, "id") + "\t" + str(k, "alias") + "\t" + str(k, "prefix") + "..." + str(k, "last4") +
             "\tlast used " + (str(k, "last_used_at").empty() ? "never" : str(k, "last_used_at")) + "\n";
      }
      return o;
    });
  }
  if (sub == "create" && a.words.size() == 3) {
    return answer(ctx, c->call("POST", "/v1/keys", json::serialize(json::object{{"alias", a.words[2]}})),
                  [](const json::value& v) {
                    return str(v.at("data"), "id") + "\t" + str(v.at("data"), "alias") +
                           "\nsecret (shown once): " + str(v.at("data"), "api_secret") + "\n";
                  });
  }
  if (sub == "revoke" && a.words.size() == 3) {
    return answer(ctx, c->call("DELETE", "/v1/keys/" + path_arg(a.words[2])),
                  [&](const json::value&) { return "revoked " + a.words[2] + "\n"; });
  }
  return usage(ctx, "keys");
}

int cmd_tts(const Args& a, Context& ctx) {
  if (a.words.size() != 2) return usage(ctx, "tts");
  std::string text = a.words[1];
  if (text == "-") {
    std::stringstream ss;
    ss << std::cin.rdbuf();
    text = ss.str();
  }
  const std::string out_path = a.value("output", a.value("o"));
  if (out_path.empty() && ::isatty(STDOUT_FILENO)) {
    return ctx.out.fail("refusing to write audio to a terminal: use -o FILE or a pipe", 2);
  }
  json::object body{{"text", text}};
  if (a.has("voice")) body["voice"] = a.value("voice");
  if (a.has("voice-code")) body["voice_code"] = a.value("voice-code");
  if (a.has("language")) body["language"] = a.value("language");
  try {
    if (a.has("speed")) body["speed"] = std::stod(a.value("speed"));
    if (a.has("steps")) body["total_steps"] = std::stoi(a.value("steps"));
  } catch (...) {
    return ctx.out.fail("--speed and --steps expect numbers", 2);
  }
  if (a.switches.count("stream")) body["stream"] = true;
  int rc = 0;
  auto c = authed(ctx, &rc);
  if (!c) return rc;
  FILE* f = out_path.empty() ? stdout : std::fopen((out_path + ".part").c_str(), "wb");
  if (!f) return ctx.out.fail("cannot write " + out_path, 2);
  size_t bytes = 0;
  auto r = c->download("POST", "/v1/tts", json::serialize(body), [&](const char* d, size_t n) {
    bytes += n;
    return std::fwrite(d, 1, n, f) == n && std::fflush(f) == 0;
  });
  if (f != stdout) std::fclose(f);
  if (r.status != 200) {
    if (!out_path.empty()) std::remove((out_path + ".part").c_str());
    return ctx.out.fail(r.error_text());
  }
  if (!out_path.empty()) {
    std::rename((out_path + ".part").c_str(), out_path.c_str());
    if (ctx.out.json)
      ctx.out.data({{"file", out_path}, {"bytes", bytes}});
    else
      ctx.out.note("wrote " + std::to_string(bytes) + " bytes to " + out_path);
  }
  return 0;
}

std::string imagod_binary() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto beside = self.parent_path() / "imagod";
    if (std::filesystem::exists(beside)) return beside.string();
  }
  return "imagod";
}

int cmd_render(const Args& a, Context& ctx) {
  if (a.words.size() != 2 || !a.has("text") || !(a.has("output") || a.has("o"))) return usage(ctx, "render");
  const std::string out_path = a.value("output", a.value("o"));
  int rc = 0;
  auto c = authed(ctx, &rc);
  if (!c) return rc;
  auto g = c->call("GET", "/v1/agent/" + path_arg(a.words[1]));
  if (g.status != 200) return ctx.out.fail(g.error_text());
  const std::string model_url = str(g.json().at("data"), "model_url");
  if (model_url.empty())
    return ctx.out.fail("the agent has no model yet (status " + str(g.json().at("data"), "status") + ")");
  // Only the path: the key is sent only to the configured server.
  std::string path = model_url;
  if (auto p = path.find("://"); p != std::string::npos) path = path.substr(path.find('/', p + 3));
  const std::string model = out_path + ".imx";
  FILE* f = std::fopen(model.c_str(), "wb");
  if (!f) return ctx.out.fail("cannot write " + model, 2);
  auto r =
      c->download("GET", path, "", [&](const char* d, size_t n) { return std::fwrite(d, 1, n, f) == n; });
  std::fclose(f);
  if (r.status != 200) {
    std::remove(model.c_str());
    return ctx.out.fail("downloading the model: " + r.error_text());
  }
  ctx.out.note("downloaded the model to " + model + "; rendering");
  std::vector<std::string> argv = {imagod_binary(), "render", model,   "--text",
                                   a.value("text"), "-o",     out_path};
  for (const char* f2 : {"voice", "language"}) {
    if (a.has(f2)) {
      argv.push_back(std::string("--") + f2);
      argv.push_back(a.value(f2));
    }
  }
  std::string cmd;
  for (const auto& s : argv) {
    std::string q = "'";
    for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    cmd += q + "' ";
  }
  int status = std::system((cmd + (ctx.out.json ? ">/dev/null" : "")).c_str());
  if (status != 0) return ctx.out.fail("imagod render failed (is imagod installed beside imago or on PATH?)");
  if (ctx.out.json)
    ctx.out.data({{"file", out_path}, {"model", model}});
  else
    std::cout << "wrote " << out_path << "\n";
  return 0;
}

// A finished video's URL is absolute; only its path goes to the configured server with the key.
std::string path_of(const std::string& url) {
  auto p = url.find("://");
  if (p == std::string::npos) return url;
  auto slash = url.find('/', p + 3);
  return slash == std::string::npos ? "/" : url.substr(slash);
}

// Streams the job's MP4 to out_path (through out_path.part, so a failed download leaves nothing).
int download_video(Context& ctx, Client& c, const json::value& job, const std::string& out_path) {
  const std::string url = str(job, "video_url");
  if (url.empty()) return ctx.out.fail("the video is not ready (status " + str(job, "status") + ")");
  const std::string part = out_path + ".part";
  FILE* f = std::fopen(part.c_str(), "wb");
  if (!f) return ctx.out.fail("cannot write " + out_path, 2);
  size_t bytes = 0;
  auto r = c.download("GET", path_of(url), "", [&](const char* d, size_t n) {
    bytes += n;
    return std::fwrite(d, 1, n, f) == n;
  });
  const bool closed = std::fclose(f) == 0;
  if (r.status != 200 || !closed) {
    std::remove(part.c_str());
    return ctx.out.fail("downloading the video: " + (r.status != 200 ? r.error_text() : "write failed"));
  }
  std::rename(part.c_str(), out_path.c_str());
  if (ctx.out.json) {
    json::object o = job.as_object();
    o["file"] = out_path;
    o["bytes"] = bytes;
    ctx.out.data(o);
  } else {
    std::cout << "wrote " << out_path << " (" << bytes << " bytes, " << str(job, "duration") << " s)\n";
  }
  return 0;
}

// Polls a video job every 5 seconds ($IMAGO_POLL_SECONDS in tests) until completed or failed.
// The job reports no fraction, so the line shows the status and the time waited.
int wait_video(Context& ctx, Client& c, const std::string& job_id, const std::string& out_path) {
  int every = 5;
  if (const char* e = std::getenv("IMAGO_POLL_SECONDS"); e && std::atoi(e) > 0) every = std::atoi(e);
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    auto r = c.call("GET", "/v1/video/" + path_arg(job_id));
    if (r.status == 429 || r.status == 503) {
      std::this_thread::sleep_for(std::chrono::seconds(every));
      continue;
    }
    if (r.status != 200) {
      if (ctx.out.tty) std::cerr << "\n";
      return ctx.out.fail(r.error_text());
    }
    const json::value job = r.json();
    const std::string status = str(job, "status");
    const long waited = static_cast<long>(
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start).count());
    if (ctx.out.tty) {
      std::cerr << "\r" << job_id << " " << status << " (" << waited << " s)\033[K" << std::flush;
    } else {
      std::cerr << status << " " << waited << " s\n";
    }
    if (status == "completed" || status == "failed") {
      if (ctx.out.tty) std::cerr << "\n";
      if (status == "failed") {
        if (ctx.out.json) ctx.out.data(job);
        return ctx.out.fail("video failed: " + str(job, "error_message"));
      }
      if (!out_path.empty()) return download_video(ctx, c, job, out_path);
      if (ctx.out.json)
        ctx.out.data(job);
      else
        std::cout << job_id << " is completed; video: " << str(job, "video_url") << "\n";
      return 0;
    }
    std::this_thread::sleep_for(std::chrono::seconds(every));
  }
}

int cmd_video(const Args& a, Context& ctx) {
  if (a.words.size() != 3) return usage(ctx, "video");
  const std::string& sub = a.words[1];
  const std::string out_path = a.value("output");
  if (sub == "create") {
    if (a.has("text") == a.has("audio")) {
      std::cerr << "imago: video create needs exactly one of --text and --audio\n";
      return usage(ctx, "video");
    }
    json::object input;
    if (a.has("text")) {
      std::string text = a.value("text");
      if (text == "-") {
        std::stringstream ss;
        ss << std::cin.rdbuf();
        text = ss.str();
      }
      input = {{"type", "text"}, {"text", text}};
      if (a.has("voice")) input["voice"] = a.value("voice");
    } else if (a.has("voice")) {
      return ctx.out.fail("--voice applies to --text only", 2);
    }
    std::string audio_file;  // a local file, uploaded first: the generate body is small (64 KB)
    if (a.has("audio")) {
      std::string error;
      auto m = media_arg(a.value("audio"), &error);
      if (!m) return ctx.out.fail(error, 2);
      if (*m == a.value("audio")) {
        input = {{"type", "audio"}, {"audio_url", *m}};
      } else {
        audio_file = *m;
      }
    }
    int rc = 0;
    auto c = authed(ctx, &rc);
    if (!c) return rc;
    if (!audio_file.empty()) {
      const std::string name = std::filesystem::path(a.value("audio")).filename().string();
      auto up = c->call("POST", "/v1/files/upload",
                        json::serialize(json::object{{"file_data", audio_file}, {"file_name", name}}));
      if (up.status != 200) return ctx.out.fail("uploading " + a.value("audio") + ": " + up.error_text());
      input = {{"type", "audio"}, {"audio_url", str(up.json().at("data"), "id")}};
    }
    auto r = c->call("POST", "/v1/video/generate",
                     json::serialize(json::object{{"agent_code", a.words[2]}, {"input", input}}));
    if (r.status != 200) return ctx.out.fail(r.error_text());
    const json::value job = r.json();
    const std::string job_id = str(job, "job_id");
    if (out_path.empty() && !a.switches.count("wait")) {
      if (ctx.out.json)
        ctx.out.data(job);
      else
        std::cout << job_id << "\t" << str(job, "status") << "\t" << str(job, "duration") << " s\t"
                  << str(job, "credits") << " credits\n(wait with: imago video wait " << job_id
                  << " -o OUT.mp4)\n";
      return 0;
    }
    ctx.out.note("Rendering " + job_id + ": " + str(job, "duration") + " s of video, " + str(job, "credits") +
                 " credits");
    return wait_video(ctx, *c, job_id, out_path);
  }
  int rc = 0;
  auto c = authed(ctx, &rc);
  if (!c) return rc;
  if (sub == "get") {
    return answer(ctx, c->call("GET", "/v1/video/" + path_arg(a.words[2])), [](const json::value& v) {
      std::string o = str(v, "job_id") + "\t" + str(v, "status") + "\t" + str(v, "agent_code") + "\t" +
                      str(v, "duration") + " s\t" + str(v, "credits") + " credits\n";
      if (!str(v, "video_url").empty()) o += "video: " + str(v, "video_url") + "\n";
      if (!str(v, "error_message").empty()) o += "error: " + str(v, "error_message") + "\n";
      return o;
    });
  }
  if (sub == "wait") return wait_video(ctx, *c, a.words[2], out_path);
  if (sub == "download") {
    if (out_path.empty()) return usage(ctx, "video");
    auto r = c->call("GET", "/v1/video/" + path_arg(a.words[2]));
    if (r.status != 200) return ctx.out.fail(r.error_text());
    return download_video(ctx, *c, r.json(), out_path);
  }
  return usage(ctx, "video");
}

}  // namespace

std::string help_for(const std::string& group) {
  auto it = helps().find(group);
  return it == helps().end() ? std::string() : it->second;
}

int run_command(const Args& a, Context& ctx) {
  const std::string cmd = a.words.empty() ? "" : a.words[0];
  if (cmd == "login") {
    if (a.words.size() != 1) return usage(ctx, "login");
    return a.switches.count("device") ? login_device(ctx.base_url, ctx.out)
                                      : login_browser(ctx.base_url, ctx.out);
  }
  if (cmd == "logout") return logout(ctx.base_url, ctx.out);
  if (cmd == "agents") return cmd_agents(a, ctx);
  if (cmd == "dynamics") return cmd_dynamics(a, ctx);
  if (cmd == "live") return cmd_live(a, ctx);
  if (cmd == "keys") return cmd_keys(a, ctx);
  if (cmd == "tts") return cmd_tts(a, ctx);
  if (cmd == "render") return cmd_render(a, ctx);
  if (cmd == "video") return cmd_video(a, ctx);
  int rc = 0;
  if (cmd == "whoami" || cmd == "validate" || cmd == "credits" || cmd == "voices") {
    if (a.words.size() != 1) return usage(ctx, cmd);
    auto c = authed(ctx, &rc);
    if (!c) return rc;
    if (cmd == "whoami") {
      const std::string source = load_secret(ctx.base_url)->source;
      return answer(ctx, c->call("GET", "/v1/me"), [&](const json::value& v) {
        const auto& d = v.at("data");
        return str(d, "name") + " (" + str(d, "user_id") + "), plan " + str(d, "plan") + "\nkey " +
               str(d, "key_alias") + " (" + str(d, "key_id") + ") from " + source + "\nserver " +
               ctx.base_url + "\n";
      });
    }
    if (cmd == "validate") {
      auto r = c->call("POST", "/v1/validate");
      if (r.status != 200) return ctx.out.fail(r.error_text());
      const bool valid = r.json().at("valid").as_bool();
      if (ctx.out.json)
        ctx.out.data(r.json());
      else
        std::cout << (valid ? "valid\n" : "invalid\n");
      return valid ? 0 : 1;
    }
    if (cmd == "credits") {
      return answer(ctx, c->call("GET", "/v2/credit-summaries"), [](const json::value& v) {
        const auto& d = v.at("data");
        std::string o = "balance: " + str(d, "balance") + " credits (plan " + str(d, "plan_credits") +
                        ", top-up " + str(d, "topup_credits") + ")\nminutes:\n";
        for (const auto& m : d.at("minutes_estimate").as_object()) {
          o += "  " + std::string(m.key()) + "\t" +
               std::to_string(static_cast<long long>(m.value().to_number<double>())) + "\n";
        }
        return o;
      });
    }
    return answer(ctx, c->call("GET", "/v1/voices"), [](const json::value& v) {
      std::string o = "voices:";
      for (const auto& x : v.at("voices").as_array()) o += " " + str(x, "id");
      o += "\n";
      if (auto* l = v.as_object().if_contains("languages"); l && l->is_array()) {
        o += "languages:";
        for (const auto& x : l->as_array()) o += " " + str(x, "code");
        o += "\n";
      }
      return o;
    });
  }
  if (cmd.empty()) {
    std::cerr << help_for("");
    return 2;
  }
  std::cerr << "imago: unknown command '" << cmd << "'\n\n" << help_for("");
  return 2;
}

}  // namespace imago::cli
