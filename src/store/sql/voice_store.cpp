// Designed voices (voice codes), on either backend.
#include "store/sql/sql_stores.h"

namespace imago::sql {

namespace {

#define VOICE_COLUMNS \
  "code, account_id, name, base_voice, description, gender, pitch, rate, brightness, created_at, updated_at"

DesignedVoice read_voice(const Stmt& s) {
  DesignedVoice v;
  s.read(v.code, v.account_id, v.name, v.base_voice, v.description, v.gender, v.pitch, v.rate, v.brightness,
         v.created_at, v.updated_at);
  return v;
}

Result<DesignedVoice> select_live(Connection& c, const std::string& account_id, const std::string& code) {
  return found(
      c.first(read_voice,
              "SELECT " VOICE_COLUMNS " FROM voices WHERE code = ? AND account_id = ? AND revoked_at IS NULL",
              code, account_id),
      Status::NotFound("Voice not found for code: " + code));
}

class SqlVoiceStore final : public VoiceStore, TableStore {
 public:
  using TableStore::TableStore;

  Result<DesignedVoice> create(const DesignedVoice& in) override {
    int64_t now = clock_.now_s();
    return db_.write([&](Connection& c) -> Result<DesignedVoice> {
      c.run("INSERT INTO voices (" VOICE_COLUMNS ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", in.code,
            in.account_id, in.name, in.base_voice, in.description, in.gender, in.pitch, in.rate,
            in.brightness, now, now);
      return select_live(c, in.account_id, in.code);
    });
  }

  Result<DesignedVoice> get(const std::string& account_id, const std::string& code) override {
    return db_.read([&](Connection& c) { return select_live(c, account_id, code); });
  }

  Result<std::vector<DesignedVoice>> list(const std::string& account_id) override {
    return db_.read_all(read_voice,
                        IMAGO_SQL_INSERTION_ORDER(
                            "SELECT " VOICE_COLUMNS
                            " FROM voices WHERE account_id = ? AND revoked_at IS NULL ORDER BY created_at, ",
                            ""),
                        account_id);
  }

  Result<DesignedVoice> update(const DesignedVoice& in) override {
    int64_t now = clock_.now_s();
    return db_.write([&](Connection& c) -> Result<DesignedVoice> {
      if (c.run(
              "UPDATE voices SET name = ?, base_voice = ?, description = ?, gender = ?, pitch = ?, rate = ?,"
              " brightness = ?, updated_at = ? WHERE code = ? AND account_id = ? AND revoked_at IS NULL",
              in.name, in.base_voice, in.description, in.gender, in.pitch, in.rate, in.brightness, now,
              in.code, in.account_id) == 0)
        return Status::NotFound("Voice not found for code: " + in.code);
      return select_live(c, in.account_id, in.code);
    });
  }

  Status revoke(const std::string& account_id, const std::string& code) override {
    int64_t now = clock_.now_s();
    return db_.write([&](Connection& c) -> Status {
      if (c.run("UPDATE voices SET revoked_at = ? WHERE code = ? AND account_id = ? AND revoked_at IS NULL",
                now, code, account_id) == 0)
        return Status::NotFound("Voice not found for code: " + code);
      return Status::Ok();
    });
  }
};

}  // namespace

std::unique_ptr<VoiceStore> make_voice_store(Database& db, Clock& clock) {
  return std::make_unique<SqlVoiceStore>(db, clock);
}

}  // namespace imago::sql
