// Agents (SPEC 4.2-4.7): generate, status, get, list, update prompt, delete.
#include <boost/json.hpp>

#include "billing/prices.h"
#include "api/pagination.h"
#include "api/routes.h"
#include "blobs/blob_store.h"
#include "jobs/media_refs.h"
#include "jobs/pipelines.h"
#include "jobs/worker_pool.h"
#include "store/agent_store.h"
#include "store/file_store.h"
#include "util/json.h"
#include "util/log.h"
#include "util/random.h"
#include "util/strings.h"

namespace imago::api {

namespace {

namespace json = boost::json;

constexpr size_t kMaxPromptChars = 20000;
constexpr double kMaxSourceDuration = 120;
// Inline base64 of every medium at its limit (10 + 100 + 25 MB) plus JSON overhead.
constexpr size_t kGenerateBodyLimit = 190u << 20;

const char* const kRandomPrompts[] = {
    "You are a warm, upbeat guide who explains things simply and asks friendly follow-up questions.",
    "You are a calm, thoughtful companion who listens carefully and answers briefly and kindly.",
    "You are an energetic coach who motivates people with short, practical, encouraging advice.",
    "You are a witty storyteller who keeps answers light, vivid and to the point.",
    "You are a patient tutor who breaks problems into small steps and checks understanding.",
};

// SPEC example codes look like A91XMB7113: a letter, two digits, three letters, four digits.
std::string generate_code() {
  static const char* letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  std::string c;
  c += letters[random_below(26)];
  for (int i = 0; i < 2; ++i) c += static_cast<char>('0' + random_below(10));
  for (int i = 0; i < 3; ++i) c += letters[random_below(26)];
  for (int i = 0; i < 4; ++i) c += static_cast<char>('0' + random_below(10));
  return c;
}

// Custom agent ids: 3-64 characters of letters, digits, '_' and '-', starting with a letter or
// digit; "generate" and "status" are reserved because they are path words of this API.
Status check_custom_code(const std::string& id) {
  if (id.size() < 3 || id.size() > 64) return Status::Invalid("Field 'agent_id' must be 3 to 64 characters");
  if (!std::isalnum(static_cast<unsigned char>(id[0]))) {
    return Status::Invalid("Field 'agent_id' must start with a letter or digit");
  }
  for (char c : id) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') {
      return Status::Invalid("Field 'agent_id' may contain only letters, digits, '_' and '-'");
    }
  }
  if (iequals(id, "generate") || iequals(id, "status")) {
    return Status::Invalid("Field 'agent_id' must not be '" + id + "' (reserved)");
  }
  return Status::Ok();
}

Result<std::string> get_enum(const json::object& body, std::string_view field, std::initializer_list<const char*> allowed,
                             std::string def) {
  auto v = get_string(body, field);
  if (!v.ok()) return v.status();
  if (!v->has_value()) return def;
  std::string list;
  for (const char* a : allowed) {
    if (**v == a) return **v;
    list += (list.empty() ? "" : ", ") + std::string(a);
  }
  return Status::Invalid("Field '" + std::string(field) + "' must be one of: " + list);
}

std::string file_url(Services& s, const std::string& account, const std::optional<std::string>& id) {
  if (!id) return "";
  auto f = s.files->get(account, *id);
  if (!f.ok()) return "";
  return s.absolute_url(file_url_path(f->id, f->ext));
}

json::object agent_json(Services& s, const AgentRecord& a, bool with_status) {
  std::string image = a.image_file ? file_url(s, a.account_id, a.image_file) : a.image_source.value_or("");
  std::string video = a.video_file ? file_url(s, a.account_id, a.video_file) : a.video_source.value_or("");
  json::object o{{"agent_id", a.code}, {"status", a.status}};
  if (with_status) {
    o["progress"] = a.progress;
    o["progress_msg"] = a.progress_msg;
    o["current_step"] = a.current_step;
    o["error_message"] = a.error_message ? json::value(*a.error_message) : json::value(nullptr);
  }
  o["system_prompt"] = a.system_prompt;
  o["image_url"] = image;
  o["video_url"] = video;
  o["model_url"] = file_url(s, a.account_id, a.model_file);
  o["name"] = a.name;
  return o;
}

struct InlineInput {
  std::optional<std::string>* file_slot;
  std::string bytes;
  fetch::Sniffed type;
};

