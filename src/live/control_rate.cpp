#include "live/control_rate.h"

#include <algorithm>

namespace imago::live {

ControlDecision ControlRate::admit(const void* connection, int64_t now_us) {
  Conn& c = conns_[connection];
  ControlDecision d;
  // The connection's own bucket first: a refused message must not spend the room's token.
  BucketDecision own = take_token(c.bucket, l_.control_burst_connection, l_.control_per_s_connection, now_us);
  if (own.allowed) {
    BucketDecision room = take_token(room_, l_.control_burst_room, l_.control_per_s_room, now_us);
    if (room.allowed) {
      c.refused_in_a_row = 0;
      d.allowed = true;
      return d;
    }
    // Give the connection its token back: the room refused the message.
    c.bucket.tokens = std::min(l_.control_burst_connection, c.bucket.tokens + 1);
    d.retry_after_us = room.retry_after_us;
  } else {
    d.retry_after_us = own.retry_after_us;
  }
  d.close = ++c.refused_in_a_row >= l_.refusals_before_close;
  return d;
}

}  // namespace imago::live
