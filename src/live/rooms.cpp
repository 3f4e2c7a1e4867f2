#include "live/rooms.h"

#include <boost/json.hpp>
#include <filesystem>

#include "agents/agent_voice.h"
#include "agents/dynamics_config.h"
#include "blobs/blob_store.h"
#include "live/minute_billing.h"
#include "sessions/session_service.h"
#include "sessions/session_sweep.h"
#include "speech/text.h"
#include "store/file_store.h"
#include "util/log.h"
#include "util/random.h"

namespace imago::live {

namespace {

RoomLease lease_of(const Room& r) {
  const RoomSettings& s = r.settings();
  return {s.account_id, s.room_id, s.agent_code, s.session_id};
}

}  // namespace

std::string room_details_json(const RoomInfo& i) {
  return boost::json::serialize(
      boost::json::object{{"state", phase_name(i.phase)},
                          {"started_at", i.started_at_s},
                          {"viewers", i.viewers},
                          {"billed_minutes", i.billed_minutes},
                          {"billing_type", i.billing_type},
                          {"context_items", static_cast<int64_t>(i.context_items)}});
}

Rooms::Rooms(RoomsDeps deps, RoomsOptions options)
    : d_(deps), options_(options), journal_(d_.sessions ? options_.journal_dir : std::string()) {
  if (d_.directory) {
    RoomDirectoryHandlers h;
    h.command = [this](const RoomCommand& c) { on_command(c); };
    // Another node owns the room now: this session ends (its viewers reconnect to a new one).
    h.lease_lost = [this](const std::string& session_id) {
      if (auto r = find_session(session_id)) r->end(EndReason::kShutdown);
    };
    h.details = [this] {
      std::map<std::string, std::string> out;
      std::lock_guard lock(mu_);
      for (auto& [k, r] : rooms_)
        if (!r->ended()) out[r->settings().session_id] = room_details_json(r->info());
      return out;
    };
    d_.directory->start(std::move(h));
    if (d_.sessions && d_.clock) {
      sessions::SessionSweepOptions so;
      so.grace_us = options_.sweep_grace_us;
      // Often enough that a short grace (tests) is not stretched much by the interval.
      so.every_us = std::clamp<int64_t>(so.grace_us / 2, 500'000, 10'000'000);
      sweep_ = std::make_unique<sessions::SessionSweep>(*d_.directory, *d_.sessions, *d_.clock, so);
    }
  }
  ticker_ = std::thread([this] { tick_loop(); });
}

Rooms::~Rooms() {
  shutdown();
}

void Rooms::set_brain_factory(BrainFactory f) {
  std::lock_guard lock(mu_);
  brains_ = std::move(f);
}

Result<std::shared_ptr<const avatar::AvatarModel>> Rooms::model_for(const AgentRecord& a) {
  if ((a.status != "ready" && a.status != "success") || !a.model_file) {
    return Status::Invalid("Agent " + a.code + " is not ready (status " + a.status + ")");
  }
  {
    std::lock_guard lock(mu_);
    if (auto it = models_.find(*a.model_file); it != models_.end()) {
      if (auto m = it->second.lock()) return m;
    }
  }
  auto f = d_.files->get(a.account_id, *a.model_file);
  if (!f.ok()) return f.status();
  auto bytes = d_.blobs->get(f->blob_key);
  if (!bytes.ok()) return bytes.status();
  auto probe = avatar::load_model(*bytes);
  if (!probe.ok()) return probe.status();
  // Scale so the longest side is model_side, keeping the aspect ratio (even sizes for codecs).
  int w = (*probe)->width(), h = (*probe)->height();
  std::shared_ptr<const avatar::AvatarModel> model = *probe;
  if (std::max(w, h) > options_.model_side) {
    const double k = static_cast<double>(options_.model_side) / std::max(w, h);
    int sw = static_cast<int>(std::lround(w * k)) & ~1, sh = static_cast<int>(std::lround(h * k)) & ~1;
    auto scaled = avatar::load_model(*bytes, sw, sh);
    if (!scaled.ok()) return scaled.status();
    model = *scaled;
  }
  std::lock_guard lock(mu_);
  models_[*a.model_file] = model;
  return model;
}

std::optional<DynamicsSettings> Rooms::dynamics_for(const Room& room) {
  auto a = d_.agents->get(room.settings().account_id, room.settings().agent_code);
  if (!a.ok()) return std::nullopt;
  DynamicsSettings s;
  s.config = agents::effective_dynamics_config(*a);
  auto* en = s.config.if_contains("enabled");
  auto* am = s.config.if_contains("active_model");
  s.enabled =
      (en && en->is_bool() && en->as_bool()) || (am && am->is_string() && am->as_string() == "dynamics");
  return s;
}

Result<std::shared_ptr<Room>> Rooms::join(const std::string& account_id, const std::string& room_id,
                                          const AgentRecord& agent, ChatMode mode, VideoQuality quality,
                                          bool record) {
  auto room = join_room(account_id, room_id, agent, mode, quality);
  if (room.ok() && record) {
    if (Status st = start_recording(*room); !st.ok())
      log::warn("session_recording_not_started", {{"room", room_id}, {"error", st.message()}});
  }
  return room;
}

Result<std::shared_ptr<Room>> Rooms::join_room(const std::string& account_id, const std::string& room_id,
                                               const AgentRecord& agent, ChatMode mode,
                                               VideoQuality quality) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return Status::Unavailable("The server is shutting down");
    auto it = rooms_.find({account_id, room_id});
    if (it != rooms_.end() && !it->second->ended()) {
      if (it->second->settings().agent_code != agent.code) {
        return Status::Conflict("Room " + room_id + " is running agent " + it->second->settings().agent_code);
      }
      return it->second;
    }
    int live = starting_, mine = 0;
    if (auto s = starting_by_account_.find(account_id); s != starting_by_account_.end()) mine = s->second;
    for (auto& [k, r] : rooms_) {
      if (r->ended()) continue;
      ++live;
      mine += k.first == account_id;
    }
    if (live >= options_.max_sessions) {
      return Status::Unavailable("This node is at its live-session capacity (" +
                                 std::to_string(options_.max_sessions) + ")");
    }
    if (options_.max_sessions_per_account > 0 && mine >= options_.max_sessions_per_account) {
      return account_limit_status(options_.max_sessions_per_account);
    }
    // The slot is this join's until its room is in rooms_ or the start failed: the check above and
    // the insert below are one step for every concurrent join.
    ++starting_;
    ++starting_by_account_[account_id];
  }
  auto started = start_room(account_id, room_id, agent, mode, quality);
  std::lock_guard lock(mu_);
  --starting_;
  if (--starting_by_account_[account_id] == 0) starting_by_account_.erase(account_id);
  if (started.ok()) cv_.notify_all();
  return started;
}

