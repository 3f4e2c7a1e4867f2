// Live session records, transcripts and recordings on either backend (SQLite and PostgreSQL
// migration 420).
#include "store/sql/sql_stores.h"

namespace imago::sql {

namespace {

#define SESSION_COLUMNS                                                                                    \
  "s.session_id, s.account_id, s.agent_code, s.room_id, s.billing_type, s.status, s.started_us, "          \
  "s.ended_us, s.minutes_charged, s.end_reason, s.viewers_peak, s.recording_status, s.recording_file_id, " \
  "s.recording_bytes, s.recording_duration_ms, s.recording_video_codec, s.recording_audio_codec, f.id"
// The recording's file may have gone with the agent (files are deleted with it): the join says.
#define SESSION_FROM " FROM live_sessions s LEFT JOIN files f ON f.id = s.recording_file_id "
// Minutes and peak viewers only grow.
#define PROGRESS_SQL(greatest)                                                                            \
  "UPDATE live_sessions SET minutes_charged = " greatest "(minutes_charged, ?), viewers_peak = " greatest \
  "(viewers_peak, ?) WHERE session_id = ? AND status = 'active'"
#define END_SQL(greatest)                                                                                \
  "UPDATE live_sessions SET status = 'ended', ended_us = ?, end_reason = ?, minutes_charged = " greatest \
  "(minutes_charged, ?), viewers_peak = " greatest                                                       \
  "(viewers_peak, ?) WHERE session_id = ? AND status = 'active'"

SessionRecord read_session(const Stmt& q) {
  SessionRecord s;
  q.read(s.session_id, s.account_id, s.agent_code, s.room_id, s.billing_type, s.status, s.started_us,
         s.ended_us, s.minutes_charged, s.end_reason, s.viewers_peak);
  if (!q.col_null(11)) {
    // NULL numbers read as 0, NULL codecs as empty.
    SessionRecording r;
    q.read_from(11, r.status, r.file_id, r.bytes, r.duration_ms, r.video_codec, r.audio_codec);
    const bool file_gone = r.file_id && q.col_null(17);
    if (!file_gone) s.recording = std::move(r);
  }
  return s;
}

bool session_exists(Connection& c, const std::string& session_id) {
  return c.exists("SELECT 1 FROM live_sessions WHERE session_id = ?", session_id);
}

class SqlSessionStore final : public SessionStore, TableStore {
 public:
  using TableStore::TableStore;

  Status create(const SessionRecord& s) override {
    return db_.write([&](Connection& c) -> Status {
      c.run(
          "INSERT INTO live_sessions(session_id, account_id, agent_code, room_id, billing_type, status,"
          " started_us, minutes_charged, viewers_peak) VALUES(?, ?, ?, ?, ?, 'active', ?, ?, ?)",
          s.session_id, s.account_id, s.agent_code, s.room_id, s.billing_type, s.started_us,
          s.minutes_charged, s.viewers_peak);
      if (s.recording) write_recording(c, s.session_id, *s.recording);
      return Status::Ok();
    });
  }

  Status add_transcript(const std::string& session_id, const std::vector<TranscriptEntry>& lines) override {
    return db_.write([&](Connection& c) -> Status {
      if (!session_exists(c, session_id)) return Status::NotFound("No session " + session_id);
      for (const auto& l : lines) {
        c.run(
            "INSERT INTO session_transcripts(session_id, seq, role, source, text, start_ms, end_ms)"
            " VALUES(?, ?, ?, ?, ?, ?, ?) ON CONFLICT(session_id, seq) DO NOTHING",
            session_id, l.seq, l.role, l.source, l.text, l.start_ms, l.end_ms);
      }
      return Status::Ok();
    });
  }

  Status update_progress(const std::string& session_id, int64_t minutes_charged, int viewers_peak) override {
    return db_.write([&](Connection& c) -> Status {
      c.run(IMAGO_SQL_GREATEST(PROGRESS_SQL), minutes_charged, viewers_peak, session_id);
      return Status::Ok();
    });
  }

  Result<bool> end(const std::string& session_id, const SessionEnd& e,
                   const std::string& webhook_data_json) override {
    return db_.write([&](Connection& c) -> Result<bool> {
      // Conditional: of two enders (a retry, another node) exactly one changes the row.
      if (c.run(IMAGO_SQL_GREATEST(END_SQL), e.ended_us, e.end_reason, e.minutes_charged, e.viewers_peak,
                session_id) == 0) {
        if (!session_exists(c, session_id)) return Status::NotFound("No session " + session_id);
        return false;
      }
      // Only the ender marks it, and only a recording still being made: one its node uploaded
      // before (recover()) stays ready.
      if (e.recording_lost) {
        c.run(
            "UPDATE live_sessions SET recording_status = 'failed'"
            " WHERE session_id = ? AND recording_status = 'recording'",
            session_id);
      }
      if (!webhook_data_json.empty()) {
        auto account =
            c.first(text_col, "SELECT account_id FROM live_sessions WHERE session_id = ?", session_id);
        if (!account) return Status::Internal("session " + session_id + " vanished");
        enqueue_webhook_event(c, *account, "session.ended", webhook_data_json, clock_.now_us());
      }
      return true;
    });
  }

