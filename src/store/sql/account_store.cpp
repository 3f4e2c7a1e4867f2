// Accounts and API keys, on either backend.
#include <mutex>
#include <unordered_map>

#include "billing/operations.h"
#include "store/sql/sql_stores.h"
#include "util/random.h"

namespace imago::sql {

namespace {

#define ACCOUNT_COLUMNS "id, name, plan, limit_generate, limit_write, limit_read, created_at, limit_storage"
#define KEY_COLUMNS "id, account_id, alias, prefix, last4, created_at, last_used_at, revoked_at"

// ACCOUNT_COLUMNS from column `o` on.
Account read_account_from(const Stmt& s, int o) {
  Account a;
  s.read_from(o, a.id, a.name);
  a.plan = parse_plan(s.col_text(o + 2)).value_or(Plan::kFree);
  if (!s.col_null(o + 3)) {
    a.custom_limits = PlanLimits{static_cast<int>(s.col_int(o + 3)), static_cast<int>(s.col_int(o + 4)),
                                 static_cast<int>(s.col_int(o + 5)), s.col_int(o + 7)};
  }
  a.created_at = s.col_int(o + 6);
  return a;
}

Account read_account(const Stmt& s) {
  return read_account_from(s, 0);
}

ApiKey read_key(const Stmt& s) {
  ApiKey k;
  s.read(k.id, k.account_id, k.alias, k.prefix, k.last4, k.created_at, k.last_used_at, k.revoked_at);
  return k;
}

ApiKey insert_key(Connection& c, const std::string& account_id, const std::string& alias,
                  const KeyMaterial& m, int64_t now) {
  ApiKey k;
  k.id = new_id("key");
  k.account_id = account_id;
  k.alias = alias;
  k.prefix = m.prefix;
  k.last4 = m.last4;
  k.created_at = now;
  c.run(
      "INSERT INTO api_keys(id, account_id, alias, secret_hash, prefix, last4, created_at) "
      "VALUES(?,?,?,?,?,?,?)",
      k.id, k.account_id, k.alias, m.hash_hex, k.prefix, k.last4, now);
  return k;
}

// In the transaction of every write that can change what find_active_key answers for a key that
// exists: revoke, rotate, plan change (new accounts and keys change no remembered answer, since
// unknown keys are never remembered; last_used_at stamps are not part of an answer). The row lock
// orders these writes; they are rare (administration), never on the request path.
void count_key_change(Connection& c) {
  c.run("UPDATE key_changes SET value = value + 1 WHERE id = 1");
}

class SqlAccountStore final : public AccountStore, TableStore {
 public:
  using TableStore::TableStore;

  Result<std::pair<Account, ApiKey>> create_account(const std::string& name, Plan plan,
                                                    int64_t initial_credits, const std::string& key_alias,
                                                    const KeyMaterial& key) override {
    const int64_t now = clock_.now_s();
    return db_.write([&](Connection& c) -> Result<std::pair<Account, ApiKey>> {
      Account a;
      a.id = new_id("usr");
      a.name = name;
      a.plan = plan;
      a.created_at = now;
      c.run("INSERT INTO accounts(id, name, plan, created_at) VALUES(?,?,?,?)", a.id, a.name, plan_name(plan),
            now);
      ApiKey k = insert_key(c, a.id, key_alias, key, now);
      if (initial_credits > 0) {
        auto e = apply_ledger_op(c, billing::initial_credits(a.id, initial_credits), now);
        if (!e.ok()) return e.status();
      }
      return std::make_pair(a, k);
    });
  }

  Result<Account> get_account(const std::string& id) override {
    return db_.read_one(Status::NotFound("Account not found: " + id), read_account,
                        "SELECT " ACCOUNT_COLUMNS " FROM accounts WHERE id = ?", id);
  }

  Result<AccountPage> list_accounts(int limit, int offset) override {
    return db_.read([&](Connection& c) -> Result<AccountPage> {
      AccountPage page;
      page.total = c.number("SELECT COUNT(*) FROM accounts");
      page.accounts =
          c.all(read_account,
                "SELECT " ACCOUNT_COLUMNS " FROM accounts ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
                limit, offset);
      return page;
    });
  }

  Result<int64_t> count_accounts() override {
    return db_.read([&](Connection& c) { return c.number("SELECT COUNT(*) FROM accounts"); });
  }

  Status set_plan(const std::string& id, Plan plan, std::optional<PlanLimits> limits) override {
    if (plan != Plan::kEnterprise) limits.reset();
    return db_.write([&](Connection& c) -> Status {
      // Without custom limits every limit is NULL; a storage quota of 0 is the plan's (NULL).
      auto s = c.query(
          "UPDATE accounts SET plan = ?, limit_generate = ?, limit_write = ?, limit_read = ?,"
          " limit_storage = ? WHERE id = ?",
          plan_name(plan), std::nullopt, std::nullopt, std::nullopt, std::nullopt, id);
      if (limits) {
        s.bind(2, limits->generate_per_min).bind(3, limits->write_per_min).bind(4, limits->read_per_min);
        if (limits->storage_bytes > 0) s.bind(5, limits->storage_bytes);
      }
      if (s.run() == 0) return Status::NotFound("Account not found: " + id);
      count_key_change(c);
      return Status::Ok();
    });
  }

