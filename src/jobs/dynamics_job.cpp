// dynamics_generate and dynamics_movements: gesture clips and the dynamics model.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "agents/dynamics_config.h"
#include "avatar/builder.h"
#include "avatar/clip.h"
#include "avatar/imx.h"
#include "billing/operations.h"
#include "fetch/media_input.h"
#include "jobs/job_handlers.h"
#include "jobs/job_support.h"
#include "util/crypto.h"
#include "util/log.h"
#include "util/strings.h"

namespace imago::jobs {

namespace json = boost::json;

void DynamicsHandler::fail(JobContext& ctx, const std::string& message, std::vector<std::string>& written) {
  delete_written(d_, written);
  const Job& job = ctx.job();
  bool movements = job.kind == kJobDynamicsMovements;
  DynamicsOutcome o;
  o.account_id = job.account_id;
  o.code = job.subject;
  o.lease = ctx.lease();
  o.success = false;
  o.movements_only = movements;
  o.error = message;
  if (!movements) {
    LedgerOp refund =
        billing::refund_of(billing::dynamics_generation_charge(job.account_id, job.id, job.subject),
                           "dynamics generation failed: " + message.substr(0, 300));
    o.refund = refund;
    o.event = "dynamics.failed";
    o.event_data = json::serialize(
        json::object{{"agent_id", job.subject}, {"status", "failed"}, {"error_message", message}});
  }
  auto r = d_.agents->finish_dynamics(o);
  if (!r.ok())
    log::error("dynamics_fail_record_failed", {{"agent", job.subject}, {"error", r.status().message()}});
  else if (!*r)
    (void)d_.job_store->fail(job.id, ctx.owner(), message);  // agent gone: just close the job
}

void DynamicsHandler::give_up(JobContext& ctx, const std::string& reason) {
  std::vector<std::string> none;
  fail(ctx, reason, none);
}

JobStep DynamicsHandler::run(JobContext& ctx) {
  const Job& job = ctx.job();
  const bool movements = job.kind == kJobDynamicsMovements;
  std::vector<std::string> written;
  auto got = d_.agents->get(job.account_id, job.subject);
  if (!got.ok()) return subject_unavailable(d_, ctx, got.status(), "agent was deleted");
  const AgentRecord& a = *got;
  if (a.status == "failed") {
    fail(ctx, "Agent " + a.code + " failed to generate; dynamics need a ready agent", written);
    return JobStep::done();
  }
  if ((a.status != "ready" && a.status != "success") || !a.model_file) {
    return JobStep::defer(2000);  // the agent is still generating: wait without using an attempt
  }
  boost::system::error_code ec;
  json::value payload = json::parse(job.payload, ec);
  if (ec || !payload.is_object()) payload = json::object();
  const json::object& p = payload.as_object();
  json::object config = agents::effective_dynamics_config(a);
  double duration = 5;
  if (auto* v = p.if_contains("duration"); v && v->is_number()) duration = v->to_number<double>();
  if (movements) {
    if (auto* v = config.if_contains("movement_duration"); v && v->is_number())
      duration = v->to_number<double>();
  }

  auto imx = load_file_bytes(d_, a.account_id, *a.model_file);
  if (!imx.ok()) {
    if (imx.status().code() == Code::kNotFound) {
      fail(ctx, "the agent's model file is missing", written);
      return JobStep::done();
    }
    return JobStep::retry(imx.status().message());
  }
  std::string model = std::move(imx).value();
  // A different source image: build a model of it to animate (the agent's own model is untouched).
  std::optional<std::string> source_image;
  if (auto* v = p.if_contains("image_file"); v && v->is_string()) {
    auto bytes = load_file_bytes(d_, a.account_id, std::string(v->as_string()));
    if (!bytes.ok()) {
      if (bytes.status().code() != Code::kNotFound) return JobStep::retry(bytes.status().message());
      fail(ctx, "image_url: the uploaded file is gone", written);
      return JobStep::done();
    }
    source_image = std::move(bytes).value();
  } else if (auto* u = p.if_contains("image_url"); u && u->is_string()) {
    auto fetched =
        fetch::fetch_media(*d_.fetcher, "image_url", std::string(u->as_string()), fetch::MediaKind::kImage);
    if (!fetched.ok()) {
      if (fetched.status().code() == Code::kUnavailable) return JobStep::retry(fetched.status().message());
      fail(ctx, fetched.status().message(), written);
      return JobStep::done();
    }
    source_image = std::move(fetched->bytes);
  }
  if (source_image) {
    avatar::BuildInput in;
    in.agent_id = a.code;
    in.name = a.name;
    in.model_type = a.model;
    in.aspect_ratio = a.aspect_ratio;
    in.image_bytes = std::move(source_image);
    auto built = avatar::build_imx(in, {});
    if (!built.ok()) {
      if (built.status().code() == Code::kInvalidArgument) {
        fail(ctx, "image_url: " + built.status().message(), written);
        return JobStep::done();
      }
      return JobStep::retry(built.status().message());
    }
    model = std::move(built).value();
  }

  std::vector<std::string> gestures;
  if (movements) {
    auto* idle = config.if_contains("idle_gesture");
    gestures.push_back(idle && idle->is_string() ? std::string(idle->as_string()) : "idle_subtle");
  } else {
    gestures = avatar::gesture_names();
  }
  std::filesystem::path tmp = std::filesystem::path(d_.config->data_dir) / "tmp" / job.id;
  std::error_code fec;
  std::filesystem::create_directories(tmp, fec);
  struct TmpCleanup {
    std::filesystem::path p;
    ~TmpCleanup() {
      std::error_code e;
      std::filesystem::remove_all(p, e);
    }
  } cleanup{tmp};

  DynamicsOutcome out;
  out.account_id = a.account_id;
  out.code = a.code;
  out.lease = ctx.lease();
  out.movements_only = movements;
  json::object gesture_ids, gesture_urls, manifest_gestures;
  for (const auto& g : gestures) {
    if (ctx.lost()) {
      delete_written(d_, written);
      return JobStep::done();
    }
    std::string path = (tmp / (g + ".mp4")).string();
    Status s = avatar::render_gesture_clip(model, g, duration, path);
    if (!s.ok()) {
      if (s.code() == Code::kInvalidArgument) {
        fail(ctx, "gesture " + g + ": " + s.message(), written);
        return JobStep::done();
      }
      delete_written(d_, written);
      return JobStep::retry("gesture " + g + ": " + s.message());
    }
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    std::string clip = ss.str();
    auto rec = store_artifact(d_, a, "clip", "video", "video/mp4", "mp4", clip, written);
    if (!rec.ok()) {
      delete_written(d_, written);
      return JobStep::retry(rec.status().message());
    }
    out.files.push_back(*rec);
    gesture_ids[g] = rec->id;
    gesture_urls[g] = file_url(d_, *rec);
    manifest_gestures[g] = json::object{{"file_id", rec->id},
                                        {"path", file_url_path(rec->id, rec->ext)},
                                        {"duration_s", duration},
                                        {"bytes", rec->size},
                                        {"sha256", sha256_hex(clip)}};
    if (movements) out.movements_file = rec->id;
  }
  if (!movements) {
    json::object manifest{{"format", "imago-dynamics"},
                          {"version", 1},
                          {"agent_id", a.code},
                          {"source_model_sha256", sha256_hex(model)},
                          {"generated_at", format_rfc3339(d_.clock->now_s())},
                          {"duration_s", duration},
                          {"gestures", manifest_gestures},
                          {"keywords", config.contains("keywords") ? config.at("keywords") : json::object()},
                          {"idle_gesture", config.contains("idle_gesture") ? config.at("idle_gesture")
                                                                           : json::value("idle_subtle")}};
    auto rec = store_artifact(d_, a, "dynamics", "model", "application/json", "json",
                              json::serialize(manifest), written);
    if (!rec.ok()) {
      delete_written(d_, written);
      return JobStep::retry(rec.status().message());
    }
    out.files.push_back(*rec);
    out.dynamics_file = rec->id;
    out.gestures_json = json::serialize(gesture_ids);
    out.event = "dynamics.ready";
    out.event_data = json::serialize(json::object{
        {"agent_id", a.code}, {"status", "ready"}, {"url", file_url(d_, *rec)}, {"gestures", gesture_urls}});
  }
  out.success = true;
  auto recorded = d_.agents->finish_dynamics(out);
  if (!recorded.ok()) {
    delete_written(d_, written);
    return JobStep::retry(recorded.status().message());
  }
  if (!*recorded) {
    delete_written(d_, written);
    ctx.mark_lost();
  }
  return JobStep::done();
}

}  // namespace imago::jobs