Result<std::shared_ptr<Room>> Rooms::start_room(const std::string& account_id, const std::string& room_id,
                                                const AgentRecord& agent, ChatMode mode,
                                                VideoQuality quality) {
  auto model = model_for(agent);
  if (!model.ok()) return model.status();

  RoomSettings s;
  s.account_id = account_id;
  s.room_id = room_id;
  s.agent_code = agent.code;
  s.session_id = "ses_" + random_base62(20);
  s.billing_type = std::string(cloud_billing_type(agent.model, mode));
  s.video = mode != ChatMode::kVoiceChat;  // a managed agent with no avatar: audio only
  s.camera = mode == ChatMode::kCameraChat;
  s.timeouts = options_.timeouts;
  s.jpeg_quality = options_.jpeg_quality;
  s.quality = quality;
  s.encoded = quality_settings(options_.encoded, quality);
  s.limits = options_.room_limits;
  // The agent's voice: its model's manifest carries the matched voice and axes.
  s.voice = agents::model_voice_settings((*model)->manifest());

  RoomCallbacks cb;
  cb.charge_minute = [this](const Room& r, int64_t minute) -> Status {
    auto e = charge_live_minute(*d_.ledger, r.settings().account_id, r.settings().session_id, minute,
                                r.settings().billing_type, r.settings().agent_code);
    return e.status();
  };
  cb.dynamics = [this](const Room& r) { return dynamics_for(r); };
  cb.ended = [this](Room& r, const SessionAction& a) { session_ended(r, a); };
  auto room = Room::create(std::move(s), *model, d_.speech, *d_.clock, std::move(cb));
  if (!room.ok()) return room.status();

  std::lock_guard lock(mu_);
  // Another join may have started the same room meanwhile.
  auto it = rooms_.find({account_id, room_id});
  if (it != rooms_.end() && !it->second->ended()) return it->second;
  if (d_.directory) {
    // Under the lock, so two joins here cannot both claim (the second would take over the lease).
    // The directory holds the account's share across nodes (cluster mode).
    RoomLease lease = lease_of(**room);
    lease.node_url = options_.node_url;
    lease.details = room_details_json((*room)->info());
    auto owned = d_.directory->claim(lease, options_.max_sessions_per_account);
    if (!owned.ok()) return owned.status();
    if (!*owned) {
      // The API layer relays the viewer to the owner when it can (docs/live-protocol.md).
      return Status::Conflict("Room " + room_id + " is running on another node");
    }
  }
  if (brains_) (*room)->set_brain(brains_(**room, agent));
  if (d_.sessions) {
    // The session's record: without it the session still runs (and bills); its transcript and end
    // are then not kept.
    if (Status st = d_.sessions->started(record_of(**room)); !st.ok())
      log::warn("session_record_failed",
                {{"session", (*room)->settings().session_id}, {"error", st.message()}});
    journal_.opened(record_of(**room));
    journal_refs_[(*room)->settings().session_id] = 1;
  }
  (*room)->start();
  rooms_[{account_id, room_id}] = *room;
  log::info("live_session_started", {{"session", (*room)->settings().session_id},
                                     {"room", room_id},
                                     {"agent", agent.code},
                                     {"account", account_id}});
  return *room;
}

