// Designed voices (voice codes), on either backend.
#include "store/sql/sql_stores.h"

namespace imago::sql {

namespace {

#define VOICE_COLUMNS \
  "code, account_id, name, base_voice, description, gender, pitch, rate, brightness, created_at, updated_at"

DesignedVoice read_voice(const Stmt& s) {
  DesignedVoice v;
  v.code = s.col_text(0);
  v.account_id = s.col_text(1);
  v.name = s.col_text(2);
  v.base_voice = s.col_text(3);
  v.description = s.col_text(4);
  v.gender = s.col_double(5);
  v.pitch = s.col_double(6);
  v.rate = s.col_double(7);
  v.brightness = s.col_double(8);
  v.created_at = s.col_int(9);
  v.updated_at = s.col_int(10);
  return v;
}

Result<DesignedVoice> select_live(Connection& c, const std::string& account_id, const std::string& code) {
  auto s = c.prepare("SELECT " VOICE_COLUMNS
                     " FROM voices WHERE code = ? AND account_id = ? AND revoked_at IS NULL");
  s.bind(1, code).bind(2, account_id);
  if (!s.step()) return Status::NotFound("Voice not found for code: " + code);
  return read_voice(s);
}

class SqlVoiceStore final : public VoiceStore {
 public:
  SqlVoiceStore(Database& db, Clock& clock) : db_(db), clock_(clock) {}

  Result<DesignedVoice> create(const DesignedVoice& in) override {
    int64_t now = clock_.now_s();
    return db_.write([&](Connection& c) -> Result<DesignedVoice> {
      auto s = c.prepare("INSERT INTO voices (" VOICE_COLUMNS ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
      s.bind(1, in.code)
          .bind(2, in.account_id)
          .bind(3, in.name)
          .bind(4, in.base_voice)
          .bind(5, in.description);
      s.bind(6, in.gender)
          .bind(7, in.pitch)
          .bind(8, in.rate)
          .bind(9, in.brightness)
          .bind(10, now)
          .bind(11, now);
      s.run();
      return select_live(c, in.account_id, in.code);
    });
  }

  Result<DesignedVoice> get(const std::string& account_id, const std::string& code) override {
    return db_.read([&](Connection& c) { return select_live(c, account_id, code); });
  }

  Result<std::vector<DesignedVoice>> list(const std::string& account_id) override {
    return db_.read([&](Connection& c) {
      std::vector<DesignedVoice> out;
      auto s = c.prepare(IMAGO_SQL_INSERTION_ORDER(
          "SELECT " VOICE_COLUMNS
          " FROM voices WHERE account_id = ? AND revoked_at IS NULL ORDER BY created_at, ",
          ""));
      s.bind(1, account_id);
      while (s.step()) out.push_back(read_voice(s));
      return out;
    });
  }

  Result<DesignedVoice> update(const DesignedVoice& in) override {
    int64_t now = clock_.now_s();
    return db_.write([&](Connection& c) -> Result<DesignedVoice> {
      auto s = c.prepare(
          "UPDATE voices SET name = ?, base_voice = ?, description = ?, gender = ?, pitch = ?, rate = ?, "
          "brightness = ?, updated_at = ? WHERE code = ? AND account_id = ? AND revoked_at IS NULL");
      s.bind(1, in.name).bind(2, in.base_voice).bind(3, in.description).bind(4, in.gender).bind(5, in.pitch);
      s.bind(6, in.rate).bind(7, in.brightness).bind(8, now).bind(9, in.code).bind(10, in.account_id);
      s.run();
      if (c.changes() == 0) return Status::NotFound("Voice not found for code: " + in.code);
      return select_live(c, in.account_id, in.code);
    });
  }

  Status revoke(const std::string& account_id, const std::string& code) override {
    int64_t now = clock_.now_s();
    return db_.write([&](Connection& c) -> Status {
      auto s = c.prepare(
          "UPDATE voices SET revoked_at = ? WHERE code = ? AND account_id = ? AND revoked_at IS NULL");
      s.bind(1, now).bind(2, code).bind(3, account_id);
      s.run();
      if (c.changes() == 0) return Status::NotFound("Voice not found for code: " + code);
      return Status::Ok();
    });
  }

 private:
  Database& db_;
  Clock& clock_;
};

}  // namespace

std::unique_ptr<VoiceStore> make_voice_store(Database& db, Clock& clock) {
  return std::make_unique<SqlVoiceStore>(db, clock);
}

}  // namespace imago::sql
