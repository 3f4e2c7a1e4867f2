#include "agents/video_service.h"

#include <boost/json.hpp>
#include <cmath>

#include "agents/agent_voice.h"
#include "agents/media_refs.h"
#include "agents/video_speech.h"
#include "avatar/clip.h"
#include "avatar/imx.h"
#include "billing/operations.h"
#include "blobs/blob_store.h"
#include "fetch/media_input.h"
#include "limits/storage_quota.h"
#include "speech/speech_service.h"
#include "store/agent_store.h"
#include "store/file_store.h"
#include "store/job_store.h"
#include "store/ledger_store.h"
#include "util/crypto.h"
#include "util/log.h"
#include "util/random.h"
#include "util/strings.h"

namespace imago::agents {

namespace json = boost::json;

namespace {

// The renderer adds this much idle after the speech (avatar/offline.h OfflineRender::tail_s) and
// rounds up to whole frames at 25 FPS: the output is what is billed and limited.
constexpr double kTailS = 0.4;
double output_seconds(double speech_s) {
  return std::ceil((speech_s + kTailS) * 25 - 1e-9) / 25;
}

size_t utf8_chars(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

Status invalid_input(const Status& st) {
  // Anything wrong with what the caller sent (a bad URL, a file that is not audio, a voice that
  // does not exist) is a 400 naming the field; a full speech queue stays a 503, and an account
  // holding its share of the synthesizer a 429.
  if (st.code() == Code::kUnavailable || st.code() == Code::kRateLimited || st.code() == Code::kInternal)
    return st;
  return Status::Invalid(st.message());
}

std::string status_of(const Job& j) {
  if (j.state == "succeeded") return "completed";
  if (j.state == "failed" || j.state == "cancelled") return "failed";
  return "processing";
}

}  // namespace

Result<VideoJob> VideoService::start(const std::string& account, const VideoRequest& r) {
  if (!r.agent_code || r.agent_code->empty()) return Status::Invalid("Field 'agent_code' is required");
  if (!r.input_type) return Status::Invalid("Field 'input.type' is required ('text' or 'audio')");
  const bool text_input = *r.input_type == "text";
  if (!text_input && *r.input_type != "audio")
    return Status::Invalid("Field 'input.type' must be 'text' or 'audio'");
  if (text_input) {
    if (r.audio_url) return Status::Invalid("Field 'input.audio_url' belongs to input type 'audio'");
    if (!r.text || trim(*r.text).empty()) return Status::Invalid("Field 'input.text' is required");
    if (utf8_chars(*r.text) > kMaxVideoTextChars)
      return Status::Invalid("Field 'input.text' must be at most 5000 characters");
  } else {
    if (r.text || r.voice)
      return Status::Invalid("Fields 'input.text' and 'input.voice' belong to input type 'text'");
    if (!r.audio_url || r.audio_url->empty()) return Status::Invalid("Field 'input.audio_url' is required");
  }
  std::optional<std::string> key;
  if (r.idempotency_key) {
    std::string k(trim(*r.idempotency_key));
    if (k.empty() || k.size() > 200)
      return Status::Invalid("Header 'Idempotency-Key' must be 1 to 200 characters");
    key = k;
  }

  // A retried request (same account and key) is the same job: derive its id from the key.
  std::string job_id = key ? "job_v" + sha256_hex(account + "\n" + *key).substr(0, 24) : new_id("job");
  if (key) {
    auto existing = d_.jobs->get(job_id);
    if (existing.ok() && existing->account_id == account) {
      auto v = get(account, job_id);
      if (v.ok()) v->replayed = true;
      return v;
    }
  }

  auto agent = d_.agents->get(account, *r.agent_code);
  if (!agent.ok()) return agent.status();
  if ((agent->status != "ready" && agent->status != "success") || !agent->model_file) {
    return Status::Invalid("Agent " + agent->code + " is not ready (status: " + agent->status +
                           "); a video needs its model");
  }
  auto model_file = d_.files->get(account, *agent->model_file);
  if (!model_file.ok()) return model_file.status();
  // The render writes an MP4 that counts toward the account's storage: an account already at
  // its quota cannot start one (nothing is charged).
  if (r.storage_quota_bytes > 0) {
    auto used = d_.files->usage_bytes(account);
    if (!used.ok()) return used.status();
    if (Status st = check_storage_quota(*used, 1, r.storage_quota_bytes); !st.ok()) return st;
  }

  // The speech: synthesized with the agent's voice, or the caller's audio.
  speech::Audio audio;
  if (text_input) {
    auto model = d_.blobs->get(model_file->blob_key);
    if (!model.ok()) return model.status();
    auto imx = avatar::read_imx(*model);
    if (!imx.ok()) return imx.status();
    const speech::VoiceSettings vs = model_voice_settings(imx->manifest, r.voice);
    if (Status st = d_.speech->validate(*r.text, vs); !st.ok()) return invalid_input(st);
    auto a = d_.speech->synthesize(*r.text, vs, {account, speech::SynthesisPriority::kBatch});
    if (!a.ok()) return invalid_input(a.status());
    audio = std::move(a).value();
  } else {
    auto m = resolve_media_param(*d_.files, *d_.public_url, account, "input.audio_url", *r.audio_url,
                                 fetch::MediaKind::kAudio);
    if (!m.ok()) return invalid_input(m.status());
    std::string bytes;
    if (m->file) {
      auto b = d_.blobs->get(m->file->blob_key);
      if (!b.ok()) return b.status();
      bytes = std::move(b).value();
    } else if (m->url) {
      auto f = fetch::fetch_media(*d_.fetcher, "input.audio_url", *m->url, fetch::MediaKind::kAudio, 30000);
      if (!f.ok()) return Status::Invalid(f.status().message());
      bytes = std::move(f->bytes);
    } else if (m->bytes) {
      bytes = std::move(*m->bytes);
    }
    auto a = avatar::decode_speech(bytes);
    if (!a.ok()) return Status::Invalid("input.audio_url: " + a.status().message());
    audio = std::move(a).value();
    if (audio.samples.empty()) return Status::Invalid("input.audio_url: the audio is empty");
  }
  double seconds = output_seconds(audio.duration_s());
  if (seconds > kMaxVideoSeconds) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "The video would last %.1f s; at most %.0f s of output are allowed",
                  seconds, kMaxVideoSeconds);
    return Status::Invalid(buf);
  }