  Result<ApiKey> create_key(const std::string& account_id, const std::string& alias,
                            const KeyMaterial& key) override {
    const int64_t now = clock_.now_s();
    return db_.write([&](Connection& c) -> Result<ApiKey> {
      if (!c.exists("SELECT 1 FROM accounts WHERE id = ?", account_id))
        return Status::NotFound("Account not found: " + account_id);
      return insert_key(c, account_id, alias, key, now);
    });
  }

  Result<std::vector<ApiKey>> list_keys(const std::string& account_id) override {
    return db_.read_all(read_key,
                        "SELECT " KEY_COLUMNS
                        " FROM api_keys WHERE account_id = ? AND revoked_at IS NULL ORDER BY created_at, id",
                        account_id);
  }

  Result<ApiKey> get_key(const std::string& key_id) override {
    return db_.read_one(Status::NotFound("Key not found: " + key_id), read_key,
                        "SELECT " KEY_COLUMNS " FROM api_keys WHERE id = ?", key_id);
  }

  Status revoke_key(const std::optional<std::string>& account_id, const std::string& key_id) override {
    const int64_t now = clock_.now_s();
    return db_.write(
        [&](Connection& c) -> Status { return revoke_in_tx(c, account_id, key_id, now).status(); });
  }

  Result<ApiKey> rotate_key(const std::optional<std::string>& account_id, const std::string& key_id,
                            const KeyMaterial& key) override {
    const int64_t now = clock_.now_s();
    return db_.write([&](Connection& c) -> Result<ApiKey> {
      auto old = revoke_in_tx(c, account_id, key_id, now);
      if (!old.ok()) return old.status();
      return insert_key(c, old->account_id, old->alias, key, now);
    });
  }

  Result<KeyOwner> find_active_key(const std::string& hash_hex) override {
    return db_.read([&](Connection& c) -> Result<KeyOwner> {
      auto s = c.query(
          "SELECT k.id, k.account_id, k.alias, k.prefix, k.last4, k.created_at, k.last_used_at, k.revoked_at,"
          " a.id, a.name, a.plan, a.limit_generate, a.limit_write, a.limit_read, a.created_at,"
          " a.limit_storage,"
          " k.secret_hash, (SELECT value FROM key_changes WHERE id = 1)"
          " FROM api_keys k JOIN accounts a ON a.id = k.account_id"
          " WHERE k.secret_hash = ? AND k.revoked_at IS NULL",
          hash_hex);
      if (!s.step()) return Status(Code::kUnauthenticated, "unknown or revoked key");
      KeyOwner o;
      o.key = read_key(s);
      o.account = read_account_from(s, 8);
      o.stored_hash = s.col_text(16);
      o.changes = static_cast<uint64_t>(s.col_int(17));  // same statement: same snapshot
      return o;
    });
  }

  Result<uint64_t> key_changes() override {
    return db_.read([&](Connection& c) -> Result<uint64_t> {
      auto v = c.first(int_col, "SELECT value FROM key_changes WHERE id = 1");
      if (!v) return Status::Internal("key_changes has no row");
      return static_cast<uint64_t>(*v);
    });
  }

  void touch_key(const std::string& key_id, int64_t now_s) override {
    // Coalesced: at most one write per key per minute per process keeps the hot path read-only.
    {
      std::lock_guard lock(touch_mu_);
      auto& last = last_touch_[key_id];
      if (last != 0 && now_s - last < 60) return;
      last = now_s;
      if (last_touch_.size() > 100000) last_touch_.clear();
    }
    (void)db_.write([&](Connection& c) -> Status {
      c.run(
          "UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)",
          now_s, key_id, now_s);
      return Status::Ok();
    });
  }

  Status ping() override {
    return db_.read([&](Connection& c) -> Status {
      c.exists("SELECT 1");
      return Status::Ok();
    });
  }

 private:
  Result<ApiKey> revoke_in_tx(Connection& c, const std::optional<std::string>& account_id,
                              const std::string& key_id, int64_t now) {
    auto k = c.first(
        read_key,
        IMAGO_SQL_FOR_UPDATE("SELECT " KEY_COLUMNS " FROM api_keys WHERE id = ? AND revoked_at IS NULL"),
        key_id);
    if (!k || (account_id && k->account_id != *account_id))
      return Status::NotFound("Key not found: " + key_id);
    c.run("UPDATE api_keys SET revoked_at = ? WHERE id = ?", now, key_id);
    count_key_change(c);
    k->revoked_at = now;
    return *k;
  }

  std::mutex touch_mu_;
  std::unordered_map<std::string, int64_t> last_touch_;
};

}  // namespace

std::unique_ptr<AccountStore> make_account_store(Database& db, Clock& clock) {
  return std::make_unique<SqlAccountStore>(db, clock);
}

}  // namespace imago::sql
