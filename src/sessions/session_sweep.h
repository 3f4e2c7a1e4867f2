// Ends the sessions of a node that died for good (docs/sessions.md, "When a node dies"). A node
// killed with sessions running ends them itself when it starts again (live::Rooms::recover, from
// its journal); one that never comes back leaves them `active`. Every node therefore runs this
// sweep on its tick loop: a session whose room lease, held by another node, expired and was last
// renewed more than `grace_us` ago (the database's clock) is ended with reason `shutdown` at that
// last renewal, with the minutes charged and viewer peak its node last wrote; a recording still
// being made is marked `failed`. The end is the store's conditional update, so of several sweeping
// nodes (or a node coming back) exactly one ends it and queues the `session.ended` webhook.
#pragma once
#include <cstdint>

#include "sessions/session_service.h"
#include "store/room_directory.h"
#include "util/clock.h"

namespace imago::sessions {

struct SessionSweepOptions {
  // Past the lease's last renewal before its session is ended: 4x the cluster's 15 s lease TTL,
  // so a node that lost the database for a moment, or a long pause, is not taken for dead.
  int64_t grace_us = 60'000'000;
  int64_t every_us = 10'000'000;  // how often a node sweeps (its monotonic clock)
  int batch = 100;                // sessions ended per pass at most (the next pass takes the rest)
};

class SessionSweep {
 public:
  SessionSweep(RoomDirectory& directory, SessionService& sessions, Clock& clock, SessionSweepOptions o = {})
      : dir_(directory), sessions_(sessions), clock_(clock), o_(o) {}

  // Sweeps when `every_us` passed since the last pass (called on every tick). Returns how many
  // sessions this node ended.
  int maybe_run();
  // One pass now. Returns how many sessions this node ended.
  int run();

 private:
  RoomDirectory& dir_;
  SessionService& sessions_;
  Clock& clock_;
  SessionSweepOptions o_;
  int64_t last_us_ = 0;
  bool ran_ = false;
};

}  // namespace imago::sessions