  const billing::MinuteRate rate = agent->model == "expression" ? billing::MinuteRate::kExpressionCloud
                                                                : billing::MinuteRate::kEssenceCloud;
  const int64_t minutes = billing::billable_minutes(seconds);
  std::string audio_blob = "videos/" + account + "/" + job_id + ".speech";
  if (Status st = d_.blobs->put(audio_blob, encode_speech_blob(audio)); !st.ok()) return st;

  LedgerOp charge = billing::video_render_minutes(account, job_id, minutes, rate);
  auto charged = d_.ledger->apply(charge);
  if (!charged.ok()) {
    (void)d_.blobs->remove(audio_blob);
    return charged.status();
  }
  NewJob job;
  job.id = job_id;
  job.kind = std::string(kJobVideoRender);
  job.account_id = account;
  job.subject = job_id;  // not the agent: deleting the agent must not cancel a charged job unrefunded
  job.payload = json::serialize(json::object{{"agent_code", agent->code},
                                             {"model_file", model_file->id},
                                             {"audio_blob", audio_blob},
                                             {"minutes", minutes},
                                             {"rate", billing::minute_rate_name(rate)},
                                             {"duration_s", seconds},
                                             {"input", text_input ? "text" : "audio"}});
  job.max_attempts = 3;
  auto queued = d_.jobs->enqueue(job);
  if (!queued.ok()) {
    // Two concurrent requests with one key: the other one queued it (and the charge was one).
    if (key) {
      auto v = get(account, job_id);
      if (v.ok()) {
        v->replayed = true;
        return v;
      }
    }
    (void)d_.ledger->apply(billing::refund_of(charge, "video could not be queued"));
    (void)d_.blobs->remove(audio_blob);
    return queued.status();
  }
  if (d_.wake_workers) d_.wake_workers();
  log::info("video_queued", {{"job", job_id}, {"agent", agent->code}, {"minutes", minutes}});
  VideoJob v;
  v.job_id = job_id;
  v.agent_code = agent->code;
  v.status = "processing";
  v.created_at = d_.clock->now_s();
  v.duration_s = seconds;
  v.credits = minutes * billing::credits_per_minute(rate);
  return v;
}

