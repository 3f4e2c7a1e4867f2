// Operator administration (Authorization: Bearer <admin token>): accounts, plans, credits, keys,
// through AccountAdmin (src/auth/account_admin.h).
#include "api/pagination.h"
#include "api/requests.h"
#include "api/routes.h"
#include "api/spend_cap_views.h"
#include "api/views.h"
#include "auth/account_admin.h"
#include "billing/balance_rules.h"
#include "util/json.h"

namespace imago::api {

namespace {

using billing::kMaxCreditsPerOperation;

http::Response account_response(const Result<AccountOverview>& o) {
  if (!o.ok()) return http::Response::from_status(o.status());
  const Account* a = &o->account;
  const Balance* bal = &o->balance;
  const billing::LiveSpend* spend = &o->live_spend;
  boost::json::array key_arr;
  for (const auto& k : o->keys) key_arr.push_back(key_json(k));
  return http::Response::json(200, {{"success", true},
                                    {"data",
                                     {{"id", a->id},
                                      {"name", a->name},
                                      {"plan", plan_name(a->plan)},
                                      {"limits", limits_json(a->limits())},
                                      {"custom_limits", a->custom_limits.has_value()},
                                      {"balance", bal->total()},
                                      {"plan_credits", bal->plan_credits},
                                      {"topup_credits", bal->topup_credits},
                                      {"live_spend_cap", spend_cap_json(*spend)},
                                      {"created_at", time_json(a->created_at)},
                                      {"keys", std::move(key_arr)}}}});
}

Result<std::string> required_name(const json::object& body) {
  auto name = get_string(body, "name");
  if (!name.ok()) return name.status();
  if (!name->has_value() || (*name)->empty()) return Status::Invalid("Field 'name' is required");
  if ((*name)->size() > 200) return Status::Invalid("Field 'name' must be at most 200 characters");
  return **name;
}

Result<Plan> plan_field(const json::object& body, std::optional<Plan> fallback) {
  auto plan = get_string(body, "plan");
  if (!plan.ok()) return plan.status();
  if (!plan->has_value()) {
    if (fallback) return *fallback;
    return Status::Invalid("Field 'plan' is required");
  }
  auto p = parse_plan(**plan);
  if (!p) return Status::Invalid("Field 'plan' must be one of free, creator, pro, business, enterprise");
  return *p;
}

Result<std::optional<PlanLimits>> limits_field(const json::object& body, Plan plan) {
  auto obj = get_object(body, "limits");
  if (!obj.ok()) return obj.status();
  if (*obj == nullptr) return std::optional<PlanLimits>();
  if (plan != Plan::kEnterprise)
    return Status::Invalid("Field 'limits' is only allowed with the enterprise plan");
  PlanLimits l = default_limits(Plan::kEnterprise);
  for (const auto& [name, slot] : {std::pair<const char*, int*>{"generate", &l.generate_per_min},
                                   {"write", &l.write_per_min},
                                   {"read", &l.read_per_min}}) {
    auto v = get_integer(**obj, name);
    if (!v.ok()) return Status::Invalid("Field 'limits." + std::string(name) + "' must be an integer");
    if (v->has_value()) {
      if (**v < 1 || **v > 10'000'000) {
        return Status::Invalid("Field 'limits." + std::string(name) + "' must be from 1 to 10000000");
      }
      *slot = static_cast<int>(**v);
    }
  }
  // The account's own storage quota in megabytes (limits/storage_quota.h).
  auto storage = get_integer(**obj, "storage_mb");
  if (!storage.ok()) return Status::Invalid("Field 'limits.storage_mb' must be an integer");
  if (storage->has_value()) {
    if (**storage < 1 || **storage > 1'000'000'000) {
      return Status::Invalid("Field 'limits.storage_mb' must be from 1 to 1000000000");
    }
    l.storage_bytes = **storage * 1'000'000;
  }
  for (const auto& kv : **obj) {
    if (kv.key() != "generate" && kv.key() != "write" && kv.key() != "read" && kv.key() != "storage_mb") {
      return Status::Invalid("Unknown field 'limits." + std::string(kv.key()) + "'");
    }
  }
  return std::optional<PlanLimits>(l);
}

}  // namespace

void register_admin_routes(http::Router& router, Services& s) {
  const http::RouteOptions admin{
      .auth = http::AuthMode::kAdmin, .tier = Tier::kExempt, .body_limit = 64 * 1024};

  router.add(
      "POST", "/admin/v1/accounts",
      [&s](http::Request& req) {
        auto body = parse_json_object_with(req.body, {"name", "plan", "credits", "limits"});
        if (!body.ok()) return http::Response::from_status(body.status());
        auto name = required_name(*body);
        if (!name.ok()) return http::Response::from_status(name.status());
        auto plan = plan_field(*body, Plan::kFree);
        if (!plan.ok()) return http::Response::from_status(plan.status());
        auto credits = get_integer(*body, "credits");
        if (!credits.ok()) return http::Response::from_status(credits.status());
        int64_t initial = credits->value_or(0);
        if (initial < 0 || initial > kMaxCreditsPerOperation) {
          return http::Response::error(400, "VALIDATION_ERROR",
                                       "Field 'credits' must be from 0 to 1000000000");
        }
        auto limits = limits_field(*body, *plan);
        if (!limits.ok()) return http::Response::from_status(limits.status());
        auto created = s.account_admin->create(*name, *plan, initial, *limits);
        if (!created.ok()) return http::Response::from_status(created.status());
        return http::Response::json(201, {{"success", true},
                                          {"account_id", created->account.id},
                                          {"api_secret", created->first_key.secret},
                                          {"key_id", created->first_key.key.id},
                                          {"name", created->account.name},
                                          {"plan", plan_name(created->account.plan)},
                                          {"balance", initial}});
      },
      admin);

  router.add(
      "GET", "/admin/v1/accounts",
      [&s](http::Request& req) {
        auto page = parse_page_params(req);
        if (!page.ok()) return http::Response::from_status(page.status());
        auto accounts = s.account_admin->list(page->limit, page->offset);
        if (!accounts.ok()) return http::Response::from_status(accounts.status());
        boost::json::array data;
        for (const auto& a : accounts->accounts) {
          data.push_back({{"id", a.id},
                          {"name", a.name},
                          {"plan", plan_name(a.plan)},
                          {"limits", limits_json(a.limits())},
                          {"created_at", time_json(a.created_at)}});
        }
        return http::Response::json(
            200, {{"data", std::move(data)}, {"pagination", pagination_json(*page, accounts->total)}});
      },
      admin);

  router.add(
      "GET", "/admin/v1/accounts/{id}",
      [&s](http::Request& req) { return account_response(s.account_admin->overview(req.param("id"))); },
      admin);

  router.add(
      "PUT", "/admin/v1/accounts/{id}/plan",
      [&s](http::Request& req) {
        auto body = parse_json_object_with(req.body, {"plan", "limits"});
        if (!body.ok()) return http::Response::from_status(body.status());
        auto plan = plan_field(*body, std::nullopt);
        if (!plan.ok()) return http::Response::from_status(plan.status());
        auto limits = limits_field(*body, *plan);
        if (!limits.ok()) return http::Response::from_status(limits.status());
        return account_response(s.account_admin->set_plan(req.param("id"), *plan, *limits));
      },
      admin);

  router.add(
      "POST", "/admin/v1/accounts/{id}/credits",
      [&s](http::Request& req) {
        auto body = parse_json_object_with(req.body, {"amount", "reason"});
        if (!body.ok()) return http::Response::from_status(body.status());
        auto amount = get_integer(*body, "amount");
        if (!amount.ok()) return http::Response::from_status(amount.status());
        if (!amount->has_value())
          return http::Response::error(400, "VALIDATION_ERROR", "Field 'amount' is required");
        if (**amount <= 0 || **amount > kMaxCreditsPerOperation) {
          return http::Response::error(400, "VALIDATION_ERROR",
                                       "Field 'amount' must be a positive integer (at most 1000000000); "
                                       "credits are never taken away by a top-up");
        }
        auto reason = get_string(*body, "reason");
        if (!reason.ok()) return http::Response::from_status(reason.status());
        // Idempotency-Key (Stripe convention) makes a retried top-up safe.
        auto idem = req.headers.get("Idempotency-Key");
        std::string_view key = idem && !idem->empty() && idem->size() <= 200 ? *idem : std::string_view();
        auto e = s.account_admin->top_up(req.param("id"), **amount, reason->value_or("top-up"), key);
        if (!e.ok()) return http::Response::from_status(e.status());
        return http::Response::json(
            200, {{"success", true}, {"data", ledger_entry_json(*e)}, {"balance", e->balance_after}});
      },
      admin);

  router.add(
      "POST", "/admin/v1/accounts/{id}/keys",
      [&s](http::Request& req) {
        auto alias = parse_alias(req);
        if (!alias.ok()) return http::Response::from_status(alias.status());
        auto k = s.account_admin->issue_key(req.param("id"), *alias);
        if (!k.ok()) return http::Response::from_status(k.status());
        return http::Response::json(
            201,
            {{"success", true}, {"key_id", k->key.id}, {"alias", k->key.alias}, {"api_secret", k->secret}});
      },
      admin);

  router.add(
      "DELETE", "/admin/v1/keys/{key_id}",
      [&s](http::Request& req) {
        Status st = s.account_admin->revoke_key(req.param("key_id"));
        if (!st.ok()) return http::Response::from_status(st);
        return http::Response::json(200,
                                    {{"success", true}, {"key_id", req.param("key_id")}, {"revoked", true}});
      },
      admin);

  router.add(
      "POST", "/admin/v1/keys/{key_id}/rotate",
      [&s](http::Request& req) {
        auto k = s.account_admin->rotate_key(req.param("key_id"));
        if (!k.ok()) return http::Response::from_status(k.status());
        return http::Response::json(201, {{"success", true},
                                          {"key_id", k->key.id},
                                          {"alias", k->key.alias},
                                          {"api_secret", k->secret},
                                          {"replaces", req.param("key_id")}});
      },
      admin);
}

}  // namespace imago::api
