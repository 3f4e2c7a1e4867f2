#include "live/self_hosted_meter.h"

namespace imago::live {

namespace {
// "sh:" keeps a client-chosen id from colliding with a cloud session's operation keys.
std::string meter_id(const std::string& session_id) {
  return "sh:" + session_id;
}
}  // namespace

Status SelfHostedMeter::heartbeat(const std::string& account_id, const std::string& session_id,
                                  const std::string& billing_type) {
  if (billing_type != "essence_self_hosted" && billing_type != "expression_self_hosted") {
    return Status::Invalid("Field 'billing_type' must be essence_self_hosted or expression_self_hosted");
  }
  auto m = meters_.heartbeat(account_id, meter_id(session_id), billing_type, clock_.now_us(), period_us_,
                             grace_us_);
  return m.ok() ? Status::Ok() : m.status();
}

int64_t SelfHostedMeter::minutes(const std::string& account_id, const std::string& session_id) const {
  auto m = meters_.get(account_id, meter_id(session_id));
  return m.ok() ? m->next_minute : 0;
}

}  // namespace imago::live
