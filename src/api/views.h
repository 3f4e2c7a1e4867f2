// JSON shapes of core resources, shared by the account holder's and the operator's endpoints.
#pragma once
#include <boost/json/object.hpp>

#include "store/account_store.h"
#include "store/ledger_store.h"

namespace imago::api {

// {id, alias, prefix, last4, created_at, last_used_at}: never the secret or its hash.
boost::json::object key_json(const ApiKey& k);
// {id, kind, amount, balance_after, reason, operation_key, reference, created_at}
boost::json::object ledger_entry_json(const LedgerEntry& e);
// {generate, write, read}
boost::json::object limits_json(const PlanLimits& l);
// RFC 3339 or null.
boost::json::value time_json(std::optional<int64_t> unix_s);

}  // namespace imago::api