VideoJob VideoService::view_of(const Job& j) const {
  VideoJob v;
  v.job_id = j.id;
  v.status = status_of(j);
  boost::system::error_code ec;
  json::value p = json::parse(j.payload, ec);
  if (!ec && p.is_object()) {
    const json::object& o = p.as_object();
    if (auto* a = o.if_contains("agent_code"); a && a->is_string())
      v.agent_code = std::string(a->as_string());
    if (auto* d = o.if_contains("duration_s"); d && d->is_number()) v.duration_s = d->to_number<double>();
    auto* m = o.if_contains("minutes");
    auto* r = o.if_contains("rate");
    if (m && m->is_int64() && r && r->is_string()) {
      if (auto rate = billing::parse_minute_rate(std::string(r->as_string())))
        v.credits = m->as_int64() * billing::credits_per_minute(*rate);
    }
  }
  if (v.status == "completed") {
    v.video_url = *d_.public_url + file_url_path(video_file_id(j.id), "mp4");
  } else if (v.status == "failed") {
    v.error = j.last_error.value_or(j.state == "cancelled" ? "the job was cancelled" : "the render failed");
  }
  v.created_at = j.created_at_us / 1'000'000;
  return v;
}

Result<VideoJob> VideoService::get(const std::string& account, const std::string& job_id) {
  auto j = d_.jobs->get(job_id);
  if (!j.ok() || j->account_id != account || j->kind != kJobVideoRender) {
    if (!j.ok() && j.status().code() != Code::kNotFound) return j.status();
    return Status::NotFound("Video job not found: " + job_id);
  }
  return view_of(*j);
}

Result<VideoPage> VideoService::list(const std::string& account, const std::string& agent_code, int limit,
                                     int offset) {
  auto jobs = d_.jobs->list_by_kind(account, kJobVideoRender, kMaxListedVideos);
  if (!jobs.ok()) return jobs.status();
  VideoPage page;
  for (const Job& j : *jobs) {
    VideoJob v = view_of(j);
    if (!agent_code.empty() && v.agent_code != agent_code) continue;
    if (page.total >= offset && page.total < static_cast<int64_t>(offset) + limit)
      page.videos.push_back(std::move(v));
    ++page.total;
  }
  return page;
}

Result<VideoJob> VideoService::wait(const std::string& account, const std::string& job_id,
                                    int64_t timeout_ms) {
  {
    std::lock_guard lock(waiters_mu_);
    if (waiters_ >= kMaxVideoWaitersPerNode || waiters_by_account_[account] >= kMaxVideoWaitersPerAccount)
      return get(account, job_id);
    ++waiters_;
    ++waiters_by_account_[account];
  }
  struct Leave {
    VideoService* self;
    const std::string& account;
    ~Leave() {
      std::lock_guard lock(self->waiters_mu_);
      --self->waiters_;
      if (--self->waiters_by_account_[account] == 0) self->waiters_by_account_.erase(account);
    }
  } leave{this, account};
  const int64_t until = d_.clock->monotonic_us() + timeout_ms * 1000;
  while (true) {
    auto v = get(account, job_id);
    if (!v.ok() || v->status != "processing") return v;
    int64_t left = until - d_.clock->monotonic_us();
    if (left <= 0) return v;
    if (d_.clock->wait_for(std::min<int64_t>(left, 200'000), stop_)) return v;  // shutting down
  }
}

}  // namespace imago::agents
