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
      c.run(
          "INSERT INTO cluster_secrets(name, value, created_at)"
          " VALUES(?, ?, EXTRACT(EPOCH FROM now())::bigint) ON CONFLICT (name) DO NOTHING",
          name, initial);
      return sql::found(c.first(sql::text_col, "SELECT value FROM cluster_secrets WHERE name = ?", name),
                        Status::Internal("secret " + name + " vanished"));
    });
  }

  Result<std::string> get(const std::string& name) override {
    return db_.once([&](sql::Connection& c) {
      return sql::found(c.first(sql::text_col, "SELECT value FROM cluster_secrets WHERE name = ?", name),
                        Status::NotFound("no secret " + name));
    });
  }

  Result<std::string> update(const std::string& name,
                             const std::function<Result<std::string>(const std::string&)>& next) override {
    return db_.write([&](sql::Connection& c) -> Result<std::string> {
      // The row lock serializes concurrent updates from every node.
      auto current =
          c.first(sql::text_col, "SELECT value FROM cluster_secrets WHERE name = ? FOR UPDATE", name);
      if (!current) return Status::NotFound("no secret " + name);
      auto v = next(*current);
      if (!v.ok()) return v.status();
      c.run("UPDATE cluster_secrets SET value = ? WHERE name = ?", *v, name);
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