std::shared_ptr<Room> Rooms::find(const std::string& account_id, const std::string& room_id) const {
  std::lock_guard lock(mu_);
  auto it = rooms_.find({account_id, room_id});
  if (it == rooms_.end() || it->second->ended()) return nullptr;
  return it->second;
}

std::shared_ptr<Room> Rooms::find_session(const std::string& session_id) const {
  std::lock_guard lock(mu_);
  for (auto& [k, r] : rooms_) {
    if (r->settings().session_id == session_id && !r->ended()) return r;
  }
  return nullptr;
}

std::vector<std::shared_ptr<Room>> Rooms::list(const std::string& account_id,
                                               const std::optional<std::string>& agent_code,
                                               const std::optional<std::string>& room_id) const {
  std::vector<std::shared_ptr<Room>> out;
  std::lock_guard lock(mu_);
  for (auto& [k, r] : rooms_) {
    if (k.first != account_id || r->ended()) continue;
    if (agent_code && r->settings().agent_code != *agent_code) continue;
    if (room_id && k.second != *room_id) continue;
    out.push_back(r);
  }
  return out;
}

int Rooms::running() const {
  std::lock_guard lock(mu_);
  int n = 0;
  for (auto& [k, r] : rooms_) n += r->ended() ? 0 : 1;
  return n;
}

void Rooms::end(const std::shared_ptr<Room>& room, EndReason reason) {
  room->end(reason);
  room->tick();
  closer_.close(room, [this, r = room.get()] { sync_session(*r); });
}

SessionRecord Rooms::record_of(const Room& room) const {
  const RoomInfo i = room.info();
  SessionRecord s;
  s.session_id = i.session_id;
  s.account_id = i.account_id;
  s.agent_code = i.agent_code;
  s.room_id = i.room_id;
  s.billing_type = i.billing_type;
  s.started_us = i.started_us;
  s.minutes_charged = i.billed_minutes;
  s.viewers_peak = i.viewers_peak;
  return s;
}

void Rooms::sync_session(Room& room) {
  if (!d_.sessions) return;
  const std::string& sid = room.settings().session_id;
  if (auto lines = room.transcript().take(); !lines.empty()) {
    if (Status st = d_.sessions->add_transcript(sid, lines); !st.ok()) {
      // Kept for the next tick (bounded: TranscriptLog::kMaxPending); a session without a record
      // has nowhere to write them.
      if (st.code() != Code::kNotFound) {
        log::warn("session_transcript_write_failed", {{"session", sid}, {"error", st.message()}});
        room.transcript().put_back(std::move(lines));
      }
    }
  }
  if (room.ended()) return;  // the end writes the last figures
  journal_.alive(sid);
  const RoomInfo i = room.info();
  const std::pair<int64_t, int> now{i.billed_minutes, i.viewers_peak};
  {
    std::lock_guard lock(sync_mu_);
    auto it = synced_.find(sid);
    if (it != synced_.end() && it->second == now) return;
  }
  if (d_.sessions->progress(sid, now.first, now.second).ok()) {
    std::lock_guard lock(sync_mu_);
    synced_[sid] = now;
  }
}

