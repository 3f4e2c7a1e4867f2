// imago: the Imago command-line tool (docs/cli.md). Talks to imagod over its public API with a
// per-device key obtained by `imago login`.
#include <curl/curl.h>

#include <cstdlib>
#include <iostream>

#include "cli/commands.h"

namespace {

// Options that take a value; everything else starting with -- is a switch.
bool takes_value(const std::string& name) {
  static const std::set<std::string> v = {
      "base-url",   "limit",    "offset",       "status",   "prompt",   "image",     "video", "audio",
      "name",       "model",    "aspect-ratio", "agent-id", "duration", "image-url", "room",  "voice",
      "voice-code", "language", "speed",        "steps",    "output",   "o",         "text"};
  return v.count(name) > 0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace imago::cli;
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    if (s == "-o") s = "--o";
    if (s.rfind("--", 0) == 0 && s.size() > 2) {
      std::string name = s.substr(2), value;
      if (auto eq = name.find('='); eq != std::string::npos) {
        a.values[name.substr(0, eq)] = name.substr(eq + 1);
        continue;
      }
      if (takes_value(name)) {
        if (i + 1 >= argc) {
          std::cerr << "imago: --" << name << " needs a value\n";
          return 2;
        }
        a.values[name] = argv[++i];
      } else {
        a.switches.insert(name);
      }
    } else if (s == "-h") {
      a.switches.insert("help");
    } else {
      a.words.push_back(s);
    }
  }
  if (a.values.count("o")) a.values["output"] = a.values["o"];
  if (a.switches.count("help") || (!a.words.empty() && a.words[0] == "help")) {
    std::string group =
        a.words.empty() || a.words[0] == "help" ? (a.words.size() > 1 ? a.words[1] : "") : a.words[0];
    std::string text = help_for(group);
    std::cout << (text.empty() ? help_for("") : text);
    return 0;
  }
  if (a.switches.count("version")) {
    std::cout << "imago 0.1.0\n";
    return 0;
  }
  for (const auto& sw : a.switches) {
    static const std::set<std::string> known = {"json", "device", "wait", "stream", "speak"};
    if (!known.count(sw)) {
      std::cerr << "imago: unknown option --" << sw << " (see imago --help)\n";
      return 2;
    }
  }
  Context ctx;
  ctx.base_url = a.value("base-url");
  if (ctx.base_url.empty()) {
    const char* e = std::getenv("IMAGO_BASE_URL");
    ctx.base_url = e && *e ? e : "http://127.0.0.1:8080";
  }
  while (!ctx.base_url.empty() && ctx.base_url.back() == '/') ctx.base_url.pop_back();
  if (ctx.base_url.rfind("http://", 0) != 0 && ctx.base_url.rfind("https://", 0) != 0) {
    std::cerr << "imago: --base-url must start with http:// or https://\n";
    return 2;
  }
  ctx.out.json = a.switches.count("json") > 0;
  curl_global_init(CURL_GLOBAL_DEFAULT);
  int rc = run_command(a, ctx);
  curl_global_cleanup();
  return rc;
}
