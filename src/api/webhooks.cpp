// Webhook subscriptions (SPEC 6): create (secret shown once), list, get, delete, test ping and
// the delivery log, through webhooks::WebhookService. Deliveries themselves run as jobs.
#include <boost/json.hpp>

#include "api/routes.h"
#include "store/webhook_store.h"
#include "util/json.h"
#include "util/strings.h"
#include "webhooks/webhook_service.h"

namespace imago::api {

namespace {

namespace json = boost::json;

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
  auto body = parse_json_object_with(req.body, {"url", "events", "description"});
  if (!body.ok()) return http::Response::from_status(body.status());
  auto url = get_string(*body, "url");
  if (!url.ok()) return http::Response::from_status(url.status());
  if (!url->has_value()) return http::Response::from_status(Status::Invalid("Field 'url' is required"));
  if ((*url)->size() > 2048)
    return http::Response::from_status(Status::Invalid("Field 'url' is longer than 2048 characters"));
  webhooks::NewWebhook in;
  in.url = **url;
  if (auto it = body->find("events"); it != body->end() && !it->value().is_null()) {
    if (!it->value().is_array())
      return http::Response::from_status(Status::Invalid("Field 'events' must be an array of event names"));
    for (const auto& e : it->value().as_array()) {
      // A non-string is no event name: the service refuses it with the list of names.
      in.events.emplace_back(e.is_string() ? std::string(e.as_string()) : std::string());
    }
  }
  auto desc = get_string(*body, "description");
  if (!desc.ok()) return http::Response::from_status(desc.status());
  if (desc->has_value()) {
    if ((*desc)->size() > 500)
      return http::Response::from_status(
          Status::Invalid("Field 'description' must be at most 500 characters"));
    in.description = **desc;
  }
  auto w = s.webhook_service->create(req.principal->account_id, std::move(in));
  if (!w.ok()) return http::Response::from_status(w.status());
  json::object data = webhook_json(*w);
  data["secret"] = w->secret;  // the only time it is shown
  return http::Response::json(200, {{"success", true}, {"data", std::move(data)}});
}

http::Response test_ping(Services& s, http::Request& req) {
  auto t = s.webhook_service->test(req.principal->account_id, req.param("id"));
  if (!t.ok()) return http::Response::from_status(t.status());
  const auto& res = t->result;
  return http::Response::json(
      200, {{"success", true},
            {"data", json::object{{"delivery_id", t->delivery_id},
                                  {"delivered", res.delivered},
                                  {"status_code",
                                   res.status_code ? json::value(*res.status_code) : json::value(nullptr)},
                                  {"attempts", t->attempts},
                                  {"error", res.error ? json::value(*res.error) : json::value(nullptr)}}}});
}

}  // namespace

void register_webhook_routes(http::Router& router, Services& s) {
  // Both resolve or reach the target host: their own pool, never the request threads.
  router.add("POST", "/v1/webhooks", [&s](http::Request& req) { return create(s, req); },
             {.pool = http::HandlerPool::kOutbound});

  router.add("GET", "/v1/webhooks", [&s](http::Request& req) {
    auto list = s.webhook_service->list(req.principal->account_id);
    if (!list.ok()) return http::Response::from_status(list.status());
    json::array arr;
    for (const auto& w : *list) arr.push_back(webhook_json(w));
    return http::Response::json(200, {{"success", true}, {"data", std::move(arr)}});
  });

  router.add("GET", "/v1/webhooks/{id}", [&s](http::Request& req) {
    auto w = s.webhook_service->get(req.principal->account_id, req.param("id"));
    if (!w.ok()) return http::Response::from_status(w.status());
    return http::Response::json(200, {{"success", true}, {"data", webhook_json(*w)}});
  });

  router.add("DELETE", "/v1/webhooks/{id}", [&s](http::Request& req) {
    Status st = s.webhook_service->remove(req.principal->account_id, req.param("id"));
    if (!st.ok()) return http::Response::from_status(st);
    return http::Response::json(200, {{"success", true}, {"id", req.param("id")}, {"deleted", true}});
  });

  router.add("POST", "/v1/webhooks/{id}/test", [&s](http::Request& req) { return test_ping(s, req); },
             {.pool = http::HandlerPool::kOutbound});

  router.add("GET", "/v1/webhooks/{id}/deliveries", [&s](http::Request& req) {
    int limit = 50;
    if (auto v = req.query_param("limit")) {
      auto n = parse_int(*v);
      if (!n || *n < 1 || *n > 100) {
        return http::Response::from_status(
            Status::Invalid("Query parameter 'limit' must be an integer from 1 to 100"));
      }
      limit = static_cast<int>(*n);
    }
    auto list = s.webhook_service->deliveries(req.principal->account_id, req.param("id"), limit);
    if (!list.ok()) return http::Response::from_status(list.status());
    json::array arr;
    for (const auto& d : *list) arr.push_back(delivery_json(d.delivery, d.attempts));
    return http::Response::json(200, {{"success", true}, {"data", std::move(arr)}});
  });
}

}  // namespace imago::api
