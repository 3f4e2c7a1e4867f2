// What happens to a cloud live session after the fact (docs/sessions.md): its record (started,
// progress, ended with the session.ended webhook), its transcript, and its recording (an MP4 kept
// as a file of the agent, so it counts against the storage quota and goes with the agent). The
// node running a session writes through it (src/live/rooms.cpp); the API reads through it
// (src/api/sessions.cpp). No HTTP here.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "store/session_store.h"
#include "util/clock.h"
#include "util/status.h"

namespace imago {
class BlobStore;
class BlobReader;
class FileStore;
}  // namespace imago

namespace imago::sessions {

struct SessionServiceDeps {
  SessionStore* store = nullptr;
  FileStore* files = nullptr;
  BlobStore* blobs = nullptr;
  Clock* clock = nullptr;
  const std::string* public_url = nullptr;  // base of recording_url / transcript_url
};

// A finished MP4 on local disk, as the recorder left it (live/recording_sink.h).
struct RecordedFile {
  std::string path;
  int64_t bytes = 0;
  int64_t duration_ms = 0;
  std::string video_codec = "h264";
  std::string audio_codec = "opus";
};

class SessionService {
 public:
  explicit SessionService(SessionServiceDeps deps) : d_(deps) {}

  // --- the node running the session ---
  Status started(const SessionRecord& s);
  Status add_transcript(const std::string& session_id, const std::vector<TranscriptEntry>& lines);
  Status progress(const std::string& session_id, int64_t minutes_charged, int viewers_peak);
  // Ends the record and, once per session, queues the session.ended webhook with `recorded`
  // deciding recording_url. True when this call ended it.
  Result<bool> ended(const SessionRecord& s, const SessionEnd& e, bool recorded);
  Status recording_started(const std::string& session_id);
  // Writes the MP4 through the blob store, registers it as a file of the agent, points the session
  // at it, then removes the local file. On failure the session's recording is marked failed.
  Status recording_finished(const SessionRecord& s, const RecordedFile& f);
  Status recording_failed(const std::string& session_id, const std::string& why);

  // --- readers (any node) ---
  Result<SessionRecord> get(const std::string& account_id, const std::string& session_id);
  // `agent_code` empty: every agent's sessions.
  Result<SessionPage> list(const std::string& account_id, const std::string& agent_code, int limit,
                           int offset);
  Result<std::vector<TranscriptEntry>> transcript(const std::string& account_id,
                                                  const std::string& session_id);
  // The recording's bytes. kNotFound when the session has no recording ready.
  Result<std::unique_ptr<BlobReader>> open_recording(const std::string& account_id,
                                                     const std::string& session_id);
  // Deletes the recording (file record, then blob). kNotFound when there is none.
  Status delete_recording(const std::string& account_id, const std::string& session_id);

  std::string recording_url(const std::string& session_id) const;
  std::string transcript_url(const std::string& session_id) const;

 private:
  SessionServiceDeps d_;
};

// The session.ended webhook's data: session_id, agent_code, room_id, duration_seconds,
// minutes_charged, end_reason, recording_url, transcript_url (docs/webhooks.md).
std::string session_ended_event_json(const SessionRecord& s, const SessionEnd& e,
                                     const std::optional<std::string>& recording_url,
                                     const std::string& transcript_url);

}  // namespace imago::sessions
