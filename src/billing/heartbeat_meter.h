// The clock of a self-hosted live session (a client that renders itself and heartbeats; SPEC 8.6's
// *_self_hosted rates): which minute is running and which minutes are due. Pure arithmetic; the
// state is kept by a store (store/live_meter_store.h) so it survives restarts and is shared by
// every node (docs/billing.md, "Self-hosted minutes").
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace imago::billing {

struct HeartbeatMeter {
  std::string billing_type;  // of the first heartbeat; later heartbeats do not change it
  int64_t started_us = 0;    // start of minute 0 on the billable clock (pauses removed)
  int64_t last_seen_us = 0;  // the latest heartbeat
  int64_t next_minute = 0;   // the first minute not yet charged (= minutes charged)
};

// The meter after a heartbeat at `now_us`. A new meter (`before` empty) starts minute 0 now. A
// silence longer than `grace_us` was a pause: the billable clock moves on by the silence, so it is
// not billed. A heartbeat older than the latest one (another node's clock a little behind) moves
// nothing back.
HeartbeatMeter observe_heartbeat(const std::optional<HeartbeatMeter>& before, std::string_view billing_type,
                                 int64_t now_us, int64_t grace_us);

// The minute running at `now_us` (0-based; -1 before minute 0 started): every minute up to and
// including it is due. `period_us` > 0 is the length of one billed minute.
int64_t running_minute(const HeartbeatMeter& m, int64_t now_us, int64_t period_us);

// Whether a minute is due and not yet charged at `now_us`.
inline bool minute_due(const HeartbeatMeter& m, int64_t now_us, int64_t period_us) {
  return m.next_minute <= running_minute(m, now_us, period_us);
}

}  // namespace imago::billing