void Rooms::session_ended(Room& room, const SessionAction& a) {
  if (!d_.sessions) return;
  const std::string sid = room.settings().session_id;
  sync_session(room);  // the last lines first: the webhook says the transcript is complete
  const RoomInfo i = room.info();
  bool recorded;
  {
    std::lock_guard lock(mu_);
    recorded = recorded_.erase(sid) > 0;
  }
  SessionEnd e{d_.clock->now_us(), std::string(end_reason_name(a.reason)), i.billed_minutes, i.viewers_peak};
  auto ended = d_.sessions->ended(record_of(room), e, recorded);
  if (!ended.ok()) {
    log::warn("session_end_write_failed", {{"session", sid}, {"error", ended.status().message()}});
  } else {
    release_journal(sid);
  }
  std::lock_guard lock(sync_mu_);
  synced_.erase(sid);
}

Status Rooms::start_recording(const std::shared_ptr<Room>& room) {
  if (!d_.sessions || options_.recording_dir.empty()) {
    return Status::Unavailable("This node keeps no recordings");
  }
  const std::string sid = room->settings().session_id;
  {
    std::lock_guard lock(mu_);
    if (recorded_.count(sid)) return Status::Ok();  // already recording
    recorded_.insert(sid);
    if (auto j = journal_refs_.find(sid); j != journal_refs_.end()) ++j->second;
  }
  std::error_code ec;
  std::filesystem::create_directories(options_.recording_dir, ec);
  const std::string path = options_.recording_dir + "/" + sid + ".mp4";
  if (Status st = d_.sessions->recording_started(sid); !st.ok())
    log::warn("session_recording_state_failed", {{"session", sid}, {"error", st.message()}});
  auto finished = std::make_shared<std::atomic<bool>>(false);
  // Runs on the recorder's own thread once the room has ended: the upload never holds up the
  // room closer or the tick.
  auto sink = std::make_shared<RecordingSink>(
      path, [this, svc = d_.sessions, rec = record_of(*room), finished](const RecordingOutcome& o) {
        Status st = o.status.ok() ? svc->recording_finished(rec, {o.path, o.bytes, o.duration_ms})
                                  : svc->recording_failed(rec.session_id, o.status.message());
        if (!o.status.ok()) {
          std::error_code rm;
          std::filesystem::remove(o.path, rm);
        }
        // Kept when the database did not take it: a restart tries again (recover()).
        if (st.ok()) release_journal(rec.session_id);
        finished->store(true);
      });
  room->add_media_sink(sink);
  std::lock_guard lock(mu_);
  recorders_.push_back({std::move(sink), std::move(finished)});
  return Status::Ok();
}

void Rooms::release_journal(const std::string& session_id) {
  {
    std::lock_guard lock(mu_);
    auto it = journal_refs_.find(session_id);
    if (it == journal_refs_.end() || --it->second > 0) return;
    journal_refs_.erase(it);
  }
  journal_.closed(session_id);
}

