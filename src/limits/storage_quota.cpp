#include "limits/storage_quota.h"

#include <charconv>
#include <string>

namespace imago {

namespace {
constexpr int64_t kMB = 1'000'000;
constexpr int64_t kMaxMB = 1'000'000'000;  // a petabyte: beyond any sane quota

std::string human(int64_t bytes) {
  if (bytes >= 1'000'000'000) return std::to_string(bytes / 1'000'000'000) + " GB";
  return std::to_string(bytes / kMB) + " MB";
}
}  // namespace

StorageQuotas default_storage_quotas() {
  StorageQuotas q;
  q.per_plan = {500 * kMB, 5'000 * kMB, 25'000 * kMB, 100'000 * kMB, 500'000 * kMB};
  return q;
}

Result<StorageQuotas> parse_storage_quotas(std::string_view spec) {
  StorageQuotas q = default_storage_quotas();
  while (!spec.empty()) {
    size_t comma = spec.find(',');
    std::string_view item = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
    if (item.empty()) continue;
    size_t eq = item.find('=');
    auto bad = [&] {
      return Status::Invalid("--storage-quota: '" + std::string(item) +
                             "' must be PLAN=MEGABYTES (plans: free, creator, pro, business, enterprise)");
    };
    if (eq == std::string_view::npos) return bad();
    auto plan = parse_plan(item.substr(0, eq));
    std::string_view num = item.substr(eq + 1);
    int64_t mb = -1;
    auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), mb);
    if (!plan || ec != std::errc() || p != num.data() + num.size() || mb < 0 || mb > kMaxMB) return bad();
    q.per_plan[static_cast<size_t>(*plan)] = mb * kMB;
  }
  return q;
}

int64_t effective_storage_quota(const StorageQuotas& quotas, Plan plan,
                                const std::optional<PlanLimits>& custom) {
  if (plan == Plan::kEnterprise && custom && custom->storage_bytes > 0) return custom->storage_bytes;
  return quotas.for_plan(plan);
}

Status check_storage_quota(int64_t used, int64_t adding, int64_t quota) {
  if (quota <= 0) return Status::Ok();  // unlimited
  if (used + adding <= quota) return Status::Ok();
  return Status(Code::kQuotaExceeded, "Storage quota exceeded: this account keeps " + human(used) +
                                          " of its " + human(quota) +
                                          "; delete files or agents, or ask for a larger plan");
}

}  // namespace imago
