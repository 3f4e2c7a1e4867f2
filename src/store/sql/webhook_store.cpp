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
  std::string events;
  int active = 0;
  s.read(w.id, w.account_id, w.url, events, w.description, w.secret, active, w.created_at, w.updated_at);
  w.events = parse_events(events);
  w.active = active != 0;
  return w;
}

WebhookDelivery read_delivery(const Stmt& s) {
  WebhookDelivery d;
  s.read(d.id, d.webhook_id, d.account_id, d.event_type, d.payload, d.state, d.attempts, d.last_status_code,
         d.last_error, d.created_at, d.updated_at, d.delivered_at);
  return d;
}

#define DELIVERY_COLUMNS                                                                             \
  "id, webhook_id, account_id, event_type, payload, state, attempts, last_status_code, last_error, " \
  "created_at, updated_at, delivered_at"
#define WEBHOOK_COLUMNS "id, account_id, url, events, description, secret, active, created_at, updated_at"

void insert_delivery(Connection& c, const WebhookDelivery& d) {
  c.run("INSERT INTO webhook_deliveries(" DELIVERY_COLUMNS ") VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        d.id, d.webhook_id, d.account_id, d.event_type, d.payload, d.state, d.attempts, d.last_status_code,
        d.last_error, d.created_at, d.updated_at, d.delivered_at);
}

class SqlWebhookStore final : public WebhookStore, TableStore {
 public:
  using TableStore::TableStore;

  Status create(const Webhook& w) override {
    int64_t now = clock_.now_s();
    return db_.write([&](Connection& c) -> Status {
      c.run("INSERT INTO webhooks(" WEBHOOK_COLUMNS ") VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)", w.id, w.account_id,
            w.url, events_json(w.events), w.description, w.secret, w.active ? 1 : 0,
            w.created_at ? w.created_at : now, w.updated_at ? w.updated_at : now);
      return Status::Ok();
    });
  }

  Result<std::vector<Webhook>> list(const std::string& account_id) override {
    return db_.read_all(
        read_webhook,
        IMAGO_SQL_INSERTION_ORDER(
            "SELECT " WEBHOOK_COLUMNS " FROM webhooks WHERE account_id = ? ORDER BY created_at, ", ""),
        account_id);
  }

  Result<Webhook> get(const std::string& account_id, const std::string& id) override {
    auto w = get_by_id(id);
    if (!w.ok()) return w.status();
    if (w->account_id != account_id) return Status::NotFound("Webhook not found: " + id);
    return w;
  }

  Result<Webhook> get_by_id(const std::string& id) override {
    return db_.read_one(Status::NotFound("Webhook not found: " + id), read_webhook,
                        "SELECT " WEBHOOK_COLUMNS " FROM webhooks WHERE id = ?", id);
  }

  Status remove(const std::string& account_id, const std::string& id) override {
    int64_t now = clock_.now_us();
    return db_.write([&](Connection& c) -> Status {
      if (c.run("DELETE FROM webhooks WHERE id = ? AND account_id = ?", id, account_id) == 0)
        return Status::NotFound("Webhook not found: " + id);
      // Pending deliveries of a deleted subscription are not sent.
      const auto pending =
          c.all(text_col, "SELECT id FROM webhook_deliveries WHERE webhook_id = ? AND state = 'pending'", id);
      for (const auto& d : pending) cancel_jobs_for_subject(c, d, now);
      c.run(
          "DELETE FROM webhook_attempts WHERE delivery_id IN"
          " (SELECT id FROM webhook_deliveries WHERE webhook_id = ?)",
          id);
      c.run("DELETE FROM webhook_deliveries WHERE webhook_id = ?", id);
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
    return db_.read([&](Connection& c) {
      return found(
          c.first(read_delivery, "SELECT " DELIVERY_COLUMNS " FROM webhook_deliveries WHERE id = ?", id),
          Status::NotFound("delivery not found"));
    });
  }

  Result<std::vector<WebhookDelivery>> list_deliveries(const std::string& webhook_id, int limit) override {
    return db_.read_all(
        read_delivery,
        IMAGO_SQL_INSERTION_ORDER("SELECT " DELIVERY_COLUMNS
                                  " FROM webhook_deliveries WHERE webhook_id = ? ORDER BY created_at DESC, ",
                                  " DESC LIMIT ?"),
        webhook_id, limit);
  }

  Result<std::vector<DeliveryAttempt>> list_attempts(const std::string& delivery_id) override {
    return db_.read_all(
        [](const Stmt& q) {
          DeliveryAttempt a;
          q.read(a.delivery_id, a.attempt, a.status_code, a.error, a.duration_ms, a.created_at);
          return a;
        },
        "SELECT delivery_id, attempt, status_code, error, duration_ms, created_at FROM webhook_attempts"
        " WHERE delivery_id = ? ORDER BY attempt",
        delivery_id);
  }

  Result<int> record_attempt(const std::string& delivery_id, std::optional<int> status_code,
                             std::optional<std::string> error, int64_t duration_ms,
                             const std::string& new_state) override {
    int64_t now = clock_.now_s();
    return db_.write([&](Connection& c) -> Result<int> {
      auto attempts = c.first(
          int_col, IMAGO_SQL_FOR_UPDATE("SELECT attempts FROM webhook_deliveries WHERE id = ?"), delivery_id);
      if (!attempts) return Status::NotFound("delivery not found");
      const int attempt = static_cast<int>(*attempts) + 1;
      c.run(
          "INSERT INTO webhook_attempts(delivery_id, attempt, status_code, error, duration_ms, created_at)"
          " VALUES(?, ?, ?, ?, ?, ?)",
          delivery_id, attempt, status_code, error, duration_ms, now);
      c.run(
          "UPDATE webhook_deliveries SET attempts = ?, state = ?, last_status_code = ?, last_error = ?,"
          " updated_at = ?, delivered_at = CASE WHEN ? = 'delivered' THEN ? ELSE delivered_at END"
          " WHERE id = ?",
          attempt, new_state, status_code, error, now, new_state, now, delivery_id);
      return attempt;
    });
  }

  Result<std::vector<std::string>> enqueue_event(const std::string& account_id, const std::string& event,
                                                 const std::string& data_json) override {
    int64_t now = clock_.now_us();
    return db_.write(
        [&](Connection& c) { return enqueue_webhook_event(c, account_id, event, data_json, now); });
  }
};

}  // namespace

std::vector<std::string> enqueue_webhook_event(Connection& c, const std::string& account_id,
                                               const std::string& event, const std::string& data_json,
                                               int64_t now_us) {
  auto hooks =
      c.all(read_webhook, "SELECT " WEBHOOK_COLUMNS " FROM webhooks WHERE account_id = ? AND active = 1",
            account_id);
  std::erase_if(hooks, [&](const Webhook& w) { return !w.subscribed(event); });
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