  Result<SessionRecord> get(const std::string& account_id, const std::string& session_id) override {
    return db_.read_one(Status::NotFound("Session not found: " + session_id), read_session,
                        "SELECT " SESSION_COLUMNS SESSION_FROM "WHERE s.session_id = ? AND s.account_id = ?",
                        session_id, account_id);
  }

  Result<SessionPage> list(const std::string& account_id, const std::string& agent_code, int limit,
                           int offset) override {
    return db_.read([&](Connection& c) -> Result<SessionPage> {
      SessionPage page;
      const bool one_agent = !agent_code.empty();
      const char* agent_filter = one_agent ? " AND agent_code = ?" : "";
      const std::string count_sql =
          std::string("SELECT COUNT(*) FROM live_sessions WHERE account_id = ?") + agent_filter;
      auto n = c.prepare(count_sql.c_str());
      n.bind(1, account_id);
      if (one_agent) n.bind(2, agent_code);
      if (n.step()) page.total = n.col_int(0);
      const std::string sql = std::string("SELECT " SESSION_COLUMNS SESSION_FROM "WHERE s.account_id = ?") +
                              (one_agent ? " AND s.agent_code = ?" : "") +
                              " ORDER BY s.started_us DESC, s.session_id DESC LIMIT ? OFFSET ?";
      auto q = c.prepare(sql.c_str());
      int i = 1;
      q.bind(i++, account_id);
      if (one_agent) q.bind(i++, agent_code);
      q.bind(i++, limit).bind(i++, offset);
      while (q.step()) page.sessions.push_back(read_session(q));
      return page;
    });
  }

  Result<std::vector<TranscriptEntry>> transcript(const std::string& account_id,
                                                  const std::string& session_id) override {
    return db_.read([&](Connection& c) -> Result<std::vector<TranscriptEntry>> {
      if (!c.exists("SELECT 1 FROM live_sessions WHERE session_id = ? AND account_id = ?", session_id,
                    account_id))
        return Status::NotFound("Session not found: " + session_id);
      return c.all(
          [](const Stmt& q) {
            TranscriptEntry t;
            q.read(t.seq, t.role, t.source, t.text, t.start_ms, t.end_ms);
            return t;
          },
          "SELECT seq, role, source, text, start_ms, end_ms FROM session_transcripts WHERE session_id = ?"
          " ORDER BY start_ms, seq",
          session_id);
    });
  }

  Status set_recording(const std::string& session_id, const SessionRecording& r) override {
    return db_.write([&](Connection& c) -> Status {
      if (!session_exists(c, session_id)) return Status::NotFound("No session " + session_id);
      write_recording(c, session_id, r);
      return Status::Ok();
    });
  }

  Status finish_recording(const std::string& session_id, const SessionRecording& r,
                          const FileRecord& file) override {
    return db_.write([&](Connection& c) -> Status {
      if (!session_exists(c, session_id)) return Status::NotFound("No session " + session_id);
      insert_file(c, file);
      SessionRecording done = r;
      done.file_id = file.id;
      write_recording(c, session_id, done);
      return Status::Ok();
    });
  }

  Result<std::vector<std::string>> remove_recording(const std::string& account_id,
                                                    const std::string& session_id) override {
    return db_.write([&](Connection& c) -> Result<std::vector<std::string>> {
      auto q = c.query(IMAGO_SQL_FOR_UPDATE("SELECT recording_status, recording_file_id FROM live_sessions"
                                            " WHERE session_id = ? AND account_id = ?"),
                       session_id, account_id);
      if (!q.step()) return Status::NotFound("Session not found: " + session_id);
      if (q.col_null(0)) return Status::NotFound("Session " + session_id + " has no recording");
      std::vector<std::string> ids;
      if (auto f = q.col_opt_text(1)) ids.push_back(*f);
      auto keys = delete_files(c, ids);
      c.run(
          "UPDATE live_sessions SET recording_status = NULL, recording_file_id = NULL,"
          " recording_bytes = NULL, recording_duration_ms = NULL, recording_video_codec = NULL,"
          " recording_audio_codec = NULL WHERE session_id = ?",
          session_id);
      return keys;
    });
  }

 private:
  static void write_recording(Connection& c, const std::string& session_id, const SessionRecording& r) {
    c.run(
        "UPDATE live_sessions SET recording_status = ?, recording_file_id = ?, recording_bytes = ?,"
        " recording_duration_ms = ?, recording_video_codec = ?, recording_audio_codec = ?"
        " WHERE session_id = ?",
        r.status, r.file_id, r.bytes, r.duration_ms, r.video_codec, r.audio_codec, session_id);
  }
};

}  // namespace

std::unique_ptr<SessionStore> make_session_store(Database& db, Clock& clock) {
  return std::make_unique<SqlSessionStore>(db, clock);
}

}  // namespace imago::sql
