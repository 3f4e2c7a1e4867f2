// Turns an api-secret into a Principal. Every call reads the database, so a revoked or rotated key
// fails on the very next request on every node (no cache to invalidate).
//
// The call never writes: the key's last-used stamp (one-minute precision) is coalesced here and
// written by a background thread, so authentication on the SQLite backend is one short read that
// may run on an HTTP I/O thread (docs/http.md, "Where handlers run") and never waits for the
// database's write lock.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <mutex>
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
  // Waits until every last-used stamp queued so far is written (tests).
  void flush_touches();

 private:
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
