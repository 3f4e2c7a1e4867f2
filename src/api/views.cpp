#include "api/views.h"

#include "util/strings.h"

namespace imago::api {

boost::json::value time_json(std::optional<int64_t> unix_s) {
  if (!unix_s) return nullptr;
  return boost::json::string(format_rfc3339(*unix_s));
}

boost::json::object key_json(const ApiKey& k) {
  return {{"id", k.id},
          {"alias", k.alias},
          {"prefix", k.prefix},
          {"last4", k.last4},
          {"created_at", time_json(k.created_at)},
          {"last_used_at", time_json(k.last_used_at)}};
}

boost::json::object ledger_entry_json(const LedgerEntry& e) {
  boost::json::object o{{"id", e.id},
                        {"kind", ledger_kind_name(e.kind)},
                        {"amount", e.amount},
                        {"balance_after", e.balance_after},
                        {"reason", e.reason},
                        {"operation_key", e.operation_key},
                        {"created_at", time_json(e.created_at)}};
  o["reference"] = e.reference ? boost::json::value(*e.reference) : boost::json::value(nullptr);
  return o;
}

boost::json::object limits_json(const PlanLimits& l) {
  return {{"generate", l.generate_per_min}, {"write", l.write_per_min}, {"read", l.read_per_min}};
}

}  // namespace imago::api
