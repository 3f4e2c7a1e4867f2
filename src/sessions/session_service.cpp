#include "sessions/session_service.h"

#include <boost/json.hpp>
#include <cstdio>
#include <filesystem>

#include "blobs/blob_store.h"
#include "files/file_service.h"
#include "store/file_store.h"
#include "util/log.h"
#include "util/random.h"

namespace imago::sessions {

namespace {

// Reads a local file chunk by chunk for BlobStore::put_from (a recording is never held whole).
class FileSource {
 public:
  explicit FileSource(const std::string& path) : f_(std::fopen(path.c_str(), "rb")) {}
  ~FileSource() {
    if (f_) std::fclose(f_);
  }
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;
  bool ok() const { return f_ != nullptr; }
  Result<size_t> read(char* buf, size_t cap) {
    const size_t n = std::fread(buf, 1, cap, f_);
    if (n == 0 && std::ferror(f_)) return Status::Internal("reading the recording failed");
    return n;
  }

 private:
  std::FILE* f_;
};

}  // namespace

std::string session_ended_event_json(const SessionRecord& s, const SessionEnd& e,
                                     const std::optional<std::string>& recording_url,
                                     const std::string& transcript_url) {
  boost::json::object o{
      {"session_id", s.session_id},
      {"agent_code", s.agent_code},
      {"room_id", s.room_id},
      {"duration_seconds", static_cast<double>((e.ended_us - s.started_us) / 1000) / 1000.0},
      {"minutes_charged", e.minutes_charged},
      {"end_reason", e.end_reason},
      {"transcript_url", transcript_url},
  };
  if (recording_url) {
    o["recording_url"] = *recording_url;
  } else {
    o["recording_url"] = nullptr;
  }
  return boost::json::serialize(o);
}

std::string SessionService::recording_url(const std::string& session_id) const {
  return *d_.public_url + "/v1/sessions/" + session_id + "/recording";
}

std::string SessionService::transcript_url(const std::string& session_id) const {
  return *d_.public_url + "/v1/sessions/" + session_id + "/transcript";
}

Status SessionService::started(const SessionRecord& s) {
  return d_.store->create(s);
}

Status SessionService::add_transcript(const std::string& session_id,
                                      const std::vector<TranscriptEntry>& lines) {
  if (lines.empty()) return Status::Ok();
  return d_.store->add_transcript(session_id, lines);
}

Status SessionService::progress(const std::string& session_id, int64_t minutes_charged, int viewers_peak) {
  return d_.store->update_progress(session_id, minutes_charged, viewers_peak);
}

Result<bool> SessionService::ended(const SessionRecord& s, const SessionEnd& e, bool recorded) {
  const std::optional<std::string> rec = recorded ? std::optional(recording_url(s.session_id)) : std::nullopt;
  return d_.store->end(s.session_id, e, session_ended_event_json(s, e, rec, transcript_url(s.session_id)));
}

Status SessionService::recording_started(const std::string& session_id) {
  return d_.store->set_recording(session_id, {"recording", std::nullopt, 0, 0, "", ""});
}

Status SessionService::recording_failed(const std::string& session_id, const std::string& why) {
  log::warn("session_recording_failed", {{"session", session_id}, {"error", why}});
  return d_.store->set_recording(session_id, {"failed", std::nullopt, 0, 0, "", ""});
}

Status SessionService::recording_finished(const SessionRecord& s, const RecordedFile& rf) {
  FileRecord f;
  f.id = new_id("file");
  f.account_id = s.account_id;
  f.agent_code = s.agent_code;  // deleted with the agent
  f.purpose = "recording";
  f.kind = "video";
  f.mime = "video/mp4";
  f.ext = "mp4";
  f.blob_key = agent_blob_key(s.account_id, s.agent_code, f.id, f.ext);
  f.created_at = d_.clock->now_s();
  f.original_name = s.session_id + ".mp4";
  Status st = [&]() -> Status {
    FileSource src(rf.path);
    if (!src.ok()) return Status::Internal("the recording's file is missing");
    // The file is recorded with the session's recording, in the session store's transaction.
    return files::write_file(
        *d_.blobs, *d_.files, f, [&](char* buf, size_t cap) { return src.read(buf, cap); },
        [&](const FileRecord& written) {
          return d_.store->finish_recording(
              s.session_id,
              {"ready", std::nullopt, written.size, rf.duration_ms, rf.video_codec, rf.audio_codec}, written);
        });
  }();
  std::error_code ec;
  std::filesystem::remove(rf.path, ec);
  if (!st.ok()) (void)recording_failed(s.session_id, st.message());
  return st;
}

Result<SessionRecord> SessionService::get(const std::string& account_id, const std::string& session_id) {
  return d_.store->get(account_id, session_id);
}

Result<SessionPage> SessionService::list(const std::string& account_id, const std::string& agent_code,
                                         int limit, int offset) {
  return d_.store->list(account_id, agent_code, limit, offset);
}

Result<std::vector<TranscriptEntry>> SessionService::transcript(const std::string& account_id,
                                                                const std::string& session_id) {
  return d_.store->transcript(account_id, session_id);
}

Result<std::unique_ptr<BlobReader>> SessionService::open_recording(const std::string& account_id,
                                                                   const std::string& session_id) {
  auto s = d_.store->get(account_id, session_id);
  if (!s.ok()) return s.status();
  if (!s->recording || s->recording->status != "ready" || !s->recording->file_id) {
    return Status::NotFound("Session " + session_id + " has no recording");
  }
  auto f = d_.files->get(account_id, *s->recording->file_id);
  if (!f.ok()) return Status::NotFound("Session " + session_id + " has no recording");
  return d_.blobs->open(f->blob_key);
}

Status SessionService::delete_recording(const std::string& account_id, const std::string& session_id) {
  auto keys = d_.store->remove_recording(account_id, session_id);
  if (!keys.ok()) return keys.status();
  // The record is gone already; a blob left by a failed delete is unreachable, and the next
  // delete of the same key (none) would not find it: log it for the operator.
  for (const auto& k : *keys) {
    if (Status st = d_.blobs->remove(k); !st.ok())
      log::warn("session_recording_blob_left", {{"key", k}, {"error", st.message()}});
  }
  return Status::Ok();
}

}  // namespace imago::sessions
