#include "live/self_hosted_meter.h"

#include "live/minute_billing.h"

namespace imago::live {

Status SelfHostedMeter::heartbeat(const std::string& account_id, const std::string& session_id,
                                  const std::string& billing_type) {
  if (billing_type != "essence_self_hosted" && billing_type != "expression_self_hosted") {
    return Status::Invalid("Field 'billing_type' must be essence_self_hosted or expression_self_hosted");
  }
  const int64_t now = clock_.now_us();
  std::lock_guard lock(mu_);
  // Drop sessions silent for a day so the map stays small.
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    it = now - it->second.last_seen_us > 86'400'000'000LL ? sessions_.erase(it) : std::next(it);
  }
  auto [it, fresh] = sessions_.try_emplace({account_id, session_id});
  Entry& e = it->second;
  if (fresh) {
    e.billing_type = billing_type;
    e.started_us = now;
  } else if (now - e.last_seen_us > grace_us_) {
    // A silent gap longer than the grace window was a pause: shift the clock so it is not billed.
    e.started_us += (now - e.last_seen_us);
  }
  e.last_seen_us = now;
  const int64_t current = (now - e.started_us) / period_us_;
  while (e.next_minute <= current) {
    // "sh:" keeps a client-chosen id from colliding with a cloud session's operation keys.
    auto r = charge_live_minute(ledger_, account_id, "sh:" + session_id, e.next_minute, e.billing_type, "");
    if (!r.ok()) return r.status();
    ++e.next_minute;
  }
  return Status::Ok();
}

int64_t SelfHostedMeter::minutes(const std::string& account_id, const std::string& session_id) const {
  std::lock_guard lock(mu_);
  auto it = sessions_.find({account_id, session_id});
  return it == sessions_.end() ? 0 : it->second.next_minute;
}

}  // namespace imago::live