http::Response generate(Services& s, http::Request& req) {
  const std::string& account = req.principal->account_id;
  auto body = parse_json_object(req.body);
  if (!body.ok()) return http::Response::from_status(body.status());
  const json::object& b = *body;

  AgentRecord a;
  a.account_id = account;
  auto prompt = get_string(b, "prompt");
  if (!prompt.ok()) return http::Response::from_status(prompt.status());
  if (prompt->has_value() && (*prompt)->size() > kMaxPromptChars) {
    return http::Response::from_status(
        Status::Invalid("Field 'prompt' must be at most " + std::to_string(kMaxPromptChars) + " characters"));
  }
  if (prompt->has_value() && !trim(**prompt).empty()) {
    a.system_prompt = **prompt;
  } else {
    a.system_prompt = kRandomPrompts[random_below(std::size(kRandomPrompts))];
  }
  auto aspect = get_enum(b, "aspect_ratio", {"16:9", "9:16", "1:1"}, "16:9");
  if (!aspect.ok()) return http::Response::from_status(aspect.status());
  a.aspect_ratio = *aspect;
  auto vaspect = get_enum(b, "video_aspect_ratio", {"16:9", "9:16", "1:1"}, "16:9");
  if (!vaspect.ok()) return http::Response::from_status(vaspect.status());
  a.video_aspect_ratio = *vaspect;
  auto model = get_enum(b, "model", {"essence", "expression"}, "essence");
  if (!model.ok()) return http::Response::from_status(model.status());
  a.model = *model;
  auto duration = get_number(b, "duration");
  if (!duration.ok()) return http::Response::from_status(duration.status());
  if (duration->has_value() && (**duration <= 0 || **duration > kMaxSourceDuration)) {
    return http::Response::from_status(Status::Invalid("Field 'duration' must be a number of seconds in (0, 120]"));
  }
  a.duration = duration->value_or(10);
  auto name = get_string(b, "name");
  if (!name.ok()) return http::Response::from_status(name.status());
  if (name->has_value() && ((*name)->empty() || (*name)->size() > 100)) {
    return http::Response::from_status(Status::Invalid("Field 'name' must be 1 to 100 characters"));
  }
  auto custom = get_string(b, "agent_id");
  if (!custom.ok()) return http::Response::from_status(custom.status());
  if (custom->has_value()) {
    if (Status st = check_custom_code(**custom); !st.ok()) return http::Response::from_status(st);
  }

  // A retried request with the same Idempotency-Key gets the first one's agent, charged once.
  if (auto key = req.headers.get("idempotency-key")) {
    std::string k(trim(*key));
    if (k.empty() || k.size() > 200) {
      return http::Response::from_status(Status::Invalid("Header 'Idempotency-Key' must be 1 to 200 characters"));
    }
    a.idempotency_key = k;
  }

  // Media: validated (and inline data decoded and sniffed) before anything is stored or charged.
  std::vector<InlineInput> inline_inputs;
  struct Field {
    const char* name;
    fetch::MediaKind kind;
    std::optional<std::string>* source;
    std::optional<std::string>* file;
  } fields[] = {{"image", fetch::MediaKind::kImage, &a.image_source, &a.image_file},
                {"video", fetch::MediaKind::kVideo, &a.video_source, &a.video_file},
                {"audio", fetch::MediaKind::kAudio, &a.audio_source, &a.audio_file}};
  for (auto& f : fields) {
    auto v = get_string(b, f.name);
    if (!v.ok()) return http::Response::from_status(v.status());
    if (!v->has_value()) continue;
    auto r = jobs::resolve_media_param(*s.files, s.config->public_url, account, f.name, **v, f.kind);
    if (!r.ok()) {
      // Oversized inline data is still a bad parameter of this request: 400 naming the field.
      if (r.status().code() == Code::kTooLarge) return http::Response::from_status(Status::Invalid(r.status().message()));
      return http::Response::from_status(r.status());
    }
    if (r->file) *f.file = r->file->id;
    if (r->url) *f.source = *r->url;
    if (r->bytes) inline_inputs.push_back({f.file, std::move(*r->bytes), *r->type});
  }

  // The code: the caller's, or a fresh one.
  if (custom->has_value()) {
    a.code = **custom;
    auto taken = s.agents->code_taken(a.code);
    if (!taken.ok()) return http::Response::from_status(taken.status());
    if (*taken) return http::Response::from_status(Status::Conflict("Agent id '" + a.code + "' is already taken"));
  } else {
    for (int i = 0; i < 8; ++i) {
      a.code = generate_code();
      auto taken = s.agents->code_taken(a.code);
      if (!taken.ok()) return http::Response::from_status(taken.status());
      if (!*taken) break;
    }
  }
  a.name = name->has_value() ? **name : "Agent " + a.code;
  a.status = "processing";
  a.progress_msg = "Queued";
  a.current_step = "queued";

  // Inline inputs become the agent's files; their blobs are written before the transaction and
  // removed again if it does not commit.
  std::vector<FileRecord> files;
  std::vector<std::string> written;
  auto cleanup = [&] {
    for (const auto& k : written) (void)s.blobs->remove(k);
  };
  for (auto& in : inline_inputs) {
    FileRecord f;
    f.id = new_id("file");
    f.account_id = account;
    f.agent_code = a.code;
    f.purpose = "input";
    f.kind = std::string(fetch::media_kind_name(in.type.kind));
    f.mime = in.type.mime;
    f.ext = in.type.ext;
    f.size = static_cast<int64_t>(in.bytes.size());
    f.blob_key = "agents/" + a.code + "/" + f.id + "." + f.ext;
    f.created_at = s.clock->now_s();
    if (Status st = s.blobs->put(f.blob_key, in.bytes); !st.ok()) {
      cleanup();
      return http::Response::from_status(st);
    }
    written.push_back(f.blob_key);
    *in.file_slot = f.id;
    files.push_back(std::move(f));
  }

  NewJob job;
  job.id = new_id("job");
  job.kind = std::string(kJobAgentGenerate);
  job.account_id = account;
  job.subject = a.code;
  job.max_attempts = 3;
  LedgerOp charge;
  charge.account_id = account;
  charge.kind = LedgerKind::kCharge;
  charge.amount = billing::kAgentGenerationCredits;
  charge.reason = "agent_generation";
  charge.operation_key = "agent_generation:" + job.id;
  charge.reference = a.code;
  auto created = s.agents->create(a, files, charge, job);
  if (!created.ok()) {
    cleanup();
    return http::Response::from_status(created.status());
  }
  if (*created != a.code) {
    cleanup();  // a replay: this attempt's inline files are not needed
    return http::Response::json(200, {{"success", true},
                                      {"message", "Agent generation started"},
                                      {"agent_id", *created},
                                      {"status", "processing"}});
  }
  s.jobs->wake();
  log::info("agent_generation_queued", {{"agent", a.code}, {"job", job.id}, {"account", account}});
  return http::Response::json(200, {{"success", true},
                                    {"message", "Agent generation started"},
                                    {"agent_id", a.code},
                                    {"status", "processing"}});
}

}  // namespace

