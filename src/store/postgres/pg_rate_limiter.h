// Cluster rate limits: the token buckets and fixed windows of rate_limiter.h kept in PostgreSQL
// (UNLOGGED tables rate_buckets / rate_windows), so every node draws from the same bucket. Each
// decision is one statement (INSERT ... ON CONFLICT DO UPDATE ... RETURNING) that refills and takes
// under the row lock using the database's clock, never a node's: for any window T, all nodes
// together admit at most capacity + rate x T requests for one key.
//
// Each decision also returns the key-change counter read by the same statement
// (RateDecision::key_changes), which confirms a remembered key lookup for the request at no extra
// round trip (store/cached_account_store.h).
//
// When the database cannot be reached the limiter admits the request (and logs) without a counter:
// authentication then reads the same database and refuses on its own, so nothing gets through
// unauthenticated.
#pragma once
#include <memory>

#include "limits/rate_limiter.h"

namespace imago {

namespace pg {
class Db;
}

std::unique_ptr<RateLimiter> make_pg_rate_limiter(pg::Db& db);
std::unique_ptr<WindowCounter> make_pg_window_counter(pg::Db& db);

}  // namespace imago
