#include "store/sql/sql_stores.h"

namespace imago::sql {

namespace {

FileRecord read_file(const Stmt& s) {
  FileRecord f;
  f.id = s.col_text(0);
  f.account_id = s.col_text(1);
  f.agent_code = s.col_opt_text(2);
  f.purpose = s.col_text(3);
  f.blob_key = s.col_text(4);
  f.kind = s.col_text(5);
  f.mime = s.col_text(6);
  f.ext = s.col_text(7);
  f.size = s.col_int(8);
  f.original_name = s.col_opt_text(9);
  f.source_url = s.col_opt_text(10);
  f.created_at = s.col_int(11);
  return f;
}

Result<FileRecord> find_file(Connection& c, const std::string& account_id, const std::string& id) {
  auto q = c.prepare(
      "SELECT id, account_id, agent_code, purpose, blob_key, kind, mime, ext, size, original_name, "
      "source_url,"
      " created_at FROM files WHERE id = ? AND account_id = ?");
  q.bind(1, id).bind(2, account_id);
  if (!q.step()) return Status::NotFound("File not found: " + id);
  return read_file(q);
}

class SqlFileStore final : public FileStore {
 public:
  SqlFileStore(Database& db, Clock& clock) : db_(db), clock_(clock) {}

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
      if (f.ok()) c.prepare("DELETE FROM files WHERE id = ?").bind(1, id).run();
      return f;
    });
  }

  Result<int64_t> usage_bytes(const std::string& account_id) override {
    return db_.read([&](Connection& c) -> int64_t {
      auto q = c.prepare("SELECT COALESCE(SUM(size), 0) FROM files WHERE account_id = ?");
      q.bind(1, account_id);
      return q.step() ? q.col_int(0) : 0;
    });
  }

  Result<std::vector<FileRecord>> list_agent_files(const std::string& account_id,
                                                   const std::string& agent_code,
                                                   const std::string& purpose) override {
    return db_.read([&](Connection& c) -> std::vector<FileRecord> {
      auto q = c.prepare(
          "SELECT id, account_id, agent_code, purpose, blob_key, kind, mime, ext, size, original_name, "
          "source_url, created_at FROM files WHERE account_id = ? AND agent_code = ? AND purpose = ?"
          " ORDER BY created_at, id");
      q.bind(1, account_id).bind(2, agent_code).bind(3, purpose);
      std::vector<FileRecord> out;
      while (q.step()) out.push_back(read_file(q));
      return out;
    });
  }

 private:
  Database& db_;
  Clock& clock_;
};

}  // namespace

void insert_file(Connection& c, const FileRecord& f) {
  c.prepare(
       "INSERT INTO files(id, account_id, agent_code, purpose, blob_key, kind, mime, ext, size, "
       "original_name,"
       " source_url, created_at) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
      .bind(1, f.id)
      .bind(2, f.account_id)
      .bind(3, f.agent_code)
      .bind(4, f.purpose)
      .bind(5, f.blob_key)
      .bind(6, f.kind)
      .bind(7, f.mime)
      .bind(8, f.ext)
      .bind(9, f.size)
      .bind(10, f.original_name)
      .bind(11, f.source_url)
      .bind(12, f.created_at)
      .run();
}

std::vector<std::string> delete_agent_files(Connection& c, const std::string& account_id,
                                            const std::string& agent_code) {
  std::vector<std::string> keys;
  auto q = c.prepare("SELECT blob_key FROM files WHERE agent_code = ? AND account_id = ?");
  q.bind(1, agent_code).bind(2, account_id);
  while (q.step()) keys.push_back(q.col_text(0));
  c.prepare("DELETE FROM files WHERE agent_code = ? AND account_id = ?")
      .bind(1, agent_code)
      .bind(2, account_id)
      .run();
  return keys;
}

std::vector<std::string> delete_files(Connection& c, const std::vector<std::string>& ids) {
  std::vector<std::string> keys;
  for (const auto& id : ids) {
    auto q = c.prepare("SELECT blob_key FROM files WHERE id = ?");
    q.bind(1, id);
    if (q.step()) keys.push_back(q.col_text(0));
    c.prepare("DELETE FROM files WHERE id = ?").bind(1, id).run();
  }
  return keys;
}

std::unique_ptr<FileStore> make_file_store(Database& db, Clock& clock) {
  return std::make_unique<SqlFileStore>(db, clock);
}

}  // namespace imago::sql
