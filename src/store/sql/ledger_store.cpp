#include "billing/balance_rules.h"
#include "store/sql/sql_stores.h"
#include "util/random.h"

namespace imago::sql {

namespace {

LedgerEntry read_entry(const Stmt& s) {
  LedgerEntry e;
  e.id = s.col_text(0);
  e.account_id = s.col_text(1);
  e.kind = parse_ledger_kind(s.col_text(2)).value_or(LedgerKind::kCharge);
  e.amount = s.col_int(3);
  e.balance_after = s.col_int(4);
  e.reason = s.col_text(5);
  e.operation_key = s.col_text(6);
  e.reference = s.col_opt_text(7);
  e.created_at = s.col_int(8);
  return e;
}

}  // namespace

std::optional<LedgerEntry> load_ledger_entry(Connection& c, const std::string& account_id,
                                             const std::string& key) {
  auto q = c.prepare(
      "SELECT id, account_id, kind, amount, balance_after, reason, operation_key, reference, created_at "
      "FROM ledger WHERE account_id = ? AND operation_key = ?");
  q.bind(1, account_id).bind(2, key);
  if (!q.step()) return std::nullopt;
  return read_entry(q);
}

namespace {

std::optional<Balance> load_balance(Connection& c, const std::string& account_id) {
  // PostgreSQL: FOR UPDATE, so credit movements of one account queue on its row (across every
  // node) and the compare-and-set below succeeds first time instead of spinning under contention.
  auto q = c.prepare(IMAGO_SQL_FOR_UPDATE("SELECT plan_credits, topup_credits FROM accounts WHERE id = ?"));
  q.bind(1, account_id);
  if (!q.step()) return std::nullopt;
  return Balance{q.col_int(0), q.col_int(1)};
}

// Live usage charged since `since_s` (the month's live spend), leaving out entry `except_id`.
int64_t live_spent_since(Connection& c, const std::string& account_id, int64_t since_s,
                         const std::string& except_id) {
#define LIVE_SPENT_FROM                                                                                      \
  " FROM ledger WHERE account_id = ? AND kind = 'charge' AND reason LIKE ? ESCAPE '\\' AND created_at >= ? " \
  "AND id <> ?"
  // PostgreSQL's SUM of BIGINT is NUMERIC: cast it back.
  auto q = c.prepare(Dialects{"SELECT COALESCE(SUM(-amount), 0)" LIVE_SPENT_FROM,
                              "SELECT COALESCE(SUM(-amount), 0)::BIGINT" LIVE_SPENT_FROM});
  q.bind(1, account_id).bind(2, billing::live_usage_like_pattern()).bind(3, since_s).bind(4, except_id);
  q.step();
  return q.col_int(0);
}

std::optional<billing::LiveSpendCap> load_live_spend_cap(Connection& c, const std::string& account_id) {
  auto q = c.prepare("SELECT live_spend_cap, operator_live_spend_cap FROM accounts WHERE id = ?");
  q.bind(1, account_id);
  if (!q.step()) return std::nullopt;
  return billing::LiveSpendCap{q.col_opt_int(0), q.col_opt_int(1)};
}

}  // namespace

// Written so that it stays correct without a single writer (PostgreSQL at READ COMMITTED runs the
// same statements): the operation key is claimed first with INSERT ... ON CONFLICT DO NOTHING (a
// concurrent twin waits on the unique index and then replays), and the balance changes only by a
// compare-and-set UPDATE against the values billing::apply_to_balance was given.
Result<LedgerEntry> apply_ledger_op(Connection& c, const LedgerOp& op, int64_t now_s) {
  if (Status st = billing::validate(op); !st.ok()) return st;
  auto balance = load_balance(c, op.account_id);
  if (!balance) return Status::NotFound("Account not found: " + op.account_id);

  const std::string id = new_id("led");
  c.prepare(
       "INSERT INTO ledger(id, account_id, kind, amount, balance_after, reason, operation_key, reference, "
       "created_at) "
       "VALUES(?,?,?,?,0,?,?,?,?) ON CONFLICT(account_id, operation_key) DO NOTHING")
      .bind(1, id)
      .bind(2, op.account_id)
      .bind(3, ledger_kind_name(op.kind))
      .bind(4, billing::signed_amount(op))
      .bind(5, op.reason)
      .bind(6, op.operation_key)
      .bind(7, op.reference)
      .bind(8, now_s)
      .run();
  if (c.changes() == 0) {
    // The key was used before: replay the recorded entry (if it is the same operation).
    auto prior = load_ledger_entry(c, op.account_id, op.operation_key);
    if (!prior) return Status::Internal("ledger entry for '" + op.operation_key + "' vanished");
    if (Status st = billing::check_replay(*prior, op); !st.ok()) return st;
    return *prior;
  }

  // The monthly live spend cap, read after the key claim and (PostgreSQL) under the account row
  // lock taken by load_balance: a concurrent charge of the same account has committed before
  // these reads, so its minute is in the sum.
  if (billing::counts_toward_live_cap(op)) {
    auto cap = load_live_spend_cap(c, op.account_id);
    if (!cap) return Status::NotFound("Account not found: " + op.account_id);
    if (cap->effective()) {
      const int64_t spent = live_spent_since(c, op.account_id, billing::utc_month(now_s).start_s, id);
      if (Status st = billing::check_live_spend_cap(*cap, spent, op.amount); !st.ok()) return st;
    }
  }

  // A concurrent writer may move the balance between the read and the update; the conditional
  // update then changes nothing and the arithmetic is redone on the fresh balance.
  for (int attempt = 0; attempt < 100; ++attempt) {
    auto applied = billing::apply_to_balance(*balance, op);
    if (!applied.ok()) return applied.status();  // the caller's transaction rolls the claim back
    c.prepare(
         "UPDATE accounts SET plan_credits = ?, topup_credits = ? "
         "WHERE id = ? AND plan_credits = ? AND topup_credits = ?")
        .bind(1, applied->after.plan_credits)
        .bind(2, applied->after.topup_credits)
        .bind(3, op.account_id)
        .bind(4, balance->plan_credits)
        .bind(5, balance->topup_credits)
        .run();
    if (c.changes() == 1) {
      c.prepare("UPDATE ledger SET balance_after = ? WHERE id = ?")
          .bind(1, applied->after.total())
          .bind(2, id)
          .run();
      return billing::make_entry(op, *applied, id, now_s);
    }
    balance = load_balance(c, op.account_id);
    if (!balance) return Status::NotFound("Account not found: " + op.account_id);
  }
  return Status::Unavailable("The balance is changing too fast; retry");
}

namespace {

class SqlLedgerStore final : public LedgerStore {
 public:
  SqlLedgerStore(Database& db, Clock& clock) : db_(db), clock_(clock) {}

