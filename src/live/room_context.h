// The context a room keeps (add_context over WebSocket or REST), bounded in items and bytes
// (docs/live-protocol.md, "Bounds"): when a new item does not fit, the oldest items are evicted
// first. Not thread safe (the room holds its lock).
#pragma once
#include <cstddef>
#include <deque>
#include <string>
#include <vector>

#include "live/room_limits.h"

namespace imago::live {

class RoomContext {
 public:
  explicit RoomContext(const RoomLimits& limits) : l_(limits) {}
  // Keeps `text` (at most context_item_chars characters: the caller checked), evicting the oldest
  // items until it fits.
  void add(std::string text);
  std::vector<std::string> items() const { return {items_.begin(), items_.end()}; }
  size_t size() const { return items_.size(); }
  // Bytes counted against the room: each item's text plus kContextItemOverheadBytes.
  size_t accounted_bytes() const { return bytes_; }
  size_t evicted() const { return evicted_; }

 private:
  static size_t cost(const std::string& s) { return s.size() + kContextItemOverheadBytes; }
  RoomLimits l_;
  std::deque<std::string> items_;
  size_t bytes_ = 0;
  size_t evicted_ = 0;
};

}  // namespace imago::live
