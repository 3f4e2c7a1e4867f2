// The record of every cloud live session (docs/sessions.md): who ran what where and for how long,
// what it cost, its transcript with times, and its recording. Written by the node that runs the
// session (start, transcript as it grows, end), read by any node (GET /v1/sessions...).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/file_store.h"
#include "util/status.h"

namespace imago {

// A session's recording. The MP4 itself is a file record (purpose "recording", the agent's code),
// so it counts against the account's storage quota and is deleted with the agent.
struct SessionRecording {
  std::string status;  // "recording", "ready", "failed"
  std::optional<std::string> file_id;
  int64_t bytes = 0;
  int64_t duration_ms = 0;
  std::string video_codec;  // "h264" (empty while recording)
  std::string audio_codec;  // "opus"
};

struct SessionRecord {
  std::string session_id;
  std::string account_id;
  std::string agent_code;
  std::string room_id;
  std::string billing_type;
  std::string status = "active";  // "active", "ended"
  int64_t started_us = 0;         // Unix microseconds
  std::optional<int64_t> ended_us;
  int64_t minutes_charged = 0;
  std::optional<std::string> end_reason;  // the WebSocket session.ended reason
  int viewers_peak = 0;
  // Null when never recorded, deleted, or its file went with the agent.
  std::optional<SessionRecording> recording;
};

// One line of a transcript. `seq` is the writer's order within the session (unique): adding the
// same seq again is a no-op, so a retried write never duplicates a line.
struct TranscriptEntry {
  int64_t seq = 0;
  std::string role;    // "user", "agent"
  std::string source;  // "speech", "text", "speak", "llm", "responder"
  std::string text;
  int64_t start_ms = 0;  // since the session started (server clock)
  int64_t end_ms = 0;
};

struct SessionEnd {
  int64_t ended_us = 0;
  std::string end_reason;
  int64_t minutes_charged = 0;
  int viewers_peak = 0;
  // The session's node is gone with its disk (a sweep from another node ended it): a recording
  // still being made becomes `failed` in the same transaction as the end.
  bool recording_lost = false;
};

struct SessionPage {
  std::vector<SessionRecord> sessions;  // newest first
  int64_t total = 0;
};

class SessionStore {
 public:
  virtual ~SessionStore() = default;

  // A session that just started (status active). kConflict for a known session id.
  virtual Status create(const SessionRecord& s) = 0;
  // Appends transcript lines (a known seq is skipped). kNotFound for an unknown session.
  virtual Status add_transcript(const std::string& session_id, const std::vector<TranscriptEntry>& lines) = 0;
  // While active: minutes charged and the most viewers so far (never lowered).
  virtual Status update_progress(const std::string& session_id, int64_t minutes_charged,
                                 int viewers_peak) = 0;
  // Ends an active session. True when this call ended it: then, in the same transaction, the
  // `session.ended` webhook event with `webhook_data_json` is queued for the account's
  // subscriptions, so the event exists once whichever node or retry gets here. False when it had
  // already ended (nothing changes). kNotFound for an unknown session.
  virtual Result<bool> end(const std::string& session_id, const SessionEnd& e,
                           const std::string& webhook_data_json) = 0;

  // kNotFound for an unknown session or another account's.
  virtual Result<SessionRecord> get(const std::string& account_id, const std::string& session_id) = 0;
  // Newest first; `agent_code` non-empty keeps that agent's sessions only (total counts those).
  virtual Result<SessionPage> list(const std::string& account_id, const std::string& agent_code, int limit,
                                   int offset) = 0;
  // In order of start_ms, then seq. kNotFound as get().
  virtual Result<std::vector<TranscriptEntry>> transcript(const std::string& account_id,
                                                          const std::string& session_id) = 0;

  // The recording's state while it is made (no file yet): "recording" or "failed".
  virtual Status set_recording(const std::string& session_id, const SessionRecording& r) = 0;
  // A finished recording: registers `file` (its blob already written) and points the session at
  // it in one transaction. kNotFound for an unknown session.
  virtual Status finish_recording(const std::string& session_id, const SessionRecording& r,
                                  const FileRecord& file) = 0;
  // Forgets the session's recording and deletes its file record; returns the blob keys to delete.
  // kNotFound for an unknown session, another account's, or one without a recording.
  virtual Result<std::vector<std::string>> remove_recording(const std::string& account_id,
                                                            const std::string& session_id) = 0;
};

}  // namespace imago
