#include "agents/agent_service.h"

#include <algorithm>

#include "agents/agent_voice.h"
#include "agents/dynamics_config.h"
#include "agents/media_refs.h"
#include "avatar/builder.h"
#include "billing/operations.h"
#include "blobs/blob_store.h"
#include "files/file_service.h"
#include "limits/storage_quota.h"
#include "store/file_store.h"
#include "store/job_store.h"
#include "store/voice_store.h"
#include "util/log.h"
#include "util/random.h"
#include "util/strings.h"

namespace imago::agents {

namespace json = boost::json;

namespace {

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

Result<std::string> one_of(const std::optional<std::string>& v, std::string_view field,
                           std::initializer_list<const char*> allowed, std::string def) {
  if (!v) return def;
  std::string list;
  for (const char* a : allowed) {
    if (*v == a) return *v;
    list += (list.empty() ? "" : ", ") + std::string(a);
  }
  return Status::Invalid("Field '" + std::string(field) + "' must be one of: " + list);
}

// Oversized inline data is still a bad parameter of this request: 400 naming the field.
Status as_invalid(const Status& st) {
  return st.code() == Code::kTooLarge ? Status::Invalid(st.message()) : st;
}

struct InlineInput {
  std::optional<std::string>* file_slot;
  std::string bytes;
  fetch::Sniffed type;
};

}  // namespace

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

Status AgentService::check_quota(const std::string& account_id, int64_t adding, int64_t quota) {
  if (quota <= 0) return Status::Ok();
  auto used = d_.files->usage_bytes(account_id);
  if (!used.ok()) return used.status();
  return check_storage_quota(*used, std::max<int64_t>(adding, 1), quota);
}

Status AgentService::check_face(const ResolvedMedia& image) {
  // A photo without a human face would only fail its generation (refunded): refuse it now, with
  // the builder's own message, before anything is stored or charged. Inline data and the
  // caller's uploads are at hand; an image URL is fetched and checked by the job. Anything but a
  // clear "no face" (the models missing, a blob read failing) leaves the decision to the build.
  std::optional<std::string> bytes = image.bytes;
  if (!bytes && image.file) {
    auto b = d_.blobs->get(image.file->blob_key);
    if (!b.ok()) return Status::Ok();
    bytes = std::move(b).value();
  }
  if (!bytes) return Status::Ok();
  Status st = avatar::check_image_has_face(*bytes);
  if (st.code() == Code::kInvalidArgument) return st;
  if (!st.ok()) log::warn("face_check_skipped", {{"error", st.message()}});
  return Status::Ok();
}

Result<FaceCheck> AgentService::check_face_of(const std::string& account, const std::string& image) {
  if (trim(image).empty()) return Status::Invalid("Field 'image' is required");
  auto m = resolve_media_param(*d_.files, *d_.public_url, account, "image", image, fetch::MediaKind::kImage);
  if (!m.ok()) return as_invalid(m.status());
  std::optional<std::string> bytes = m->bytes;
  if (!bytes && m->file) {
    auto b = d_.blobs->get(m->file->blob_key);
    if (!b.ok()) return b.status();
    bytes = std::move(b).value();
  }
  if (!bytes) {
    // Fetching a URL here would make this free call a fetch proxy; generate checks it in its job.
    return Status::Invalid(
        "Field 'image': send the picture inline (base64 or a data: URI) or as your upload's file URL or id");
  }
  auto box = avatar::find_image_face(*bytes);
  FaceCheck c;
  if (box.status().code() == Code::kInvalidArgument) {
    c.reason = box.status().message();
    return c;
  }
  if (!box.ok()) {
    log::warn("face_check_unavailable", {{"error", box.status().message()}});
    return Status::Unavailable("The face detector is not available on this server");
  }
  c.found = true;
  c.image_width = box->image_width;
  c.image_height = box->image_height;
  c.x = box->x;
  c.y = box->y;
  c.width = box->width;
  c.height = box->height;
  return c;
}

Result<std::string> AgentService::new_code(const std::string& account_id) {
  for (int i = 0; i < 8; ++i) {
    std::string code = generate_code();
    auto taken = d_.agents->code_taken(account_id, code);
    if (!taken.ok()) return taken.status();
    if (!*taken) return code;
  }
  return Status::Unavailable("Could not pick a free agent id; retry");
}

Result<Generated> AgentService::generate(const std::string& account, const GenerateRequest& r) {
  AgentRecord a;
  a.account_id = account;
  if (r.prompt && r.prompt->size() > kMaxPromptChars) {
    return Status::Invalid("Field 'prompt' must be at most " + std::to_string(kMaxPromptChars) +
                           " characters");
  }
  a.system_prompt = r.prompt && !trim(*r.prompt).empty()
                        ? *r.prompt
                        : kRandomPrompts[random_below(std::size(kRandomPrompts))];
  auto aspect = one_of(r.aspect_ratio, "aspect_ratio", {"16:9", "9:16", "1:1"}, "16:9");
  if (!aspect.ok()) return aspect.status();
  a.aspect_ratio = *aspect;
  auto vaspect = one_of(r.video_aspect_ratio, "video_aspect_ratio", {"16:9", "9:16", "1:1"}, "16:9");
  if (!vaspect.ok()) return vaspect.status();
  a.video_aspect_ratio = *vaspect;
  auto model = one_of(r.model, "model", {"essence", "expression"}, "essence");
  if (!model.ok()) return model.status();
  a.model = *model;
  if (r.duration && (*r.duration <= 0 || *r.duration > kMaxSourceSeconds)) {
    return Status::Invalid("Field 'duration' must be a number of seconds in (0, 120]");
  }
  a.duration = r.duration.value_or(10);
  if (r.name && (r.name->empty() || r.name->size() > 100)) {
    return Status::Invalid("Field 'name' must be 1 to 100 characters");
  }
  if (r.agent_id) {
    if (Status st = check_custom_code(*r.agent_id); !st.ok()) return st;
  }
  std::optional<DesignedVoice> designed;
  if (r.voice_code) {
    // Like /v1/tts: a designed voice wins over `voice`; the agent keeps its base voice and axes.
    const std::string code = to_lower(*r.voice_code);
    auto v = is_uuid(code) && d_.voices
                 ? d_.voices->get(account, code)
                 : Result<DesignedVoice>(Status::NotFound("Voice not found for code: " + *r.voice_code));
    if (!v.ok()) return Status::Invalid("Field 'voice_code': " + v.status().message());
    designed = std::move(v).value();
  }
  if (r.voice || designed) {
    const std::string& v = designed ? designed->base_voice : *r.voice;
    if (v.size() != 2 || (v[0] != 'M' && v[0] != 'F') || v[1] < '1' || v[1] > '5') {
      return Status::Invalid("Field 'voice' must be a built-in voice id (M1..M5, F1..F5)");
    }
    // designed->code is the store's canonical (lower-case) code, not the caller's spelling.
    a.voice = serialize_agent_voice(requested_voice(v, designed ? &*designed : nullptr));
  }
  if (r.idempotency_key) {
    std::string k(trim(*r.idempotency_key));
    if (k.empty() || k.size() > 200)
      return Status::Invalid("Header 'Idempotency-Key' must be 1 to 200 characters");
    a.idempotency_key = k;
  }

  // Media: validated (inline data decoded and sniffed) before anything is stored or charged.
  std::vector<InlineInput> inline_inputs;
  struct Field {
    const char* name;
    fetch::MediaKind kind;
    const std::optional<std::string>* value;
    std::optional<std::string>* source;
    std::optional<std::string>* file;
  } fields[] = {{"image", fetch::MediaKind::kImage, &r.image, &a.image_source, &a.image_file},
                {"video", fetch::MediaKind::kVideo, &r.video, &a.video_source, &a.video_file},
                {"audio", fetch::MediaKind::kAudio, &r.audio, &a.audio_source, &a.audio_file}};
  for (auto& f : fields) {
    if (!*f.value) continue;
    auto m = resolve_media_param(*d_.files, *d_.public_url, account, f.name, **f.value, f.kind);
    if (!m.ok()) return as_invalid(m.status());
    if (m->file) *f.file = m->file->id;
    if (m->url) *f.source = *m->url;
    if (f.kind == fetch::MediaKind::kImage) {
      if (Status st = check_face(*m); !st.ok()) return st;
    }
    if (m->bytes) inline_inputs.push_back({f.file, std::move(*m->bytes), *m->type});
  }

  // Storage quota, before anything is stored or charged.
  int64_t inline_bytes = 0;
  for (const auto& in : inline_inputs) inline_bytes += static_cast<int64_t>(in.bytes.size());
  if (Status st = check_quota(account, inline_bytes, r.storage_quota_bytes); !st.ok()) return st;

  // The code: the caller's, or a fresh one. Whether a custom code is free is decided by the
  // store's create (a replay of the same Idempotency-Key returns the first agent instead).
  if (r.agent_id) {
    a.code = *r.agent_id;
  } else {
    auto code = new_code(account);
    if (!code.ok()) return code.status();
    a.code = *code;
  }
  a.name = r.name ? *r.name : "Agent " + a.code;
  a.status = "processing";
  a.progress_msg = "Queued";
  a.current_step = "queued";

  // Inline inputs become the agent's files; their blobs are written before the transaction and
  // removed again if it does not commit.
  std::vector<FileRecord> files;
  std::vector<std::string> written;
  auto cleanup = [&] {
    for (const auto& k : written) (void)d_.blobs->remove(k);
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
    f.blob_key = agent_blob_key(account, a.code, f.id, f.ext);
    f.created_at = d_.clock->now_s();
    if (Status st = d_.blobs->put(f.blob_key, in.bytes); !st.ok()) {
      cleanup();
      return st;
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
  auto created = d_.agents->create(a, files, billing::agent_generation_charge(account, job.id, a.code), job);
  if (!created.ok()) {
    cleanup();
    return created.status();
  }
  if (created->replayed) {
    cleanup();  // this attempt's inline files are not needed
    return Generated{created->code, true};
  }
  wake();
  log::info("agent_generation_queued", {{"agent", a.code}, {"job", job.id}, {"account", account}});
  return Generated{a.code, false};
}

Result<AgentRecord> AgentService::get(const std::string& account_id, const std::string& code) {
  return d_.agents->get(account_id, code);
}

Result<AgentPage> AgentService::list(const std::string& account_id, const std::optional<std::string>& status,
                                     int limit, int offset) {
  if (status) {
    static const char* known[] = {"processing", "generating", "completed", "success", "ready", "failed"};
    if (std::find(std::begin(known), std::end(known), *status) == std::end(known)) {
      return Status::Invalid(
          "Query parameter 'status' must be one of: processing, generating, completed, success, ready, "
          "failed");
    }
  }
  return d_.agents->list(account_id, status, limit, offset);
}

Status AgentService::update_prompt(const std::string& account_id, const std::string& code,
                                   const std::optional<std::string>& prompt) {
  if (!prompt) return Status::Invalid("Field 'system_prompt' is required");
  if (prompt->size() > kMaxPromptChars) {
    return Status::Invalid("Field 'system_prompt' must be at most " + std::to_string(kMaxPromptChars) +
                           " characters");
  }
  return d_.agents->update_prompt(account_id, code, *prompt);
}

Status AgentService::remove(const std::string& account_id, const std::string& code) {
  Status st = d_.agents->remove(account_id, code);
  if (st.ok()) wake();  // the blob cleanup job
  return st;
}

Result<std::string> AgentService::start_dynamics(const std::string& account, const DynamicsRequest& r) {
  if (!r.agent_id || r.agent_id->empty()) return Status::Invalid("Field 'agent_id' is required");
  if (r.duration && (*r.duration <= 0 || *r.duration > kMaxGestureSeconds)) {
    return Status::Invalid("Field 'duration' must be a number of seconds in (0, 10]");
  }
  if (r.model && *r.model != "auto")
    return Status::Invalid("Field 'model' must be 'auto' (the only gesture preset)");

  auto agent = d_.agents->get(account, *r.agent_id);
  if (!agent.ok()) return agent.status();
  if (agent->status == "failed") {
    return Status::Invalid("Agent " + agent->code + " failed to generate; dynamics need a ready agent");
  }
  if (agent->dynamics_status && *agent->dynamics_status == "generating") {
    return Status::Conflict("Dynamics generation is already running for agent " + agent->code);
  }

  if (Status st = check_quota(account, 0, r.storage_quota_bytes); !st.ok()) return st;

  json::object payload{{"duration", r.duration.value_or(5.0)}, {"model", "auto"}};
  if (r.image_url) {
    auto m = resolve_media_param(*d_.files, *d_.public_url, account, "image_url", *r.image_url,
                                 fetch::MediaKind::kImage);
    if (!m.ok()) return as_invalid(m.status());
    if (m->file) payload["image_file"] = m->file->id;
    if (m->url) payload["image_url"] = *m->url;
    if (m->bytes) {
      // Inline image: kept as an upload of the caller so the job can read it.
      FileRecord f;
      f.id = new_id("file");
      f.account_id = account;
      f.purpose = "upload";
      f.kind = "image";
      f.mime = m->type->mime;
      f.ext = m->type->ext;
      f.blob_key = "uploads/" + account + "/" + f.id + "." + f.ext;
      f.created_at = d_.clock->now_s();
      if (Status st = files::write_file(*d_.blobs, *d_.files, f, blob_source_of(*m->bytes)); !st.ok())
        return st;
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
  Status st = d_.agents->start_dynamics(
      account, agent->code, billing::dynamics_generation_charge(account, job.id, agent->code), job);
  if (!st.ok()) return st;
  wake();
  log::info("dynamics_queued", {{"agent", agent->code}, {"job", job.id}});
  return agent->code;
}

Result<DynamicsUpdated> AgentService::update_dynamics(const std::string& account, const std::string& code,
                                                      const DynamicsUpdate& u) {
  if (!u.patch) return Status::Invalid("Field 'dynamics' is required (an object)");
  auto a = d_.agents->get(account, code);
  if (!a.ok()) return a.status();

  json::object stored;
  boost::system::error_code ec;
  auto parsed = json::parse(a->dynamics_config, ec);
  if (!ec && parsed.is_object()) stored = parsed.as_object();
  merge_patch(stored, *u.patch);
  if (u.toggle_enabled) {
    stored["enabled"] = *u.toggle_enabled;
    stored["active_model"] = *u.toggle_enabled ? "dynamics" : "talking";
  }
  json::object effective = default_dynamics_config();
  merge_patch(effective, stored);
  if (Status st = validate_dynamics_config(effective); !st.ok()) return st;
  std::string serialized = json::serialize(stored);
  if (serialized.size() > kMaxDynamicsConfigBytes) {
    return Status::Invalid("Field 'dynamics' is too large (64 KB at most)");
  }

  // Background movements are rendered from the agent's model, so they can start only once it
  // exists. A queued regeneration of the agent is replaced by this one (the store does that).
  DynamicsUpdated out;
  out.agent_id = a->code;
  std::optional<NewJob> job;
  if ((a->status == "ready" || a->status == "success") && a->model_file) {
    NewJob j;
    j.id = new_id("job");
    j.kind = std::string(kJobDynamicsMovements);
    j.account_id = account;
    j.subject = a->code;
    j.max_attempts = 3;
    job = j;
  } else if (a->status == "failed") {
    out.regeneration_error = "Agent " + a->code + " failed to generate; there is no model to animate";
  } else {
    out.regeneration_error =
        "Agent " + a->code + " is still generating (status: " + a->status + "); retry once it is ready";
  }
  if (Status st = d_.agents->update_dynamics_config(account, a->code, serialized, job); !st.ok()) return st;
  if (job) {
    out.regeneration_started = true;
    wake();
  }
  return out;
}

}  // namespace imago::agents
