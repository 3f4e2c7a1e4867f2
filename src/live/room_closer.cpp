#include "live/room_closer.h"

#include "live/room.h"
#include "util/log.h"

namespace imago::live {

RoomCloser::RoomCloser(std::function<void()> release_memory)
    : release_memory_(std::move(release_memory)), thread_([this] { loop(); }) {}

RoomCloser::~RoomCloser() {
  finish();
}

void RoomCloser::close(std::shared_ptr<Room> room, std::function<void()> after) {
  // Every room handed over starts stopping now, not when the closer reaches it: its ears give up
  // waiting for a recogniser and its model request ends while earlier rooms are joined.
  room->request_stop();
  Item item{std::move(room), std::move(after)};
  {
    std::lock_guard lock(mu_);
    if (!stopping_) {
      queue_.push_back(std::move(item));
      cv_.notify_one();
      return;
    }
  }
  close_now(item);  // shutting down: nobody else will
}

void RoomCloser::finish() {
  std::lock_guard finish_lock(finish_mu_);
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();  // the loop drains the queue first
}

std::size_t RoomCloser::pending() const {
  std::lock_guard lock(mu_);
  return queue_.size() + closing_;
}

void RoomCloser::close_now(Item& item) {
  item.room->join_threads();
  if (item.after) item.after();
  item.room.reset();  // the last reference usually: ~Room runs here, not on the tick thread
}

void RoomCloser::loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and everything handed over is closed
    Item item = std::move(queue_.front());
    queue_.pop_front();
    ++closing_;
    lock.unlock();
    try {
      close_now(item);
    } catch (const std::exception& e) {
      log::error("live_room_close_failed", {{"error", e.what()}});
    }
    lock.lock();
    --closing_;
    if (queue_.empty()) {
      // The rooms just closed freed their threads' memory; glibc keeps most of it resident.
      lock.unlock();
      release_memory();
      lock.lock();
    }
  }
}

void RoomCloser::release_memory() const {
  if (!release_memory_) return;
  try {
    release_memory_();
  } catch (const std::exception& e) {
    log::error("live_room_release_memory_failed", {{"error", e.what()}});
  }
}

}  // namespace imago::live
