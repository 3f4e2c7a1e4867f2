// Webhook subscriptions, their deliveries and attempts, on either backend.
#include <boost/json.hpp>

#include "store/sql/sql_stores.h"
#include "util/random.h"
#include "util/strings.h"

namespace imago {

bool Webhook::subscribed(std::string_view event) const {
  if (events.empty()) return true;
  for (const auto& e : events) {
    if (e == event) return true;
  }
  return false;
}

namespace sql {

namespace {

std::vector<std::string> parse_events(const std::string& text) {
  std::vector<std::string> out;
  boost::system::error_code ec;
  auto v = boost::json::parse(text, ec);
  if (ec || !v.is_array()) return out;
  for (const auto& e : v.as_array()) {
    if (e.is_string()) out.emplace_back(e.as_string());
  }
  return out;
}

std::string events_json(const std::vector<std::string>& events) {
  boost::json::array a;
  for (const auto& e : events) a.emplace_back(e);
  return boost::json::serialize(a);
}

Webhook read_webhook(const Stmt& s) {
  Webhook w;
  w.id = s.col_text(0);
  w.account_id = s.col_text(1);
  w.url = s.col_text(2);
  w.events = parse_events(s.col_text(3));
  w.description = s.col_opt_text(4);
  w.secret = s.col_text(5);
  w.active = s.col_int(6) != 0;
  w.created_at = s.col_int(7);
  w.updated_at = s.col_int(8);
  return w;
}

WebhookDelivery read_delivery(const Stmt& s) {
  WebhookDelivery d;
  d.id = s.col_text(0);
  d.webhook_id = s.col_text(1);
  d.account_id = s.col_text(2);
  d.event_type = s.col_text(3);
  d.payload = s.col_text(4);
  d.state = s.col_text(5);
  d.attempts = static_cast<int>(s.col_int(6));
  if (auto v = s.col_opt_int(7)) d.last_status_code = static_cast<int>(*v);
  d.last_error = s.col_opt_text(8);
  d.created_at = s.col_int(9);
  d.updated_at = s.col_int(10);
  d.delivered_at = s.col_opt_int(11);
  return d;
}

#define DELIVERY_COLUMNS                                                                             \
  "id, webhook_id, account_id, event_type, payload, state, attempts, last_status_code, last_error, " \
  "created_at, updated_at, delivered_at"
#define WEBHOOK_COLUMNS "id, account_id, url, events, description, secret, active, created_at, updated_at"

void insert_delivery(Connection& c, const WebhookDelivery& d) {
  auto st = c.prepare("INSERT INTO webhook_deliveries(" DELIVERY_COLUMNS
                      ") VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  st.bind(1, d.id).bind(2, d.webhook_id).bind(3, d.account_id).bind(4, d.event_type).bind(5, d.payload);
  st.bind(6, d.state).bind(7, d.attempts);
  if (d.last_status_code)
    st.bind(8, *d.last_status_code);
  else
    st.bind_null(8);
  st.bind(9, d.last_error).bind(10, d.created_at).bind(11, d.updated_at);
  if (d.delivered_at)
    st.bind(12, *d.delivered_at);
  else
    st.bind_null(12);
  st.run();
}

class SqlWebhookStore final : public WebhookStore {
 public:
  SqlWebhookStore(Database& db, Clock& clock) : db_(db), clock_(clock) {}

  Status create(const Webhook& w) override {
    int64_t now = clock_.now_s();
    return db_.write([&](Connection& c) -> Status {
      c.prepare("INSERT INTO webhooks(" WEBHOOK_COLUMNS ") VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)")
          .bind(1, w.id)
          .bind(2, w.account_id)
          .bind(3, w.url)
          .bind(4, events_json(w.events))
          .bind(5, w.description)
          .bind(6, w.secret)
          .bind(7, w.active ? 1 : 0)
          .bind(8, w.created_at ? w.created_at : now)
          .bind(9, w.updated_at ? w.updated_at : now)
          .run();
      return Status::Ok();
    });
  }

  Result<std::vector<Webhook>> list(const std::string& account_id) override {
    return db_.read([&](Connection& c) {
      std::vector<Webhook> out;
      auto q = c.prepare(IMAGO_SQL_INSERTION_ORDER(
          "SELECT " WEBHOOK_COLUMNS " FROM webhooks WHERE account_id = ? ORDER BY created_at, ", ""));
      q.bind(1, account_id);
      while (q.step()) out.push_back(read_webhook(q));
      return out;
    });
  }

  Result<Webhook> get(const std::string& account_id, const std::string& id) override {
    auto w = get_by_id(id);
    if (!w.ok()) return w.status();
    if (w->account_id != account_id) return Status::NotFound("Webhook not found: " + id);
    return w;
  }

  Result<Webhook> get_by_id(const std::string& id) override {
    return db_.read([&](Connection& c) -> Result<Webhook> {
      auto q = c.prepare("SELECT " WEBHOOK_COLUMNS " FROM webhooks WHERE id = ?");
      q.bind(1, id);
      if (!q.step()) return Status::NotFound("Webhook not found: " + id);
      return read_webhook(q);
    });
  }

  Status remove(const std::string& account_id, const std::string& id) override {
    int64_t now = clock_.now_us();
    return db_.write([&](Connection& c) -> Status {
      c.prepare("DELETE FROM webhooks WHERE id = ? AND account_id = ?").bind(1, id).bind(2, account_id).run();
      if (c.changes() == 0) return Status::NotFound("Webhook not found: " + id);
      // Pending deliveries of a deleted subscription are not sent.
      std::vector<std::string> pending;
      auto q = c.prepare("SELECT id FROM webhook_deliveries WHERE webhook_id = ? AND state = 'pending'");
      q.bind(1, id);
      while (q.step()) pending.push_back(q.col_text(0));
      for (const auto& d : pending) cancel_jobs_for_subject(c, d, now);
      c.prepare(
           "DELETE FROM webhook_attempts WHERE delivery_id IN (SELECT id FROM webhook_deliveries WHERE "
           "webhook_id = ?)")
          .bind(1, id)
          .run();
      c.prepare("DELETE FROM webhook_deliveries WHERE webhook_id = ?").bind(1, id).run();
      return Status::Ok();
    });
  }

  Status create_delivery(const WebhookDelivery& d) override {
    return db_.write([&](Connection& c) -> Status {
      insert_delivery(c, d);
      return Status::Ok();
    });
  }

  Result<WebhookDelivery> get_delivery(const std::string& id) override {
    return db_.read([&](Connection& c) -> Result<WebhookDelivery> {
      auto q = c.prepare("SELECT " DELIVERY_COLUMNS " FROM webhook_deliveries WHERE id = ?");
      q.bind(1, id);
      if (!q.step()) return Status::NotFound("delivery not found");
      return read_delivery(q);
    });
  }

  Result<std::vector<WebhookDelivery>> list_deliveries(const std::string& webhook_id, int limit) override {
    return db_.read([&](Connection& c) {
      std::vector<WebhookDelivery> out;
      auto q = c.prepare(IMAGO_SQL_INSERTION_ORDER(
          "SELECT " DELIVERY_COLUMNS
          " FROM webhook_deliveries WHERE webhook_id = ? ORDER BY created_at DESC, ",
          " DESC LIMIT ?"));
      q.bind(1, webhook_id).bind(2, limit);
      while (q.step()) out.push_back(read_delivery(q));
      return out;
    });
  }

  Result<std::vector<DeliveryAttempt>> list_attempts(const std::string& delivery_id) override {
    return db_.read([&](Connection& c) {
      std::vector<DeliveryAttempt> out;
      auto q = c.prepare(
          "SELECT delivery_id, attempt, status_code, error, duration_ms, created_at FROM webhook_attempts"
          " WHERE delivery_id = ? ORDER BY attempt");
      q.bind(1, delivery_id);
      while (q.step()) {
        DeliveryAttempt a;
        a.delivery_id = q.col_text(0);
        a.attempt = static_cast<int>(q.col_int(1));
        if (auto v = q.col_opt_int(2)) a.status_code = static_cast<int>(*v);
        a.error = q.col_opt_text(3);
        a.duration_ms = q.col_int(4);
        a.created_at = q.col_int(5);
        out.push_back(std::move(a));
      }
      return out;
    });
  }

  Result<int> record_attempt(const std::string& delivery_id, std::optional<int> status_code,
                             std::optional<std::string> error, int64_t duration_ms,
                             const std::string& new_state) override {
    int64_t now = clock_.now_s();
    return db_.write([&](Connection& c) -> Result<int> {
      auto q = c.prepare(IMAGO_SQL_FOR_UPDATE("SELECT attempts FROM webhook_deliveries WHERE id = ?"));
      q.bind(1, delivery_id);
      if (!q.step()) return Status::NotFound("delivery not found");
      int attempt = static_cast<int>(q.col_int(0)) + 1;
      auto ins = c.prepare(
          "INSERT INTO webhook_attempts(delivery_id, attempt, status_code, error, duration_ms, created_at)"
          " VALUES(?, ?, ?, ?, ?, ?)");
      ins.bind(1, delivery_id).bind(2, attempt);
      if (status_code)
        ins.bind(3, *status_code);
      else
        ins.bind_null(3);
      ins.bind(4, error).bind(5, duration_ms).bind(6, now).run();
      auto up = c.prepare(
          "UPDATE webhook_deliveries SET attempts = ?, state = ?, last_status_code = ?, last_error = ?,"
          " updated_at = ?, delivered_at = CASE WHEN ? = 'delivered' THEN ? ELSE delivered_at END WHERE id = "
          "?");
      up.bind(1, attempt).bind(2, new_state);
      if (status_code)
        up.bind(3, *status_code);
      else
        up.bind_null(3);
      up.bind(4, error).bind(5, now).bind(6, new_state).bind(7, now).bind(8, delivery_id).run();
      return attempt;
    });
  }

  Result<std::vector<std::string>> enqueue_event(const std::string& account_id, const std::string& event,
                                                 const std::string& data_json) override {
    int64_t now = clock_.now_us();
    return db_.write(
        [&](Connection& c) { return enqueue_webhook_event(c, account_id, event, data_json, now); });
  }

 private:
  Database& db_;
  Clock& clock_;
};

}  // namespace

std::vector<std::string> enqueue_webhook_event(Connection& c, const std::string& account_id,
                                               const std::string& event, const std::string& data_json,
                                               int64_t now_us) {
  std::vector<Webhook> hooks;
  auto q = c.prepare("SELECT " WEBHOOK_COLUMNS " FROM webhooks WHERE account_id = ? AND active = 1");
  q.bind(1, account_id);
  while (q.step()) {
    Webhook w = read_webhook(q);
    if (w.subscribed(event)) hooks.push_back(std::move(w));
  }
  boost::system::error_code ec;
  boost::json::value data = boost::json::parse(data_json, ec);
  if (ec) data = boost::json::object();
  std::vector<std::string> ids;
  int64_t now_s = now_us / 1000000;
  for (const auto& w : hooks) {
    WebhookDelivery d;
    d.id = random_uuid();
    d.webhook_id = w.id;
    d.account_id = account_id;
    d.event_type = event;
    d.payload = boost::json::serialize(boost::json::object{
        {"id", d.id}, {"type", event}, {"created_at", format_rfc3339(now_s)}, {"data", data}});
    d.state = "pending";
    d.created_at = now_s;
    d.updated_at = now_s;
    insert_delivery(c, d);
    NewJob job;
    job.kind = std::string(kJobWebhookDelivery);
    job.account_id = account_id;
    job.subject = d.id;
    job.payload = boost::json::serialize(boost::json::object{{"delivery_id", d.id}});
    job.max_attempts = kWebhookMaxAttempts;
    insert_job(c, job, now_us);
    ids.push_back(d.id);
  }
  return ids;
}

std::unique_ptr<WebhookStore> make_webhook_store(Database& db, Clock& clock) {
  return std::make_unique<SqlWebhookStore>(db, clock);
}

}  // namespace sql
}  // namespace imago
