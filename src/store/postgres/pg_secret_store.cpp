// Secrets in `cluster_secrets` (migration 500): every node reads the same row.
#include "store/postgres/pg_stores.h"

namespace imago::pg {

namespace {

class PgSecretStore final : public SecretStore {
 public:
  explicit PgSecretStore(Db& db) : db_(db) {}

  Result<std::string> get_or_create(const std::string& name, const std::string& initial) override {
    return db_.write([&](sql::Connection& c) -> Result<std::string> {
      // The first node's value wins; later ones read it back.
      c.prepare(
           "INSERT INTO cluster_secrets(name, value, created_at)"
           " VALUES(?, ?, EXTRACT(EPOCH FROM now())::bigint) ON CONFLICT (name) DO NOTHING")
          .bind(1, name)
          .bind(2, initial)
          .run();
      auto q = c.prepare("SELECT value FROM cluster_secrets WHERE name = ?");
      q.bind(1, name);
      if (!q.step()) return Status::Internal("secret " + name + " vanished");
      return q.col_text(0);
    });
  }

  Result<std::string> get(const std::string& name) override {
    return db_.once([&](sql::Connection& c) -> Result<std::string> {
      auto q = c.prepare("SELECT value FROM cluster_secrets WHERE name = ?");
      q.bind(1, name);
      if (!q.step()) return Status::NotFound("no secret " + name);
      return q.col_text(0);
    });
  }

  Result<std::string> update(const std::string& name,
                             const std::function<Result<std::string>(const std::string&)>& next) override {
    return db_.write([&](sql::Connection& c) -> Result<std::string> {
      // The row lock serializes concurrent updates from every node.
      auto q = c.prepare("SELECT value FROM cluster_secrets WHERE name = ? FOR UPDATE");
      q.bind(1, name);
      if (!q.step()) return Status::NotFound("no secret " + name);
      auto v = next(q.col_text(0));
      if (!v.ok()) return v.status();
      c.prepare("UPDATE cluster_secrets SET value = ? WHERE name = ?").bind(1, *v).bind(2, name).run();
      return v;
    });
  }

  bool shared() const override { return true; }

 private:
  Db& db_;
};

}  // namespace

std::unique_ptr<SecretStore> make_secret_store(Db& db) {
  return std::make_unique<PgSecretStore>(db);
}

}  // namespace imago::pg
