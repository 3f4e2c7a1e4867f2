#include "live/room_context.h"

namespace imago::live {

void RoomContext::add(std::string text) {
  const size_t c = cost(text);
  while (!items_.empty() && (items_.size() >= l_.context_items || bytes_ + c > l_.context_bytes)) {
    bytes_ -= cost(items_.front());
    items_.pop_front();
    ++evicted_;
  }
  // A single item larger than the whole budget is not kept (the caller's character cap keeps
  // items far below it; this only holds the bound if the limits are set inconsistently).
  if (c > l_.context_bytes || l_.context_items == 0) {
    ++evicted_;
    return;
  }
  bytes_ += c;
  items_.push_back(std::move(text));
}

}  // namespace imago::live
