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

SessionRecord read_session(const Stmt& q) {
  SessionRecord s;
  s.session_id = q.col_text(0);
  s.account_id = q.col_text(1);
  s.agent_code = q.col_text(2);
  s.room_id = q.col_text(3);
  s.billing_type = q.col_text(4);
  s.status = q.col_text(5);
  s.started_us = q.col_int(6);
  s.ended_us = q.col_opt_int(7);
  s.minutes_charged = q.col_int(8);
  s.end_reason = q.col_opt_text(9);
  s.viewers_peak = static_cast<int>(q.col_int(10));
  if (auto status = q.col_opt_text(11)) {
    SessionRecording r;
    r.status = *status;
    r.file_id = q.col_opt_text(12);
    r.bytes = q.col_opt_int(13).value_or(0);
    r.duration_ms = q.col_opt_int(14).value_or(0);
    r.video_codec = q.col_opt_text(15).value_or("");
    r.audio_codec = q.col_opt_text(16).value_or("");
    const bool file_gone = r.file_id && q.col_null(17);
    if (!file_gone) s.recording = std::move(r);
  }
  return s;
}

bool session_exists(Connection& c, const std::string& session_id) {
  auto q = c.prepare("SELECT 1 FROM live_sessions WHERE session_id = ?");
  q.bind(1, session_id);
  return q.step();
}

class SqlSessionStore final : public SessionStore {
 public:
  SqlSessionStore(Database& db, Clock& clock) : db_(db), clock_(clock) {}

  Status create(const SessionRecord& s) override {
    return db_.write([&](Connection& c) -> Status {
      c.prepare(
           "INSERT INTO live_sessions(session_id, account_id, agent_code, room_id, billing_type, status, "
           "started_us, minutes_charged, viewers_peak) VALUES(?, ?, ?, ?, ?, 'active', ?, ?, ?)")
          .bind(1, s.session_id)
          .bind(2, s.account_id)
          .bind(3, s.agent_code)
          .bind(4, s.room_id)
          .bind(5, s.billing_type)
          .bind(6, s.started_us)
          .bind(7, s.minutes_charged)
          .bind(8, s.viewers_peak)
          .run();
      if (s.recording) write_recording(c, s.session_id, *s.recording);
      return Status::Ok();
    });
  }

  Status add_transcript(const std::string& session_id, const std::vector<TranscriptEntry>& lines) override {
    return db_.write([&](Connection& c) -> Status {
      if (!session_exists(c, session_id)) return Status::NotFound("No session " + session_id);
      for (const auto& l : lines) {
        c.prepare(
             "INSERT INTO session_transcripts(session_id, seq, role, source, text, start_ms, end_ms) "
             "VALUES(?, ?, ?, ?, ?, ?, ?) ON CONFLICT(session_id, seq) DO NOTHING")
            .bind(1, session_id)
            .bind(2, l.seq)
            .bind(3, l.role)
            .bind(4, l.source)
            .bind(5, l.text)
            .bind(6, l.start_ms)
            .bind(7, l.end_ms)
            .run();
      }
      return Status::Ok();
    });
  }

  Status update_progress(const std::string& session_id, int64_t minutes_charged, int viewers_peak) override {
    return db_.write([&](Connection& c) -> Status {
      c.prepare(
           Dialects{"UPDATE live_sessions SET minutes_charged = MAX(minutes_charged, ?), "
                    "viewers_peak = MAX(viewers_peak, ?) WHERE session_id = ? AND status = 'active'",
                    "UPDATE live_sessions SET minutes_charged = GREATEST(minutes_charged, ?), "
                    "viewers_peak = GREATEST(viewers_peak, ?) WHERE session_id = ? AND status = 'active'"})
          .bind(1, minutes_charged)
          .bind(2, viewers_peak)
          .bind(3, session_id)
          .run();
      return Status::Ok();
    });
  }