  Result<LedgerEntry> apply(const LedgerOp& op) override {
    const int64_t now = clock_.now_s();
    return db_.write([&](Connection& c) { return apply_ledger_op(c, op, now); });
  }

  Result<Balance> balance(const std::string& account_id) override {
    return db_.read([&](Connection& c) -> Result<Balance> {
      auto s = c.prepare("SELECT plan_credits, topup_credits FROM accounts WHERE id = ?");
      s.bind(1, account_id);
      if (!s.step()) return Status::NotFound("Account not found: " + account_id);
      return Balance{s.col_int(0), s.col_int(1)};
    });
  }

  Result<LedgerPage> list(const std::string& account_id, int limit, int offset) override {
    return db_.read([&](Connection& c) -> LedgerPage {
      LedgerPage page;
      auto n = c.prepare("SELECT COUNT(*) FROM ledger WHERE account_id = ?");
      n.bind(1, account_id);
      n.step();
      page.total = n.col_int(0);
      auto s = c.prepare(
          "SELECT id, account_id, kind, amount, balance_after, reason, operation_key, reference, created_at "
          "FROM ledger WHERE account_id = ? ORDER BY seq DESC LIMIT ? OFFSET ?");
      s.bind(1, account_id).bind(2, limit).bind(3, offset);
      while (s.step()) page.entries.push_back(read_entry(s));
      return page;
    });
  }

  Result<billing::LiveSpend> live_spend(const std::string& account_id) override {
    const billing::MonthWindow month = billing::utc_month(clock_.now_s());
    return db_.read([&](Connection& c) -> Result<billing::LiveSpend> {
      auto cap = load_live_spend_cap(c, account_id);
      if (!cap) return Status::NotFound("Account not found: " + account_id);
      billing::LiveSpend out;
      out.cap = *cap;
      out.month = month;
      out.spent = live_spent_since(c, account_id, month.start_s, "");
      return out;
    });
  }

  Status set_live_spend_cap(const std::string& account_id, billing::CapSetter who,
                            std::optional<int64_t> credits) override {
    if (credits) {
      if (Status st = billing::validate_live_spend_cap(*credits); !st.ok()) return st;
    }
    return db_.write([&](Connection& c) -> Status {
      auto s = c.prepare(who == billing::CapSetter::kOperator
                             ? "UPDATE accounts SET operator_live_spend_cap = ? WHERE id = ?"
                             : "UPDATE accounts SET live_spend_cap = ? WHERE id = ?");
      if (credits) {
        s.bind(1, *credits);
      } else {
        s.bind_null(1);
      }
      s.bind(2, account_id).run();
      if (c.changes() == 0) return Status::NotFound("Account not found: " + account_id);
      return Status::Ok();
    });
  }

 private:
  Database& db_;
  Clock& clock_;
};

}  // namespace

std::unique_ptr<LedgerStore> make_ledger_store(Database& db, Clock& clock) {
  return std::make_unique<SqlLedgerStore>(db, clock);
}

}  // namespace imago::sql
