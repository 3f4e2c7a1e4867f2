// JSON shapes of core resources, shared by the account holder's and the operator's endpoints.
#pragma once
#include <boost/json/object.hpp>
#include <memory>
#include <string>

#include "http/message.h"
#include "store/account_store.h"
#include "store/ledger_store.h"

namespace imago {
class BlobReader;
}

namespace imago::api {

// {id, alias, prefix, last4, created_at, last_used_at}: never the secret or its hash.
boost::json::object key_json(const ApiKey& k);
// {id, kind, amount, balance_after, reason, operation_key, reference, created_at}
boost::json::object ledger_entry_json(const LedgerEntry& e);
// {generate, write, read}
boost::json::object limits_json(const PlanLimits& l);
// A stored blob as a download (src/api/files.cpp): one body up to a chunk, else streamed chunk by
// chunk from the blob store.
http::Response download_response(std::unique_ptr<BlobReader> reader, const std::string& mime);
// RFC 3339 or null.
boost::json::value time_json(std::optional<int64_t> unix_s);

}  // namespace imago::api
