// agent_generate: fetch the inputs, build the .imx, record the outcome (refund and agent.failed on
// failure).
#include "agents/agent_voice.h"
#include "avatar/builder.h"
#include "avatar/imx.h"
#include "billing/operations.h"
#include "fetch/media_input.h"
#include "jobs/job_handlers.h"
#include "jobs/job_support.h"
#include "util/log.h"

namespace imago::jobs {

namespace json = boost::json;

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
  const agents::AgentVoice requested = agents::parse_agent_voice(a.voice);
  in.voice = requested.id;
  in.axes = requested.axes.value_or(speech::Axes{});

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
    out.voice = agents::serialize_agent_voice(agents::built_voice(requested, built->manifest));
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

}  // namespace imago::jobs
