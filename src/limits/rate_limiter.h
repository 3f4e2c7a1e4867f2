// Rate limiting behind interfaces: the single-node server keeps buckets in process; a cluster
// shares them in PostgreSQL (same arithmetic, token_bucket.h). Nothing else knows which.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "util/clock.h"

namespace imago {

struct RateDecision {
  bool allowed = false;
  int limit = 0;             // X-RateLimit-Limit
  int remaining = 0;         // X-RateLimit-Remaining (whole tokens)
  int64_t reset_unix_s = 0;  // X-RateLimit-Reset: when the bucket is full again
  int retry_after_s = 0;     // Retry-After on denial: whole seconds, at least 1
  // The database's key-change counter, read by the same statement as the decision when the
  // buckets are in the database (PostgreSQL); the authenticator confirms remembered key lookups
  // with it (auth/authenticator.h). Unset when not read (in-process buckets, database down).
  std::optional<uint64_t> key_changes;
  // False when take_if_unchanged() found the counter moved and left the bucket alone.
  bool taken = true;
};

// Token buckets keyed by an opaque string ("acct:<id>:read").
class RateLimiter {
 public:
  virtual ~RateLimiter() = default;
  // Takes one token from a bucket of capacity `per_minute` refilling at per_minute/60 per second.
  virtual RateDecision take(const std::string& key, int per_minute) = 0;
  // The same, but only while the database's key-change counter still equals `key_changes` (the
  // tag of a remembered key lookup, whose plan chose `per_minute`): when it moved, the bucket is
  // not touched and the decision says so (taken = false) with the counter read, so the caller
  // re-reads the key and takes at the plan it finds. In-process buckets have no counter: a plain take.
  virtual RateDecision take_if_unchanged(const std::string& key, int per_minute, uint64_t key_changes) {
    (void)key_changes;
    return take(key, per_minute);
  }
};

struct WindowDecision {
  bool blocked = false;
  int count = 0;
  int retry_after_s = 0;  // until the window clears, when blocked
};

// Fixed windows that open at the first event and clear `window_s` later: the failed-auth throttle
// ("N failures per minute per IP; then 429 until the window clears") and per-IP request caps.
class WindowCounter {
 public:
  virtual ~WindowCounter() = default;
  // State without counting: blocked when `limit` events already happened in the open window.
  virtual WindowDecision peek(const std::string& key, int limit, int window_s) = 0;
  // Counts one event; blocked when this event exceeds `limit`. Atomic: of N concurrent hits on a
  // fresh window exactly `limit` are not blocked, so a caller that hits *before* the work it
  // guards (a password check) does that work at most `limit` times per window.
  virtual WindowDecision hit(const std::string& key, int limit, int window_s) = 0;
  // Takes back one event that hit() counted in the still-open window (the guarded attempt turned
  // out fine: a right password). Never below zero; nothing when the window has closed.
  virtual void release(const std::string& key, int window_s) = 0;
};

std::unique_ptr<RateLimiter> make_memory_rate_limiter(Clock& clock);
std::unique_ptr<WindowCounter> make_memory_window_counter(Clock& clock);

}  // namespace imago
