#include "billing/balance_rules.h"
#include "store/sql/sql_stores.h"
#include "util/random.h"

namespace imago::sql {

namespace {

#define ENTRY_COLUMNS \
  "id, account_id, kind, amount, balance_after, reason, operation_key, reference, created_at"

LedgerEntry read_entry(const Stmt& s) {
  LedgerEntry e;
  e.kind = parse_ledger_kind(s.col_text(2)).value_or(LedgerKind::kCharge);
  s.read(e.id, e.account_id);
  s.read_from(3, e.amount, e.balance_after, e.reason, e.operation_key, e.reference, e.created_at);
  return e;
}

Balance read_balance(const Stmt& s) {
  return Balance{s.col_int(0), s.col_int(1)};
}

}  // namespace

std::optional<LedgerEntry> load_ledger_entry(Connection& c, const std::string& account_id,
                                             const std::string& key) {
  return c.first(read_entry,
                 "SELECT " ENTRY_COLUMNS " FROM ledger WHERE account_id = ? AND operation_key = ?",
                 account_id, key);
}

namespace {

std::optional<Balance> load_balance(Connection& c, const std::string& account_id) {
  // PostgreSQL: FOR UPDATE, so credit movements of one account queue on its row (across every
  // node) and the compare-and-set below succeeds first time instead of spinning under contention.
  return c.first(read_balance,
                 IMAGO_SQL_FOR_UPDATE("SELECT plan_credits, topup_credits FROM accounts WHERE id = ?"),
                 account_id);
}

// Live usage charged since `since_s` (the month's live spend), leaving out entry `except_id`.
int64_t live_spent_since(Connection& c, const std::string& account_id, int64_t since_s,
                         const std::string& except_id) {
#define LIVE_SPENT_FROM                                                                                      \
  " FROM ledger WHERE account_id = ? AND kind = 'charge' AND reason LIKE ? ESCAPE '\\' AND created_at >= ? " \
  "AND id <> ?"
  // PostgreSQL's SUM of BIGINT is NUMERIC: cast it back.
  return c.number(Dialects{"SELECT COALESCE(SUM(-amount), 0)" LIVE_SPENT_FROM,
                           "SELECT COALESCE(SUM(-amount), 0)::BIGINT" LIVE_SPENT_FROM},
                  account_id, billing::live_usage_like_pattern(), since_s, except_id);
}

std::optional<billing::LiveSpendCap> load_live_spend_cap(Connection& c, const std::string& account_id) {
  return c.first(
      [](const Stmt& q) {
        return billing::LiveSpendCap{q.col_opt_int(0), q.col_opt_int(1)};
      },
      "SELECT live_spend_cap, operator_live_spend_cap FROM accounts WHERE id = ?", account_id);
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
  if (c.run("INSERT INTO ledger(" ENTRY_COLUMNS ") VALUES(?,?,?,?,0,?,?,?,?)"
            " ON CONFLICT(account_id, operation_key) DO NOTHING",
            id, op.account_id, ledger_kind_name(op.kind), billing::signed_amount(op), op.reason,
            op.operation_key, op.reference, now_s) == 0) {
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
    if (c.run("UPDATE accounts SET plan_credits = ?, topup_credits = ?"
              " WHERE id = ? AND plan_credits = ? AND topup_credits = ?",
              applied->after.plan_credits, applied->after.topup_credits, op.account_id, balance->plan_credits,
              balance->topup_credits) == 1) {
      c.run("UPDATE ledger SET balance_after = ? WHERE id = ?", applied->after.total(), id);
      return billing::make_entry(op, *applied, id, now_s);
    }
    balance = load_balance(c, op.account_id);
    if (!balance) return Status::NotFound("Account not found: " + op.account_id);
  }
  return Status::Unavailable("The balance is changing too fast; retry");
}

namespace {

class SqlLedgerStore final : public LedgerStore, TableStore {
 public:
  using TableStore::TableStore;

  Result<LedgerEntry> apply(const LedgerOp& op) override {
    const int64_t now = clock_.now_s();
    return db_.write([&](Connection& c) { return apply_ledger_op(c, op, now); });
  }

  Result<Balance> balance(const std::string& account_id) override {
    return db_.read_one(Status::NotFound("Account not found: " + account_id), read_balance,
                        "SELECT plan_credits, topup_credits FROM accounts WHERE id = ?", account_id);
  }

  Result<LedgerPage> list(const std::string& account_id, int limit, int offset) override {
    return db_.read([&](Connection& c) -> LedgerPage {
      LedgerPage page;
      page.total = c.number("SELECT COUNT(*) FROM ledger WHERE account_id = ?", account_id);
      page.entries = c.all(read_entry,
                           "SELECT " ENTRY_COLUMNS
                           " FROM ledger WHERE account_id = ? ORDER BY seq DESC LIMIT ? OFFSET ?",
                           account_id, limit, offset);
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
      if (c.run(who == billing::CapSetter::kOperator
                    ? "UPDATE accounts SET operator_live_spend_cap = ? WHERE id = ?"
                    : "UPDATE accounts SET live_spend_cap = ? WHERE id = ?",
                credits, account_id) == 0)
        return Status::NotFound("Account not found: " + account_id);
      return Status::Ok();
    });
  }
};

}  // namespace

std::unique_ptr<LedgerStore> make_ledger_store(Database& db, Clock& clock) {
  return std::make_unique<SqlLedgerStore>(db, clock);
}

}  // namespace imago::sql