int Rooms::recover() {
  if (!d_.sessions) return 0;
  int n = 0;
  for (const auto& l : journal_.leftovers()) {
    const SessionRecord& rec = l.record;
    const std::string sid = rec.session_id;
    bool kept = true;  // the database has what it needs: the file may go
    bool recorded = false;
    const std::string mp4 = options_.recording_dir.empty() ? "" : options_.recording_dir + "/" + sid + ".mp4";
    std::error_code ec;
    if (!mp4.empty() && std::filesystem::exists(mp4, ec)) {
      recorded = true;
      // Everything the recorder flushed before the crash: up to its last whole fragment.
      auto probe = probe_recording(mp4);
      Status st = probe.ok() ? d_.sessions->recording_finished(rec, {mp4, probe->bytes, probe->duration_ms})
                             : d_.sessions->recording_failed(sid, probe.status().message());
      if (!probe.ok()) std::filesystem::remove(mp4, ec);
      if (!st.ok()) {
        kept = false;
        log::warn("session_recovery_recording_failed", {{"session", sid}, {"error", st.message()}});
      }
    }
    // The figures the node last wrote while the session ran (minutes charged, viewers peak).
    SessionRecord last = rec;
    if (auto got = d_.sessions->get(rec.account_id, sid); got.ok()) {
      last = *got;
      recorded = recorded || last.recording.has_value();
    }
    SessionEnd e{std::max(l.last_alive_us, rec.started_us),
                 std::string(end_reason_name(EndReason::kShutdown)), last.minutes_charged, last.viewers_peak};
    // False when another node's sweep ended it first (its node was taken for dead): that end
    // stands, and the recording uploaded above replaces the `failed` the sweep left.
    auto ended = d_.sessions->ended(rec, e, recorded);
    if (!ended.ok() && ended.status().code() != Code::kNotFound) {
      kept = false;
      log::warn("session_recovery_end_failed", {{"session", sid}, {"error", ended.status().message()}});
    }
    if (kept) journal_.closed(sid);
    log::info("session_recovered", {{"session", sid},
                                    {"ended_now", ended.ok() && *ended},
                                    {"recording", recorded},
                                    {"last_alive_us", e.ended_us}});
    ++n;
  }
  return n;
}

Result<std::string> Rooms::record(const std::string& account_id, const std::string& room_id) {
  if (auto r = find(account_id, room_id)) {
    if (Status st = start_recording(r); !st.ok()) return st;
    return r->settings().session_id;
  }
  if (d_.directory) {
    auto remote = d_.directory->remote_rooms(account_id, std::nullopt, room_id);
    if (!remote.ok()) return remote.status();
    if (!remote->empty()) {
      if (Status st = d_.directory->send(*remote, "record", ""); !st.ok()) return st;
      return remote->front().session_id;
    }
  }
  return Status::NotFound("No active room " + room_id);
}

void Rooms::tick_loop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, std::chrono::milliseconds(250));
    if (stopping_) break;
    std::vector<std::shared_ptr<Room>> rooms;
    for (auto& [k, r] : rooms_) rooms.push_back(r);
    lock.unlock();
    for (auto& r : rooms) {
      r->tick();
      sync_session(*r);
    }
    std::vector<std::shared_ptr<Room>> reaped;
    lock.lock();
    for (auto it = rooms_.begin(); it != rooms_.end();) {
      if (it->second->ended()) {
        reaped.push_back(it->second);
        it = rooms_.erase(it);
      } else {
        ++it;
      }
    }
    lock.unlock();
    for (auto& r : reaped) {
      r->tick();  // reports the end if it has not been yet
      // After its threads: the brain's last words join the transcript.
      closer_.close(r, [this, r = r.get()] {
        sync_session(*r);
        release(*r);
      });
    }
    reaped.clear();
    // Sessions of dead nodes (every few seconds; a no-op on a single node).
    if (sweep_) sweep_->maybe_run();
    lock.lock();
    // Recorders whose upload is done.
    std::erase_if(recorders_, [](const Recorder& rec) { return rec.finished->load(); });
  }
}

void Rooms::shutdown() {
  std::vector<std::shared_ptr<Room>> rooms;
  {
    std::lock_guard lock(mu_);
    if (stopping_ && !ticker_.joinable()) return;
    stopping_ = true;
    for (auto& [k, r] : rooms_) rooms.push_back(r);
    rooms_.clear();
  }
  cv_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  // No command or lease callback may run into rooms that are going away.
  if (d_.directory) d_.directory->stop();
  for (auto& r : rooms) {
    r->end(EndReason::kShutdown);
    r->tick();
    closer_.close(r, [this, r = r.get()] {
      sync_session(*r);
      release(*r);
    });
  }
  closer_.finish();  // every room's threads joined, each bounded (docs/conversation.md)
  // Recordings finish writing and uploading before the process goes on to exit.
  std::vector<Recorder> recorders;
  {
    std::lock_guard lock(mu_);
    recorders.swap(recorders_);
  }
  recorders.clear();
}

