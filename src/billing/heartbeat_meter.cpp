#include "billing/heartbeat_meter.h"

#include <algorithm>

namespace imago::billing {

HeartbeatMeter observe_heartbeat(const std::optional<HeartbeatMeter>& before, std::string_view billing_type,
                                 int64_t now_us, int64_t grace_us) {
  if (!before) return HeartbeatMeter{std::string(billing_type), now_us, now_us, 0};
  HeartbeatMeter m = *before;
  const int64_t silence = now_us - m.last_seen_us;
  if (silence > grace_us) m.started_us += silence;
  m.last_seen_us = std::max(m.last_seen_us, now_us);
  return m;
}

int64_t running_minute(const HeartbeatMeter& m, int64_t now_us, int64_t period_us) {
  if (now_us < m.started_us) return -1;
  return (now_us - m.started_us) / period_us;
}

}  // namespace imago::billing
