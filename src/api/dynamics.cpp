// Dynamics (SPEC 2.2, 3.2, 3.3, 4.10-4.12): generate gesture clips, read them, update the
// configuration (keyword mapping, enablement) and regenerate background movements.
#include <boost/json.hpp>

#include "billing/prices.h"
#include "api/routes.h"
#include "blobs/blob_store.h"
#include "jobs/dynamics_config.h"
#include "jobs/media_refs.h"
#include "jobs/pipelines.h"
#include "jobs/worker_pool.h"
#include "store/agent_store.h"
#include "store/file_store.h"
#include "util/json.h"
#include "util/log.h"
#include "util/random.h"

namespace imago::api {

namespace {

namespace json = boost::json;

constexpr double kMaxGestureSeconds = 10;

std::string url_of(Services& s, const std::string& account, const std::string& file_id) {
  auto f = s.files->get(account, file_id);
  if (!f.ok()) return "";
  return s.absolute_url(file_url_path(f->id, f->ext));
}

http::Response generate(Services& s, http::Request& req) {
  const std::string& account = req.principal->account_id;
  auto body = parse_json_object(req.body);
  if (!body.ok()) return http::Response::from_status(body.status());
  auto code = get_string(*body, "agent_id");
  if (!code.ok()) return http::Response::from_status(code.status());
  if (!code->has_value() || (*code)->empty()) return http::Response::from_status(Status::Invalid("Field 'agent_id' is required"));
  auto duration = get_number(*body, "duration");
  if (!duration.ok()) return http::Response::from_status(duration.status());
  if (duration->has_value() && (**duration <= 0 || **duration > kMaxGestureSeconds)) {
    return http::Response::from_status(Status::Invalid("Field 'duration' must be a number of seconds in (0, 10]"));
  }
  auto model = get_string(*body, "model");
  if (!model.ok()) return http::Response::from_status(model.status());
  if (model->has_value() && **model != "auto") {
    return http::Response::from_status(Status::Invalid("Field 'model' must be 'auto' (the only gesture preset)"));
  }
  auto image = get_string(*body, "image_url");
  if (!image.ok()) return http::Response::from_status(image.status());

  auto agent = s.agents->get(account, **code);
  if (!agent.ok()) return http::Response::from_status(agent.status());
  if (agent->status == "failed") {
    return http::Response::from_status(
        Status::Invalid("Agent " + agent->code + " failed to generate; dynamics need a ready agent"));
  }
  if (agent->dynamics_status && *agent->dynamics_status == "generating") {
    return http::Response::from_status(Status::Conflict("Dynamics generation is already running for agent " + agent->code));
  }

  json::object payload{{"duration", duration->value_or(5.0)}, {"model", "auto"}};
  std::string written;
  if (image->has_value()) {
    auto r = jobs::resolve_media_param(*s.files, s.config->public_url, account, "image_url", **image,
                                       fetch::MediaKind::kImage);
    if (!r.ok()) {
      if (r.status().code() == Code::kTooLarge) return http::Response::from_status(Status::Invalid(r.status().message()));
      return http::Response::from_status(r.status());
    }
    if (r->file) payload["image_file"] = r->file->id;
    if (r->url) payload["image_url"] = *r->url;
    if (r->bytes) {
      // Inline image: kept as an upload of the caller so the job can read it.
      FileRecord f;
      f.id = new_id("file");
      f.account_id = account;
      f.purpose = "upload";
      f.kind = "image";
      f.mime = r->type->mime;
      f.ext = r->type->ext;
      f.size = static_cast<int64_t>(r->bytes->size());
      f.blob_key = "uploads/" + account + "/" + f.id + "." + f.ext;
      f.created_at = s.clock->now_s();
      if (Status st = s.blobs->put(f.blob_key, *r->bytes); !st.ok()) return http::Response::from_status(st);
      if (Status st = s.files->insert(f); !st.ok()) {
        (void)s.blobs->remove(f.blob_key);
        return http::Response::from_status(st);
      }
      payload["image_file"] = f.id;
    }
  }

  NewJob job;
  job.id = new_id("job");
  job.kind = std::string(kJobDynamicsGenerate);
  job.account_id = account;
  job.subject = agent->code;
  job.payload = json::serialize(payload);
  job.max_attempts = 3;
  LedgerOp charge;
  charge.account_id = account;
  charge.kind = LedgerKind::kCharge;
  charge.amount = billing::kDynamicsGenerationCredits;
  charge.reason = "dynamics_generation";
  charge.operation_key = "dynamics_generation:" + job.id;
  charge.reference = agent->code;
  Status st = s.agents->start_dynamics(account, agent->code, charge, job);
  if (!st.ok()) {
    return http::Response::from_status(st);
  }
  s.jobs->wake();
  log::info("dynamics_queued", {{"agent", agent->code}, {"job", job.id}});
  return http::Response::json(200, {{"success", true},
                                    {"message", "Dynamics generation started"},
                                    {"agent_id", agent->code},
                                    {"status", "processing"}});
}

http::Response get(Services& s, http::Request& req) {
  const std::string& account = req.principal->account_id;
  auto a = s.agents->get(account, req.param("agent_id"));
  if (!a.ok()) return http::Response::from_status(a.status());
  json::value url = nullptr;
  json::object gestures;
  std::string status = "ready";
  if (a->dynamics_status && *a->dynamics_status == "generating") {
    status = "generating";
  } else if (a->dynamics_file) {
    // Ready, or a later regeneration failed and the previous result still stands.
    url = url_of(s, account, *a->dynamics_file);
    boost::system::error_code ec;
    auto g = json::parse(a->dynamics_gestures, ec);
    if (!ec && g.is_object()) {
      for (const auto& kv : g.as_object()) {
        if (kv.value().is_string()) gestures[kv.key()] = url_of(s, account, std::string(kv.value().as_string()));
      }
    }
  }
  return http::Response::json(200, {{"success", true},
                                    {"data", json::object{{"url", url},
                                                          {"status", status},
                                                          {"agent_id", a->code},
                                                          {"gestures", std::move(gestures)}}}});
}

http::Response update(Services& s, http::Request& req) {
  const std::string& account = req.principal->account_id;
  auto body = parse_json_object(req.body);
  if (!body.ok()) return http::Response::from_status(body.status());
  auto patch = get_object(*body, "dynamics");
  if (!patch.ok()) return http::Response::from_status(patch.status());
  if (!*patch) return http::Response::from_status(Status::Invalid("Field 'dynamics' is required (an object)"));
  auto toggle = get_bool(*body, "toggle_enabled");
  if (!toggle.ok()) return http::Response::from_status(toggle.status());
  auto a = s.agents->get(account, req.param("agent_id"));
  if (!a.ok()) return http::Response::from_status(a.status());

  json::object stored;
  boost::system::error_code ec;
  auto parsed = json::parse(a->dynamics_config, ec);
  if (!ec && parsed.is_object()) stored = parsed.as_object();
  jobs::merge_patch(stored, **patch);
  if (toggle->has_value()) {
    stored["enabled"] = **toggle;
    stored["active_model"] = **toggle ? "dynamics" : "talking";
  }
  json::object effective = jobs::default_dynamics_config();
  jobs::merge_patch(effective, stored);
  if (Status st = jobs::validate_dynamics_config(effective); !st.ok()) return http::Response::from_status(st);
  std::string serialized = json::serialize(stored);
  if (serialized.size() > 64 * 1024) {
    return http::Response::from_status(Status::Invalid("Field 'dynamics' is too large (64 KB at most)"));
  }

  // Background movements are rendered from the agent's model, so they can start only once it exists.
  std::optional<NewJob> job;
  std::string regen_error;
  if ((a->status == "ready" || a->status == "success") && a->model_file) {
    NewJob j;
    j.id = new_id("job");
    j.kind = std::string(kJobDynamicsMovements);
    j.account_id = account;
    j.subject = a->code;
    j.max_attempts = 3;
    job = j;
  } else if (a->status == "failed") {
    regen_error = "Agent " + a->code + " failed to generate; there is no model to animate";
  } else {
    regen_error = "Agent " + a->code + " is still generating (status: " + a->status + "); retry once it is ready";
  }
  Status st = s.agents->update_dynamics_config(account, a->code, serialized, job);
  if (!st.ok()) return http::Response::from_status(st);
  json::object out{{"success", true}, {"agent_id", a->code}};
  if (job) {
    s.jobs->wake();
    out["message"] = "Dynamics updated successfully and movements regeneration started";
    out["regeneration_status"] = "started";
  } else {
    out["message"] = "Dynamics updated successfully; movements regeneration could not start";
    out["regeneration_status"] = "failed";
    out["regeneration_error"] = regen_error;
  }
  return http::Response::json(200, out);
}

}  // namespace

void register_dynamics_routes(http::Router& router, Services& s) {
  http::RouteOptions gen;
  gen.tier = Tier::kGenerate;
  gen.body_limit = 16u << 20;  // an inline image_url (10 MB as base64)
  router.add("POST", "/v1/dynamics/generate", [&s](http::Request& req) { return generate(s, req); }, gen);
  router.add("GET", "/v1/dynamics/{agent_id}", [&s](http::Request& req) { return get(s, req); });
  router.add("PUT", "/v1/dynamics/{agent_id}", [&s](http::Request& req) { return update(s, req); });
}

}  // namespace imago::api
