// Per-minute billing of sessions a client renders itself (`imagod render`, an SDK): the client
// heartbeats with {billing_type: "*_self_hosted", session_id} and each started minute is charged
// at the self-hosted rate with the same per-session-minute operation keys as cloud sessions.
// Minutes are counted from the session's first heartbeat; a gap longer than the grace window is
// treated as a pause (not billed). The meter lives in the database (store/live_meter_store.h), so
// a restart, or a heartbeat that reaches another node, continues the count exactly
// (docs/billing.md, "Self-hosted minutes").
#pragma once
#include <cstdint>
#include <string>

#include "store/live_meter_store.h"
#include "util/clock.h"
#include "util/status.h"

namespace imago::live {

class SelfHostedMeter {
 public:
  SelfHostedMeter(LiveMeterStore& meters, Clock& clock, int64_t period_us, int64_t grace_us)
      : meters_(meters), clock_(clock), period_us_(period_us), grace_us_(grace_us) {}
  // Charges the minutes started since the last heartbeat of this session. kInsufficientFunds when
  // the balance cannot pay; kInvalidArgument for a billing type that is not self-hosted.
  Status heartbeat(const std::string& account_id, const std::string& session_id,
                   const std::string& billing_type);
  // Minutes charged so far for the session (0 when unknown).
  int64_t minutes(const std::string& account_id, const std::string& session_id) const;

 private:
  LiveMeterStore& meters_;
  Clock& clock_;
  int64_t period_us_;
  int64_t grace_us_;
};

}  // namespace imago::live
