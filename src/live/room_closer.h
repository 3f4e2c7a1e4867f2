// Joins ended rooms' threads (render, speech and the brain's ears and answers) on a thread of its
// own. The registry's tick thread times and bills every room of the node, and a request's worker
// answers DELETE: neither may wait for a recogniser working through its backlog or a language
// model that does not answer. Rooms hands every ended room here, and only here are they joined.
//
// Once its queue is empty, the closer gives the heap's free pages back to the OS: a room's
// threads free tens of MB in arenas that glibc would otherwise keep resident (util/memory_release.h,
// docs/live-protocol.md "Memory").
#pragma once
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "util/memory_release.h"

namespace imago::live {

class Room;

class RoomCloser {
 public:
  // `release_memory` runs on the closer's thread after rooms were closed, once per batch (when the
  // queue is empty again); tests pass a counter.
  explicit RoomCloser(std::function<void()> release_memory = release_free_memory);
  ~RoomCloser();  // finish()
  RoomCloser(const RoomCloser&) = delete;
  RoomCloser& operator=(const RoomCloser&) = delete;

  // Tells `room`'s brain to begin stopping (Room::request_stop), joins the room's threads soon,
  // then calls `after` (on the closer's thread). Returns at once.
  // A room handed over twice is joined twice (Room::join_threads is idempotent). After finish(),
  // the room is closed on the caller's thread.
  void close(std::shared_ptr<Room> room, std::function<void()> after = {});
  // Closes every room handed over so far and stops the thread. Idempotent.
  void finish();
  // Rooms handed over and not closed yet (tests, logs).
  std::size_t pending() const;

 private:
  struct Item {
    std::shared_ptr<Room> room;
    std::function<void()> after;
  };
  void loop();
  void release_memory() const;
  static void close_now(Item& item);

  const std::function<void()> release_memory_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  std::size_t closing_ = 0;  // taken from the queue, not closed yet
  bool stopping_ = false;
  std::thread thread_;
  std::mutex finish_mu_;  // finish() from the destructor and from Rooms::shutdown
};

}  // namespace imago::live
