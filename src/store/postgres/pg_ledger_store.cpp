#include "store/postgres/pg_stores.h"

#include "util/random.h"

namespace imago {


namespace pg {

namespace {

std::optional<LedgerKind> parse_kind(std::string_view s) {
  for (auto k : {LedgerKind::kTopup, LedgerKind::kGrant, LedgerKind::kCharge, LedgerKind::kRefund}) {
    if (ledger_kind_name(k) == s) return k;
  }
  return std::nullopt;
}

LedgerEntry read_entry(const Stmt& s) {
  LedgerEntry e;
  e.id = s.col_text(0);
  e.account_id = s.col_text(1);
  e.kind = parse_kind(s.col_text(2)).value_or(LedgerKind::kCharge);
  e.amount = s.col_int(3);
  e.balance_after = s.col_int(4);
  e.reason = s.col_text(5);
  e.operation_key = s.col_text(6);
  e.reference = s.col_opt_text(7);
  e.created_at = s.col_int(8);
  return e;
}

}  // namespace

Result<LedgerEntry> apply_ledger_op(Conn& c, const LedgerOp& op, int64_t now_s) {
  if (op.amount <= 0) return Status::Invalid("Credit amount must be a positive integer");
  if (op.operation_key.empty()) return Status::Invalid("operation key is required");

  // The account row lock orders every credit movement of one account across all nodes; under
  // READ COMMITTED the statements after it see whatever the previous holder committed, so the
  // replay check below cannot miss a concurrent use of the same key.
  auto lock = c.prepare("SELECT 1 FROM accounts WHERE id = ? FOR UPDATE");
  lock.bind(1, op.account_id);
  if (!lock.step()) return Status::NotFound("Account not found: " + op.account_id);

  // Idempotency: the same operation key replays the recorded entry, provided it describes the
  // same operation (a different one under a reused key is a client bug worth surfacing).
  auto prior = c.prepare(
      "SELECT id, account_id, kind, amount, balance_after, reason, operation_key, reference, created_at "
      "FROM ledger WHERE account_id = ? AND operation_key = ?");
  prior.bind(1, op.account_id).bind(2, op.operation_key);
  if (prior.step()) {
    LedgerEntry e = read_entry(prior);
    int64_t signed_amount = op.kind == LedgerKind::kCharge ? -op.amount : op.amount;
    if (e.kind != op.kind || e.amount != signed_amount) {
      return Status::Conflict("Operation key '" + op.operation_key + "' was already used for a different operation");
    }
    return e;
  }

  // Conditional writes: a charge only happens when the balance covers it (plan credits first:
  // they come with the subscription, top-ups were paid for).
  int64_t signed_amount = op.amount;
  std::optional<Stmt> upd;
  switch (op.kind) {
    case LedgerKind::kCharge:
      signed_amount = -op.amount;
      upd.emplace(c.prepare(
          "UPDATE accounts SET plan_credits = plan_credits - LEAST(plan_credits, ?2::bigint),"
          " topup_credits = topup_credits - (?2::bigint - LEAST(plan_credits, ?2::bigint))"
          " WHERE id = ?1 AND plan_credits + topup_credits >= ?2::bigint RETURNING plan_credits, topup_credits"));
      break;
    case LedgerKind::kGrant:
      upd.emplace(c.prepare(
          "UPDATE accounts SET plan_credits = plan_credits + ?2::bigint WHERE id = ?1"
          " RETURNING plan_credits, topup_credits"));
      break;
    case LedgerKind::kTopup:
    case LedgerKind::kRefund:
      upd.emplace(c.prepare(
          "UPDATE accounts SET topup_credits = topup_credits + ?2::bigint WHERE id = ?1"
          " RETURNING plan_credits, topup_credits"));
      break;
  }
  upd->bind(1, op.account_id).bind(2, op.amount);
  if (!upd->step()) return Status::InsufficientFunds("Insufficient credits");
  int64_t balance_after = upd->col_int(0) + upd->col_int(1);

  LedgerEntry e;
  e.id = new_id("led");
  e.account_id = op.account_id;
  e.kind = op.kind;
  e.amount = signed_amount;
  e.balance_after = balance_after;
  e.reason = op.reason;
  e.operation_key = op.operation_key;
  e.reference = op.reference;
  e.created_at = now_s;
  c.prepare(
       "INSERT INTO ledger(id, account_id, kind, amount, balance_after, reason, operation_key, reference, created_at) "
       "VALUES(?,?,?,?,?,?,?,?,?)")
      .bind(1, e.id)
      .bind(2, e.account_id)
      .bind(3, ledger_kind_name(e.kind))
      .bind(4, e.amount)
      .bind(5, e.balance_after)
      .bind(6, e.reason)
      .bind(7, e.operation_key)
      .bind(8, e.reference)
      .bind(9, e.created_at)
      .run();
  return e;
}

namespace {

class PgLedgerStore final : public LedgerStore {
 public:
  PgLedgerStore(Db& db, Clock& clock) : db_(db), clock_(clock) {}

  Result<LedgerEntry> apply(const LedgerOp& op) override {
    const int64_t now = clock_.now_s();
    return db_.write([&](Conn& c) { return apply_ledger_op(c, op, now); });
  }

  Result<Balance> balance(const std::string& account_id) override {
    return db_.read([&](Conn& c) -> Result<Balance> {
      auto s = c.prepare("SELECT plan_credits, topup_credits FROM accounts WHERE id = ?");
      s.bind(1, account_id);
      if (!s.step()) return Status::NotFound("Account not found: " + account_id);
      return Balance{s.col_int(0), s.col_int(1)};
    });
  }

  Result<LedgerPage> list(const std::string& account_id, int limit, int offset) override {
    return db_.read([&](Conn& c) -> LedgerPage {
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

 private:
  Db& db_;
  Clock& clock_;
};

}  // namespace

std::unique_ptr<LedgerStore> make_ledger_store(Db& db, Clock& clock) {
  return std::make_unique<PgLedgerStore>(db, clock);
}

}  // namespace pg
}  // namespace imago
