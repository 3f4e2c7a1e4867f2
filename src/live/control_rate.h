// Rate limits for a room's WebSocket control messages (docs/live-protocol.md, "Bounds"): one
// token bucket per connection and one for the whole room, so neither one viewer nor many viewers
// together (an embed token is public by design) can make a room work without limit. A message
// is admitted when both buckets have a token. Pure: time is passed in.
#pragma once
#include <cstdint>
#include <map>

#include "limits/token_bucket.h"
#include "live/room_limits.h"

namespace imago::live {

struct ControlDecision {
  bool allowed = false;
  int64_t retry_after_us = 0;  // refused: until the emptier bucket has a token again
  bool close = false;          // refused refusals_before_close times in a row: close the connection
};

class ControlRate {
 public:
  explicit ControlRate(const RoomLimits& limits) : l_(limits) {}
  // One control message from `connection` (any stable key, e.g. the connection's address).
  ControlDecision admit(const void* connection, int64_t now_us);
  // The connection left: its bucket goes.
  void forget(const void* connection) { conns_.erase(connection); }
  size_t connections() const { return conns_.size(); }

 private:
  struct Conn {
    BucketState bucket;
    int refused_in_a_row = 0;
  };
  RoomLimits l_;
  BucketState room_;
  std::map<const void*, Conn> conns_;
};

}  // namespace imago::live
