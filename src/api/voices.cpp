// GET /v1/voices (SPEC 4.14): the ten built-in voices, the account's designed voices, and the
// languages verified on this server.
#include <map>
#include <string>

#include "api/routes.h"
#include "api/tts_common.h"

namespace imago::api {

void register_voice_routes(http::Router& router, Services& s) {
  router.add("GET", "/v1/voices", [&s](http::Request& req) {
    json::array voices;
    std::map<std::string, std::string> engine_of;  // built-in id -> engine (designed voices inherit it)
    for (const auto& v : s.speech->builtin_voices()) {
      engine_of[v.id] = v.engine;
      voices.push_back(
          {{"id", v.id}, {"kind", "builtin"}, {"description", v.description}, {"engine", v.engine}});
    }
    if (s.voices) {
      auto custom = s.voices->list(req.principal->account_id);
      if (!custom.ok()) return http::Response::from_status(custom.status());
      for (const auto& v : *custom) {
        json::object o = designed_voice_json(v);
        o["id"] = v.code;
        o["kind"] = "custom";
        if (auto it = engine_of.find(v.base_voice); it != engine_of.end()) o["engine"] = it->second;
        voices.push_back(std::move(o));
      }
    }
    json::array languages;
    for (const auto& l : s.speech->languages()) {
      json::object lang{
          {"code", l.code}, {"name", l.name}, {"espeak_voice", l.espeak_voice}, {"engine", l.engine}};
      if (!l.note.empty()) lang["note"] = l.note;
      languages.push_back(std::move(lang));
    }
    return http::Response::json(200, {{"voices", std::move(voices)}, {"languages", std::move(languages)}});
  });
}

}  // namespace imago::api
