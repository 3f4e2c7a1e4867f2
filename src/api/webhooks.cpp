// Webhook subscriptions (SPEC 6): create (secret shown once), list, get, delete, test ping and
// the delivery log. Deliveries themselves run as jobs (src/jobs/job_handlers.cpp).
#include <boost/json.hpp>

#include "api/routes.h"
#include "fetch/fetcher.h"
#include "store/webhook_store.h"
#include "util/json.h"
#include "util/random.h"
#include "util/strings.h"
#include "webhooks/delivery.h"
#include "webhooks/signing.h"

namespace imago::api {

namespace {

namespace json = boost::json;

constexpr size_t kMaxWebhooksPerAccount = 20;

json::value opt_time(const std::optional<int64_t>& t) {
  return t ? json::value(format_rfc3339(*t)) : json::value(nullptr);
}

json::object webhook_json(const Webhook& w) {
  json::array events;
  for (const auto& e : w.events) events.emplace_back(e);
  return {{"id", w.id},
          {"url", w.url},
          {"events", std::move(events)},
          {"description", w.description ? json::value(*w.description) : json::value(nullptr)},
          {"active", w.active},
          {"created_at", format_rfc3339(w.created_at)},
          {"updated_at", format_rfc3339(w.updated_at)}};
}

json::object delivery_json(const WebhookDelivery& d, const std::vector<DeliveryAttempt>& attempts) {
  json::array log;
  for (const auto& a : attempts) {
    log.push_back(
        json::object{{"attempt", a.attempt},
                     {"status_code", a.status_code ? json::value(*a.status_code) : json::value(nullptr)},
                     {"error", a.error ? json::value(*a.error) : json::value(nullptr)},
                     {"duration_ms", a.duration_ms},
                     {"at", format_rfc3339(a.created_at)}});
  }
  return {{"id", d.id},
          {"event_type", d.event_type},
          {"state", d.state},
          {"delivered", d.state == "delivered"},
          {"status_code", d.last_status_code ? json::value(*d.last_status_code) : json::value(nullptr)},
          {"attempts", d.attempts},
          {"last_error", d.last_error ? json::value(*d.last_error) : json::value(nullptr)},
          {"created_at", format_rfc3339(d.created_at)},
          {"updated_at", format_rfc3339(d.updated_at)},
          {"delivered_at", opt_time(d.delivered_at)},
          {"attempt_log", std::move(log)}};
}

http::Response create(Services& s, http::Request& req) {
  const std::string& account = req.principal->account_id;
  auto body = parse_json_object_with(req.body, {"url", "events", "description"});
  if (!body.ok()) return http::Response::from_status(body.status());
  auto url = get_string(*body, "url");
  if (!url.ok()) return http::Response::from_status(url.status());
  if (!url->has_value()) return http::Response::from_status(Status::Invalid("Field 'url' is required"));
  if ((*url)->size() > 2048)
    return http::Response::from_status(Status::Invalid("Field 'url' is longer than 2048 characters"));
  // Same guard as every other user URL, checked now so a bad target is refused at registration
  // (and again on every delivery, since DNS can change).
  if (Status st = s.fetcher->check_target(**url); !st.ok()) {
    return http::Response::from_status(Status::Invalid("url: " + st.message()));
  }
  Webhook w;
  w.id = random_uuid();
  w.account_id = account;
  w.url = **url;
  if (auto it = body->find("events"); it != body->end() && !it->value().is_null()) {
    if (!it->value().is_array())
      return http::Response::from_status(Status::Invalid("Field 'events' must be an array of event names"));
    const auto& known = webhooks::known_events();
    for (const auto& e : it->value().as_array()) {
      if (!e.is_string() ||
          std::find(known.begin(), known.end(), std::string(e.as_string())) == known.end()) {
        return http::Response::from_status(Status::Invalid(
            "Field 'events' may contain only: agent.ready, agent.failed, dynamics.ready, dynamics.failed, "
            "session.ended"));
      }
      std::string name(e.as_string());
      if (std::find(w.events.begin(), w.events.end(), name) == w.events.end()) w.events.push_back(name);
    }
  }
  auto desc = get_string(*body, "description");
  if (!desc.ok()) return http::Response::from_status(desc.status());
  if (desc->has_value()) {
    if ((*desc)->size() > 500)
      return http::Response::from_status(
          Status::Invalid("Field 'description' must be at most 500 characters"));
    w.description = **desc;
  }
  auto existing = s.webhooks->list(account);
  if (!existing.ok()) return http::Response::from_status(existing.status());
  if (existing->size() >= kMaxWebhooksPerAccount) {
    return http::Response::from_status(Status::Invalid("An account can have at most 20 webhooks"));
  }
  w.secret = webhooks::new_secret();
  w.created_at = w.updated_at = s.clock->now_s();
  if (Status st = s.webhooks->create(w); !st.ok()) return http::Response::from_status(st);
  json::object data = webhook_json(w);
  data["secret"] = w.secret;  // the only time it is shown
  return http::Response::json(200, {{"success", true}, {"data", std::move(data)}});
}

http::Response test_ping(Services& s, http::Request& req) {
  auto w = s.webhooks->get(req.principal->account_id, req.param("id"));
  if (!w.ok()) return http::Response::from_status(w.status());
  WebhookDelivery d;
  d.id = random_uuid();
  d.webhook_id = w->id;
  d.account_id = w->account_id;
  d.event_type = "ping";
  int64_t now = s.clock->now_s();
  d.payload = json::serialize(json::object{{"id", d.id},
                                           {"type", "ping"},
                                           {"created_at", format_rfc3339(now)},
                                           {"data", json::object{{"webhook_id", w->id}}}});
  d.state = "pending";
  d.created_at = d.updated_at = now;
  if (Status st = s.webhooks->create_delivery(d); !st.ok()) return http::Response::from_status(st);
  // One synchronous attempt, no retries: the caller wants to know now.
  auto res = webhooks::attempt_delivery(*s.fetcher, *s.clock, *w, d);
  auto n = s.webhooks->record_attempt(d.id, res.status_code, res.error, res.duration_ms,
                                      res.delivered ? "delivered" : "failed");
  if (!n.ok()) return http::Response::from_status(n.status());
  return http::Response::json(
      200, {{"success", true},
            {"data", json::object{{"delivery_id", d.id},
                                  {"delivered", res.delivered},
                                  {"status_code",
                                   res.status_code ? json::value(*res.status_code) : json::value(nullptr)},
                                  {"attempts", *n},
                                  {"error", res.error ? json::value(*res.error) : json::value(nullptr)}}}});
}

}  // namespace

void register_webhook_routes(http::Router& router, Services& s) {
  // Both resolve or reach the target host: their own pool, never the request threads.
  router.add("POST", "/v1/webhooks", [&s](http::Request& req) { return create(s, req); },
             {.pool = http::HandlerPool::kOutbound});

  router.add("GET", "/v1/webhooks", [&s](http::Request& req) {
    auto list = s.webhooks->list(req.principal->account_id);
    if (!list.ok()) return http::Response::from_status(list.status());
    json::array arr;
    for (const auto& w : *list) arr.push_back(webhook_json(w));
    return http::Response::json(200, {{"success", true}, {"data", std::move(arr)}});
  });

  router.add("GET", "/v1/webhooks/{id}", [&s](http::Request& req) {
    auto w = s.webhooks->get(req.principal->account_id, req.param("id"));
    if (!w.ok()) return http::Response::from_status(w.status());
    return http::Response::json(200, {{"success", true}, {"data", webhook_json(*w)}});
  });

  router.add("DELETE", "/v1/webhooks/{id}", [&s](http::Request& req) {
    Status st = s.webhooks->remove(req.principal->account_id, req.param("id"));
    if (!st.ok()) return http::Response::from_status(st);
    return http::Response::json(200, {{"success", true}, {"id", req.param("id")}, {"deleted", true}});
  });

  router.add("POST", "/v1/webhooks/{id}/test", [&s](http::Request& req) { return test_ping(s, req); },
             {.pool = http::HandlerPool::kOutbound});

  router.add("GET", "/v1/webhooks/{id}/deliveries", [&s](http::Request& req) {
    auto w = s.webhooks->get(req.principal->account_id, req.param("id"));
    if (!w.ok()) return http::Response::from_status(w.status());
    int limit = 50;
    if (auto v = req.query_param("limit")) {
      auto n = parse_int(*v);
      if (!n || *n < 1 || *n > 100) {
        return http::Response::from_status(
            Status::Invalid("Query parameter 'limit' must be an integer from 1 to 100"));
      }
      limit = static_cast<int>(*n);
    }
    auto list = s.webhooks->list_deliveries(w->id, limit);
    if (!list.ok()) return http::Response::from_status(list.status());
    json::array arr;
    for (const auto& d : *list) {
      auto attempts = s.webhooks->list_attempts(d.id);
      arr.push_back(delivery_json(d, attempts.ok() ? *attempts : std::vector<DeliveryAttempt>{}));
    }
    return http::Response::json(200, {{"success", true}, {"data", std::move(arr)}});
  });
}

}  // namespace imago::api