  Result<bool> end(const std::string& session_id, const SessionEnd& e,
                   const std::string& webhook_data_json) override {
    return db_.write([&](Connection& c) -> Result<bool> {
      // Conditional: of two enders (a retry, another node) exactly one changes the row.
      c
          .prepare(Dialects{
              "UPDATE live_sessions SET status = 'ended', ended_us = ?, end_reason = ?, "
              "minutes_charged = MAX(minutes_charged, ?), viewers_peak = MAX(viewers_peak, ?) "
              "WHERE session_id = ? AND status = 'active'",
              "UPDATE live_sessions SET status = 'ended', ended_us = ?, end_reason = ?, "
              "minutes_charged = GREATEST(minutes_charged, ?), viewers_peak = GREATEST(viewers_peak, ?) "
              "WHERE session_id = ? AND status = 'active'"})
          .bind(1, e.ended_us)
          .bind(2, e.end_reason)
          .bind(3, e.minutes_charged)
          .bind(4, e.viewers_peak)
          .bind(5, session_id)
          .run();
      if (c.changes() == 0) {
        if (!session_exists(c, session_id)) return Status::NotFound("No session " + session_id);
        return false;
      }
      // Only the ender marks it, and only a recording still being made: one its node uploaded
      // before (recover()) stays ready.
      if (e.recording_lost) {
        c.prepare(
             "UPDATE live_sessions SET recording_status = 'failed' WHERE session_id = ? AND recording_status "
             "= "
             "'recording'")
            .bind(1, session_id)
            .run();
      }
      if (!webhook_data_json.empty()) {
        auto q = c.prepare("SELECT account_id FROM live_sessions WHERE session_id = ?");
        q.bind(1, session_id);
        if (!q.step()) return Status::Internal("session " + session_id + " vanished");
        enqueue_webhook_event(c, q.col_text(0), "session.ended", webhook_data_json, clock_.now_us());
      }
      return true;
    });
  }

  Result<SessionRecord> get(const std::string& account_id, const std::string& session_id) override {
    return db_.read([&](Connection& c) -> Result<SessionRecord> {
      auto q =
          c.prepare("SELECT " SESSION_COLUMNS SESSION_FROM "WHERE s.session_id = ? AND s.account_id = ?");
      q.bind(1, session_id).bind(2, account_id);
      if (!q.step()) return Status::NotFound("Session not found: " + session_id);
      return read_session(q);
    });
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
      auto s = c.prepare("SELECT 1 FROM live_sessions WHERE session_id = ? AND account_id = ?");
      s.bind(1, session_id).bind(2, account_id);
      if (!s.step()) return Status::NotFound("Session not found: " + session_id);
      std::vector<TranscriptEntry> out;
      auto q = c.prepare(
          "SELECT seq, role, source, text, start_ms, end_ms FROM session_transcripts WHERE session_id = ? "
          "ORDER BY start_ms, seq");
      q.bind(1, session_id);
      while (q.step()) {
        out.push_back(
            {q.col_int(0), q.col_text(1), q.col_text(2), q.col_text(3), q.col_int(4), q.col_int(5)});
      }
      return out;
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
      auto q = c.prepare(IMAGO_SQL_FOR_UPDATE(
          "SELECT recording_status, recording_file_id FROM live_sessions WHERE session_id = ? AND "
          "account_id = ?"));
      q.bind(1, session_id).bind(2, account_id);
      if (!q.step()) return Status::NotFound("Session not found: " + session_id);
      if (q.col_null(0)) return Status::NotFound("Session " + session_id + " has no recording");
      std::vector<std::string> ids;
      if (auto f = q.col_opt_text(1)) ids.push_back(*f);
      auto keys = delete_files(c, ids);
      c.prepare(
           "UPDATE live_sessions SET recording_status = NULL, recording_file_id = NULL, recording_bytes = "
           "NULL, recording_duration_ms = NULL, recording_video_codec = NULL, recording_audio_codec = NULL "
           "WHERE session_id = ?")
          .bind(1, session_id)
          .run();
      return keys;
    });
  }

 private:
  static void write_recording(Connection& c, const std::string& session_id, const SessionRecording& r) {
    c.prepare(
         "UPDATE live_sessions SET recording_status = ?, recording_file_id = ?, recording_bytes = ?, "
         "recording_duration_ms = ?, recording_video_codec = ?, recording_audio_codec = ? WHERE session_id = "
         "?")
        .bind(1, r.status)
        .bind(2, r.file_id)
        .bind(3, r.bytes)
        .bind(4, r.duration_ms)
        .bind(5, r.video_codec)
        .bind(6, r.audio_codec)
        .bind(7, session_id)
        .run();
  }

  Database& db_;
  Clock& clock_;
};

}  // namespace

std::unique_ptr<SessionStore> make_session_store(Database& db, Clock& clock) {
  return std::make_unique<SqlSessionStore>(db, clock);
}

}  // namespace imago::sql
