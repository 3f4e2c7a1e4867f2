// Per-minute billing of sessions a client renders itself (`imagod render`, an SDK): the client
// heartbeats with {billing_type: "*_self_hosted", session_id} and each started minute is charged
// at the self-hosted rate with the same per-session-minute operation keys as cloud sessions.
// Minutes are counted from the session's first heartbeat; a gap longer than the grace window is
// treated as a pause (not billed). In memory: a restart starts counting again from the next
// heartbeat, and the operation keys keep already-charged minutes from being charged twice.
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "store/ledger_store.h"
#include "util/clock.h"
#include "util/status.h"

namespace imago::live {

class SelfHostedMeter {
 public:
  SelfHostedMeter(LedgerStore& ledger, Clock& clock, int64_t period_us, int64_t grace_us)
      : ledger_(ledger), clock_(clock), period_us_(period_us), grace_us_(grace_us) {}
  // Charges the minutes started since the last heartbeat of this session. kInsufficientFunds when
  // the balance cannot pay; kInvalidArgument for a billing type that is not self-hosted.
  Status heartbeat(const std::string& account_id, const std::string& session_id,
                   const std::string& billing_type);
  // Minutes charged so far for the session (0 when unknown).
  int64_t minutes(const std::string& account_id, const std::string& session_id) const;

 private:
  struct Entry {
    std::string billing_type;
    int64_t started_us = 0;  // start of minute 0 (billable clock, pauses removed)
    int64_t last_seen_us = 0;
    int64_t next_minute = 0;  // first minute not yet charged
  };
  LedgerStore& ledger_;
  Clock& clock_;
  int64_t period_us_;
  int64_t grace_us_;
  mutable std::mutex mu_;
  std::map<std::pair<std::string, std::string>, Entry> sessions_;
};

}  // namespace imago::live
