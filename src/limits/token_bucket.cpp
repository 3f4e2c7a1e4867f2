#include "limits/token_bucket.h"

#include <algorithm>
#include <cmath>

namespace imago {

BucketDecision take_token(BucketState& state, double capacity, double per_second, int64_t now_us,
                          double cost) {
  if (state.tokens < 0) {
    state.tokens = capacity;
    state.updated_us = now_us;
  }
  if (now_us > state.updated_us) {
    double elapsed = static_cast<double>(now_us - state.updated_us) / 1e6;
    state.tokens = std::min(capacity, state.tokens + elapsed * per_second);
    state.updated_us = now_us;
  }
  // A plan downgrade can leave more tokens than the new capacity.
  state.tokens = std::min(state.tokens, capacity);

  BucketDecision d;
  // Tolerance absorbs floating-point dust so a bucket refilled for exactly the refill time admits.
  constexpr double kEpsilon = 1e-9;
  if (state.tokens + kEpsilon >= cost) {
    state.tokens = std::max(0.0, state.tokens - cost);
    d.allowed = true;
  } else {
    double missing = cost - state.tokens;
    d.retry_after_us = static_cast<int64_t>(std::ceil(missing / per_second * 1e6));
  }
  d.tokens = state.tokens;
  d.full_in_us =
      per_second > 0 ? static_cast<int64_t>(std::ceil((capacity - state.tokens) / per_second * 1e6)) : 0;
  return d;
}

}  // namespace imago
