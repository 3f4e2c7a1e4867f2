// Token bucket arithmetic (SPEC 8.1): capacity equals the per-minute number and refills
// continuously at that rate. Pure functions of the state and the time, so the limiter behaves the
// same whether the state lives in memory or in a shared database row.
#pragma once
#include <cstdint>

namespace imago {

struct BucketState {
  double tokens = -1;  // < 0 means "never used": starts full
  int64_t updated_us = 0;
};

struct BucketDecision {
  bool allowed = false;
  double tokens = 0;           // after this request
  int64_t retry_after_us = 0;  // when denied: until one token is available
  int64_t full_in_us = 0;      // until the bucket is full again
};

// Refills `state` up to `now_us`, then takes `cost` tokens when available.
BucketDecision take_token(BucketState& state, double capacity, double per_second, int64_t now_us,
                          double cost = 1.0);

}  // namespace imago