void Rooms::release(const Room& room) {
  if (d_.directory) d_.directory->release(lease_of(room));
}

void Rooms::on_command(const RoomCommand& cmd) {
  auto room = find_session(cmd.session_id);
  if (!room) return;  // ended meanwhile
  if (cmd.kind == "speak") {
    // The sender checked the text; a full queue here drops the command (the REST answer is given).
    if (auto id = room->say(cmd.text); !id.ok())
      log::warn("room_command_refused",
                {{"kind", cmd.kind}, {"session", cmd.session_id}, {"error", id.status().message()}});
  } else if (cmd.kind == "add_context") {
    (void)room->add_context(cmd.text);  // checked by the node that sent it
  } else if (cmd.kind == "trigger_dynamics") {
    (void)room->trigger_dynamics(cmd.text);
  } else if (cmd.kind == "interrupt") {
    room->interrupt();
  } else if (cmd.kind == "end") {
    end(room, EndReason::kTerminated);
  } else if (cmd.kind == "record") {
    if (Status st = start_recording(room); !st.ok())
      log::warn("room_command_refused",
                {{"kind", cmd.kind}, {"session", cmd.session_id}, {"error", st.message()}});
  } else {
    log::warn("room_command_unknown", {{"kind", cmd.kind}, {"session", cmd.session_id}});
  }
}

Delivery Rooms::deliver(const AgentRecord& agent, const std::optional<std::string>& room_id,
                        const std::string& kind, const std::string& text) {
  Delivery d;
  // Checked here too: rooms on other nodes take the text without answering.
  const size_t chars = speech::utf8_length(text);
  const RoomLimits& l = options_.room_limits;
  if (kind == "speak" && chars > l.speak_chars) {
    d.status = Status::Invalid("The text is " + std::to_string(chars) +
                               " characters; live speech takes at most " + std::to_string(l.speak_chars));
    return d;
  }
  if (kind == "add_context" && chars > l.context_item_chars) {
    d.status = Status::Invalid("The context is " + std::to_string(chars) +
                               " characters; one context item takes at most " +
                               std::to_string(l.context_item_chars));
    return d;
  }
  auto local = list(agent.account_id, agent.code, room_id);
  std::vector<RemoteRoom> remote;
  if (d_.directory) {
    auto r = d_.directory->remote_rooms(agent.account_id, agent.code, room_id);
    if (!r.ok()) {
      d.status = r.status();
      return d;
    }
    remote = std::move(r).value();
  }
  if (local.empty() && remote.empty()) {
    d.status = Status::NotFound("No active rooms found for agent " + agent.code);
    return d;
  }
  if (kind == "trigger_dynamics" && local.empty()) {
    // The owners apply it; check here what each would answer: a gesture the model has, played
    // when the agent's dynamics are enabled.
    auto model = model_for(agent);
    if (!model.ok()) {
      d.status = model.status();
      return d;
    }
    auto renderer = avatar::Renderer::create(*model);
    if (!renderer.ok()) {
      d.status = renderer.status();
      return d;
    }
    if ((*renderer)->gesture_default_s(text) <= 0) {
      d.status = Status::Invalid("Unknown dynamics action '" + text + "'");
      return d;
    }
  }
  Status full;  // the refusal of a room whose speech queue was full
  for (auto& r : local) {
    if (kind == "speak") {
      auto id = r->say(text);
      if (!id.ok() && id.status().code() == Code::kInvalidArgument) {
        d.status = id.status();
        return d;
      }
      // A full room is skipped: the others still speak (a retry would repeat it in them).
      if (!id.ok() && is_speech_queue_full(id.status())) full = id.status();
      d.delivered_to_rooms += id.ok() ? 1 : 0;
    } else if (kind == "add_context") {
      if (Status st = r->add_context(text); !st.ok()) {
        d.status = st;
        return d;
      }
      ++d.delivered_to_rooms;
    } else {
      auto res = r->trigger_dynamics(text);
      if (!res.status.ok()) {
        d.status = res.status;
        return d;
      }
      ++d.delivered_to_rooms;
      d.animation_triggered = d.animation_triggered || res.animation_triggered;
    }
  }
  if (!remote.empty()) {
    if (Status st = d_.directory->send(remote, kind, text); !st.ok()) {
      d.status = st;
      return d;
    }
    d.delivered_to_rooms += static_cast<int>(remote.size());
    if (kind == "trigger_dynamics" && !d.animation_triggered) {
      // The owners play it when the agent's dynamics are enabled (they re-read the setting every
      // few seconds, as this does now).
      auto a = d_.agents->get(agent.account_id, agent.code);
      if (a.ok()) {
        auto cfg = agents::effective_dynamics_config(*a);
        auto* en = cfg.if_contains("enabled");
        auto* am = cfg.if_contains("active_model");
        d.animation_triggered = (en && en->is_bool() && en->as_bool()) ||
                                (am && am->is_string() && am->as_string() == "dynamics");
      }
    }
  }
  if (d.delivered_to_rooms == 0 && !full.ok()) d.status = full;  // every room it reached was full
  if (d.delivered_to_rooms == 0 && d.status.ok())
    d.status = Status::NotFound("No active rooms found for agent " + agent.code);
  return d;
}

