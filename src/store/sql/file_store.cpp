#include "store/sql/sql_stores.h"

namespace imago::sql {

namespace {

#define FILE_COLUMNS                                                                      \
  "id, account_id, agent_code, purpose, blob_key, kind, mime, ext, size, original_name, " \
  "source_url, created_at"

FileRecord read_file(const Stmt& s) {
  FileRecord f;
  s.read(f.id, f.account_id, f.agent_code, f.purpose, f.blob_key, f.kind, f.mime, f.ext, f.size,
         f.original_name, f.source_url, f.created_at);
  return f;
}

Result<FileRecord> find_file(Connection& c, const std::string& account_id, const std::string& id) {
  return found(c.first(read_file, "SELECT " FILE_COLUMNS " FROM files WHERE id = ? AND account_id = ?", id,
                       account_id),
               Status::NotFound("File not found: " + id));
}

class SqlFileStore final : public FileStore, TableStore {
 public:
  using TableStore::TableStore;

  Status insert(const FileRecord& f) override {
    FileRecord copy = f;
    if (copy.created_at == 0) copy.created_at = clock_.now_s();
    return db_.write([&](Connection& c) -> Status {
      insert_file(c, copy);
      return Status::Ok();
    });
  }

  Result<FileRecord> get(const std::string& account_id, const std::string& id) override {
    return db_.read([&](Connection& c) -> Result<FileRecord> { return find_file(c, account_id, id); });
  }

  Result<FileRecord> remove(const std::string& account_id, const std::string& id) override {
    return db_.write([&](Connection& c) -> Result<FileRecord> {
      auto f = find_file(c, account_id, id);
      if (f.ok()) c.run("DELETE FROM files WHERE id = ?", id);
      return f;
    });
  }

  Result<int64_t> usage_bytes(const std::string& account_id) override {
    return db_.read([&](Connection& c) {
      return c.number("SELECT COALESCE(SUM(size), 0) FROM files WHERE account_id = ?", account_id);
    });
  }

  Result<std::vector<FileRecord>> list_agent_files(const std::string& account_id,
                                                   const std::string& agent_code,
                                                   const std::string& purpose) override {
    return db_.read_all(read_file,
                        "SELECT " FILE_COLUMNS
                        " FROM files WHERE account_id = ? AND agent_code = ? AND purpose = ?"
                        " ORDER BY created_at, id",
                        account_id, agent_code, purpose);
  }
};

}  // namespace

void insert_file(Connection& c, const FileRecord& f) {
  c.run("INSERT INTO files(" FILE_COLUMNS ") VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", f.id, f.account_id,
        f.agent_code, f.purpose, f.blob_key, f.kind, f.mime, f.ext, f.size, f.original_name, f.source_url,
        f.created_at);
}

std::vector<std::string> delete_agent_files(Connection& c, const std::string& account_id,
                                            const std::string& agent_code) {
  auto keys = c.all(text_col, "SELECT blob_key FROM files WHERE agent_code = ? AND account_id = ?",
                    agent_code, account_id);
  c.run("DELETE FROM files WHERE agent_code = ? AND account_id = ?", agent_code, account_id);
  return keys;
}

std::vector<std::string> delete_files(Connection& c, const std::vector<std::string>& ids) {
  std::vector<std::string> keys;
  for (const auto& id : ids) {
    if (auto key = c.first(text_col, "SELECT blob_key FROM files WHERE id = ?", id)) keys.push_back(*key);
    c.run("DELETE FROM files WHERE id = ?", id);
  }
  return keys;
}

std::unique_ptr<FileStore> make_file_store(Database& db, Clock& clock) {
  return std::make_unique<SqlFileStore>(db, clock);
}

}  // namespace imago::sql
