// The meters of self-hosted live sessions (billing/heartbeat_meter.h), kept in the database so a
// restart or another node continues a session's minutes where they were: minute indices never
// start again at 0 (which would replay minutes already paid, and charge nothing for them), and no
// minute is charged twice. docs/billing.md, "Self-hosted minutes".
#pragma once
#include <cstdint>
#include <string>

#include "billing/heartbeat_meter.h"
#include "util/status.h"

namespace imago {

class LiveMeterStore {
 public:
  virtual ~LiveMeterStore() = default;

  // A heartbeat at `now_us` for meter `meter_id` of `account_id`, and the charge of every minute
  // it makes due (billing::live_session_minute with `meter_id` as the session, at the rate of the
  // meter's billing type). Each minute's charge commits in one transaction with the meter's
  // advance past it, under a lock on the meter's row (concurrent heartbeats, on any node, queue),
  // so a crash at any point leaves each minute charged once or not yet, never twice and never
  // skipped. A refused minute (kInsufficientFunds: balance or spend cap) commits nothing and is
  // returned; the minutes before it stay charged, and the heartbeat itself stays recorded.
  // Returns the meter after the heartbeat. kInvalidArgument for a billing type without a
  // per-minute rate; kNotFound for an unknown account.
  virtual Result<billing::HeartbeatMeter> heartbeat(const std::string& account_id,
                                                    const std::string& meter_id,
                                                    const std::string& billing_type, int64_t now_us,
                                                    int64_t period_us, int64_t grace_us) = 0;

  // The meter, if it has seen a heartbeat (kNotFound otherwise).
  virtual Result<billing::HeartbeatMeter> get(const std::string& account_id, const std::string& meter_id) = 0;
};

}  // namespace imago
