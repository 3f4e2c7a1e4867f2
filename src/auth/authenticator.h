// Turns an api-secret into a Principal. A revoked or rotated key fails on the very next request on
// every node: the account store's remembered answers are exact (SQLite's shared counter) or are
// confirmed with the database's key-change counter read in the request's own rate-limit statement
// (PostgreSQL; authenticate_deferred + confirm, store/cached_account_store.h).
//
// The call never writes: the key's last-used stamp (one-minute precision) is coalesced here and
// written by a background thread, so authentication on the SQLite backend is one short read that
// may run on an HTTP I/O thread (docs/http.md, "Where handlers run") and never waits for the
// database's write lock.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "auth/principal.h"
#include "store/account_store.h"
#include "util/clock.h"
#include "util/status.h"

namespace imago {

class Authenticator {
 public:
  Authenticator(AccountStore& accounts, Clock& clock) : accounts_(accounts), clock_(clock) {}
  ~Authenticator();  // writes the stamps still pending
  Authenticator(const Authenticator&) = delete;
  Authenticator& operator=(const Authenticator&) = delete;

  // kUnauthenticated for malformed, unknown or revoked keys; kInternal when the database fails.
  Result<Principal> authenticate(std::string_view secret);
  // As authenticate, but the answer may be a remembered one that is not confirmed yet: then
  // `*unconfirmed` holds the key-change counter value it is true under, and the caller must pass
  // it to confirm() before acting on the principal. Unset: as authenticate.
  Result<Principal> authenticate_deferred(std::string_view secret, std::optional<uint64_t>* unconfirmed);
  // Completes authenticate_deferred. `changes_now` is the key-change counter read by a database
  // statement that began after the request arrived (RateDecision::key_changes); nullopt when none
  // was read. When it equals `unconfirmed`, nullopt: `principal` stands. Otherwise the key is read
  // from the database again and the result is the principal to use instead (or the refusal).
  Result<std::optional<Principal>> confirm(std::string_view secret, const Principal& principal,
                                           uint64_t unconfirmed, std::optional<uint64_t> changes_now);
  // Waits until every last-used stamp queued so far is written (tests).
  void flush_touches();

 private:
  static Result<Principal> principal_of(std::string_view hash, const Result<AccountStore::KeyOwner>& owner);
  void touch(const std::string& key_id, int64_t now_s);
  void touch_loop();

  AccountStore& accounts_;
  Clock& clock_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::unordered_map<std::string, int64_t> last_touch_;  // key id -> when its stamp was last queued
  std::vector<std::pair<std::string, int64_t>> pending_;
  std::size_t writing_ = 0;  // stamps taken from pending_ and not yet written
  bool stopping_ = false;
  std::thread toucher_;  // started by the first stamp
};

}  // namespace imago
