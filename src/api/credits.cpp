// GET /v2/credit-summaries (SPEC 4.19) and GET /v1/usage (the ledger, newest first).
#include "api/pagination.h"
#include "api/routes.h"
#include "api/views.h"
#include "billing/prices.h"
#include "store/ledger_store.h"

namespace imago::api {

void register_credit_routes(http::Router& router, Services& s) {
  router.add("GET", "/v2/credit-summaries", [&s](http::Request& req) {
    const Principal& p = *req.principal;
    auto bal = s.ledger->balance(p.account_id);
    if (!bal.ok()) return http::Response::from_status(bal.status());
    const int64_t total = bal->total();
    boost::json::object minutes;
    for (const auto& price : billing::kPerMinutePrices) {
      minutes[price.feature] = static_cast<double>(total) / static_cast<double>(price.credits_per_minute);
    }
    return http::Response::json(200, {{"success", true},
                                      {"data",
                                       {{"user_id", p.account_id},
                                        {"balance", total},
                                        {"plan_credits", bal->plan_credits},
                                        {"topup_credits", bal->topup_credits},
                                        {"minutes_estimate", std::move(minutes)},
                                        {"is_enterprise", p.plan == Plan::kEnterprise}}}});
  });

  router.add("GET", "/v1/usage", [&s](http::Request& req) {
    auto page = parse_page_params(req);
    if (!page.ok()) return http::Response::from_status(page.status());
    auto entries = s.ledger->list(req.principal->account_id, page->limit, page->offset);
    if (!entries.ok()) return http::Response::from_status(entries.status());
    boost::json::array data;
    for (const auto& e : entries->entries) data.push_back(ledger_entry_json(e));
    return http::Response::json(
        200, {{"data", std::move(data)}, {"pagination", pagination_json(*page, entries->total)}});
  });
}

}  // namespace imago::api
