#include "webhooks/webhook_service.h"

#include <algorithm>
#include <boost/json.hpp>

#include "util/random.h"
#include "util/strings.h"
#include "webhooks/signing.h"

namespace imago::webhooks {

namespace json = boost::json;

Result<Webhook> WebhookService::create(const std::string& account_id, NewWebhook in) {
  // Same guard as every other user URL, checked now so a bad target is refused at registration.
  if (Status st = fetcher_.check_target(in.url); !st.ok()) return Status::Invalid("url: " + st.message());
  Webhook w;
  w.id = random_uuid();
  w.account_id = account_id;
  w.url = std::move(in.url);
  const auto& known = known_events();
  for (auto& e : in.events) {
    if (std::find(known.begin(), known.end(), e) == known.end()) {
      return Status::Invalid(
          "Field 'events' may contain only: agent.ready, agent.failed, dynamics.ready, dynamics.failed, "
          "session.ended");
    }
    if (std::find(w.events.begin(), w.events.end(), e) == w.events.end()) w.events.push_back(std::move(e));
  }
  w.description = std::move(in.description);
  auto existing = store_.list(account_id);
  if (!existing.ok()) return existing.status();
  if (existing->size() >= kMaxWebhooksPerAccount) {
    return Status::Invalid("An account can have at most " + std::to_string(kMaxWebhooksPerAccount) +
                           " webhooks");
  }
  w.secret = new_secret();
  w.created_at = w.updated_at = clock_.now_s();
  if (Status st = store_.create(w); !st.ok()) return st;
  return w;
}

Result<std::vector<Webhook>> WebhookService::list(const std::string& account_id) {
  return store_.list(account_id);
}

Result<Webhook> WebhookService::get(const std::string& account_id, const std::string& id) {
  return store_.get(account_id, id);
}

Status WebhookService::remove(const std::string& account_id, const std::string& id) {
  return store_.remove(account_id, id);
}

Result<TestPing> WebhookService::test(const std::string& account_id, const std::string& id) {
  auto w = store_.get(account_id, id);
  if (!w.ok()) return w.status();
  WebhookDelivery d;
  d.id = random_uuid();
  d.webhook_id = w->id;
  d.account_id = w->account_id;
  d.event_type = "ping";
  const int64_t now = clock_.now_s();
  d.payload = json::serialize(json::object{{"id", d.id},
                                           {"type", "ping"},
                                           {"created_at", format_rfc3339(now)},
                                           {"data", json::object{{"webhook_id", w->id}}}});
  d.state = "pending";
  d.created_at = d.updated_at = now;
  if (Status st = store_.create_delivery(d); !st.ok()) return st;
  // One synchronous attempt, no retries: the caller wants to know now.
  TestPing out;
  out.delivery_id = d.id;
  out.result = attempt_delivery(fetcher_, clock_, *w, d);
  auto n = store_.record_attempt(d.id, out.result.status_code, out.result.error, out.result.duration_ms,
                                 out.result.delivered ? "delivered" : "failed");
  if (!n.ok()) return n.status();
  out.attempts = *n;
  return out;
}

Result<std::vector<DeliveryLog>> WebhookService::deliveries(const std::string& account_id,
                                                            const std::string& id, int limit) {
  auto w = store_.get(account_id, id);
  if (!w.ok()) return w.status();
  auto list = store_.list_deliveries(w->id, limit);
  if (!list.ok()) return list.status();
  std::vector<DeliveryLog> out;
  out.reserve(list->size());
  for (auto& d : *list) {
    auto attempts = store_.list_attempts(d.id);
    // A log whose attempts cannot be read is still shown (without them).
    out.push_back(
        {std::move(d), attempts.ok() ? std::move(attempts).value() : std::vector<DeliveryAttempt>{}});
  }
  return out;
}

}  // namespace imago::webhooks