void register_agent_routes(http::Router& router, Services& s) {
  http::RouteOptions gen;
  gen.tier = Tier::kGenerate;
  gen.body_limit = kGenerateBodyLimit;
  router.add("POST", "/v1/agent/generate", [&s](http::Request& req) { return generate(s, req); }, gen);

  router.add("GET", "/v1/agent/status/{agent_id}", [&s](http::Request& req) {
    auto a = s.agents->get(req.principal->account_id, req.param("agent_id"));
    if (!a.ok()) return http::Response::from_status(a.status());
    return http::Response::json(200, {{"success", true}, {"data", agent_json(s, *a, true)}});
  });

  router.add("GET", "/v1/agent/{code}", [&s](http::Request& req) {
    auto a = s.agents->get(req.principal->account_id, req.param("code"));
    if (!a.ok()) return http::Response::from_status(a.status());
    return http::Response::json(200, {{"success", true}, {"data", agent_json(s, *a, false)}});
  });

  router.add("POST", "/v1/agent/{code}", [&s](http::Request& req) {
    const std::string& code = req.param("code");
    auto body = parse_json_object(req.body);
    if (!body.ok()) return http::Response::from_status(body.status());
    auto prompt = get_string(*body, "system_prompt");
    if (!prompt.ok()) return http::Response::from_status(prompt.status());
    if (!prompt->has_value()) return http::Response::from_status(Status::Invalid("Field 'system_prompt' is required"));
    if ((*prompt)->size() > kMaxPromptChars) {
      return http::Response::from_status(
          Status::Invalid("Field 'system_prompt' must be at most " + std::to_string(kMaxPromptChars) + " characters"));
    }
    Status st = s.agents->update_prompt(req.principal->account_id, code, **prompt);
    if (!st.ok()) return http::Response::from_status(st);
    return http::Response::json(200, {{"agent_code", code}, {"updated", true}});
  });

  router.add("DELETE", "/v1/agent/{code}", [&s](http::Request& req) {
    const std::string& code = req.param("code");
    Status st = s.agents->remove(req.principal->account_id, code);
    if (!st.ok()) return http::Response::from_status(st);
    s.jobs->wake();  // the blob cleanup job
    return http::Response::json(200, {{"success", true}, {"agent_code", code}, {"deleted", true}});
  });

  router.add("GET", "/v1/agents", [&s](http::Request& req) {
    auto page = parse_page_params(req);
    if (!page.ok()) return http::Response::from_status(page.status());
    std::optional<std::string> status;
    if (auto v = req.query_param("status"); v && !v->empty()) {
      static const char* known[] = {"processing", "generating", "completed", "success", "ready", "failed"};
      if (std::find(std::begin(known), std::end(known), *v) == std::end(known)) {
        return http::Response::from_status(Status::Invalid(
            "Query parameter 'status' must be one of: processing, generating, completed, success, ready, failed"));
      }
      status = std::string(*v);
    }
    auto agents = s.agents->list(req.principal->account_id, status, page->limit, page->offset);
    if (!agents.ok()) return http::Response::from_status(agents.status());
    json::array items;
    for (const auto& a : agents->agents) {
      items.push_back(json::object{{"code", a.code},
                                   {"agent_id", a.code},
                                   {"name", a.name},
                                   {"status", a.status},
                                   {"progress", a.progress},
                                   {"model", a.model},
                                   {"created_at", format_rfc3339(a.created_at)}});
    }
    return http::Response::json(
        200, {{"success", true}, {"data", std::move(items)}, {"pagination", pagination_json(*page, agents->total)}});
  });
}

}  // namespace imago::api
