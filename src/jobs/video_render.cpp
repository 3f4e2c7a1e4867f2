#include "jobs/video_render.h"

#include <boost/json.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "agents/video_speech.h"
#include "avatar/clip.h"
#include "billing/operations.h"
#include "blobs/blob_store.h"
#include "speech/phone_recognizer.h"
#include "store/agent_store.h"
#include "store/file_store.h"
#include "store/job_store.h"
#include "store/ledger_store.h"
#include "util/log.h"

namespace imago::jobs {

namespace json = boost::json;

namespace {

struct VideoPayload {
  std::string agent_code, model_file, audio_blob;
  int64_t minutes = 0;
  billing::MinuteRate rate = billing::MinuteRate::kEssenceCloud;
};

Result<VideoPayload> read_payload(const Job& job) {
  boost::system::error_code ec;
  json::value v = json::parse(job.payload, ec);
  if (ec || !v.is_object()) return Status::Invalid("video job: bad payload");
  const json::object& o = v.as_object();
  VideoPayload p;
  try {
    p.agent_code = std::string(o.at("agent_code").as_string());
    p.model_file = std::string(o.at("model_file").as_string());
    p.audio_blob = std::string(o.at("audio_blob").as_string());
    p.minutes = o.at("minutes").to_number<int64_t>();
    auto r = billing::parse_minute_rate(std::string(o.at("rate").as_string()));
    if (!r) return Status::Invalid("video job: unknown rate");
    p.rate = *r;
  } catch (const std::exception& e) {
    return Status::Invalid(std::string("video job: ") + e.what());
  }
  return p;
}

Result<std::string> read_local(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Internal("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

void VideoRenderHandler::fail(JobContext& ctx, const std::string& message) {
  const Job& job = ctx.job();
  auto closed = d_.job_store->fail(job.id, ctx.owner(), message);
  if (!closed.ok() || !*closed) {
    ctx.mark_lost();  // another worker holds the job now: it records the outcome
    return;
  }
  auto p = read_payload(job);
  if (p.ok()) {
    LedgerOp charge = billing::video_render_minutes(job.account_id, job.id, p->minutes, p->rate);
    auto refunded = d_.ledger->apply(billing::refund_of(charge, "video render failed: " + message));
    if (!refunded.ok())
      log::error("video_refund_failed", {{"job", job.id}, {"error", refunded.status().message()}});
    (void)d_.blobs->remove(p->audio_blob);
  }
  log::info("video_failed", {{"job", job.id}, {"error", message}});
}

void VideoRenderHandler::give_up(JobContext& ctx, const std::string& reason) {
  fail(ctx, reason);
}

JobStep VideoRenderHandler::run(JobContext& ctx) {
  const Job& job = ctx.job();
  auto p = read_payload(job);
  if (!p.ok()) {
    // Without the payload the charge cannot be rebuilt: close the job, nothing to refund from.
    (void)d_.job_store->fail(job.id, ctx.owner(), p.status().message());
    return JobStep::done();
  }
  auto agent = d_.agents->get(job.account_id, p->agent_code);
  if (!agent.ok()) {
    if (agent.status().code() != Code::kNotFound) return JobStep::retry(agent.status().message());
    fail(ctx, "Agent " + p->agent_code + " was deleted");
    return JobStep::done();
  }
  auto model_file = d_.files->get(job.account_id, p->model_file);
  if (!model_file.ok()) {
    if (model_file.status().code() != Code::kNotFound) return JobStep::retry(model_file.status().message());
    fail(ctx, "the agent's model file is gone");
    return JobStep::done();
  }
  auto model = d_.blobs->get(model_file->blob_key);
  if (!model.ok()) {
    if (model.status().code() != Code::kNotFound) return JobStep::retry(model.status().message());
    fail(ctx, "the agent's model file is gone");
    return JobStep::done();
  }
  auto speech_bytes = d_.blobs->get(p->audio_blob);
  if (!speech_bytes.ok()) {
    if (speech_bytes.status().code() != Code::kNotFound)
      return JobStep::retry(speech_bytes.status().message());
    fail(ctx, "the video's speech is gone");
    return JobStep::done();
  }
  auto speech = agents::decode_speech_blob(*speech_bytes);
  if (!speech.ok()) {
    fail(ctx, speech.status().message());
    return JobStep::done();
  }
  // Uploaded audio comes without text: recognise its phones so the lips close on p/b/m and
  // round on o/u/w (about 0.8 s of CPU per second of audio, on this worker). Loudness drives
  // the mouth when recognition is unavailable or hears no speech.
  if (speech->phonemes.empty()) speech::add_recognized_phones(*speech);

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
  std::string out = (tmp / "video.mp4").string();
  auto rendered = avatar::render_talking_video(*model, *speech, out);
  if (ctx.lost()) return JobStep::done();
  if (!rendered.ok()) {
    if (rendered.status().code() == Code::kInvalidArgument) {
      fail(ctx, rendered.status().message());
      return JobStep::done();
    }
    return JobStep::retry(rendered.status().message());
  }
  auto mp4 = read_local(out);
  if (!mp4.ok()) return JobStep::retry(mp4.status().message());

  FileRecord f;
  f.id = agents::video_file_id(job.id);
  f.account_id = job.account_id;
  f.purpose = "video";
  f.kind = "video";
  f.mime = "video/mp4";
  f.ext = "mp4";
  f.size = static_cast<int64_t>(mp4->size());
  f.blob_key = "videos/" + job.account_id + "/" + f.id + ".mp4";
  f.created_at = d_.clock->now_s();
  if (Status s = d_.blobs->put(f.blob_key, *mp4); !s.ok()) return JobStep::retry(s.message());
  if (auto existing = d_.files->get(job.account_id, f.id); !existing.ok()) {
    if (Status s = d_.files->insert(f); !s.ok()) return JobStep::retry(s.message());
  }
  auto done = d_.job_store->complete(job.id, ctx.owner());
  if (!done.ok()) return JobStep::retry(done.status().message());
  if (!*done) {
    ctx.mark_lost();
    return JobStep::done();
  }
  (void)d_.blobs->remove(p->audio_blob);
  log::info("video_rendered", {{"job", job.id}, {"agent", p->agent_code}, {"seconds", *rendered}});
  return JobStep::done();
}

}  // namespace imago::jobs
