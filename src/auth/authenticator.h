// Turns an api-secret into a Principal. Every call reads the database, so a revoked or rotated key
// fails on the very next request on every node (no cache to invalidate).
#pragma once
#include <string_view>

#include "auth/principal.h"
#include "store/account_store.h"
#include "util/clock.h"
#include "util/status.h"

namespace imago {

class Authenticator {
 public:
  Authenticator(AccountStore& accounts, Clock& clock) : accounts_(accounts), clock_(clock) {}
  // kUnauthenticated for malformed, unknown or revoked keys; kInternal when the database fails.
  Result<Principal> authenticate(std::string_view secret);

 private:
  AccountStore& accounts_;
  Clock& clock_;
};

}  // namespace imago
