// The monthly live spend cap at the API edge (docs/billing.md, "Live spend cap"): its JSON view,
// shared by the account holder's and the operator's endpoints, and the 402 a refusal becomes.
#pragma once
#include <boost/json/object.hpp>

#include "billing/spend_cap.h"
#include "http/message.h"

namespace imago::api {

// {live_monthly_credits, operator_live_monthly_credits, effective_live_monthly_credits, period,
//  period_start, period_end, live_spent_credits, live_remaining_credits}
boost::json::object spend_cap_json(const billing::LiveSpend& s);

// 402 SPEND_CAP_REACHED for a refusal by the spend cap, otherwise Response::from_status (a plain
// shortage of credits stays 402 INSUFFICIENT_BALANCE "Insufficient credits").
http::Response billing_refusal_response(const Status& st);

}  // namespace imago::api