std::optional<std::string> Rooms::owner_url(const std::string& account_id, const std::string& room_id) const {
  if (!d_.directory) return std::nullopt;
  auto remote = d_.directory->remote_rooms(account_id, std::nullopt, room_id);
  if (!remote.ok() || remote->empty() || remote->front().node_url.empty()) return std::nullopt;
  return remote->front().node_url;
}

void Rooms::set_node_url(std::string url) {
  std::lock_guard lock(mu_);
  options_.node_url = std::move(url);
}

Result<std::vector<RemoteRoom>> Rooms::remote_list(const std::string& account_id,
                                                   const std::optional<std::string>& room_id) const {
  if (!d_.directory) return std::vector<RemoteRoom>{};
  return d_.directory->remote_rooms(account_id, std::nullopt, room_id);
}

Result<Rooms::Ended> Rooms::terminate(const std::string& account_id, const std::string& room_id) {
  if (auto r = find(account_id, room_id)) {
    end(r, EndReason::kTerminated);
    // Its lease goes now, not at the next reap: the account's share counts it until then.
    release(*r);
    auto info = r->info();
    return Ended{info.room_id, info.session_id, info.billed_minutes};
  }
  if (!d_.directory) return Status::NotFound("No active room " + room_id);
  auto remote = d_.directory->remote_rooms(account_id, std::nullopt, room_id);
  if (!remote.ok()) return remote.status();
  if (remote->empty()) return Status::NotFound("No active room " + room_id);
  const RemoteRoom owner = remote->front();
  if (Status st = d_.directory->send(*remote, "end", ""); !st.ok()) return st;
  // The owner ends the room when the command reaches it and lets the lease go at its next tick.
  Interrupt never;
  RemoteRoom last = owner;
  for (int64_t waited = 0; waited < kRemoteEndWaitMs; waited += 50) {
    d_.clock->wait_for(50'000, never);
    auto now = d_.directory->remote_rooms(account_id, std::nullopt, room_id);
    if (!now.ok()) return now.status();
    bool running = false;
    for (const auto& r : *now) {
      if (r.session_id == owner.session_id) running = true, last = r;
    }
    if (!running) {
      std::error_code ec;
      auto details = boost::json::parse(last.details, ec);
      int64_t billed = 0;
      if (!ec && details.is_object()) {
        if (auto* b = details.as_object().if_contains("billed_minutes"); b && b->is_int64())
          billed = b->as_int64();
      }
      return Ended{owner.room_id, owner.session_id, billed};
    }
  }
  return Status::Unavailable("The node running room " + room_id + " did not confirm the end within " +
                             std::to_string(kRemoteEndWaitMs / 1000) +
                             " s; it ends the room when it catches up");
}

Status Rooms::interrupt(const std::string& account_id, const std::string& room_id) {
  if (auto r = find(account_id, room_id)) {
    r->interrupt();
    return Status::Ok();
  }
  if (d_.directory) {
    auto remote = d_.directory->remote_rooms(account_id, std::nullopt, room_id);
    if (!remote.ok()) return remote.status();
    if (!remote->empty()) return d_.directory->send(*remote, "interrupt", "");
  }
  return Status::NotFound("No active room " + room_id);
}

}  // namespace imago::live
