#include "jobs/job_handlers.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "avatar/builder.h"
#include "avatar/clip.h"
#include "avatar/imx.h"
#include "billing/operations.h"
#include "fetch/media_input.h"
#include "jobs/dynamics_config.h"
#include "util/crypto.h"
#include "util/log.h"
#include "util/random.h"
#include "util/strings.h"
#include "webhooks/delivery.h"

namespace imago::jobs {

namespace json = boost::json;

namespace {

// Writes bytes as a new file of the agent; the record is registered later with the outcome.
Result<FileRecord> store_artifact(const Services& d, const AgentRecord& a, std::string purpose,
                                  std::string kind, std::string mime, std::string ext, std::string_view bytes,
                                  std::vector<std::string>& written) {
  FileRecord f;
  f.id = new_id("file");
  f.account_id = a.account_id;
  f.agent_code = a.code;
  f.purpose = std::move(purpose);
  f.kind = std::move(kind);
  f.mime = std::move(mime);
  f.ext = std::move(ext);
  f.size = static_cast<int64_t>(bytes.size());
  f.blob_key = agent_blob_key(a.account_id, a.code, f.id, f.ext);
  f.created_at = d.clock->now_s();
  Status s = d.blobs->put(f.blob_key, bytes);
  if (!s.ok()) return s;
  written.push_back(f.blob_key);
  return f;
}

Result<std::string> load_file_bytes(const Services& d, const std::string& account_id,
                                    const std::string& file_id) {
  auto f = d.files->get(account_id, file_id);
  if (!f.ok()) return f.status();
  return d.blobs->get(f->blob_key);
}

void delete_written(const Services& d, std::vector<std::string>& written) {
  for (const auto& k : written) (void)d.blobs->remove(k);
  written.clear();
}

std::string file_url(const Services& d, const FileRecord& f) {
  return d.absolute_url(file_url_path(f.id, f.ext));
}

// The job's subject (agent, delivery) could not be loaded: when it is gone for good the job ends,
// any other failure (a busy database) is retried.
JobStep subject_unavailable(const Services& d, JobContext& ctx, const Status& st, const char* gone) {
  if (st.code() == Code::kNotFound) {
    (void)d.job_store->fail(ctx.job().id, ctx.owner(), gone);
    return JobStep::done();
  }
  return JobStep::retry(st.message());
}

}  // namespace

std::string agent_event_data(const Services& d, const std::string& code, const std::string& status,
                             const std::optional<std::string>& model_url, const std::string& error) {
  json::object o{{"agent_id", code}, {"status", status}};
  if (status == "ready") {
    o["progress"] = 1.0;
    o["model_url"] = model_url.value_or("");
  } else {
    o["error_message"] = error;
  }
  (void)d;
  return json::serialize(o);
}

// ---------------------------------------------------------------------------------------------
// Agent generation

void AgentGenerationHandler::fail(JobContext& ctx, const AgentRecord* agent, const std::string& message,
                                  std::vector<std::string>& written) {
  delete_written(d_, written);
  const Job& job = ctx.job();
  GenerationOutcome o;
  o.account_id = job.account_id;
  o.code = job.subject;
  o.lease = ctx.lease();
  o.success = false;
  o.error = message;
  // The refund mirrors the charge made when the job was created (same account, job and agent), so
  // its operation key matches and it can happen only once.
  LedgerOp refund = billing::refund_of(
      billing::agent_generation_charge(agent ? agent->account_id : job.account_id, job.id, job.subject),
      "agent generation failed: " + message.substr(0, 300));
  o.refund = refund;
  o.event = "agent.failed";
  o.event_data = agent_event_data(d_, job.subject, "failed", std::nullopt, message);
  auto r = d_.agents->finish_generation(o);
  if (!r.ok()) {
    log::error("agent_fail_record_failed", {{"agent", job.subject}, {"error", r.status().message()}});
  } else if (*r) {
    log::info("agent_failed", {{"agent", job.subject}, {"error", message}});
  }
}

void AgentGenerationHandler::give_up(JobContext& ctx, const std::string& reason) {
  std::vector<std::string> none;
  auto a = d_.agents->get(ctx.job().account_id, ctx.job().subject);
  fail(ctx, a.ok() ? &a.value() : nullptr, reason, none);
}

JobStep AgentGenerationHandler::run(JobContext& ctx) {
  const Job& job = ctx.job();
  auto got = d_.agents->get(job.account_id, job.subject);
  if (!got.ok()) return subject_unavailable(d_, ctx, got.status(), "agent was deleted");
  const AgentRecord& a = *got;
  const JobLease lease = ctx.lease();
  auto progress = [&](const std::string& status, double p, const std::string& msg, const std::string& step) {
    auto r = d_.agents->set_progress(a.account_id, a.code, lease, {status, p, msg, step});
    if (r.ok() && !*r) ctx.mark_lost();
  };
  std::vector<std::string> written;
  GenerationOutcome out;
  out.account_id = a.account_id;
  out.code = a.code;
  out.lease = lease;

  avatar::BuildInput in;
  in.agent_id = a.code;
  in.name = a.name;
  in.model_type = a.model;
  in.aspect_ratio = a.aspect_ratio;
  // The voice asked for at generate (voice / voice_code); without one the builder matches the
  // audio or video sample, or chooses from the agent id.
  boost::json::object requested_voice;
  {
    boost::system::error_code ec;
    auto v = boost::json::parse(a.voice, ec);
    if (!ec && v.is_object()) requested_voice = v.as_object();
  }
  if (auto* id = requested_voice.if_contains("id"); id && id->is_string()) {
    in.voice = std::string(id->as_string());
    if (auto* ax = requested_voice.if_contains("axes"); ax && ax->is_object()) {
      auto num = [&](const char* key) {
        auto* x = ax->as_object().if_contains(key);
        return x && x->is_number() ? x->to_number<double>() : 0.0;
      };
      in.axes = {num("gender"), num("pitch"), num("rate"), num("brightness")};
    }
  }

  progress("generating", 0.02, "Preparing inputs", "inputs");
  struct Input {
    const char* field;
    fetch::MediaKind kind;
    const std::optional<std::string>& file;
    const std::optional<std::string>& source;
    std::optional<std::string>& out_file;
    std::optional<std::string>& bytes;
  };
  Input inputs[] = {
      {"image", fetch::MediaKind::kImage, a.image_file, a.image_source, out.image_file, in.image_bytes},
      {"video", fetch::MediaKind::kVideo, a.video_file, a.video_source, out.video_file, in.video_bytes},
      {"audio", fetch::MediaKind::kAudio, a.audio_file, a.audio_source, out.audio_file, in.audio_bytes},
  };
  for (auto& input : inputs) {
    if (ctx.lost()) break;
    if (input.file) {
      auto bytes = load_file_bytes(d_, a.account_id, *input.file);
      if (!bytes.ok()) {
        if (bytes.status().code() == Code::kNotFound) {
          fail(ctx, &a, std::string(input.field) + ": the stored file is missing", written);
          return JobStep::done();
        }
        delete_written(d_, written);
        return JobStep::retry(bytes.status().message());
      }
      input.bytes = std::move(bytes).value();
    } else if (input.source) {
      progress("generating", 0.04, std::string("Downloading ") + input.field, "inputs");
      auto fetched = fetch::fetch_media(*d_.fetcher, input.field, *input.source, input.kind);
      if (!fetched.ok()) {
        if (fetched.status().code() == Code::kUnavailable) {
          delete_written(d_, written);
          return JobStep::retry(fetched.status().message());
        }
        fail(ctx, &a, fetched.status().message(), written);
        return JobStep::done();
      }
      auto rec = store_artifact(d_, a, "input", std::string(fetch::media_kind_name(input.kind)),
                                fetched->type.mime, fetched->type.ext, fetched->bytes, written);
      if (!rec.ok()) {
        delete_written(d_, written);
        return JobStep::retry(rec.status().message());
      }
      rec->source_url = *input.source;
      input.out_file = rec->id;
      out.files.push_back(*rec);
      input.bytes = std::move(fetched->bytes);
    }
  }
  if (ctx.lost()) {
    delete_written(d_, written);
    return JobStep::done();
  }
  // The intermediate marker of SPEC 3.1: a sub-step finished, polling continues.
  progress("completed", 0.1, "Inputs ready", "inputs");

  double last = 0.1;
  std::string last_step;
  auto on_progress = [&](std::string_view step, double fraction, std::string_view message) {
    double p = 0.1 + 0.85 * std::clamp(fraction, 0.0, 1.0);
    if (ctx.lost()) return;
    if (std::string(step) == last_step && p - last < 0.04) return;  // a database write per few percent
    last = p;
    last_step = std::string(step);
    progress("generating", p, std::string(message), std::string(step));
  };
  auto imx = avatar::build_imx(in, on_progress);
  if (ctx.lost()) {
    delete_written(d_, written);
    return JobStep::done();
  }
  if (!imx.ok()) {
    if (imx.status().code() == Code::kInvalidArgument) {
      fail(ctx, &a, imx.status().message(), written);
      return JobStep::done();
    }
    delete_written(d_, written);
    return JobStep::retry(imx.status().message());
  }
  progress("completed", 0.96, "Model built", "package");
  auto model = store_artifact(d_, a, "model", "model", "application/octet-stream", "imx", *imx, written);
  if (!model.ok()) {
    delete_written(d_, written);
    return JobStep::retry(model.status().message());
  }
  out.files.push_back(*model);
  out.model_file = model->id;
  // Record the voice the built model speaks with (what live sessions, videos and dynamics use).
  if (auto built = avatar::read_imx(*imx); built.ok()) {
    const auto& m = built->manifest;
    boost::json::object v{{"id", m.voice},
                          {"axes",
                           {{"gender", m.axes.gender},
                            {"pitch", m.axes.pitch},
                            {"rate", m.axes.rate},
                            {"brightness", m.axes.brightness}}}};
    if (!in.voice.empty()) {
      v["source"] = requested_voice.contains("voice_code") ? "voice_code" : "requested";
      if (auto* c = requested_voice.if_contains("voice_code")) v["voice_code"] = *c;
    } else {
      v["source"] = m.voice_match ? "matched" : m.face_estimate ? "face" : "default";
    }
    out.voice = boost::json::serialize(v);
  }
  out.success = true;
  out.event = "agent.ready";
  out.event_data = agent_event_data(d_, a.code, "ready", file_url(d_, *model), "");
  auto recorded = d_.agents->finish_generation(out);
  if (!recorded.ok()) {
    delete_written(d_, written);
    return JobStep::retry(recorded.status().message());
  }
  if (!*recorded) {
    delete_written(d_, written);  // lease lost: another worker owns the outcome
    ctx.mark_lost();
    return JobStep::done();
  }
  log::info("agent_ready", {{"agent", a.code}, {"bytes", static_cast<int64_t>(imx->size())}});
  return JobStep::done();
}

// ---------------------------------------------------------------------------------------------
// Dynamics

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
  json::object config = effective_dynamics_config(a);
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

// ---------------------------------------------------------------------------------------------
// Webhook delivery

JobStep WebhookDeliveryHandler::run(JobContext& ctx) {
  const Job& job = ctx.job();
  auto d = d_.webhooks->get_delivery(job.subject);
  if (!d.ok()) return subject_unavailable(d_, ctx, d.status(), "delivery no longer exists");
  if (d->state != "pending") {
    (void)d_.job_store->complete(job.id, ctx.owner());
    return JobStep::done();
  }
  auto hook = d_.webhooks->get_by_id(d->webhook_id);
  if (!hook.ok() || !hook->active) {
    (void)d_.job_store->fail(job.id, ctx.owner(), "webhook was deleted or disabled");
    return JobStep::done();
  }
  auto res = webhooks::attempt_delivery(*d_.fetcher, *d_.clock, *hook, *d);
  bool last = job.attempts >= job.max_attempts;
  std::string state = res.delivered ? "delivered" : (!res.retryable || last) ? "failed" : "pending";
  auto n = d_.webhooks->record_attempt(d->id, res.status_code, res.error, res.duration_ms, state);
  log::info("webhook_attempt", {{"delivery", d->id},
                                {"event_type", d->event_type},
                                {"attempt", n.ok() ? *n : -1},
                                {"status_code", res.status_code ? *res.status_code : 0},
                                {"duration_ms", res.duration_ms},
                                {"state", state},
                                {"error", res.error.value_or("")}});
  if (res.delivered) {
    (void)d_.job_store->complete(job.id, ctx.owner());
    return JobStep::done();
  }
  if (state == "failed") {
    (void)d_.job_store->fail(job.id, ctx.owner(), res.error.value_or("delivery failed"));
    return JobStep::done();
  }
  return JobStep::retry(res.error.value_or("delivery failed"));
}

void WebhookDeliveryHandler::give_up(JobContext& ctx, const std::string& reason) {
  const Job& job = ctx.job();
  (void)d_.webhooks->record_attempt(job.subject, std::nullopt, "gave up: " + reason, 0, "failed");
  (void)d_.job_store->fail(job.id, ctx.owner(), reason);
}

// ---------------------------------------------------------------------------------------------
// Blob cleanup

JobStep BlobDeleteHandler::run(JobContext& ctx) {
  const Job& job = ctx.job();
  boost::system::error_code ec;
  json::value payload = json::parse(job.payload, ec);
  std::string first_error;
  if (!ec && payload.is_object()) {
    if (auto* keys = payload.as_object().if_contains("keys"); keys && keys->is_array()) {
      for (const auto& k : keys->as_array()) {
        if (!k.is_string()) continue;
        Status s = d_.blobs->remove(std::string(k.as_string()));
        if (!s.ok() && first_error.empty()) first_error = s.message();
      }
    }
  }
  if (!first_error.empty()) return JobStep::retry(first_error);
  (void)d_.job_store->complete(job.id, ctx.owner());
  return JobStep::done();
}

void BlobDeleteHandler::give_up(JobContext& ctx, const std::string& reason) {
  log::error("blob_delete_gave_up", {{"job", ctx.job().id}, {"error", reason}});
  (void)d_.job_store->fail(ctx.job().id, ctx.owner(), reason);
}

}  // namespace imago::jobs
