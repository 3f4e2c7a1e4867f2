#include "sessions/session_sweep.h"

#include <algorithm>

#include "util/log.h"

namespace imago::sessions {

int SessionSweep::maybe_run() {
  const int64_t now = clock_.monotonic_us();
  if (ran_ && now - last_us_ < o_.every_us) return 0;
  ran_ = true;
  last_us_ = now;
  return run();
}

int SessionSweep::run() {
  auto lapsed = dir_.lapsed(o_.grace_us, o_.batch);
  if (!lapsed.ok()) {
    log::warn("session_sweep_failed", {{"error", lapsed.status().message()}});
    return 0;
  }
  int ended_here = 0;
  for (const auto& l : *lapsed) {
    auto rec = sessions_.get(l.account_id, l.session_id);
    if (!rec.ok() && rec.status().code() != Code::kNotFound) continue;  // the database is away: next pass
    // No record (the node died between its claim and the session's start) or already ended (by
    // its node's end, its recover(), or another sweeper): only the lease is left to forget.
    if (rec.ok() && rec->status == "active") {
      const bool recorded = rec->recording.has_value();
      SessionEnd e{std::max(l.renewed_us, rec->started_us), "shutdown", rec->minutes_charged,
                   rec->viewers_peak};
      // The MP4 was on the dead node's disk: unless that node comes back and uploads it (its
      // recover() then makes it `ready`), nothing of it is left.
      e.recording_lost = recorded && rec->recording->status == "recording";
      auto ended = sessions_.ended(*rec, e, recorded);
      if (!ended.ok()) {
        log::warn("session_sweep_end_failed",
                  {{"session", l.session_id}, {"error", ended.status().message()}});
        continue;
      }
      if (*ended) {
        ++ended_here;
        log::info("session_swept", {{"session", l.session_id},
                                    {"node", l.node_id},
                                    {"ended_us", e.ended_us},
                                    {"recording_lost", e.recording_lost}});
      }
    }
    dir_.forget(l);
  }
  return ended_here;
}

}  // namespace imago::sessions
