// The monthly live spend cap (docs/billing.md, "Live spend cap"): the account holder reads and
// sets their cap at /v1/spend-cap; the operator sets a second one at
// /admin/v1/accounts/{id}/spend-cap. The lower of the two applies to live-session minutes.
#include "api/routes.h"
#include "api/spend_cap_views.h"
#include "api/views.h"
#include "store/ledger_store.h"
#include "util/json.h"
#include "util/log.h"

namespace imago::api {

namespace {

constexpr std::string_view kField = "live_monthly_credits";

boost::json::value opt_json(const std::optional<int64_t>& v) {
  return v ? boost::json::value(*v) : boost::json::value(nullptr);
}

// {"live_monthly_credits": N | null}: the field is required; null clears the cap.
Result<std::optional<int64_t>> cap_from_body(std::string_view body) {
  auto o = parse_json_object_with(body, {kField});
  if (!o.ok()) return o.status();
  if (!o->contains(kField)) {
    return Status::Invalid("Field 'live_monthly_credits' is required (an integer, or null for no cap)");
  }
  auto v = get_integer(*o, kField);
  if (!v.ok()) {
    return Status::Invalid("Field 'live_monthly_credits' must be an integer from 0 to 1000000000, or null");
  }
  if (*v) {
    if (Status st = billing::validate_live_spend_cap(**v); !st.ok()) return st;
  }
  return *v;
}

http::Response spend_cap_response(Services& s, const std::string& account_id) {
  auto spend = s.ledger->live_spend(account_id);
  if (!spend.ok()) return http::Response::from_status(spend.status());
  return http::Response::json(200, {{"success", true}, {"data", spend_cap_json(*spend)}});
}

http::Response set_cap(Services& s, const http::Request& req, const std::string& account_id,
                       billing::CapSetter who) {
  auto cap = cap_from_body(req.body);
  if (!cap.ok()) return http::Response::from_status(cap.status());
  Status st = s.ledger->set_live_spend_cap(account_id, who, *cap);
  if (!st.ok()) return http::Response::from_status(st);
  log::info("live_spend_cap_set", {{"account", account_id},
                                   {"by", billing::cap_setter_name(who)},
                                   {"credits", cap->has_value() ? std::to_string(**cap) : "none"}});
  return spend_cap_response(s, account_id);
}

}  // namespace

boost::json::object spend_cap_json(const billing::LiveSpend& s) {
  return {{"live_monthly_credits", opt_json(s.cap.account)},
          {"operator_live_monthly_credits", opt_json(s.cap.operator_)},
          {"effective_live_monthly_credits", opt_json(s.cap.effective())},
          {"period", s.month.label},
          {"period_start", time_json(s.month.start_s)},
          {"period_end", time_json(s.month.end_s)},
          {"live_spent_credits", s.spent},
          {"live_remaining_credits", opt_json(s.remaining())}};
}

http::Response billing_refusal_response(const Status& st) {
  if (billing::is_spend_cap_refusal(st)) {
    return http::Response::error(402, std::string(billing::kSpendCapErrorCode), st.message());
  }
  return http::Response::from_status(st);
}

void register_spend_cap_routes(http::Router& router, Services& s) {
  router.add("GET", "/v1/spend-cap",
             [&s](http::Request& req) { return spend_cap_response(s, req.principal->account_id); });
  router.add("PUT", "/v1/spend-cap", [&s](http::Request& req) {
    return set_cap(s, req, req.principal->account_id, billing::CapSetter::kAccount);
  });

  const http::RouteOptions admin{
      .auth = http::AuthMode::kAdmin, .tier = Tier::kExempt, .body_limit = 64 * 1024};
  router.add(
      "GET", "/admin/v1/accounts/{id}/spend-cap",
      [&s](http::Request& req) { return spend_cap_response(s, req.param("id")); }, admin);
  router.add(
      "PUT", "/admin/v1/accounts/{id}/spend-cap",
      [&s](http::Request& req) { return set_cap(s, req, req.param("id"), billing::CapSetter::kOperator); },
      admin);
}

}  // namespace imago::api
